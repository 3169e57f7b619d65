#include "engine/executors/slurm/SlurmFinalists.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/measure/Interleave.h"
#include "common/JsonRead.h"
#include "common/Sha256.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>

namespace ciq {
using nlohmann::json;

NodeFinalists measureFinalistsOnSlurm(const TuneConfig &cfg, SlurmExecutor &slurm,
                                      const std::vector<const Evaluation *> &order) {
  NodeFinalists out;
  // The job's header: its id in the job table, and a hash that names these
  // finalists (a record of other finalists, or of an earlier search, is
  // never taken for this one's).
  Evaluation job;
  job.candidateId = "finalists";
  json list = json::array();
  std::vector<std::string> hashes;
  for (const Evaluation *e : order) {
    list.push_back(evaluationToJson(*e));
    hashes.push_back(e->candidateHash + ":" + e->candidateId);
  }
  job.candidateHash = "finalists-" + sha256Hex(llvm::join(hashes, ","));
  json record;
  if (!slurm.runFinalistsJob(job, list, record)) {
    out.stopped = true;
    out.reason = "stopped";
    out.message = "`ciq stop` cancelled the finalists' Slurm job";
    return out;
  }
  out.where = {{"node", job.node}, {"slurm", job.slurm}, {"gpu", job.gpu}};
  if (!job.ok) {
    out.reason = job.reason;
    out.message = job.message;
    return out;
  }
  std::string where = cfg.runDir + "/slurm/finalists result record";
  json part = record.is_object() ? record.value("finalists", json()) : json();
  if (!part.is_object())
    part = json::object();
  JsonFields f(part, where + ": \"finalists\"");
  f.need("values", out.values).opt("gpu_problems", out.gpuProblems).opt("measurement", out.measurement);
  if (!f.ok() || out.values.size() != order.size()) {
    out.reason = reason::WorkerFailed;
    out.message = "the finalists' result record is damaged: " +
                  (f.ok() ? std::to_string(out.values.size()) + " finalists measured, not " +
                                std::to_string(order.size())
                          : f.error());
    return out;
  }
  if (out.measurement.is_object())
    out.measurement["node"] = job.node;
  out.ok = true;
  return out;
}

namespace {

// The finalist rebuilt in this workspace and its benchmark program copied
// aside; the command that runs the copy, or nullopt with e's reason set.
std::optional<std::vector<std::string>> buildFinalist(Worker &w, const TuneConfig &main, Evaluation &f,
                                                      Evaluation &e) {
  f.kernels.clear();
  f.objects.clear();
  f.ok = false;
  // The job may be the first to log into the run directory (as a worker's evaluation may).
  llvm::sys::fs::create_directories(main.runDir + "/logs");
  w.builder->build(f, main.runDir + "/logs/" + f.candidateId + ".final.log");
  if (!f.ok) {
    e.reason = f.reason.empty() ? reason::WorkerFailed : f.reason;
    e.message = "finalist " + f.candidateId + " no longer builds: " + f.message;
    return std::nullopt;
  }
  std::string err;
  auto cmd = snapshotBenchmark(w.cfg, w.cfg.runDir + "/finalists/" + f.candidateId, err,
                               w.cfg.build.kind == "none" || !f.runtimeKernels.empty());
  if (!cmd) {
    e.reason = reason::RunCrash;
    e.message = err;
  }
  return cmd;
}

} // namespace

json measureFinalistsInWorkspace(Worker &w, const TuneConfig &main, const json &list, Evaluation &e) {
  e.ok = false;
  std::vector<Evaluation> fs;
  for (const auto &item : list.is_array() ? list : json::array()) {
    Evaluation f;
    std::string err;
    if (!evaluationFromJson(item, f, err, "the finalists' spec")) {
      e.reason = reason::WorkerFailed;
      e.message = err;
      return nullptr;
    }
    fs.push_back(std::move(f));
  }
  if (fs.size() < 2 || !w.bench) {
    e.reason = reason::WorkerFailed;
    e.message = "the finalists' spec needs the baseline and at least one finalist, and the search a benchmark";
    return nullptr;
  }
  std::vector<std::vector<std::string>> commands;
  for (auto &f : fs) {
    auto cmd = buildFinalist(w, main, f, e);
    if (!cmd)
      return nullptr;
    commands.push_back(*cmd);
  }
  std::string err;
  if (w.phase && !w.phase->begin(err)) {
    e.reason = reason::RunCrash;
    e.message = "the GPU lock could not be taken: " + err;
    return nullptr;
  }
  // Programs that compile at run time: each run gets its build's candidate
  // (as `ciq tune`'s local finalists do).
  BeforeRun serve;
  if (main.build.kind == "none" || !fs.front().runtimeKernels.empty())
    serve = [&](size_t k) {
      w.bench->setEnv(w.builder->runtimeEnv(fs[k], /*freshCache=*/false));
      w.builder->beginRuntime(fs[k]);
    };
  const BenchmarkConfig &b = main.benchmark;
  auto res = runInterleaved(*w.bench, commands, interleavedRounds(b), main.runDir + "/logs/finalists.log", b.warmup,
                            serve,
                            enoughRoundsFor(b, main.objectives.front().direction == "minimize", Judged::BestAgainstFirst));
  if (serve)
    w.builder->daemon().clearCandidate();
  std::vector<std::string> problems;
  if (w.phase) {
    problems = w.phase->end();
    e.gpu = w.phase->after();
  }
  if (!res.ok) {
    e.reason = res.reason;
    e.message = "finalists: " + res.message + " (log: " + main.runDir + "/logs/finalists.log)";
    return nullptr;
  }
  e.ok = true;
  json ids = json::array();
  for (const auto &f : fs)
    ids.push_back(f.candidateId);
  return {{"candidates", ids}, {"values", res.values}, {"warmup", res.warmup}, {"gpu_problems", problems},
          {"measurement", w.phase ? w.phase->record() : json()}};
}

} // namespace ciq
