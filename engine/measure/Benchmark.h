// Runs the user's correctness check and benchmark, each run its own process
// with a hard time limit, and turns their output into a metric (ms, or the
// unit of benchmark.metric).
#pragma once
#include "engine/measure/BenchmarkConfig.h"
#include "common/InvalidReason.h"
#include "engine/record/KernelTime.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct RunOutcome {
  bool ok = false;
  std::string reason;     // a name of invalidReasons() (InvalidReason.h)
  std::string message;    // one line
  double value = 0;       // the metric, in its unit
  double wallMs = 0;      // process wall time, ms
  KernelTimes kernels;    // the run's kernels, when it was traced (KernelTrace.h)
  std::string kernelsWhy; // a traced warm-up run without kernel times: why (one line)
};

// One case's runs (benchmark.cases): what MeasureOutcome says of the whole
// for one command.
struct CaseMeasure {
  std::string name;
  std::vector<double> values;
  double median = 0, cvPercent = 0, noisePercent = -1;
  std::string stoppedBy;
  int runsSaved = 0;
  KernelTimes kernels{};   // the case's traced run
};

struct MeasureOutcome {
  bool ok = false;
  std::string reason, message;
  std::vector<double> values;   // one per repeat, metric unit
  double median = 0, cvPercent = 0, wallMs = 0;
  double noisePercent = -1;     // medianCiHalfWidthPercent(values) (Stats.h)
  // Why measuring stopped: "repeats" (the fixed count), "target" (noise
  // under benchmark.target_noise_percent), "max_repeats", "max_measure_s"
  // (adaptive budget spent), "racing" (significantly worse than the incumbent).
  std::string stoppedBy;
  int runsSaved = 0;            // racing: the runs the candidate's budget still had
  // benchmark.cases: each case's runs (values, median and noise above stay
  // empty: the cases' ratios to the baseline make the score, CaseScore.h).
  std::vector<CaseMeasure> cases;
  // The kernels of the build, for the per-kernel table: with the
  // kernel_time metric those of the last measured run, else those of the
  // traced warm-up run (benchmark.kernel_times); with cases, every case's
  // kernels merged (launch counts and times summed over the cases).
  KernelTimes kernels;
  // Where `kernels` comes from: "measured_runs", "warmup_run", or "" (none:
  // kernelsWhy says why, when tracing was asked for and gave nothing).
  std::string kernelsFrom, kernelsWhy;
};

// Keeps the traced run r's kernels in m (`from`: "warmup_run" or
// "measured_runs"), or why it has none.
void noteKernelFigures(MeasureOutcome &m, RunOutcome &r, const char *from);

// The candidate racing compares against: the best one measured so far.
struct RaceAgainst {
  std::vector<double> runs;
  bool minimize = true;
  std::map<std::string, std::vector<double>> caseRuns;   // benchmark.cases: the incumbent's runs per case
};

// After a measured run of one build (or one case of it): whether its runs
// so far are enough. Racing first, from 2 runs (a clearly worse candidate
// needs no precise figure) against `incumbent` (null: no race); then the
// cap; then, adaptive, the noise target from min_repeats on. Sets stoppedBy
// ("racing", "repeats"/"max_repeats", "target") and, raced, runsSaved.
bool enoughRuns(const std::vector<double> &values, const BenchmarkConfig &b, const std::vector<double> *incumbent,
                bool minimize, bool adaptive, int cap, std::string &stoppedBy, int &runsSaved);

// Whether `value` is a possible measurement in `unit` (finite; durations
// above 0, other units 0 or more); else `why` says what is wrong.
bool unitAllows(const std::string &unit, double value, std::string &why);

// One run's time limit: timeout_s until a run was timed (bestWallMs 0), then
// adaptive_factor x the best run, never below ten best runs (capped at 10 s)
// nor below floorSeconds, never above timeout_s.
double runLimitSeconds(double timeoutSeconds, double adaptiveFactor, double floorSeconds, double bestWallMs);

class BenchmarkRunner {
public:
  // Runs in workDir (benchmarkWorkDir(), BenchmarkProgram.h) with b.env
  // added to env; b is read at every run, not copied.
  BenchmarkRunner(const BenchmarkConfig &b, std::string workDir, std::map<std::string, std::string> env = {});
  // Correctness gate, warm-up runs, then `repeats` measured runs (-1: the
  // config's, fixed or adaptive), stopped early by racing against `race`
  // when benchmark.racing is on. Outputs are appended to logPath.
  MeasureOutcome measure(const std::string &logPath, int repeats = -1, const RaceAgainst *race = nullptr);
  // One measured run of `command` (default: the configured benchmark),
  // with the selected case's args after it (selectCase).
  RunOutcome runOnce(const std::string &logPath, const std::vector<std::string> &command = {});
  // A warm-up run traced for its kernels only (benchmark.kernel_times: warmup):
  // its value is not counted, and a trace that failed never fails the run
  // (kernelsWhy says why it has no kernels).
  RunOutcome tracedWarmupRun(const std::string &logPath, const std::vector<std::string> &command = {});
  // Whether the first warm-up run of a build is traced: a metric other than
  // kernel_time, benchmark.kernel_times warmup and at least one warm-up run.
  bool tracesWarmup() const;
  // The correctness gate alone; with benchmark.correctness.compare, also
  // the output comparison against the reference (setReferenceFile).
  RunOutcome checkCorrectness(const std::string &logPath);
  // Where the baseline's output numbers are kept (JSON array): the first
  // check that passes while the file is absent writes it (the baseline is
  // measured first); every later check compares against it.
  void setReferenceFile(std::string path) { referenceFile_ = std::move(path); }
  // Tightens the per-run limit to the best run time seen (runLimitSeconds).
  void noteBestRunWallMs(double wallMs);
  double runTimeoutSeconds() const;
  // The case later runs run (benchmark.cases): its args follow the command
  // (and the correctness check), its env is added, and its output is
  // compared with the baseline's output of the same case. Null: no case.
  void selectCase(const BenchmarkCase *c);
  // The configured benchmark's argv with the selected case's args.
  std::vector<std::string> caseCommand(const std::vector<std::string> &base) const;
  // Adds (or replaces) variables of the runs' environment: the candidate's
  // socket, stand-ins and framework cache for programs that compile at run time.
  void setEnv(const std::map<std::string, std::string> &vars) {
    for (const auto &kv : vars)
      env_[kv.first] = kv.second;
  }

private:
  const BenchmarkConfig &b_;
  std::string workDir_;
  std::map<std::string, std::string> env_;
  double bestWallMs_ = 0;
  std::string referenceFile_;
  const BenchmarkCase *case_ = nullptr;
  bool figuresOnly_ = false;   // the run in progress is tracedWarmupRun's
  std::map<std::string, std::string> runEnv() const;
  std::string referencePath() const;
  MeasureOutcome measureCases(const std::string &logPath, const RaceAgainst *race);
  bool startKernelTrace(const std::string &logPath, std::map<std::string, std::string> &env, std::string &prefix,
                        RunOutcome &o);
  void readKernelTimes(const std::string &prefix, RunOutcome &o);
  void readKernelFigures(const std::string &prefix, RunOutcome &o);
  RunOutcome compareOutput(const std::string &stdoutText, const std::string &cwd);
};

// The baseline's output numbers kept at `path` (a JSON array; setReferenceFile),
// or nullopt with `why` ("is missing", "cannot be read (...)").
std::optional<std::vector<double>> readReferenceOutput(const std::string &path, std::string &why);
// Every number in `text` (decimal or exponent notation, nan, inf), in order.
std::vector<double> numbersIn(const std::string &text);
// "" when `got` matches `want` (same count, |x - ref| <= atol + rtol |ref|
// each, NaN only against NaN), else what differs, one phrase.
std::string compareNumbers(const std::vector<double> &got, const std::vector<double> &want, double rtol, double atol);

} // namespace ciq
