#include "engine/measure/Benchmark.h"
#include "engine/measure/ArtifactInstall.h"
#include "engine/measure/KernelTrace.h"
#include "engine/measure/KernelTraceSetup.h"
#include "engine/measure/MetricParser.h"
#include "engine/measure/Stats.h"
#include "common/EnvNames.h"
#include "common/FileIO.h"
#include "common/Paths.h"
#include "common/Subprocess.h"

#include <algorithm>
#include <unistd.h>
#include <cmath>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <llvm/Support/Path.h>

namespace ciq {

BenchmarkRunner::BenchmarkRunner(const BenchmarkConfig &b, std::string workDir, std::map<std::string, std::string> env)
    : b_(b), workDir_(std::move(workDir)), env_(std::move(env)) {
  for (const auto &kv : b.env)
    env_[kv.first] = kv.second;
}

void BenchmarkRunner::selectCase(const BenchmarkCase *c) { case_ = c; }

std::vector<std::string> BenchmarkRunner::caseCommand(const std::vector<std::string> &base) const {
  std::vector<std::string> cmd = base;
  if (case_)
    cmd.insert(cmd.end(), case_->args.begin(), case_->args.end());
  return cmd;
}

std::map<std::string, std::string> BenchmarkRunner::runEnv() const {
  std::map<std::string, std::string> env = env_;
  if (case_)
    for (const auto &kv : case_->env)
      env[kv.first] = kv.second;
  return env;
}

// Each case's output has its own reference: the baseline's output of that case.
std::string BenchmarkRunner::referencePath() const {
  if (!case_ || referenceFile_.empty())
    return referenceFile_;
  llvm::StringRef f = referenceFile_;
  f.consume_back(".json");
  return f.str() + "." + case_->name + ".json";
}

// The run limit once a best wall time is known follows the program
// (issue 56 item 6): adaptive_factor x the best run, but never below ten best
// runs (up to 10 s) nor below run_timeout_floor_s (2 s): a process start (an
// interpreter's imports, CUDA context creation) stalls on a busy host for a
// while that grows with what the program loads, which its best run measures,
// and a hung 0.3 s benchmark is stopped after 3 s instead of 10. A host that
// stalls for longer (a CI host running test suites side by side) sets a
// larger floor in its own config.
constexpr double kStallRuns = 10, kStallCapSeconds = 10;

double runLimitSeconds(double timeoutSeconds, double adaptiveFactor, double floorSeconds, double bestWallMs) {
  if (bestWallMs <= 0)
    return timeoutSeconds;
  double best = bestWallMs / 1000.0;
  double least = std::max(floorSeconds, std::min(kStallCapSeconds, kStallRuns * best));
  return std::min(timeoutSeconds, std::max(least, adaptiveFactor * best));
}

double BenchmarkRunner::runTimeoutSeconds() const {
  return runLimitSeconds(b_.timeoutSeconds, b_.adaptiveFactor, b_.runTimeoutFloorSeconds, bestWallMs_);
}

void BenchmarkRunner::noteBestRunWallMs(double wallMs) {
  if (wallMs > 0 && (bestWallMs_ == 0 || wallMs < bestWallMs_))
    bestWallMs_ = wallMs;
}

static void appendLog(const std::string &path, const std::string &title, const SubprocessResult &r) {
  std::ofstream log(path, std::ios::app);
  log << "=== " << title << " (exit " << r.exitCode << ", " << r.wallMs << " ms"
      << (r.timedOut ? ", killed at the time limit" : "") << ")\n"
      << r.out << r.err << "\n";
}

// Durations must be positive; counts, sizes and rates cannot be negative.
// Anything else is not a measurement (a timer that did not run, a wrong
// number parsed), so it never becomes a score.
bool unitAllows(const std::string &unit, double value, std::string &why) {
  char buf[160];
  if (!std::isfinite(value)) {
    snprintf(buf, sizeof buf, "the benchmark reported %g %s, which is not a finite number", value, unit.c_str());
    why = buf;
    return false;
  }
  bool duration = secondsPerUnit(unit).has_value();
  if (duration ? value <= 0 : value < 0) {
    snprintf(buf, sizeof buf, "the benchmark reported %g %s; a %s must be %s", value, unit.c_str(),
             duration ? "duration" : "count, size or rate", duration ? "above 0" : "0 or more");
    why = buf;
    return false;
  }
  return true;
}

std::vector<double> numbersIn(const std::string &text) {
  static const std::regex number(R"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf(?:inity)?)\b)",
                                 std::regex::icase);
  std::vector<double> out;
  for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it)
    out.push_back(std::strtod(it->str().c_str(), nullptr));
  return out;
}

std::string compareNumbers(const std::vector<double> &got, const std::vector<double> &want, double rtol, double atol) {
  char buf[240];
  if (got.size() != want.size()) {
    snprintf(buf, sizeof buf, "%zu numbers against the baseline's %zu", got.size(), want.size());
    return buf;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double x = got[i], ref = want[i];
    bool same = std::isnan(ref) ? std::isnan(x) : std::isinf(ref) ? x == ref : std::fabs(x - ref) <= atol + rtol * std::fabs(ref);
    if (!same) {
      snprintf(buf, sizeof buf, "number %zu is %.10g against the baseline's %.10g (allowed: %.3g + %.3g x |ref| = %.3g)",
               i + 1, x, ref, atol, rtol, atol + rtol * std::fabs(ref));
      return buf;
    }
  }
  return "";
}

std::optional<std::vector<double>> readReferenceOutput(const std::string &path, std::string &why) {
  std::ifstream in(path);
  if (!in) {
    why = "is missing";
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(in).get<std::vector<double>>();
  } catch (const std::exception &e) {
    why = std::string("cannot be read (") + e.what() + ")";
    return std::nullopt;
  }
}

// The output the comparison reads: the check's stdout, or the file it wrote.
RunOutcome BenchmarkRunner::compareOutput(const std::string &stdoutText, const std::string &cwd) {
  RunOutcome o;
  const BenchmarkConfig &b = b_;
  std::string text = stdoutText;
  if (b.compare != "stdout") {
    std::string path = llvm::sys::path::is_absolute(b.compare) ? b.compare : cwd + "/" + b.compare;
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      o.reason = reason::WrongAnswer;
      o.message = "the correctness check wrote no " + path + " (benchmark.correctness.compare)";
      return o;
    }
    text = (*buf)->getBuffer().str();
  }
  std::vector<double> got = numbersIn(text);
  // Nothing to compare passes every candidate: an empty comparison is a
  // check that checks nothing, not a match (issue 32 item 8).
  if (got.empty()) {
    o.reason = reason::WrongAnswer;
    o.message = "the output compared (benchmark.correctness.compare: " + b.compare +
                ") holds no numbers, so a comparison would accept any result; make the check print the results it "
                "computes, or compare the file it writes";
    return o;
  }
  const std::string referenceFile_ = referencePath();
  if (referenceFile_.empty() || !llvm::sys::fs::exists(referenceFile_)) {
    // The baseline: its output is the reference. Written whole or not at
    // all (a kill mid-write must not leave half a reference for the resumed
    // search), and a write that fails fails the baseline: without the file
    // every later candidate would pass as its own reference.
    std::string err;
    if (!referenceFile_.empty() &&
        !writeFileAtomically(referenceFile_, nlohmann::json(got).dump() + "\n", err, /*durable=*/true)) {
      o.reason = reason::WrongAnswer;
      o.message = "cannot keep the baseline's output numbers for benchmark.correctness.compare: " + err +
                  "; free space or fix the permissions of the run folder, then `ciq resume`";
      return o;
    }
    o.ok = true;
    return o;
  }
  std::string why;
  auto read = readReferenceOutput(referenceFile_, why);
  if (!read) {
    o.reason = reason::WrongAnswer;
    o.message = "the baseline's output numbers " + referenceFile_ + " " + why + "; start over with `ciq tune --fresh`";
    return o;
  }
  const std::vector<double> &want = *read;
  std::string diff = compareNumbers(got, want, b.rtol, b.atol);
  if (!diff.empty()) {
    o.reason = reason::WrongAnswer;
    o.message = "the output differs from the baseline's (benchmark.correctness.compare: " + b.compare + "): " + diff;
    return o;
  }
  o.ok = true;
  return o;
}

namespace {
// Benchmark and correctness runs are led by ciq-build-guard, like builds: a
// kill -9 of the engine runs no handler here, and a run it left went on to
// its own end (issue 51 item 7); the guard ends it within a second of the
// engine's death. It is transparent (the run's exit status or signal is its
// own) and costs one exec of a small static program per run, the same for
// every candidate. CIQ_TEST_UNGUARDED_BUILDS=1 leaves runs unguarded too.
void guardRun(SubprocessOptions &so) {
  if (const char *off = getenv(env::TestUnguardedBuilds); off && std::string(off) == "1")
    return;
  std::string guard = buildGuardPath();
  if (::access(guard.c_str(), X_OK) == 0)
    so.guard = guard;
}
} // namespace

RunOutcome BenchmarkRunner::checkCorrectness(const std::string &logPath) {
  RunOutcome o;
  const BenchmarkConfig &b = b_;
  if (b.correctness.empty() && b.compare.empty()) {
    o.ok = true;
    return o;
  }
  // Without a check command, the comparison reads one extra benchmark run.
  const auto cmd = caseCommand(b.correctness.empty() ? b.command : b.correctness);
  SubprocessOptions so;
  so.cwd = workDir_;
  so.setEnv = runEnv();
  so.timeoutSeconds = b.timeoutSeconds;
  guardRun(so);
  if (b.compare != "stdout" && !b.compare.empty()) { // a file left by an earlier check is not this one's
    std::string path = llvm::sys::path::is_absolute(b.compare) ? b.compare : so.cwd + "/" + b.compare;
    llvm::sys::fs::remove(path);
  }
  auto r = runSubprocess(cmd, so);
  appendLog(logPath, "correctness: " + shellJoin(cmd), r);
  o.wallMs = r.wallMs;
  if (r.spawnFailed) {
    o.reason = reason::RunCrash;
    o.message = r.errorMessage;
  } else if (r.timedOut) {
    o.reason = reason::RunTimeout;
    o.message = "the correctness check ran past " + std::to_string((int)so.timeoutSeconds) + " s";
  } else if (r.termSignal) {
    o.reason = reason::RunCrash;
    o.message = "the correctness check died of signal " + std::to_string(r.termSignal);
  } else if (r.exitCode != 0) {
    o.reason = reason::WrongAnswer;
    o.message = "the correctness check exited " + std::to_string(r.exitCode);
  } else if (!b.compare.empty()) {
    RunOutcome c = compareOutput(r.out, so.cwd);
    c.wallMs = o.wallMs;
    return c;
  } else
    o.ok = true;
  return o;
}

// A benchmark run that did not exit 0 (or did not start, or ran past its
// limit): true, with its reason in `o`.
static bool runFailed(const SubprocessResult &r, double timeoutSeconds, bool gateIsExit, RunOutcome &o) {
  if (r.spawnFailed) {
    o.reason = reason::RunCrash;
    o.message = r.errorMessage;
    return true;
  }
  if (r.timedOut) {
    o.reason = reason::RunTimeout;
    char buf[96];
    snprintf(buf, sizeof buf, "the benchmark ran past its %.1f s limit", timeoutSeconds);
    o.message = buf;
    return true;
  }
  if (r.termSignal) {
    o.reason = reason::RunCrash;
    o.message = "the benchmark died of signal " + std::to_string(r.termSignal);
    return true;
  }
  if (r.exitCode != 0) {
    o.reason = gateIsExit ? reason::WrongAnswer : reason::RunCrash;
    o.message = "the benchmark exited " + std::to_string(r.exitCode);
    return true;
  }
  return false;
}

// The metric of a run that exited 0, read from its output or result file and
// checked against its unit; false with the reason in `o`.
static bool readRunMetric(const MetricSource &metric, const std::string &out, const std::string &cwd,
                          RunOutcome &o) {
  std::string err;
  auto v = parseMetric(metric, out, cwd, err);
  if (!v) {
    o.reason = reason::ParseError;
    o.message = err;
    return false;
  }
  if (!unitAllows(metric.unit, *v, err)) {
    o.reason = reason::InvalidValue;
    o.message = err;
    return false;
  }
  o.value = *v;
  o.ok = true;
  return true;
}

RunOutcome BenchmarkRunner::runOnce(const std::string &logPath, const std::vector<std::string> &command) {
  const auto cmd = caseCommand(command.empty() ? b_.command : command);
  RunOutcome o;
  SubprocessOptions so;
  so.cwd = workDir_;
  so.setEnv = runEnv();
  so.timeoutSeconds = runTimeoutSeconds();
  guardRun(so);
  // A result file left by an earlier run must never be read as this run's.
  bool measuredByUs = b_.metric.kind == "wall_time" || b_.metric.kind == "kernel_time";
  std::string file = measuredByUs ? "" : metricFilePath(b_.metric, so.cwd);
  std::string tracePrefix;
  if (b_.metric.kind == "kernel_time" && !startKernelTrace(logPath, so.setEnv, tracePrefix, o))
    return o;
  if (figuresOnly_ && !startKernelTrace(logPath, so.setEnv, tracePrefix, o)) {
    o.kernelsWhy = o.message;   // the run goes on untraced: its figures are not the metric
    o.reason.clear();
    o.message.clear();
    tracePrefix.clear();
  }
  if (!file.empty() && llvm::sys::fs::exists(file)) {
    if (auto ec = llvm::sys::fs::remove(file)) {
      o.reason = reason::NoFreshResult;
      o.message = "cannot remove the previous result file " + file + " before the run: " + ec.message();
      return o;
    }
  }
  // A re-measured build's own copies of the files it imports (benchmark.artifacts).
  if (std::string err; !installArtifactsFor(cmd, err)) {
    o.reason = reason::RunCrash;
    o.message = err;
    return o;
  }
  auto r = runSubprocess(cmd, so);
  appendLog(logPath, "benchmark: " + shellJoin(cmd), r);
  o.wallMs = r.wallMs;
  bool gateIsExit = b_.correctness.empty() && b_.compare.empty();
  if (runFailed(r, so.timeoutSeconds, gateIsExit, o))
    return o;
  if (b_.metric.kind == "wall_time") {
    o.value = r.wallMs;
    o.ok = true;
    return o;
  }
  if (!tracePrefix.empty() && !figuresOnly_) {
    readKernelTimes(tracePrefix, o);
    return o;
  }
  if (!file.empty() && !llvm::sys::fs::exists(file)) {
    o.reason = reason::NoFreshResult;
    o.message = "the benchmark exited 0 but wrote no " + file + " in this run (benchmark.metric.file)";
    return o;
  }
  if (!readRunMetric(b_.metric, r.out, so.cwd, o))
    return o;
  if (!tracePrefix.empty())
    readKernelFigures(tracePrefix, o);
  return o;
}

bool BenchmarkRunner::tracesWarmup() const {
  return b_.metric.kind != "kernel_time" && b_.kernelTimes == "warmup" && b_.warmup > 0;
}

RunOutcome BenchmarkRunner::tracedWarmupRun(const std::string &logPath, const std::vector<std::string> &command) {
  figuresOnly_ = true;
  RunOutcome r = runOnce(logPath, command);
  figuresOnly_ = false;
  return r;
}

// The traced warm-up run's kernels: a trace that is missing or broken costs
// the per-kernel figures only, never the run.
void BenchmarkRunner::readKernelFigures(const std::string &prefix, RunOutcome &o) {
  std::string err;
  if (auto trace = readKernelTrace(prefix, err))
    o.kernels = std::move(trace->kernels);
  else
    o.kernelsWhy = err;
}

// Every run traced gets its own traces: the earlier run's files, at the same
// prefix beside the log, are removed first and never read as this one's.
bool BenchmarkRunner::startKernelTrace(const std::string &logPath, std::map<std::string, std::string> &env,
                                       std::string &prefix, RunOutcome &o) {
  std::string why;
  auto lib = kernelTraceLibrary(why);
  if (!lib) {
    o.reason = reason::NoKernelTimes;
    o.message = why;
    return false;
  }
  prefix = logPath + ".kernels";
  if (!removeKernelTraces(prefix, why)) {
    o.reason = reason::NoKernelTimes;
    o.message = "no kernel times: " + why;
    return false;
  }
  for (const auto &kv : kernelTraceEnv(*lib, prefix))
    env[kv.first] = kv.second;
  return true;
}

void BenchmarkRunner::readKernelTimes(const std::string &prefix, RunOutcome &o) {
  std::string err;
  auto trace = readKernelTrace(prefix, err);
  auto ms = trace ? kernelTimeMs(trace->kernels, b_.metric.kernels, err) : std::nullopt;
  if (!ms) {
    o.reason = reason::NoKernelTimes;
    o.message = err;
    return;
  }
  if (!unitAllows("ms", *ms, err)) { // kernels that ran 0 ns: a trace that timed nothing
    o.reason = reason::InvalidValue;
    o.message = "the kernels' GPU time: " + err;
    return;
  }
  o.value = *ms;
  o.kernels = std::move(trace->kernels);
  o.ok = true;
}

bool enoughRuns(const std::vector<double> &values, const BenchmarkConfig &b, const std::vector<double> *incumbent,
                bool minimize, bool adaptive, int cap, std::string &stoppedBy, int &runsSaved) {
  int n = (int)values.size();
  if (b.racing && incumbent && incumbent->size() >= 2 && n >= BenchmarkConfig::minRaceRuns && n < cap &&
      racedOut(values, *incumbent, minimize, b.raceAlpha)) {
    stoppedBy = "racing";
    runsSaved = cap - n;
    return true;
  }
  if (n >= cap) {
    stoppedBy = adaptive ? "max_repeats" : "repeats";
    return true;
  }
  if (!adaptive || n < b.minRepeats)
    return false;
  double noise = medianCiHalfWidthPercent(values);
  if (noise >= 0 && noise <= b.targetNoisePercent) {
    stoppedBy = "target";
    return true;
  }
  return false;
}

void noteKernelFigures(MeasureOutcome &m, RunOutcome &r, const char *from) {
  m.kernelsFrom = r.kernels.empty() ? "" : from;
  m.kernelsWhy = r.kernelsWhy;
  m.kernels = std::move(r.kernels);
}

// Adds a run's time to m; a failed run (the gate or a measured one) ends
// the measurement with its reason.
static bool countRun(MeasureOutcome &m, const RunOutcome &r) {
  m.wallMs += r.wallMs;
  if (!r.ok) {
    m.reason = r.reason;
    m.message = r.message;
  }
  return r.ok;
}

MeasureOutcome BenchmarkRunner::measure(const std::string &logPath, int repeats, const RaceAgainst *race) {
  if (!b_.cases.empty() && repeats < 0)
    return measureCases(logPath, race);
  MeasureOutcome m;
  if (!countRun(m, checkCorrectness(logPath)))
    return m;
  const BenchmarkConfig &b = b_;
  bool adaptive = b.adaptive && repeats < 0;
  int cap = adaptive ? b.maxRepeats : repeats < 0 ? b.repeats : repeats;
  std::vector<double> walls;
  double measuredMs = 0;
  m.stoppedBy = adaptive ? "max_repeats" : "repeats";
  for (int i = 0; (int)m.values.size() < cap; ++i) {
    bool traced = i == 0 && tracesWarmup();
    auto r = traced ? tracedWarmupRun(logPath) : runOnce(logPath);
    if (!countRun(m, r))
      return m;
    if (traced)
      noteKernelFigures(m, r, "warmup_run");
    if (i < b.warmup)
      continue;
    m.values.push_back(r.value);
    if (b.metric.kind == "kernel_time")
      noteKernelFigures(m, r, "measured_runs");
    walls.push_back(r.wallMs);
    measuredMs += r.wallMs;
    if (enoughRuns(m.values, b, race ? &race->runs : nullptr, race && race->minimize, adaptive, cap, m.stoppedBy,
                   m.runsSaved))
      break;
    if (adaptive && (int)m.values.size() >= b.minRepeats && measuredMs / 1000 >= b.maxMeasureSeconds) {
      m.stoppedBy = "max_measure_s";
      break;
    }
  }
  Summary s = summarize(m.values);
  m.median = s.median;
  m.cvPercent = s.cvPercent;
  m.noisePercent = medianCiHalfWidthPercent(m.values);
  m.ok = true;
  noteBestRunWallMs(median(walls));
  return m;
}

} // namespace ciq
