// Unit tests of engine/analysis: statistics against known values, the metric
// parsers against the real output formats (NVBench CSV/JSON), the occupancy
// calculator against NVIDIA's occupancy rules, and the results.csv reader.
#include "engine/measure/CsvTable.h"
#include "engine/analysis/Diagnose.h"
#include "engine/analysis/Explain.h"
#include "engine/measure/MetricParser.h"
#include "engine/measure/NoiseSource.h"
#include "engine/analysis/Occupancy.h"
#include "engine/analysis/RunData.h"
#include "engine/measure/Stats.h"

#include <gtest/gtest.h>
#include <random>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

using namespace ciq;

// --- Stats -----------------------------------------------------------------

TEST(Stats, SummaryOfKnownSample) {
  // mean 5, sample variance 32/7 (population variance 4).
  Summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(s.cvPercent, 100 * std::sqrt(32.0 / 7.0) / 5.0, 1e-10);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
}

TEST(Stats, SummaryEdgeCases) {
  EXPECT_EQ(summarize({}).n, 0u);
  Summary one = summarize({3.5});
  EXPECT_DOUBLE_EQ(one.median, 3.5);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
}

// Wikipedia, "Welch's t-test", example 1: t = -2.46, df = 24.99, p = 0.021.
// t and df recomputed by hand to more digits (-2.4553564, 24.988529); p by
// numerical integration of the t density (0.0213780).
TEST(Stats, WelchMatchesTextbookExample) {
  std::vector<double> a = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                           21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  std::vector<double> b = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                           24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  WelchResult r = welchTTest(a, b);
  EXPECT_NEAR(r.t, -2.4553564, 1e-6);
  EXPECT_NEAR(r.df, 24.988529, 1e-5);
  EXPECT_NEAR(r.pValue, 0.0213780, 2e-6);
  // Symmetric in its arguments except for the sign of t.
  WelchResult s = welchTTest(b, a);
  EXPECT_NEAR(s.t, -r.t, 1e-12);
  EXPECT_NEAR(s.pValue, r.pValue, 1e-12);
}

TEST(Stats, WelchDegenerateInputs) {
  EXPECT_DOUBLE_EQ(welchTTest({1}, {1, 2, 3}).pValue, 1.0);
  EXPECT_DOUBLE_EQ(welchTTest({2, 2, 2}, {2, 2, 2}).pValue, 1.0);
  EXPECT_DOUBLE_EQ(welchTTest({2, 2, 2}, {3, 3, 3}).pValue, 0.0);
  // Identical distributions: no evidence of a difference.
  EXPECT_GT(welchTTest({1, 2, 3, 4}, {1, 2, 3, 4}).pValue, 0.99);
}

// --- Metric parsers ----------------------------------------------------------

namespace {
MetricSource src(const std::string &kind, const std::string &pattern = "") {
  MetricSource s;
  s.kind = kind;
  s.pattern = pattern;
  return s;
}
std::optional<double> parse(const MetricSource &s, const std::string &text, std::string &err) {
  return parseMetric(s, text, "", err);
}
} // namespace

TEST(MetricParser, RegexFirstCaptureGroup) {
  std::string err;
  auto v = parse(src("regex", "time_ms=([0-9.eE+-]+)"), "warmup\ntime_ms=1.25e-1 ok\ntime_ms=9\n", err);
  ASSERT_TRUE(v) << err;
  EXPECT_DOUBLE_EQ(*v, 0.125);
  MetricSource scaled = src("regex", "elapsed ([0-9.]+) s");
  scaled.scale = 1e3;
  v = parse(scaled, "elapsed 0.5 s", err);
  ASSERT_TRUE(v) << err;
  EXPECT_DOUBLE_EQ(*v, 500);
}

TEST(MetricParser, RegexErrorsShowPatternAndExcerpt) {
  std::string err;
  EXPECT_FALSE(parse(src("regex", "time=([0-9.]+)"), "Segmentation fault\n", err));
  EXPECT_NE(err.find("time=([0-9.]+)"), std::string::npos) << err;
  EXPECT_NE(err.find("Segmentation fault"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << "one line: " << err;
  EXPECT_FALSE(parse(src("regex", "time=[0-9]+"), "time=3", err));
  EXPECT_NE(err.find("capture group"), std::string::npos) << err;
  EXPECT_FALSE(parse(src("regex", "time=(["), "time=3", err));
  EXPECT_NE(err.find("not a valid regular expression"), std::string::npos) << err;
  EXPECT_FALSE(parse(src("wall_time"), "", err));
}

TEST(MetricParser, JsonPointerWholeTextAndJsonLines) {
  std::string err;
  auto v = parse(src("json_pointer", "/results/0/ms"), R"({"results":[{"ms":3.5}]})", err);
  ASSERT_TRUE(v) << err;
  EXPECT_DOUBLE_EQ(*v, 3.5);
  v = parse(src("json_pointer", "/ms"), "starting\n{\"ms\": 1}\n{\"ms\": \"2.5\"}\n", err);
  ASSERT_TRUE(v) << err;
  EXPECT_DOUBLE_EQ(*v, 2.5);
  EXPECT_FALSE(parse(src("json_pointer", "/missing"), R"({"ms":1})", err));
  EXPECT_NE(err.find("/missing"), std::string::npos);
  EXPECT_FALSE(parse(src("json_pointer", "/ms"), R"({"ms":"fast"})", err));
}

// The shape NVBench's csv_printer writes: durations as "<name> (sec)" in
// seconds, power-of-two axes as "Elements (pow2)" plus the plain value.
TEST(MetricParser, NvbenchCsv) {
  const std::string csv =
      "# Devices\nsome markdown\n\n"
      "Benchmark,Device,Device Name,Elements (pow2),Elements,Skipped,Samples,CPU Time (sec),"
      "Noise (%),GPU Time (sec),Noise (%),Elem/s (elem/sec)\n"
      "reduce,0,NVIDIA H200,2^20,1048576,No,1000,2.1e-05,1.5,1.234e-05,0.8,8.5e10\n"
      "reduce,0,NVIDIA H200,2^24,16777216,No,800,0.00021,1.1,0.0002,0.5,8.4e10\n";
  std::string err;
  MetricSource s = src("nvbench_csv");
  auto v = parse(s, csv, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 1.234e-02, 1e-12);   // seconds -> ms
  s.nvbenchState = "reduce Elements=2^24";
  v = parse(s, csv, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 0.2, 1e-12);
  s.nvbenchState = "Elements=16777216";
  s.unit = "us";
  v = parse(s, csv, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 200, 1e-9);
  s.nvbenchState = "Elements=2^30";
  EXPECT_FALSE(parse(s, csv, err));
  s.nvbenchState = "";
  s.nvbenchColumn = "Batch GPU";
  EXPECT_FALSE(parse(s, csv, err));
  EXPECT_NE(err.find("Batch GPU"), std::string::npos);
}

TEST(MetricParser, NvbenchCsvCellsWithUnits) {
  const std::string csv = "Benchmark,Skipped,GPU Time\nk,No,12.5 us\n";
  std::string err;
  auto v = parse(src("nvbench_csv"), csv, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 0.0125, 1e-12);
}

// The shape of NVBench's json_printer (file version 1): summaries as an array
// of {tag, name, hint, data: [{name: "value", type, value as a string}]}.
TEST(MetricParser, NvbenchJson) {
  const std::string json = R"({
    "meta": {"version": {"json": {"string": "1.0.0"}}},
    "benchmarks": [{
      "name": "transpose", "index": 0,
      "states": [
        {"name": "Device=0 N=2^10", "axis_values": [{"name": "N", "type": "int64", "value": "1024"}],
         "summaries": [], "is_skipped": true, "skip_reason": "too small"},
        {"name": "Device=0 N=2^12", "axis_values": [{"name": "N", "type": "int64", "value": "4096"}],
         "summaries": [
           {"tag": "nv/cold/time/cpu/mean", "name": "CPU Time", "hint": "duration",
            "data": [{"name": "value", "type": "float64", "value": "0.0031"}]},
           {"tag": "nv/cold/time/gpu/mean", "name": "GPU Time", "hint": "duration",
            "data": [{"name": "value", "type": "float64", "value": "0.0025"}]},
           {"tag": "nv/cold/bw/global/utilization", "name": "BWUtil", "hint": "percentage",
            "data": [{"name": "value", "type": "float64", "value": "0.75"}]}
         ], "is_skipped": false}
      ]}]})";
  std::string err;
  MetricSource s = src("nvbench_json");
  auto v = parse(s, json, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 2.5, 1e-12);   // first non-skipped state, seconds -> ms
  s.nvbenchColumn = "nv/cold/time/cpu/mean";
  s.nvbenchState = "transpose N=4096";
  v = parse(s, json, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 3.1, 1e-12);
  s.nvbenchColumn = "BWUtil";
  v = parse(s, json, err);
  ASSERT_TRUE(v) << err;
  EXPECT_NEAR(*v, 0.75, 1e-12);   // not a duration: unchanged
  s.nvbenchState = "N=2^10";
  EXPECT_FALSE(parse(s, json, err));
  EXPECT_NE(err.find("skipped"), std::string::npos) << err;
  EXPECT_FALSE(parse(src("nvbench_json"), "not json", err));
}

TEST(MetricParser, ReadsMetricFile) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-metric", dir));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os((dir + "/out.json").str(), ec);
    os << R"({"t": 7})";
  }
  MetricSource s = src("json_pointer", "/t");
  s.file = "out.json";
  std::string err;
  auto v = parseMetric(s, "ignored stdout", std::string(dir), err);
  ASSERT_TRUE(v) << err;
  EXPECT_DOUBLE_EQ(*v, 7);
  s.file = "absent.json";
  EXPECT_FALSE(parseMetric(s, "", std::string(dir), err));
  EXPECT_NE(err.find("absent.json"), std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

// --- Occupancy ---------------------------------------------------------------
// Expected values follow NVIDIA's CUDA Occupancy Calculator rules: registers
// are allocated per warp in units of 256 within 4 sub-partitions of 16K
// registers; shared memory per block adds the driver's 1 KiB reservation
// (sm_80+) and rounds to 128 bytes.

namespace {
OccupancyResult occ(const std::string &arch, int regs, int threads, long smem = 0) {
  std::string err;
  auto limits = archLimits(arch);
  EXPECT_TRUE(limits) << arch;
  OccupancyInput in;
  in.registersPerThread = regs;
  in.threadsPerBlock = threads;
  in.staticSharedBytes = smem;
  auto r = computeOccupancy(*limits, in, err);
  EXPECT_TRUE(r) << err;
  return r.value_or(OccupancyResult{});
}
} // namespace

TEST(Occupancy, Sm90RegisterLimited) {
  // 64 regs x 32 = 2048 per warp; 16384 per sub-partition -> 8 warps x 4 = 32
  // warps = 4 blocks of 8 warps; 32 of 64 warps = 50%.
  auto r = occ("sm_90", 64, 256);
  EXPECT_EQ(r.activeBlocksPerSM, 4);
  EXPECT_DOUBLE_EQ(r.occupancyPercent, 50.0);
  EXPECT_EQ(r.limitedBy, "registers");
}

TEST(Occupancy, Sm90FullAndSharedMemoryLimited) {
  EXPECT_DOUBLE_EQ(occ("sm_90", 32, 256).occupancyPercent, 100.0);
  // 48 KiB + 1 KiB reserved = 50176 bytes per block; 228 KiB / 50176 = 4 blocks.
  auto r = occ("sm_90", 32, 256, 48 * 1024);
  EXPECT_EQ(r.activeBlocksPerSM, 4);
  EXPECT_EQ(r.allocatedSharedPerBlock, 50176);
  EXPECT_EQ(r.limitedBy, "shared memory");
}

TEST(Occupancy, RegisterGranularityAndOtherArchitectures) {
  // 40 regs -> 1280 per warp (a multiple of 256); 16384/1280 = 12 warps per
  // sub-partition = 48 warps; 256-thread blocks (8 warps): 6 blocks = 75%.
  EXPECT_DOUBLE_EQ(occ("sm_80", 40, 256).occupancyPercent, 75.0);
  // 33 regs -> 1056 rounded to 1280: the same 75%.
  EXPECT_DOUBLE_EQ(occ("sm_80", 33, 256).occupancyPercent, 75.0);
  // sm_86: 48 warps per SM, 16 blocks: 128 threads x 32 regs -> 12 blocks by
  // warps but 16 by registers and blocks -> 48/48 = 100%.
  EXPECT_DOUBLE_EQ(occ("sm_86", 32, 128).occupancyPercent, 100.0);
  // sm_75: 32 warps per SM; 255 regs -> 8192 per warp, 2 warps per sub-partition.
  auto t = occ("sm_75", 255, 64);
  EXPECT_EQ(t.activeWarpsPerSM, 8);
  EXPECT_DOUBLE_EQ(t.occupancyPercent, 25.0);
  // Small blocks hit the blocks-per-SM limit: sm_90, 32 threads -> 32 blocks = 50%.
  auto b = occ("sm_90", 16, 32);
  EXPECT_EQ(b.activeBlocksPerSM, 32);
  EXPECT_NE(b.limitedBy.find("blocks"), std::string::npos);
}

TEST(Occupancy, ArchNamesAndImpossibleLaunch) {
  EXPECT_TRUE(archLimits("sm_90a"));
  EXPECT_TRUE(archLimits("compute_120"));
  EXPECT_FALSE(archLimits("sm_60"));
  std::string err;
  OccupancyInput in;
  in.registersPerThread = 255;
  in.threadsPerBlock = 1024;   // 255 x 1024 registers > 64K: cannot launch
  auto r = computeOccupancy(*archLimits("sm_90"), in, err);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->activeBlocksPerSM, 0);
  EXPECT_NE(err.find("does not fit"), std::string::npos);
}

// --- results.csv ---------------------------------------------------------------

TEST(RunData, ReadsQuotedResultsCsv) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-run", dir));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os((dir + "/results.csv").str(), ec);
    os << "candidate_id,generation,status,reason,baseline,pareto,duplicate_of,duplicate_kind,"
          "score,score_unit,cv_percent,candidate_hash,device_code_sha256,controls,rendered,"
          "build_ms,measure_ms,evaluated_at,log,time_ms\n"
          "c0000,0,OK,,1,0,,,2.5,ms,1.2,aa,bb,{},,100,200,2025-01-01T00:00:00Z,l0,2.5\n"
          "c0001,1,OK,,0,1,,,2.0,ms,0.9,cc,dd,\"{\"\"opt-level\"\":\"\"2\"\"}\","
          "\"-Xptxas --opt-level=2, -DX=1\",90,210,2025-01-01T00:00:01Z,l1,2.0\n"
          "c0002,1,INVALID,compile_error,0,0,,,,ms,,ee,,{},,50,0,2025-01-01T00:00:02Z,l2,\n";
  }
  std::string err;
  auto run = loadRun(std::string(dir), err);
  ASSERT_TRUE(run) << err;
  ASSERT_EQ(run->evals.size(), 3u);
  EXPECT_EQ(run->evals[1].controls, "{\"opt-level\":\"2\"}");
  EXPECT_EQ(run->evals[1].rendered, "-Xptxas --opt-level=2, -DX=1");
  EXPECT_DOUBLE_EQ(*run->evals[1].score, 2.0);
  EXPECT_FALSE(run->evals[2].score);
  EXPECT_EQ(run->evals[2].reason, "compile_error");
  EXPECT_EQ(run->baseline()->id, "c0000");
  ASSERT_EQ(run->objectiveNames.size(), 1u);
  EXPECT_EQ(run->objectiveNames[0], "time_ms");
  llvm::sys::fs::remove_directories(dir);
}

TEST(RunData, BadInputsNameTheFile) {
  std::string err;
  EXPECT_FALSE(loadRun("/nonexistent/ciq/run", err));
  EXPECT_NE(err.find("/nonexistent/ciq/run"), std::string::npos);
}

// --- GPU state ------------------------------------------------------------------

#include "engine/measure/GpuState.h"

TEST(GpuState, ReportsGpusOrSaysWhyNot) {
  nlohmann::json s = queryGpuState();
  ASSERT_TRUE(s.contains("gpus"));
  ASSERT_TRUE(s["gpus"].is_array());
  EXPECT_TRUE(s.contains("queried_at"));
  if (s["gpus"].empty()) {
    ASSERT_TRUE(s.contains("note"));
    EXPECT_NE(s["note"].get<std::string>().find("no GPU"), std::string::npos);
  } else {
    EXPECT_TRUE(s["gpus"][0]["name"].is_string());
    EXPECT_TRUE(s["gpus"][0].contains("clocks_sm_mhz"));
  }
}

TEST(Ncu, NeverChangesClocksAndProfilesFirstLaunches) {
  auto argv = ncuArgv("/opt/ncu", {"./bench", "--n", "4"});
  auto has = [&](const std::string &opt, const std::string &value) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == opt && argv[i + 1] == value)
        return true;
    return false;
  };
  EXPECT_EQ(argv.front(), "/opt/ncu");
  EXPECT_TRUE(has("--clock-control", "none"));
  EXPECT_TRUE(has("--kernel-id", ":::1"));
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
            (std::vector<std::string>{"./bench", "--n", "4"}));
}

// The shape of `ncu --csv --page raw`: the application's output, a header,
// a units row, one row per profiled launch; extra device-attribute columns.
const char *kNcuCsv =
    "==PROF== Connected to process 4242\n"
    "bench: 0.84 ms\n"
    "\"ID\",\"Kernel Name\",\"device__attribute_clock_rate\",\"gpu__time_duration.sum\","
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\","
    "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
    "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\"\n"
    "\"\",\"\",\"\",\"usecond\",\"%\",\"inst\",\"inst\"\n"
    "\"0\",\"star25(const float *)\",\"1,980,000\",\"1,024.5\",\"54.59\",\"1.64\",\"2.28\"\n";

TEST(Ncu, ParsesOnlyTheRequestedMetricsUnderReadableNames) {
  std::string error;
  auto k = parseNcuCsv(kNcuCsv, error);
  ASSERT_TRUE(k) << error;
  ASSERT_EQ(k->size(), 1u);
  EXPECT_EQ((*k)[0].name, "star25(const float *)");
  EXPECT_EQ((*k)[0].metrics.size(), 4u); // not the device attribute
  EXPECT_EQ((*k)[0].metrics.at("duration"), "1,024.5 usecond");
  EXPECT_EQ((*k)[0].metrics.at("achieved occupancy (%)"), "54.59 %");
  EXPECT_EQ((*k)[0].metrics.at("stall: barrier (per issue)"), "1.64 inst");
  EXPECT_FALSE(parseNcuCsv("bench: no kernel\n", error));
  EXPECT_EQ(error, "ncu printed no kernel metrics (did the benchmark launch a kernel?)");
}

TEST(Ncu, ComparisonShowsRelativeChangeAndOnlyStallsThatMoved) {
  std::string error;
  auto a = *parseNcuCsv(kNcuCsv, error);
  auto b = a;
  b[0].metrics["duration"] = "512.25 usecond";
  b[0].metrics["stall: barrier (per issue)"] = "2.05 inst";
  std::string out;
  llvm::raw_string_ostream os(out);
  printNcuComparison(a, b, "c0000", "c0007", os);
  os.flush();
  EXPECT_NE(out.find("clocks as they are, not locked"), std::string::npos);
  EXPECT_NE(out.find("-50.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("+25.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("achieved occupancy (%)"), std::string::npos);
  EXPECT_EQ(out.find("stall: wait"), std::string::npos) << out;
}

// --- Issue 21: noise of the median, racing test, noise sources -------------

TEST(Stats, MedianCiHalfWidth) {
  EXPECT_DOUBLE_EQ(medianCiHalfWidthPercent({1}), -1);
  EXPECT_DOUBLE_EQ(medianCiHalfWidthPercent({0, 0, 0}), -1);
  // n = 5: ranks clamp to the sample, half the range over the median.
  EXPECT_NEAR(medianCiHalfWidthPercent({9, 10, 10, 10, 11}), 10.0, 1e-12);
  // n = 100, values 1..100: ranks floor(50 - 9.8) = 40 and ceil(50 + 9.8 + 1) = 61.
  std::vector<double> v;
  for (int i = 100; i >= 1; --i)
    v.push_back(i);
  EXPECT_NEAR(medianCiHalfWidthPercent(v), 100.0 * (61 - 40) / 2 / 50.5, 1e-9);
  // One wild outlier in 30 runs barely moves it (the CV explodes).
  std::vector<double> w(30, 10.0);
  for (int i = 0; i < 30; ++i)
    w[i] += 0.01 * (i % 5);
  double before = medianCiHalfWidthPercent(w);
  w[7] = 1000;
  EXPECT_NEAR(medianCiHalfWidthPercent(w), before, 0.06);
  // 3 runs: the range covers the median only 75% of the time, so Student's
  // t half-width bounds it from below. Three runs 1% apart in all: half the
  // range is 0.5%, t(0.975, 2) 0.05 / sqrt(3) is 1.24%.
  EXPECT_NEAR(medianCiHalfWidthPercent({10, 10.05, 10.1}), 100 * 4.302653 * 0.05 / std::sqrt(3.0) / 10.05, 1e-4);
  // Runs that agree closely still pass a 1% target after 3 (0.3% CV: 0.75%).
  EXPECT_LT(medianCiHalfWidthPercent({10, 10.03, 9.97}), 1.0);
}

TEST(Stats, PWorseIsOneSided) {
  std::vector<double> fast = {10, 10.1, 9.9, 10.05}, slow = {11, 11.1, 10.9, 11.05};
  EXPECT_LT(pWorse(slow, fast, true), 0.001);
  EXPECT_GT(pWorse(fast, slow, true), 0.99);
  EXPECT_LT(pWorse(fast, slow, false), 0.001);   // maximizing: lower is worse
  EXPECT_DOUBLE_EQ(pWorse({11}, fast, true), 1); // too few runs: no evidence
}

TEST(Stats, RacedOutFromTwoRunsOnlyWhenTheRangesAreApart) {
  std::vector<double> best = {100, 100, 100, 100, 100, 105};
  // Welch alone calls 104.9 and 105 worse (p ~ 0.002), but the incumbent ran
  // 105 once: two runs do not yet say this candidate is worse.
  ASSERT_LT(pWorse({104.9, 105}, best, true), 0.01);
  EXPECT_FALSE(racedOut({104.9, 105}, best, true, 0.01));
  EXPECT_TRUE(racedOut({104.9, 105, 105.1}, best, true, 0.01)); // 3 runs: Welch decides
  EXPECT_TRUE(racedOut({120, 121}, best, true, 0.01));
  EXPECT_FALSE(racedOut({120}, best, true, 0.01));                // 1 run: no spread at all
  EXPECT_TRUE(racedOut({80, 81}, best, false, 0.01));             // maximizing: lower is worse
  EXPECT_FALSE(racedOut({120, 121}, best, false, 0.01));
}

// Seeded, 1% run noise, 2 runs against 3 to 5: a better candidate is never
// raced, an equal one about as often as alpha allows (1%), a 10% worse one
// mostly (about 70%; Welch with two runs has few degrees of freedom: the
// rest stop at 3).
TEST(Stats, RacedOutAtTwoRunsErrsRarely) {
  std::mt19937 gen(21);
  std::normal_distribution<double> noise(0, 0.01);
  auto runs = [&](int n, double centre) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
      v.push_back(centre * (1 + noise(gen)));
    return v;
  };
  int better = 0, equal = 0, worse = 0, trials = 4000;
  for (int t = 0; t < trials; ++t) {
    auto incumbent = runs(3 + t % 3, 10);
    better += racedOut(runs(2, 9.8), incumbent, true, 0.01);
    equal += racedOut(runs(2, 10), incumbent, true, 0.01);
    worse += racedOut(runs(2, 11), incumbent, true, 0.01);
  }
  EXPECT_EQ(better, 0);
  EXPECT_LE(equal, trials * 15 / 1000);
  EXPECT_GE(worse, trials * 6 / 10);
}

namespace {
std::vector<double> seededRuns(int n, unsigned seed, double sdPercent) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0, sdPercent / 100);
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(10 * (1 + noise(gen)));
  return v;
}
} // namespace

TEST(NoiseSource, EachSourceFromSeededRuns) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    auto random = seededRuns(20, seed, 2);
    auto src = noiseSource(random, 1);
    ASSERT_TRUE(src);
    EXPECT_EQ(src->kind, "random") << "seed " << seed << ": " << src->evidence;

    auto drift = seededRuns(20, seed, 0.3);
    for (size_t i = 0; i < drift.size(); ++i)
      drift[i] *= 1 + 0.004 * i;   // 7.6% over the runs
    EXPECT_EQ(noiseSource(drift, 1)->kind, "drift") << "seed " << seed;

    auto first = seededRuns(20, seed, 0.5);
    first[0] *= 1.3;
    EXPECT_EQ(noiseSource(first, 1)->kind, "first_run_outlier") << "seed " << seed;

    auto bimodal = seededRuns(20, seed, 0.2);
    std::mt19937 coin(seed + 100);
    for (auto &x : bimodal)
      x *= coin() % 2 ? 1.05 : 1.0;
    EXPECT_EQ(noiseSource(bimodal, 1)->kind, "bimodal") << "seed " << seed;
  }
  EXPECT_FALSE(noiseSource({1, 2, 3, 4}, 1));
}

TEST(NoiseSource, GpuStateComesFirst) {
  std::vector<double> drift = {10, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6};
  EXPECT_EQ(noiseSource(drift, 1)->kind, "drift");
  auto s = noiseSource(drift, 1, {"GPU 0 throttled (sw_power_cap)"});
  EXPECT_EQ(s->kind, "gpu_state");
  EXPECT_NE(s->evidence.find("GPU 0 throttled (sw_power_cap)"), std::string::npos);
}

// The SM clock read before and after the runs: a move over the target names
// clock_change (before the runs' shape, after the GPU's named problems); a
// move within the target, or one reading missing, does not.
TEST(NoiseSource, ClockChangeOverTheTarget) {
  std::vector<double> drift = {10, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6};
  auto s = noiseSource(drift, 1, {}, {1980, 1755});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "clock_change");
  EXPECT_NE(s->evidence.find("1980 MHz before the runs and 1755 MHz after (-11.4%)"), std::string::npos) << s->evidence;
  EXPECT_EQ(noiseSource(drift, 1, {}, {1980, 1965})->kind, "drift");  // 0.8%: within the 1% target
  EXPECT_EQ(noiseSource(drift, 1, {}, {1980})->kind, "drift");
  EXPECT_EQ(noiseSource(drift, 1, {"GPU 0 throttled (sw_power_cap)"}, {1980, 1755})->kind, "gpu_state");
}
