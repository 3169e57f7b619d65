#include "Benchmark.h"
#include "BenchmarkProgram.h"
#include "MetricParser.h"
#include "Stats.h"
#include "Subprocess.h"

#include <algorithm>
#include <fstream>

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
    o.reason = "run_crash";
    o.message = r.errorMessage;
  } else if (r.timedOut) {
    o.reason = "run_timeout";
    o.message = "the correctness check ran past " + std::to_string((int)so.timeoutSeconds) + " s";
  } else if (r.termSignal) {
    o.reason = "run_crash";
    o.message = "the correctness check died of signal " + std::to_string(r.termSignal);
  } else if (r.exitCode != 0) {
    o.reason = "wrong_answer";
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
  auto r = runSubprocess(cmd, so);
  appendLog(logPath, "benchmark: " + shellJoin(cmd), r);
  o.wallMs = r.wallMs;
  bool gateIsExit = cfg_.benchmark.correctness.empty();
  if (r.spawnFailed) {
    o.reason = "run_crash";
    o.message = r.errorMessage;
    return o;
  }
  if (r.timedOut) {
    o.reason = "run_timeout";
    char buf[96];
    snprintf(buf, sizeof buf, "the benchmark ran past its %.1f s limit", so.timeoutSeconds);
    o.message = buf;
    return o;
  }
  if (r.termSignal) {
    o.reason = "run_crash";
    o.message = "the benchmark died of signal " + std::to_string(r.termSignal);
    return o;
  }
  if (r.exitCode != 0) {
    o.reason = gateIsExit ? "wrong_answer" : "run_crash";
    o.message = "the benchmark exited " + std::to_string(r.exitCode);
    return o;
  }
  if (cfg_.benchmark.metric.kind == "wall_time") {
    o.value = r.wallMs;
    o.ok = true;
    return o;
  }
  std::string err;
  auto v = parseMetric(cfg_.benchmark.metric, r.out, so.cwd, err);
  if (!v) {
    o.reason = "parse_error";
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
