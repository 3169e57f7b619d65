// Which controls cause a winner's gain. The winner is split into groups
// (application parameters: -D macros; compiler controls: ptxas and nvcc
// options and ACFs), and baseline, parameters only, compiler controls only
// and both are built, measured interleaved and each judged against the
// baseline with the same test as `ciq validate` (Welch's t-test, CV%).
// Compile-only objectives compare exactly (no runs, no p-values).
#pragma once
#include "engine/measure/Benchmark.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/config/Config.h"
#include "engine/measure/Interleave.h"
#include "engine/measure/MeasuredPhase.h"
#include "engine/config/Space.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct Variant {
  std::string name;   // "baseline", "parameters only", "compiler controls only", "both"
  Rendered rendered;
};

struct VariantResult {
  std::string name, controls;   // controls: the rendered command-line summary
  std::vector<double> values;   // runs (runtime) or the one exact value (compile-only)
  std::vector<double> warmup;   // warm-up runs, not counted
  double median = 0, cvPercent = 0;
  // baseline / variant for minimized metrics, variant / baseline else; none
  // when the divisor is 0 (spill_bytes 888 -> 0 is better, not a 0x speedup).
  std::optional<double> speedup;
  double reference = 0;         // the reference row's median, to print "888 -> 0" without a speedup
  double pValue = -1;           // <0: exact comparison (compile-only)
  bool significant = false;     // better than the baseline (significantly, for runtime metrics)
  std::string verdict;          // "significantly better", or why not
  std::string twinOf;           // a twin row: the row whose build (same binary) was measured for it
  bool reused = false;          // judged on runs measured before (the finalists'), not run again
};

// The application-parameter part and the compiler-control part of a rendering.
Rendered parametersOnly(const Rendered &r);
Rendered compilerControlsOnly(const Rendered &r);   // command-line controls: ptxas/nvcc options, ACFs
Rendered kernelControlsOnly(const Rendered &r);     // per-kernel controls (PTX directives)

// baseline, then each group alone (parameters, compiler controls, per-kernel
// controls) where the winner has more than one, then the winner: a winner
// of one group gives baseline and the winner only.
std::vector<Variant> attributionVariants(const Rendered &winner);

// Builds each variant once (equal renderings share one build), then scores
// them: the primary objective's compile metric exactly, or the benchmark
// run `rounds` times in balanced interleaved order. Row 0 is the reference
// every other row is judged against. `tag` names logs and snapshots. With
// `phase`, the runs (not the builds) hold the GPU, and its problems during
// them land in `problems`.
struct MeasureOptions {
  int warmupRounds = 0;
  MeasuredPhase *phase = nullptr;
  std::vector<std::string> *problems = nullptr;
  // Adaptive repeats: asked after every round whether the runs suffice
  // (runInterleaved); `rounds` is then the most.
  EnoughRounds enough;
  // The verdicts' CV gate (judge, Interleave.h); adaptive repeats turn it off.
  double maxCvPercent = 10;
  // Rendered hash -> command of its benchmark snapshot: a build made once
  // in this run is not made again (the same rendering builds the same program).
  std::map<std::string, std::vector<std::string>> *snapshots = nullptr;
  // Compile-only: an OK evaluation of this rendered hash already made, or nullptr.
  std::function<const Evaluation *(const std::string &)> known;
  // Programs that compile at run time (Triton): called before each run with
  // the candidate of the build about to run, to send that run's compiles
  // the candidate (and a framework cache of its own).
  using ServeRuntime = std::function<void(const Evaluation &)>;
  ServeRuntime serveRuntime;
  // `ciq stop`: the interleaved rounds end early and measureVariants returns
  // nullopt (the caller asks the same function to tell a stop from a failure).
  StopRequested stop;
  // Journaled rounds (issue 49 item 3): roundsKey names this kind of
  // measurement ("minimize", "attribution", with cases "/<case>"); the key of
  // one measurement adds its renderings. priorRounds gives the runs a
  // killed run journaled under a key, onRun journals each run measured now.
  std::string roundsKey;
  std::function<const std::vector<std::vector<double>> *(const std::string &key)> priorRounds;
  std::function<void(const std::string &key, int round, size_t build, double value)> onRun;
  // Runs measured already (issue 49 item 2): the values of this build in an
  // earlier interleaved re-measurement (the finalists'), in the case
  // measured now (caseIndex, -1 without cases), or nullptr. When every
  // variant has them the rows are judged on them: nothing is built or run.
  std::function<const std::vector<double> *(const std::string &renderedHash, int caseIndex)> measuredRuns;
  int caseIndex = -1;
  // What makes two builds one binary (device and host code), for variants
  // whose renderings differ: a twin row is measured once ("" : never).
  std::function<std::string(const Evaluation &)> reuseKey;
};

// The variants' rows judged on runs measured before (MeasureOptions::
// measuredRuns), when every variant has them; nullopt otherwise.
std::optional<std::vector<VariantResult>> rowsFromMeasuredRuns(const TuneConfig &cfg,
                                                               const std::vector<Variant> &variants,
                                                               const MeasureOptions &opts);

std::optional<std::vector<VariantResult>> measureVariants(CandidateBuilder &builder, BenchmarkRunner *bench,
                                                          const TuneConfig &cfg, const std::vector<Variant> &variants,
                                                          int rounds, const std::string &tag, std::string &error,
                                                          const MeasureOptions &opts = {});

// Judges `row` against the reference row `ref` (exact: compile metrics, one
// value each; else the runs, too noisy above maxCvPercent).
void judgeAgainst(VariantResult &row, const VariantResult &ref, bool minimize, bool exact, double maxCvPercent = 10);
// A compile-only row "equal" to the reference in the first objective is
// told apart by the later ones, as the search ranks candidates
// (lexicographic: the first compile metric that differs decides; runtime
// objectives are not exact and are left out; with `pareto`, better
// only when none is worse, else "a trade-off"): a winner that saves
// registers at equal spill bytes said "equal" beside the verdict that it
// beats the default compile. The verdict names the objective and its
// values ("better in registers 94 -> 52 registers").
void breakTieByLaterObjectives(VariantResult &row, const std::map<std::string, double> &mine,
                               const std::map<std::string, double> &ref, const std::vector<Objective> &objectives,
                               bool pareto);

// "1.250x", or "n/a (888 -> 0 bytes)" when the speedup is undefined (NumberFormat.h).
std::string speedupText(const VariantResult &r, const std::string &unit);

// The rows as the journal and the lockfile record them (engine/record/AfterSearch.h).
nlohmann::json variantsToJson(const std::vector<VariantResult> &rows);
// "  parameters only           median 1.234 ms  1.250x  p = 1e-06  significantly better  (-DTILE=8)"
std::string formatVariant(const VariantResult &r, const std::string &unit);

} // namespace ciq
