// `ciq worker`: one candidate evaluated end to end on this machine, in a
// workspace of its own (build tree, daemon socket, receipts, correctness
// check, benchmark), its result record written atomically for the engine to
// read back. The Slurm executor runs one per job (docs/cluster.md); the
// pipeline is the one `ciq tune`'s local workers run (engine/executors/Pipeline.h).
// With --finalists instead of --candidate, the job re-measures a runtime
// search's finalists interleaved on this one node (engine/executors/slurm/SlurmFinalists.h).
#include "engine/compile/BenchmarkProgram.h"
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/measure/GpuState.h"
#include "common/JsonRead.h"
#include "common/OwnedDir.h"
#include "engine/executors/Pipeline.h"
#include "engine/executors/slurm/ResultRecord.h"
#include "engine/executors/slurm/SlurmFinalists.h"

#include <unistd.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

using namespace llvm;

namespace {

cl::SubCommand WorkerCmd("worker", "Evaluate one candidate in a workspace of its own and write its result record "
                                   "(run by the Slurm executor; docs/cluster.md)");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(WorkerCmd));
cl::opt<std::string> Candidate("candidate", cl::desc("the candidate (JSON, as the engine writes it)"),
                               cl::sub(WorkerCmd));
cl::opt<std::string> Finalists("finalists",
                               cl::desc("instead of --candidate: the finalists of a runtime search (JSON, as the "
                                        "engine writes it, the baseline first), rebuilt here and measured "
                                        "interleaved"),
                               cl::sub(WorkerCmd));
cl::opt<std::string> Result("result", cl::desc("where the result record goes (written atomically)"), cl::Required,
                            cl::sub(WorkerCmd));
cl::opt<std::string> Workspace("workspace",
                               cl::desc("folder of this machine's workspaces: the worker takes the first free "
                                        "<node>-<k> (scratch) or slot-<k> (shared) under it: a build tree "
                                        "configured once, then reused"),
                               cl::Required, cl::sub(WorkerCmd));

// A locked slot of the workspace folder: two jobs on one node never share a
// build tree. The lock lives as long as the process.
// Per-node scratch slots are named by the node; slots of a shared workspace
// (a build tree any node may reuse) are not.
// The slot is made absolute: its socket path goes into CIQ_SOCKET, which the
// compiles read from the build tree's directory, not from ours.
bool takeSlot(const std::string &given, bool perNode, std::string &dir, std::string &error) {
  llvm::SmallString<256> abs(given);
  if (std::error_code ec = llvm::sys::fs::make_absolute(abs)) {
    error = "workspace " + given + ": " + ec.message();
    return false;
  }
  llvm::sys::path::remove_dots(abs, true);
  const std::string base(abs.str());
  // Per-node scratch is in a shared folder (/tmp by default) under a name
  // anyone can derive from the run directory: only a folder of our own is
  // built in, never one another user made first and could plant links in.
  if (perNode && !ciq::ensureOwnedDir(base, error)) {
    error = "workspace " + base + ": " + error + "; set slurm.scratch_dir to a folder of your own";
    return false;
  }
  for (int k = 0; k < 256; ++k) {
    dir = base + "/" + (perNode ? ciq::nodeName() + "-" : "slot-") + std::to_string(k);
    llvm::sys::fs::create_directories(dir);
    int fd = -1;
    if (llvm::sys::fs::openFileForWrite(dir + "/.lock", fd, llvm::sys::fs::CD_OpenAlways))
      continue;
    if (!llvm::sys::fs::tryLockFile(fd))
      return true; // fd stays open: the lock is held until exit
    close(fd);
  }
  error = "no free workspace slot under " + base;
  return false;
}

struct Record {
  nlohmann::json spec;
  double startedAt = ciq::nowEpochSeconds();

  int write(ciq::Evaluation e, const std::string &fault = "", const nlohmann::json &finalists = nullptr) {
    e.node = ciq::nodeName();
    nlohmann::json slurm = {{"node", e.node}, {"started_at", startedAt}, {"finished_at", ciq::nowEpochSeconds()}};
    if (const char *id = getenv("SLURM_JOB_ID"))
      slurm["job_id"] = id;
    e.slurm = slurm;
    nlohmann::json j = ciq::evaluationToJson(e);
    if (!fault.empty())
      j["fault"] = fault;
    if (!finalists.is_null())
      j["finalists"] = finalists;
    std::string err;
    if (!ciq::writeJsonDurably(Result, j, err))
      return ciq::reportError(err);
    return 0;
  }

  // The worker could not evaluate: still a record, so the engine has a reason.
  int failed(ciq::Evaluation e, const std::string &why, const std::string &message) {
    e.ok = false;
    e.reason = why;
    e.message = message;
    e.evaluatedAt = ciq::nowIso8601();
    ciq::reportError(message);
    write(e);
    return 1;
  }
};

int run() {
  Record rec;
  if (Candidate.empty() == Finalists.empty())
    return ciq::reportError("ciq worker: give one of --candidate FILE and --finalists FILE (written by the engine)");
  const std::string &specPath = Candidate.empty() ? Finalists : Candidate;
  auto spec = ciq::readJsonFile(specPath);
  if (!spec)
    return ciq::reportError("cannot read the candidate " + specPath + " (JSON written by the engine)");
  rec.spec = *spec;
  ciq::Evaluation e;
  std::string err, narrowTo, workspace = "scratch", log, artifacts;
  bool gpuExpected = false;
  ciq::JsonFields f(*spec, specPath);
  f.opt("narrow_to", narrowTo).opt("gpu_expected", gpuExpected).opt("workspace", workspace).opt("log", log)
      .opt("artifacts_dir", artifacts);
  if (!f.ok() || !ciq::evaluationFromJson(*spec, e, err, specPath))
    return ciq::reportError((f.ok() ? err : f.error()) + " (not a candidate record as the engine writes it)");
  e.ok = false;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return rec.failed(e, ciq::reason::WorkerFailed, err);
  cfg->narrowTo = narrowTo;
  // A GPU the job was given but that this node cannot see is the node's fault
  // (the engine submits the job again elsewhere), not the candidate's.
  if (gpuExpected && ciq::queryGpuState()["gpus"].empty()) {
    e.message = "no GPU visible on " + ciq::nodeName() + " (nvidia-smi)";
    return rec.write(e, ciq::reason::GpuLost);
  }
  std::string dir;
  if (!takeSlot(Workspace, workspace != "shared", dir, err))
    return rec.failed(e, ciq::reason::WorkerFailed, err);
  ciq::Worker w;
  if (!ciq::prepareWorkspaceConfig(*cfg, dir, "workspace " + dir, w.cfg, err))
    return rec.failed(e, ciq::reason::WorkerFailed, err);
  w.builder = std::make_unique<ciq::CandidateBuilder>(w.cfg, ciq::CandidateBuilder::Messages{ciq::reportWarning, ciq::reportNote});
  std::string socket;
  if (!ciq::socketPathFor(dir, socket, err) || !w.builder->start(socket, err))
    return rec.failed(e, ciq::reason::WorkerFailed, err);
  if (w.cfg.benchmark.enabled) {
    w.bench = std::make_unique<ciq::BenchmarkRunner>(w.cfg.benchmark, ciq::benchmarkWorkDir(w.cfg));
    // The GPU alone while measuring, also against other processes on the node.
    w.phase = std::make_unique<ciq::MeasuredPhase>("", "ciq worker " + e.candidateId + " (" + Config + ")",
                                                   [](const std::string &l) { ciq::reportNote(l); });
  }
  nlohmann::json finalists;
  if (!Finalists.empty()) {
    finalists = ciq::measureFinalistsInWorkspace(w, *cfg, spec->value("finalists", nlohmann::json()), e);
    e.evaluatedAt = ciq::nowIso8601();
    if (!e.ok) // the record says it; the job's output too
      ciq::reportNote("finalists not measured: " + e.reason + ": " + e.message);
  } else {
    ciq::PipelineOptions o;
    o.logPath = log.empty() ? cfg->runDir + "/logs/" + e.candidateId + ".log" : log;
    o.artifactsDir = artifacts;
    o.note = [](const std::string &l) { ciq::reportNote(l); };
    ciq::evaluateCandidate(w, e, o);
  }
  if (gpuExpected && !e.ok && ciq::queryGpuState()["gpus"].empty()) {
    e.message = "the GPU vanished during the evaluation on " + ciq::nodeName() + " (" + e.message + ")";
    return rec.write(e, ciq::reason::GpuLost);
  }
  return rec.write(e, "", finalists);
}

ciq::RegisterCommand regWorker(WorkerCmd, run);

} // namespace
