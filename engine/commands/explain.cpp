// `ciq explain <candidate> [--against baseline]`: per kernel, what ptxas
// reported and the theoretical occupancy, for a candidate and another one;
// optionally Nsight Compute (`--ncu`) on the benchmark of both builds.
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/commands/RunPath.h"
#include "engine/analysis/Explain.h"
#include "common/Subprocess.h"

#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand ExplainCmd("explain",
                          "Per kernel: registers, spills, stack, shared memory, occupancy of a "
                          "candidate against another (default: the baseline)");
cl::opt<std::string> Candidate(cl::Positional, cl::sub(ExplainCmd), cl::Required,
                               cl::desc("<candidate id | candidate hash prefix>"));
cl::opt<std::string> Against("against", cl::sub(ExplainCmd), cl::init("baseline"),
                             cl::desc("candidate to compare with (default: the baseline)"));
cl::opt<std::string> RunDir("run", cl::sub(ExplainCmd), cl::init("."),
                            cl::desc("run directory holding journal.jsonl (default: .)"));
cl::opt<int> BlockSize("block-size", cl::sub(ExplainCmd), cl::init(256),
                       cl::desc("threads per block of the launch, for occupancy (default 256)"));
cl::opt<long> DynamicShared("dynamic-shared", cl::sub(ExplainCmd), cl::init(0),
                            cl::desc("dynamic shared memory per block, bytes (default 0)"));
cl::opt<std::string> Arch("arch", cl::sub(ExplainCmd),
                          cl::desc("architecture for occupancy (default: what ptxas compiled for)"));
cl::opt<bool> Ncu("ncu", cl::sub(ExplainCmd),
                  cl::desc("also profile the benchmark of both builds with Nsight Compute"));
cl::opt<std::string> ConfigPath("config", cl::sub(ExplainCmd),
                                cl::desc("ciq.yaml of the search: its run_dir, and the benchmark command (for --ncu)"));

// Rebuilds one evaluation with its journal `replay` command, then profiles the
// benchmark under ncu.
std::optional<std::vector<NcuKernel>> profile(const std::string &ncu, const RecordedEval &e,
                                              const TuneConfig &cfg) {
  std::string replay = e.journal ? e.journal->replay : "";
  if (replay.empty()) {
    reportError("the journal has no replay command for " + e.id + "; --ncu cannot rebuild it");
    return std::nullopt;
  }
  SubprocessOptions o;
  o.timeoutSeconds = cfg.timeouts.buildSeconds;
  o.mergeStderrIntoStdout = true;
  auto r = runSubprocess({"/bin/sh", "-c", replay}, o);
  if (r.exitCode != 0) {
    reportError("rebuilding " + e.id + " failed (exit " + std::to_string(r.exitCode) + ": " +
                replay + ")");
    return std::nullopt;
  }
  std::string error;
  auto k = runNcu(ncu, cfg.benchmark.command,
                  cfg.benchmark.workingDir.empty() ? cfg.buildDir : cfg.benchmark.workingDir, error);
  if (!k)
    reportError(error);
  return k;
}

int run() {
  std::string error;
  auto path = searchRunPath(RunDir, RunDir.getNumOccurrences() > 0, ConfigPath);
  if (!path)
    return 1;
  auto data = loadRun(*path, error);
  if (!data)
    return reportError(error);
  const RecordedEval *cand = data->find(Candidate);
  std::string from = Candidate.substr(0, Candidate.rfind("-min"));
  if (!cand && from != Candidate && data->find(from))
    return reportError(Candidate + " is the minimized winner of " + from + ", and " + data->dir +
                       "/journal.jsonl (of an earlier ciq) has no record of its build; explain " + from +
                       ", or tune again");
  if (!cand)
    return reportError("no candidate '" + Candidate + "' in " + data->dir +
                       "; give an id from results.csv (c0007), the minimized winner the summary names (c0007-min) "
                       "or a hash prefix of 6+ characters");
  const RecordedEval *against = Against == "baseline" ? data->baseline() : data->find(Against);
  if (!against)
    return reportError("no candidate '" + Against + "' to compare with in " + data->dir);
  if (BlockSize < 1 || BlockSize > 1024)
    return reportError("--block-size " + std::to_string(BlockSize) +
                       " is outside 1..1024 threads per block");
  ExplainOptions opts;
  opts.threadsPerBlock = BlockSize;
  opts.dynamicSharedBytes = DynamicShared;
  opts.arch = Arch;
  if (!explainCandidates(*cand, *against, opts, llvm::outs(), error))
    return reportError(error);
  if (!Ncu)
    return 0;
  auto ncu = findExecutable("ncu");
  if (!ncu) {
    llvm::outs() << "\nncu: not found on PATH; the Nsight Compute comparison is skipped "
                    "(install Nsight Compute and run on a machine with a GPU)\n";
    return 0;
  }
  if (ConfigPath.empty())
    return reportError("--ncu needs --config ciq.yaml for the benchmark command");
  auto cfg = openConfig(ConfigPath, error);
  if (!cfg)
    return reportError(error);
  if (cfg->benchmark.command.empty())
    return reportError(ConfigPath + ": no benchmark.command; --ncu profiles the benchmark");
  auto pa = profile(*ncu, *against, *cfg);
  auto pc = pa ? profile(*ncu, *cand, *cfg) : std::nullopt;
  if (!pa || !pc)
    return 1;
  printNcuComparison(*pa, *pc, against->id, cand->id, llvm::outs());
  return 0;
}

RegisterCommand reg(ExplainCmd, run);

} // namespace
