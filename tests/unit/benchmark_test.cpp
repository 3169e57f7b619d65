// The benchmark protocol's CPU side: each run its own process with a hard
// limit, outcomes named, and the validation verdict's thresholds.
#include "Benchmark.h"
#include "Interleave.h"

#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq;

namespace {

TuneConfig shellBenchmark(const std::string &script, double timeout = 5) {
  TuneConfig cfg;
  cfg.buildDir = "/tmp";
  cfg.benchmark.enabled = true;
  cfg.benchmark.command = {"sh", "-c", script};
  cfg.benchmark.timeoutSeconds = timeout;
  cfg.benchmark.metric.kind = "regex";
  cfg.benchmark.metric.pattern = "time_ms=([0-9.]+)";
  cfg.benchmark.warmup = 1;
  cfg.benchmark.repeats = 3;
  return cfg;
}

const std::string kLog = "/tmp/ciq-benchmark-test.log";

} // namespace

TEST(Benchmark, MedianAndCvOfRepeats) {
  auto cfg = shellBenchmark("echo time_ms=2.5");
  BenchmarkRunner r(cfg);
  auto m = r.measure(kLog);
  ASSERT_TRUE(m.ok) << m.message;
  EXPECT_EQ(m.values.size(), 3u);
  EXPECT_DOUBLE_EQ(m.median, 2.5);
  EXPECT_DOUBLE_EQ(m.cvPercent, 0);
}

TEST(Benchmark, CrashIsRunCrash) {
  auto cfg = shellBenchmark("kill -SEGV $$");
  BenchmarkRunner r(cfg);
  auto o = r.runOnce(kLog);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.reason, "run_crash");
  EXPECT_NE(o.message.find("signal 11"), std::string::npos);
}

TEST(Benchmark, HangIsRunTimeoutWithinTheLimit) {
  auto cfg = shellBenchmark("sleep 30", /*timeout=*/0.5);
  BenchmarkRunner r(cfg);
  auto o = r.runOnce(kLog);
  EXPECT_EQ(o.reason, "run_timeout");
  EXPECT_LT(o.wallMs, 3000);
}

TEST(Benchmark, NonZeroExitIsWrongAnswerWhenItIsTheGate) {
  auto cfg = shellBenchmark("echo time_ms=1; exit 1");
  BenchmarkRunner r(cfg);
  EXPECT_EQ(r.runOnce(kLog).reason, "wrong_answer");
  cfg.benchmark.correctness = {"sh", "-c", "exit 3"};
  BenchmarkRunner gated(cfg);
  auto m = gated.measure(kLog);
  EXPECT_EQ(m.reason, "wrong_answer");
  EXPECT_NE(m.message.find("correctness check exited 3"), std::string::npos);
}

TEST(Benchmark, UnparsableOutputIsParseErrorShowingThePattern) {
  auto cfg = shellBenchmark("echo elapsed: 3 ms");
  BenchmarkRunner r(cfg);
  auto o = r.runOnce(kLog);
  EXPECT_EQ(o.reason, "parse_error");
  EXPECT_NE(o.message.find("time_ms="), std::string::npos) << o.message;
}

TEST(Benchmark, RunLimitAdaptsToTheBestTimeSeen) {
  auto cfg = shellBenchmark("echo time_ms=1", /*timeout=*/60);
  cfg.benchmark.adaptiveFactor = 3;
  BenchmarkRunner r(cfg);
  EXPECT_DOUBLE_EQ(r.runTimeoutSeconds(), 60);
  r.noteBestRunWallMs(4000);
  EXPECT_DOUBLE_EQ(r.runTimeoutSeconds(), 12);
  r.noteBestRunWallMs(100); // never below 2 s: process start and CUDA context
  EXPECT_DOUBLE_EQ(r.runTimeoutSeconds(), 2);
}

TEST(Verdict, SignificantOnlyWithLowNoiseAndSmallP) {
  std::vector<double> base = {10.0, 10.1, 9.9, 10.0, 10.05, 9.95, 10.0, 10.1, 9.9, 10.0};
  std::vector<double> fast = {9.0, 9.1, 8.9, 9.0, 9.05, 8.95, 9.0, 9.1, 8.9, 9.0};
  Verdict v = judge(base, fast, /*minimize=*/true);
  EXPECT_TRUE(v.significant) << v.reason;
  EXPECT_NEAR(v.speedup, 10.0 / 9.0, 1e-9);
  EXPECT_LT(v.welch.pValue, 0.01);

  Verdict same = judge(base, base, true);
  EXPECT_FALSE(same.significant);
  EXPECT_NE(same.reason.find("p = "), std::string::npos);

  std::vector<double> noisy = {5, 15, 5, 15, 5, 15, 5, 15, 5, 15};
  Verdict n = judge(base, noisy, true);
  EXPECT_FALSE(n.significant);
  EXPECT_NE(n.reason.find("too noisy"), std::string::npos);

  Verdict slower = judge(fast, base, true);
  EXPECT_FALSE(slower.significant);
  EXPECT_NE(slower.reason.find("not faster"), std::string::npos);
}

// Issue 12, case 1: a time of 0, a negative time, NaN or infinity is no
// score: INVALID invalid_value, with the value in the message.
TEST(Benchmark, ImpossibleValuesAreInvalidValue) {
  for (const char *v : {"0", "-1", "nan", "inf", "0.0"}) {
    auto cfg = shellBenchmark(std::string("echo time_ms=") + v);
    cfg.benchmark.metric.pattern = "time_ms=([-+0-9.a-z]+)";
    BenchmarkRunner r(cfg);
    auto o = r.runOnce(kLog);
    EXPECT_FALSE(o.ok) << v;
    EXPECT_EQ(o.reason, "invalid_value") << v << ": " << o.message;
  }
  std::string why;
  EXPECT_TRUE(unitAllows("GB/s", 0, why));   // a rate may be 0
  EXPECT_FALSE(unitAllows("GB/s", -3, why)); // never negative
  EXPECT_NE(why.find("-3 GB/s"), std::string::npos) << why;
  EXPECT_TRUE(unitAllows("ms", 0.001, why));
}

// Issue 12, case 2: benchmark.metric.file left by the previous run is never
// read again: it is removed before each run, and a run that writes none is
// INVALID no_fresh_result.
TEST(Benchmark, StaleResultFileIsNoFreshResult) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-fresh", dir));
  auto cfg = shellBenchmark("test -e skip || echo '{\"t\": 7.00487}' > bench.json");
  cfg.benchmark.workingDir = dir.str().str();
  cfg.benchmark.metric.kind = "json_pointer";
  cfg.benchmark.metric.pattern = "/t";
  cfg.benchmark.metric.file = "bench.json";
  BenchmarkRunner r(cfg);
  auto first = r.runOnce(kLog);
  ASSERT_TRUE(first.ok) << first.message;
  EXPECT_DOUBLE_EQ(first.value, 7.00487);
  std::ofstream(dir.str().str() + "/skip") << "";
  auto second = r.runOnce(kLog);
  EXPECT_FALSE(second.ok);
  EXPECT_EQ(second.reason, "no_fresh_result") << second.message;
  llvm::sys::fs::remove_directories(dir);
}
