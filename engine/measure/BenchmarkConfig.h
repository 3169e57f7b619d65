// The benchmark section of ciq.yaml (docs/config.md, "benchmark"): what
// measuring needs, apart from the rest of the configuration so that
// engine/measure depends on no engine header. The config reader fills it.
#pragma once
#include "common/SourceLoc.h"

#include <map>
#include <string>
#include <vector>

namespace ciq {

// How a metric is read from the benchmark (runtime tuning).
struct MetricSource {
  std::string kind = "wall_time";  // a name of kMetricSources (MetricSources.h)
  std::string pattern;             // regex (first capture group is the number) or JSON pointer
  std::string file;                // read from this file instead of stdout (relative to build dir)
  std::string nvbenchColumn = "GPU Time";   // NVBench: column / summary name
  std::string nvbenchState;        // NVBench: state (row) selector, empty: first
  std::string unit = "ms";
  bool unitGiven = false;          // `unit:` in ciq.yaml (ciq_tune's UNIT); else "ms" is a default
  double scale = 1.0;              // multiply the parsed value (e.g. 1e3 for s -> ms)
  // kernel_time (benchmark.kernels): a regex on the mangled or demangled
  // kernel name; the kernels it matches are summed. Empty: every kernel.
  std::string kernels;
};

// One case of benchmark.cases (docs/config.md, "Cases"): the benchmark run
// with `args` appended to its command and `env` added to its environment,
// e.g. one problem size. Every candidate runs every case.
struct BenchmarkCase {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  SourceLoc loc;
};

struct BenchmarkConfig {
  bool enabled = false;
  std::vector<std::string> command;   // argv; run in workingDir; [0] any program (see BenchmarkProgram.h)
  SourceLoc commandLoc;               // where command: is, for errors about the program
  std::string workingDir;             // default: the build directory
  std::map<std::string, std::string> env;
  // Files the build makes that the benchmark imports (benchmark.artifacts:
  // relative to the build directory, globs allowed): each build's copies are
  // put in place before each of its runs (engine/compile/BuildArtifacts.h).
  std::vector<std::string> artifacts;
  SourceLoc artifactsLoc;
  int warmup = 1;
  int repeats = 5;                    // fixed measured runs per candidate (when not adaptive)
  // repeats: adaptive (docs/config.md, "Adaptive repeats"): measure until the
  // median's relative 95% CI half-width is under targetNoisePercent, or the
  // candidate's budget (maxRepeats runs, maxMeasureSeconds) is spent.
  bool adaptive = false;
  double targetNoisePercent = 1.0;
  int minRepeats = 3;
  int maxRepeats = 200;   // a 3% gain under +-10% jitter needs ~130 runs a side (p < 0.01)
  double maxMeasureSeconds = 120;
  // Racing: stop measuring a candidate once it is significantly worse than
  // the incumbent (racedOut in Stats.h: one-sided Welch, p < raceAlpha, from
  // minRaceRuns runs; at 2 runs also every run worse than every incumbent run).
  // Default: on with adaptive repeats, off with fixed ones.
  bool racing = false;
  double raceAlpha = 0.01;
  static constexpr int minRaceRuns = 2;
  double timeoutSeconds = 60;         // per run; adapts down to adaptiveFactor x best median
  double adaptiveFactor = 3.0;
  // The least run limit once a best time is known (benchmark.run_timeout_floor_s):
  // the limit is never below this nor below ten best runs up to 10 s.
  double runTimeoutFloorSeconds = 2.0;
  MetricSource metric;
  std::vector<std::string> correctness;   // gate command; empty: the benchmark's exit status
  // Output comparison (correctness: {compare: ...}): "stdout" or a file the
  // check writes (relative to the working dir); "" : none. Every number of
  // a candidate's output must match the baseline's: |x - ref| <= atol + rtol |ref|.
  std::string compare;
  double rtol = 1e-5, atol = 1e-8;
  int finalists = 4;                      // re-measured interleaved with the baseline
  // Several cases in one objective: the score is the geometric mean of the
  // per-case ratios to the baseline, and a candidate that slows any case by
  // more than maxRegressionPercent is INVALID (case_regression). Empty: the
  // one command, as before.
  std::vector<BenchmarkCase> cases;
  double maxRegressionPercent = 1.0;
  // benchmark.kernel_times: where a metric other than kernel_time gets its
  // per-kernel figures. "warmup" (the default): the first warm-up run of each
  // build (and of each case) is traced through ciq's CUPTI injection, so the
  // timed runs stay untraced and the figures cost no extra run; "off": no
  // tracing (a benchmark already under a profiler). The kernel_time metric
  // traces every run it times, whatever this says.
  std::string kernelTimes = "warmup";
};

} // namespace ciq
