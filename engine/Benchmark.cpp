#include "Benchmark.h"
#include "BenchmarkProgram.h"
#include "MetricParser.h"
#include "Stats.h"
#include "Subprocess.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

BenchmarkRunner::BenchmarkRunner(const TuneConfig &cfg, std::map<std::string, std::string> env)
    : cfg_(cfg), env_(std::move(env)) {
  for (const auto &kv : cfg.benchmark.env)
    env_[kv.first] = kv.second;
}

double BenchmarkRunner::runTimeoutSeconds() const {
  double limit = cfg_.benchmark.timeoutSeconds;
  if (bestWallMs_ > 0) // never below 2 s: process start and CUDA context creation
    limit = std::min(limit, std::max(2.0, cfg_.benchmark.adaptiveFactor * bestWallMs_ / 1000.0));
  return limit;
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

RunOutcome BenchmarkRunner::checkCorrectness(const std::string &logPath) {
  RunOutcome o;
  if (cfg_.benchmark.correctness.empty()) {
    o.ok = true;
    return o;
  }
  SubprocessOptions so;
  so.cwd = benchmarkWorkDir(cfg_);
  so.setEnv = env_;
  so.timeoutSeconds = cfg_.benchmark.timeoutSeconds;
  auto r = runSubprocess(cfg_.benchmark.correctness, so);
  appendLog(logPath, "correctness: " + shellJoin(cfg_.benchmark.correctness), r);
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
  } else
    o.ok = true;
  return o;
}

RunOutcome BenchmarkRunner::runOnce(const std::string &logPath, const std::vector<std::string> &command) {
  const auto &cmd = command.empty() ? cfg_.benchmark.command : command;
  RunOutcome o;
  SubprocessOptions so;
  so.cwd = benchmarkWorkDir(cfg_);
  so.setEnv = env_;
  so.timeoutSeconds = runTimeoutSeconds();
  // A result file left by an earlier run must never be read as this run's.
  std::string file = cfg_.benchmark.metric.kind == "wall_time" ? "" : metricFilePath(cfg_.benchmark.metric, so.cwd);
  if (!file.empty() && llvm::sys::fs::exists(file)) {
    if (auto ec = llvm::sys::fs::remove(file)) {
      o.reason = reason::NoFreshResult;
      o.message = "cannot remove the previous result file " + file + " before the run: " + ec.message();
      return o;
    }
  }
  auto r = runSubprocess(cmd, so);
  appendLog(logPath, "benchmark: " + shellJoin(cmd), r);
  o.wallMs = r.wallMs;
  bool gateIsExit = cfg_.benchmark.correctness.empty();
  if (r.spawnFailed) {
    o.reason = reason::RunCrash;
    o.message = r.errorMessage;
    return o;
  }
  if (r.timedOut) {
    o.reason = reason::RunTimeout;
    char buf[96];
    snprintf(buf, sizeof buf, "the benchmark ran past its %.1f s limit", so.timeoutSeconds);
    o.message = buf;
    return o;
  }
  if (r.termSignal) {
    o.reason = reason::RunCrash;
    o.message = "the benchmark died of signal " + std::to_string(r.termSignal);
    return o;
  }
  if (r.exitCode != 0) {
    o.reason = gateIsExit ? reason::WrongAnswer : reason::RunCrash;
    o.message = "the benchmark exited " + std::to_string(r.exitCode);
    return o;
  }
  if (cfg_.benchmark.metric.kind == "wall_time") {
    o.value = r.wallMs;
    o.ok = true;
    return o;
  }
  if (!file.empty() && !llvm::sys::fs::exists(file)) {
    o.reason = reason::NoFreshResult;
    o.message = "the benchmark exited 0 but wrote no " + file + " in this run (benchmark.metric.file)";
    return o;
  }
  std::string err;
  auto v = parseMetric(cfg_.benchmark.metric, r.out, so.cwd, err);
  if (!v) {
    o.reason = reason::ParseError;
    o.message = err;
    return o;
  }
  if (!unitAllows(cfg_.benchmark.metric.unit, *v, err)) {
    o.reason = reason::InvalidValue;
    o.message = err;
    return o;
  }
  o.value = *v;
  o.ok = true;
  return o;
}

MeasureOutcome BenchmarkRunner::measure(const std::string &logPath, int repeats) {
  MeasureOutcome m;
  auto gate = checkCorrectness(logPath);
  m.wallMs += gate.wallMs;
  if (!gate.ok) {
    m.reason = gate.reason;
    m.message = gate.message;
    return m;
  }
  int n = repeats < 0 ? cfg_.benchmark.repeats : repeats;
  std::vector<double> walls;
  for (int i = 0; i < cfg_.benchmark.warmup + n; ++i) {
    auto r = runOnce(logPath);
    m.wallMs += r.wallMs;
    if (!r.ok) {
      m.reason = r.reason;
      m.message = r.message;
      return m;
    }
    if (i >= cfg_.benchmark.warmup) {
      m.values.push_back(r.value);
      walls.push_back(r.wallMs);
    }
  }
  Summary s = summarize(m.values);
  m.median = s.median;
  m.cvPercent = s.cvPercent;
  m.ok = true;
  noteBestRunWallMs(median(walls));
  return m;
}

} // namespace ciq
