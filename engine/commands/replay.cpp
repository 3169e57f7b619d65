// `ciq replay`: rebuild and rerun one candidate of a search by hand, with its
// exact command lines, the build output on the terminal.
#include "engine/measure/Benchmark.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/record/Journal.h"
#include "common/Subprocess.h"
#include "engine/run/Tune.h"
#include "engine/compile/BenchmarkProgram.h"

#include <algorithm>
#include <cstdio>

using namespace llvm;

namespace ciq {
namespace {

cl::SubCommand ReplayCmd("replay", "Rebuild and rerun one candidate of a search with its exact command lines");
cl::opt<std::string> ConfigFile("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(ReplayCmd));
cl::opt<std::string> CandidateId(cl::Positional, cl::desc("<candidate id, e.g. c0007>"), cl::Required, cl::sub(ReplayCmd));

// Rebuilds the journaled candidate, then its correctness check and
// benchmark. Exit status 0 when it is OK.
int replayCandidate(const TuneConfig &cfg, const std::string &candidateId) {
  JournalContents journal = readJournal(cfg.runDir + "/journal.jsonl");
  const std::vector<Evaluation> &evals = journal.evaluations, &builds = journal.builds;
  const Evaluation *it = nullptr;
  for (const auto *list : {&evals, &builds})   // then the minimized winner (<id>-min), built after the search
    for (const auto &e : *list)
      if (!it && e.candidateId == candidateId)
        it = &e;
  if (evals.empty() || !it)
    return reportError("no candidate '" + candidateId + "' in " + cfg.runDir +
                       "/journal.jsonl; see results.csv for the ids, or the minimized winner the summary names "
                       "(c0007-min)");
  Evaluation e = *it;
  e.kernels.clear();
  e.objects.clear();
  e.ok = false;
  e.reason.clear();
  CandidateBuilder builder(cfg, {reportWarning, reportNote});
  std::string err;
  if (!builder.start(cfg.runDir + "/replay.sock", err))
    return reportError(err);
  builder.expectLike(evals.front());
  printf("replaying %s: %s\n", e.candidateId.c_str(), it == &evals.front() ? "(default compile)" : e.rendered.summary().c_str());
  printf("environment: CIQ_SOCKET=%s (serves the candidate to ciq-ptxas)\ncommand: %s\n", builder.daemon().socketPath().c_str(),
         shellJoin(builder.driver().buildCommand()).c_str());
  std::string log = cfg.runDir + "/logs/" + e.candidateId + ".replay.log";
  builder.build(e, log);
  auto out = runSubprocess({"cat", log});
  fputs(out.out.c_str(), stdout);
  if (!e.ok)
    return reportError(e.candidateId + ": " + e.reason + ": " + e.message);
  printf("device code: %s (journal: %s)\n", e.deviceCodeSha256.c_str(), it->deviceCodeSha256.c_str());
  if (cfg.benchmark.enabled) {
    BenchmarkRunner bench(cfg.benchmark, benchmarkWorkDir(cfg));
    bench.setEnv(builder.runtimeEnv(e, /*freshCache=*/true));
    builder.beginRuntime(e);
    auto m2 = bench.measure(log);
    builder.endRuntime(e);
    if (!m2.ok)
      return reportError(e.candidateId + ": " + m2.reason + ": " + m2.message);
    if (!e.ok)   // its run-time compiles did not get the candidate
      return reportError(e.candidateId + ": " + e.reason + ": " + e.message);
    printf("benchmark: median %g %s, CV %.1f%% over %zu runs\n", m2.median, cfg.benchmark.metric.unit.c_str(),
           m2.cvPercent, m2.values.size());
  }
  return 0;
}


int replay() {
  std::string err;
  auto cfg = openConfig(ConfigFile, err);
  if (!cfg)
    return reportError(err);
  return replayCandidate(*cfg, CandidateId);
}

RegisterCommand regReplay(ReplayCmd, replay);

} // namespace
} // namespace ciq
