#include "engine/executors/Pipeline.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/measure/GpuState.h"
#include "engine/measure/Interleave.h"
#include "engine/winner/Objectives.h"
#include "common/DiskFault.h"

#include <cstdlib>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

Evaluation newEvaluation(const SearchSpace &space, const Point &p, int generation, const std::string &id) {
  Evaluation e;
  e.candidateId = id;
  e.generation = generation;
  e.point = p;
  e.rendered = render(space, p);
  e.candidateHash = e.rendered.hash();
  return e;
}

Evaluation configTwin(const Evaluation &twin, const Evaluation &e) {
  Evaluation copy = twin;
  // The twin with these command lines (the built one if the twin was itself a
  // configuration duplicate), not whatever that twin shared its device code with.
  copy.duplicateOf = copy.duplicateKind == "config" ? copy.duplicateOf : copy.candidateId;
  copy.duplicateKind = "config";
  copy.candidateId = e.candidateId;
  copy.generation = e.generation;
  copy.point = e.point;
  copy.rendered = e.rendered;
  copy.buildMs = copy.measureMs = 0;
  copy.evaluatedAt = nowIso8601();
  copy.slurm = nullptr;
  copy.runsSaved = 0;   // saved once, by the twin
  return copy;
}

void shareDeviceResult(Evaluation &e, const Evaluation &d, bool runtime) {
  e.duplicateOf = d.duplicateOf.empty() ? d.candidateId : d.duplicateOf;
  e.duplicateKind = "device_code";
  if (!runtime)
    return;
  e.ok = d.ok;
  e.reason = d.reason;
  e.scores = d.scores;
  e.runs = d.runs;
  e.cases = d.cases;
  e.message = d.message;
  e.cvPercent = d.cvPercent;
  e.noisePercent = d.noisePercent;
  e.stoppedBy = d.stoppedBy;
  e.kernelTimes = d.kernelTimes;
  e.kernelTimesFrom = d.kernelTimesFrom;
  e.kernelTimesWhy = d.kernelTimesWhy;
  e.measureMs = 0;
  e.gpu = d.gpu;
  // The compile metrics are this candidate's own (identical device code).
}

void measureCandidate(Worker &w, Evaluation &e, const std::function<void(const std::string &)> &note,
                      const RaceAgainst *race) {
  if (!w.bench)
    return;
  std::string err;
  // The benchmark's program exists (one the build makes exists only now).
  if (!resolveBenchmarkProgram(w.cfg, err)) {
    e.ok = false;
    e.reason = reason::RunCrash;
    e.message = err;
    return;
  }
  if (w.phase && !w.phase->begin(err)) { // the environment's fault, not the candidate's: the search stops
    e.ok = false;
    e.reason = reason::GpuLockRefused;
    e.message = "the GPU lock could not be taken before measuring " + e.candidateId + ": " + err;
    return;
  }
  // Compiles made while the benchmark runs get this candidate, in a
  // framework cache of its own, and send receipts like the build's.
  w.bench->setEnv(w.builder->runtimeEnv(e, /*freshCache=*/true));
  w.builder->beginRuntime(e);
  auto m = w.bench->measure(e.log, -1, race);
  w.builder->endRuntime(e);
  if (w.phase) { // kept with the candidate: a source of its noise (NoiseSource.h)
    e.gpuProblems = w.phase->end();
    e.smClockMhz = w.phase->smClocks();
    for (const auto &p : e.gpuProblems)
      if (note)
        note("GPU: " + p + " while measuring: figures measured now are not trustworthy");
  }
  e.measureMs = m.wallMs;
  if (e.reason == reason::DiskFault) // a run-time compile the disk refused (endRuntime): no result
    return;
  // Where a GPU exists: its clocks and throttle state, with the result.
  std::string visible = w.gpu;
  if (const char *v = getenv("CUDA_VISIBLE_DEVICES"); visible.empty() && v)
    visible = v;
  nlohmann::json gpu = w.phase ? w.phase->after() : measuredGpu(queryGpuState(), visible);
  if (gpu.is_object()) {
    // Any active clock-event reason that slows the clocks (GpuState.h).
    gpu["throttled"] = gpu.value("throttle", nlohmann::json()).is_array() && !gpu["throttle"].empty();
    e.gpu = gpu;
  }
  if (!m.ok) {
    e.ok = false;
    e.reason = m.reason;
    e.message = m.message + "; log: " + e.log;
    // A run that failed writing its log or files to a full or read-only
    // disk says nothing about the candidate (DiskFault.h): the search stops.
    if (auto f = diskFaultOfFailedTool(m.message, {llvm::sys::path::parent_path(e.log).str(), temporaryFolder()})) {
      e.reason = reason::DiskFault;
      e.message = "the benchmark of " + e.candidateId + " could not write " + f->describe() +
                  ", not the candidate's doing; " + f->remedy() + "; log: " + e.log;
    }
    return;
  }
  if (!e.ok) { // a stale run-time compile (endRuntime): never a score
    e.message += "; log: " + e.log;
    return;
  }
  if (!scoreCompileMetrics(w.cfg, e)) // again: with the run-time kernels' statistics
    return;
  e.runs = m.values;
  e.cvPercent = m.cases.empty() ? m.cvPercent : -1;
  e.noisePercent = m.noisePercent;
  e.stoppedBy = m.stoppedBy;
  e.runsSaved = m.runsSaved;
  e.kernelTimes = m.kernels;
  e.kernelTimesFrom = m.kernelsFrom;
  e.kernelTimesWhy = m.kernelsWhy;
  for (const auto &c : m.cases) { // scored against the baseline's cases when recorded (CaseScore.h)
    e.cases.push_back({c.name, c.values, c.median, c.cvPercent, c.noisePercent, c.stoppedBy, c.runsSaved});
    e.cases.back().kernels = c.kernels;
  }
  for (const auto &o : w.cfg.objectives)
    if (!isCompileMetric(o.metric))
      e.scores[o.metric] = m.median;
}

namespace {

// INVALID candidates keep what `ciq replay` and a human need: objects and the
// benchmark executable, beside the log.
void keepArtifacts(Worker &w, const std::string &dir) {
  llvm::sys::fs::create_directories(dir);
  for (const auto &o : w.builder->driver().objects())
    if (llvm::sys::fs::exists(o.object))
      llvm::sys::fs::copy_file(o.object, dir + "/" + llvm::sys::path::filename(o.object).str());
  if (w.cfg.benchmark.enabled) {
    std::string err;
    snapshotBenchmark(w.cfg, dir, err);
  }
}

// A compiler fault first, not the controls: one more try before the
// candidate is INVALID (the message keeps the reproducer command).
void buildRetryingCrash(Worker &w, Evaluation &e, const PipelineOptions &o) {
  w.builder->build(e, o.logPath);
  if (e.reason != reason::CompilerCrash)
    return;
  if (o.note)
    o.note(e.candidateId + ": " + e.message + "; building it once more");
  Evaluation again;
  again.candidateId = e.candidateId;
  again.generation = e.generation;
  again.point = e.point;
  again.rendered = e.rendered;
  again.candidateHash = e.candidateHash;
  again.replay = e.replay;
  e = again;
  llvm::StringRef log = o.logPath;
  log.consume_back(".log");
  w.builder->build(e, log.str() + ".retry.log");
  if (e.reason == reason::CompilerCrash)
    e.message = "crashed twice: " + e.message;
}

} // namespace

void evaluateCandidate(Worker &w, Evaluation &e, const PipelineOptions &o) {
  // A worker on a node may be the first to log into the run directory.
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(o.logPath));
  buildRetryingCrash(w, e, o);
  if (e.ok && scoreCompileMetrics(w.cfg, e)) {
    // Same device code (and, for a runtime objective, same host code) as an
    // earlier candidate: built, but not re-measured.
    const Evaluation *d = o.deviceTwin ? o.deviceTwin(e) : nullptr;
    if (d)
      shareDeviceResult(e, *d, w.bench != nullptr);
    else {
      if (o.onMeasuring)
        o.onMeasuring();
      measureCandidate(w, e, o.note, o.race);
    }
  }
  e.evaluatedAt = nowIso8601();
  if (!e.ok && !o.artifactsDir.empty() && e.reason != reason::DiskFault)
    keepArtifacts(w, o.artifactsDir);
}

} // namespace ciq
