// ciq.yaml: what to tune (docs/config.md). Parsed with yaml-cpp; every error
// names the file, line and key, and what was expected.
#pragma once
#include "engine/measure/BenchmarkConfig.h"
#include "common/BuildMode.h"
#include "common/SourceLoc.h"
#include "engine/config/KernelSpace.h"
#include "engine/config/Space.h"
#include "engine/config/StrategyTable.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// One objective. Compile metrics come from the wrapper's receipts (ptxas -v);
// runtime metrics from the benchmark.
struct Objective {
  std::string metric;      // spill_bytes, spill_stores, spill_loads, registers, stack_frame,
                           // shared_bytes, compile_ms, device_code_bytes, time_ms (benchmark), or a
                           // name of a benchmark-parsed value
  std::string direction = "minimize";  // or "maximize"
  std::string unit;        // bytes, registers, ms, ... (filled from the metric when empty)
  std::vector<std::string> kernels;    // empty: summed over all kernels (compile metrics)
  std::string reduce = "sum";          // sum | max over kernels
  SourceLoc loc;
};

// How the workload is built (docs/config.md, "build"): a CMake target (the
// default), the user's own command (make, a script), or nothing at all for
// programs that compile their kernels at run time (Triton).
struct BuildConfig {
  std::string kind = "cmake";                 // cmake | command | none
  std::vector<std::string> command;           // kind command: argv, run in the build directory
  std::vector<std::string> clean;             // run before each build: makes the next build recompile
  std::map<std::string, std::string> env;     // added to the build's environment
};

struct SearchConfig {
  std::string strategy = kDefaultStrategy;   // a name of engine/config/Strategies.def
  int poolSize = kDefaultPoolSize;
  // pool_size given in ciq.yaml. Without it, `tpe` proposes as many points at
  // once as are evaluated at once (followsWorkers()), and the default budget
  // stays 1 + kDefaultPoolSize x generations.
  bool poolSizeSet = false;
  static constexpr int kDefaultPoolSize = 8;
  // `tpe` learns from every evaluation before its next proposal, so a pool
  // larger than the evaluations running at once only delays what it learns
  // (bench/search_efficiency: fewer evaluations to the optimum with a pool of
  // 1 than of 8). Other strategies keep 8: a genetic generation is a population.
  bool poolFollowsWorkers() const { return !poolSizeSet && strategy == strategies::tpe; }
  int generations = 6;
  bool generationsSet = false;   // given in ciq.yaml (else a budget may raise it)
  double mutateRate = 0.2;
  int cullSize = 2;       // worst candidates dropped from the parent pool each generation
  int elitism = 1;        // best candidates copied unchanged into the next generation
  uint64_t seed = 1;
  int maxEvaluations = 0; // 0: pool_size x generations (+ baseline)
  // max_minutes: the time budget of the whole tune (engine/search/TimeBudget.h); 0: none.
  double maxMinutes = 0;
  // budget_counts: binaries (the default): the budget counts distinct binaries
  // (distinct device codes for compile-only objectives; a candidate whose
  // device code, or configuration, an earlier one had is its twin and costs
  // nothing; engine/search/Budget.h), proposals predicted to repeat a binary
  // are not compiled (TwinPredictor.h, DefaultValues.h), and the search
  // compiles at most maxConfigurationsPerBinary x budget configurations (the
  // baseline included; the header says how many), so the budget bounds the
  // compile time too (issue 41 item 7: 24 compiled for a budget of 10).
  // budget_counts: configurations: every evaluated configuration counts.
  bool budgetCountsBinaries = true;
  int maxConfigurationsPerBinary = 2;
  // propose_ahead: generations proposed before the last one's results are
  // all recorded, so the workers build the next candidates while the GPU
  // measures (generation g learns from generations before g - ahead; a
  // resumed search derives the same pools). -1 (not given): 1 when several
  // local workers evaluate a runtime objective, else 0 (every generation
  // learns from all the ones before it).
  int proposeAhead = -1;
  bool exitOnFailure = true;
  long exhaustiveLimit = 5000;
  bool canary = true;     // run `ciq canary` before the search
};

struct TimeoutConfig {
  double compileSeconds = 300;   // one compiler invocation (the wrapper kills its process group)
  double buildSeconds = 1800;    // one `cmake --build`
  double socketSeconds = 20;     // wrapper's wait for the engine
};

// Where evaluations run (docs/cluster.md): on this host (`local`, one worker
// per GPU), or as Slurm jobs, each one `ciq worker` on a node.
struct SlurmConfig {
  std::string partition, account;   // empty: Slurm's defaults
  std::string gres;                 // e.g. gpu:1; empty: none requested
  int timeLimitMinutes = 30;        // per evaluation (sbatch --time)
  int maxJobs = 4;                  // evaluations queued or running at once
  std::vector<std::string> sbatchArgs;   // extra sbatch arguments, verbatim
  std::string workspace = "scratch";     // scratch: per-node build trees under scratchDir; shared: under run_dir
  std::string scratchDir = "/tmp";
  double pollSeconds = 0.2;         // how often job states and result files are checked
  SourceLoc loc;
};

struct ExecutorConfig {
  std::string kind = "local";       // local | slurm
  SlurmConfig slurm;
};

struct TuneConfig {
  std::string path;          // absolute path of ciq.yaml
  std::string target;        // CMake target to tune (a name for the run with build.kind command/none)
  BuildConfig build;
  std::string buildDir;      // absolute; default: the folder of ciq.yaml
  std::string config;        // multi-config generators: the configuration to build (default Release)
  std::string lockfile;      // absolute; default: <source dir>/<target>.ciq.lock (build: without target: ciq.lock beside ciq.yaml)
  std::string runDir;        // absolute; default: <build dir>/ciq/<target>
  std::vector<std::string> tuneTargets;  // extra CMake targets whose CUDA objects get candidates
  std::vector<Objective> objectives;     // first is primary, the rest tie-break (or Pareto)
  bool pareto = false;                   // several objectives as a Pareto front
  BenchmarkConfig benchmark;
  SearchConfig search;
  TimeoutConfig timeouts;
  SearchSpace space;
  // Without `space:`: the default space was searched, and the controls that
  // change results (ptxas --fmad, nvcc's numerics) left out of it: no output
  // comparison.
  bool numericsLeftOut = false;
  bool spaceIsDefault = false;   // no `space:`: the built-in default space
  // What the build's own compile lines set of nvcc's numerics options, as
  // one line for the commands to print (compile/BuildNumerics.h; "" when
  // none or not read): "space: the build compiles with -use_fast_math ...".
  std::string buildNumericsNote;
  bool buildHasFastMath = false; // every CUDA compile line has -use_fast_math
  int jobs = 0;              // build parallelism; 0: all cores
  // Candidates evaluated at once, each in its own build tree (runtime
  // objectives only). 0: per visible GPU, a quarter of the cores (1 to 4),
  // so that candidates compile while the GPU measures (run/Workers.h).
  int workers = 0;
  // overlap: what builds beside a measurement may do. low_priority: they
  // run at nice +10 (the benchmark keeps its priority); off: one worker per
  // GPU (nothing builds while it measures). Journaled with the search.
  std::string overlap = "low_priority";
  int buildNiceness = 0;   // set by the engine for the workers' builds, not read from the file
  bool keepInvalid = false;  // keep logs/artifacts of INVALID candidates
  ExecutorConfig executor;
  // The architecture the tune measures on when no GPU says it ("sm_90");
  // the first one counts (docs/config.md, "Architectures").
  std::vector<std::string> tuneArchitectures;
  // Tuning compiles produce SASS only for the measured architecture.
  bool narrowArchitectures = false;
  // The lock's old rule, asked for: the winner is written into a section for
  // every architecture the build compiles, not only the measured one's
  // (docs/config.md, "Architectures").
  bool lockEveryArchitecture = false;
  // Filled by the tune before the baseline (engine/compile/Architectures.h), not read
  // from ciq.yaml: the measured architecture when narrowing, else "".
  std::string narrowTo;
  std::vector<std::string> buildArchitectures;  // SASS the build's compile lines produce
  std::string measuredArchitecture;             // "" when unknown
  std::optional<BuildMode> buildMode;           // the configuration tuned in; nullopt when no compile line is known
  // `kernel_controls:` (engine/config/KernelSpace.h): the per-kernel controls
  // added to the space once the baseline shows the kernels.
  KernelControlsConfig kernelControls;
};

// Whether the search gets per-kernel controls (kernel_controls.mode; auto:
// a runtime objective over the default space).
bool kernelControlsOn(const TuneConfig &c);

// Parses a ciq.yaml; nullopt with `error` set to one line on failure.
std::optional<TuneConfig> loadConfig(const std::string &path, std::string &error);

} // namespace ciq
