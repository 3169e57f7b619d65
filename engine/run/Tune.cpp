#include "engine/run/Tune.h"
#include "engine/winner/Attribution.h"
#include "engine/build/Architectures.h"
#include "engine/measure/Benchmark.h"
#include "engine/build/BenchmarkProgram.h"
#include "engine/run/Budget.h"
#include "engine/build/CandidateBuild.h"
#include "engine/search/InertControls.h"
#include "engine/build/InputIdentity.h"
#include "engine/measure/Interleave.h"
#include "common/JsonRead.h"
#include "engine/record/Journal.h"
#include "engine/winner/LockWriter.h"
#include "engine/winner/Minimize.h"
#include "engine/winner/Objectives.h"
#include "common/Paths.h"
#include "engine/run/Pipeline.h"
#include "engine/build/RunLock.h"
#include "engine/run/Progress.h"
#include "engine/run/ResultsCsv.h"
#include "engine/search/Search.h"
#include "engine/search/TwinPredictor.h"
#include "common/Sha256.h"
#include "engine/run/slurm/SlurmExecutor.h"
#include "engine/run/slurm/SlurmFinalists.h"
#include "engine/measure/Stats.h"
#include "engine/Version.h"
#include "engine/run/Workers.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace ciq {
namespace {

std::string candidateName(size_t index) {
  char buf[16];
  snprintf(buf, sizeof buf, "c%04zu", index);
  return buf;
}

// How candidates are measured (issue 21), for `ciq diagnose` and readers.
nlohmann::json measurementLine(const BenchmarkConfig &b) {
  if (!b.enabled)
    return nullptr;
  nlohmann::json m = {{"repeats", b.adaptive ? nlohmann::json("adaptive") : nlohmann::json(b.repeats)},
                      {"warmup", b.warmup}, {"racing", b.racing}};
  if (b.adaptive)
    m.update({{"target_noise_percent", b.targetNoisePercent}, {"min_repeats", b.minRepeats},
              {"max_repeats", b.maxRepeats}, {"max_measure_s", b.maxMeasureSeconds}});
  if (b.racing)
    m["race_alpha"] = b.raceAlpha;
  return m;
}

// The journal's start line (engine/record/Journal.h: startToJson).
RecordedStart startOf(const TuneConfig &cfg) {
  RecordedStart s;
  s.engineVersion = CIQ_VERSION;
  s.configPath = cfg.path;
  s.spaceIdentity = cfg.space.identity();
  s.spaceSize = cfg.space.size();
  s.seed = cfg.search.seed;
  s.strategy = cfg.search.strategy;
  s.search = {cfg.search.strategy, cfg.search.poolSize, cfg.search.generations, cfg.search.cullSize,
              cfg.search.elitism, cfg.search.mutateRate, cfg.search.seed};
  s.target = cfg.target;
  for (const auto &o : cfg.objectives)
    s.objectives.push_back({o.metric, o.direction, o.unit});
  s.pareto = cfg.pareto;
  s.startedAt = nowIso8601();
  s.measurement = measurementLine(cfg.benchmark);
  return s;
}

class TuneRun {
public:
  TuneRun(TuneConfig cfg, TuneOptions opts) : cfg_(std::move(cfg)), opts_(opts) {}
  TuneOutcome run();
  bool runSearch();

private:
  bool prepare();
  bool openJournal();
  bool referenceKept();
  bool evaluateBaseline();
  bool searchGenerations();
  bool searchLoop();
  bool inSearch_ = false;   // evaluations recorded now count towards the GPU's busy time
  bool startWorkers();
  bool checkArchitectures();
  Evaluation evaluate(const Point &p, int generation, const std::string &id, Worker &w);
  void evaluateBatch(const std::vector<Point> &points, int generation);
  void evaluateOnSlurm(const std::vector<Point> &points, int generation);
  // Slurm: a generation's candidates go to the executor at once; it keeps
  // slurm.max_jobs of them in flight.
  size_t parallelism() const { return slurm_ ? (size_t)cfg_.search.poolSize : workers_.size(); }
  void record(Evaluation &e);
  bool runCanary();
  bool runFinalists(WinnerChoice &w);
  bool measureFinalistsHere(const std::vector<size_t> &order, std::vector<std::vector<double>> &values);
  bool measureFinalistsOnNode(WinnerChoice &w, const std::vector<size_t> &order,
                              std::vector<std::vector<double>> &values, nlohmann::json &where);
  void judgeFinalists(WinnerChoice &w, const std::vector<size_t> &order, const std::vector<std::vector<double>> &values,
                      const nlohmann::json &where);
  bool minimize(WinnerChoice &w);
  bool attribute(WinnerChoice &w);
  bool runtimeObjective() const { return bench() && !isCompileMetric(cfg_.objectives.front().metric); }
  // Interleaved re-measurements (finalists, minimization, attribution): the
  // settings a Slurm finalists job uses too (Interleave.h).
  int rounds() const { return interleavedRounds(cfg_.benchmark); }
  double maxCvPercent() const { return verdictMaxCvPercent(cfg_.benchmark); }
  EnoughRounds enoughRounds(Judged judged) const {
    return enoughRoundsFor(cfg_.benchmark, cfg_.objectives.front().direction == "minimize", judged);
  }
  bool beginPhase(Worker &w);
  void endPhase(Worker &w);
  void notePhaseProblems(const std::vector<std::string> &problems);
  const Evaluation *knownBuild(const std::string &candidateHash) const;
  MeasureOptions measureOptions(std::vector<std::string> *problems) {
    MeasureOptions m;
    m.warmupRounds = cfg_.benchmark.warmup;
    m.phase = workers_[0]->phase.get();
    m.enough = enoughRounds(Judged::EachAgainstFirst);
    m.maxCvPercent = maxCvPercent();
    m.problems = problems;
    m.snapshots = &snapshots_;
    m.stop = [this] { return stopRequested(); };
    m.known = [this](const std::string &h) { return knownBuild(h); };
    if (compilesAtRunTime())
      m.serveRuntime = [this](const Evaluation &e) { serveRuntime(e); };
    return m;
  }
  bool finish();
  bool failFirstGeneration();
  // The budget counts distinct binaries (Budget.h); twins cost nothing, and
  // the configuration cap ends a search of a flat landscape.
  bool binaries() const { return cfg_.search.budgetCountsBinaries; }
  int counted() const { return binaries() ? countBudget(evals_).distinct : (int)evals_.size(); }
  int configurationCap() const {
    return binaries() ? cfg_.search.maxConfigurationsPerBinary * budget_ : std::numeric_limits<int>::max();
  }
  bool budgetLeft() const { return counted() < budget_ && (int)evals_.size() < configurationCap(); }
  // How many more candidates one batch may start without passing the budget or the cap.
  size_t room() const {
    return (size_t)std::max(0, std::min(budget_ - counted(), configurationCap() - (int)evals_.size()));
  }
  void fitGenerationsToBudget() {
    cfg_.search.generations = std::max(1, (budget_ - 1 + cfg_.search.poolSize - 1) / cfg_.search.poolSize);
  }
  // Where search.generations ends the search before the budget is spent.
  std::string generationsCap() const {
    int most = 1 + cfg_.search.poolSize * cfg_.search.generations;
    if (most >= budget_ || mostEvaluations(cfg_.search.strategy, cfg_.space))
      return "";
    return " (search.generations " + std::to_string(cfg_.search.generations) + " x pool_size " +
           std::to_string(cfg_.search.poolSize) + " ends it after at most " + std::to_string(most) + ")";
  }
  std::string workloadSummary() const {
    if (cfg_.build.kind == "none")
      return "kernels compiled at run time";
    if (cfg_.build.kind == "command")
      return "build: " + shellJoin(cfg_.build.command);
    return std::to_string(workers_[0]->builder->driver().objects().size()) + " CUDA object(s)";
  }
  void expectLikeBaseline();
  // Before a run outside measure() (finalists, minimization, attribution):
  // the run's compiles get e's candidate, from the cache e's evaluation filled.
  void serveRuntime(const Evaluation &e) {
    bench()->setEnv(builder().runtimeEnv(e, /*freshCache=*/false));
    builder().beginRuntime(e);
  }
  // Kernels compiled while the benchmark runs (Triton) are part of the device code.
  bool compilesAtRunTime() const {
    return cfg_.build.kind == "none" || (!evals_.empty() && !evals_.front().runtimeKernels.empty());
  }
  std::vector<ScoredPoint> history(int beforeGeneration) const;
  std::string logPath(const std::string &id) const { return cfg_.runDir + "/logs/" + id + ".log"; }
  // What must be equal for a result to be reused: the device code for
  // compile-only objectives; device and host code of every rebuilt object
  // when a benchmark measures the program ("" : never reused).
  std::string reuseKey(const Evaluation &e) const {
    if (!cfg_.benchmark.enabled)
      return e.deviceCodeSha256;
    return e.deviceCodeSha256.empty() || e.objectsSha256.empty() ? "" : e.deviceCodeSha256 + ":" + e.objectsSha256;
  }

  // The search stops with this error line (the first one, when several).
  bool fail(const std::string &error) {
    outcome_.status = TuneOutcome::Status::Failed;
    if (outcome_.error.empty())
      outcome_.error = error;
    return false;
  }
  // Every journal line goes through here. A line the journal cannot take
  // (a full, read-only or failing disk, an immutable file: Journal::error)
  // stops the search at once: what is not journaled is never scored and
  // never locked, and `ciq resume` continues from the last whole line.
  bool journal(const nlohmann::json &line) {
    if (journal_.append(line))
      return true;
    recordingFailed_ = true;
    return fail(journal_.error() + "; " + diskHint());
  }
  // results.csv again, from the evaluations journaled; a failure stops the
  // search like the journal's (the journal holds them all: resumable).
  bool writeResults() {
    std::string err;
    if (writeResultsCsv(cfg_.runDir + "/results.csv", cfg_, evals_, err))
      return true;
    recordingFailed_ = true;
    return fail(err + "; the journal holds every evaluation so far: " + diskHint());
  }
  std::string diskHint() const {
    return "free space (or make it writable), then continue with `ciq resume --config " + shellQuote(cfg_.path) + "`";
  }
  void warn(const std::string &warning) {
    outcome_.warnings.push_back(warning);
    if (opts_.onWarning)
      opts_.onWarning(warning);
  }

  TuneConfig cfg_;
  TuneOptions opts_;
  TuneOutcome outcome_;
  std::vector<std::unique_ptr<Worker>> workers_;   // [0] builds in the user's own build tree
  CandidateBuilder &builder() { return *workers_[0]->builder; }
  BenchmarkRunner *bench() const { return workers_[0]->bench.get(); }
  RunLock runLock_;   // held for the whole search (RunLock.h)
  Journal journal_;
  Progress progress_;
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<SlurmExecutor> slurm_;           // executor: slurm (docs/cluster.md)
  std::vector<Evaluation> evals_;
  std::map<std::string, size_t> byHash_, byDevice_;
  std::set<int> inertAnnounced_;
  std::set<Point> predictedTwins_;
  std::vector<MinimizeTrial> priorTrials_;   // resume: the minimization's comparisons already made   // proposals not compiled: predicted twins (TwinPredictor.h)
  // Pool points not evaluated because an inert control was all that set them
  // apart: the strategy sees them as taken, so it moves on (not journaled: a
  // resumed search re-derives them, and never evaluates a point twice).
  std::vector<ScoredPoint> skipped_;
  int budget_ = 0;
  bool canaryDone_ = false; // resume: the journal records a passed (or skipped) canary
  Verdicts verdicts_;                  // what the summary reports after the search
  nlohmann::json lockExtra_ = nlohmann::json::object();   // minimization, attribution, measurement: into the lock
  Evaluation minimized_;               // the winner after minimization (when it changed)
  std::map<std::string, std::vector<std::string>> snapshots_;   // rendered hash -> benchmark copy (after the search)
  bool inputsRecorded_ = false;
  int firstNewId_ = 0;       // ids below are taken (journal, intact or damaged)
  std::string interrupted_;  // why the search stops: a build killed twice, a disk that refused a build's write
  bool recordingFailed_ = false;   // a journal line or results.csv could not be written: the search stops
  size_t resumedCount_ = 0;  // evaluations read from the journal
  // Ids continue after every id the journal used, damaged lines included.
  std::string nextName(size_t k) const { return candidateName(firstNewId_ + (evals_.size() - resumedCount_) + k); }
  bool stopInterrupted() {
    return fail(interrupted_ + "; nothing was recorded for it: continue with `ciq resume --config " + shellQuote(cfg_.path) +
                       "`");
  }
  std::vector<Point> unspent(std::vector<Point> pool, int generation);
  // `ciq stop` during a re-measurement after the search (finalists,
  // minimization, attribution): its rounds end at once, no lock is written,
  // and `ciq resume` measures these phases again (the search is kept).
  bool finalistsCanRun();
  std::string resumeHint() const {
    return "the search is kept: fix the cause, then measure the phases after it again with `ciq resume "
           "--config " + shellQuote(cfg_.path) + "`";
  }
  bool stopRequested() { return builder().daemon().stopRequested(); }
  bool stoppedIn(const std::string &phase) {
    progress_.note("stopped during the " + phase + "; continue with `ciq resume --config " +
                   shellQuote(cfg_.path) + "`");
    outcome_.status = TuneOutcome::Status::Stopped;
    return false;
  }
};

// benchmark.correctness.compare: a resumed search whose baseline is in the
// journal compares every candidate with the baseline's output numbers in
// reference-output.json. Without that file (deleted, cleaned up) the next
// check would take its own output for the baseline's, and a wrong answer would
// pass: the resume stops instead. The baseline cannot be checked again
// without measuring it again, which the journal already holds.
bool TuneRun::referenceKept() {
  if (cfg_.benchmark.compare.empty())
    return true;
  bool baselineDone = std::any_of(evals_.begin(), evals_.end(),
                                  [](const Evaluation &e) { return e.generation == 0 && e.ok; });
  std::string ref = cfg_.runDir + "/reference-output.json";
  if (!baselineDone)
    return true;
  std::string why;
  if (readReferenceOutput(ref, why))
    return true;
  fail(ref + " (the baseline's output numbers, benchmark.correctness.compare) " + why +
       "; without it no candidate's output can be checked: start over with `ciq tune --fresh --config " +
       shellQuote(cfg_.path) + "`");
  return false;
}

bool TuneRun::openJournal() {
  std::string jpath = cfg_.runDir + "/journal.jsonl";
  JournalContents prior = readJournal(jpath);
  bool unfinished = !prior.evaluations.empty() && !prior.done;
  if (opts_.resume) {
    if (prior.start.is_null()) {
      // An existing journal without a start line (empty: killed before it was written) is not a missing one.
      uint64_t size = 0;
      std::string why = llvm::sys::fs::file_size(jpath, size) ? "no journal.jsonl"
                        : size == 0                            ? "journal.jsonl is empty"
                                                               : "journal.jsonl has no start line";
      // Evaluations without the start line that says what they searched
      // (space, seed, strategy) cannot be continued; `ciq tune` alone refuses
      // the unfinished search and sends the user back here.
      if (!prior.evaluations.empty())
        return fail(jpath + ": the start line is damaged or missing" +
                    (prior.damaged.empty() ? std::string() : " (" + prior.damaged.front() + ")") + "; its " +
                    std::to_string(prior.evaluations.size()) +
                    " evaluation(s) cannot be resumed without it: start over with `ciq tune --fresh --config " +
                    shellQuote(cfg_.path) + "` (the journal is kept as journal.jsonl.previous)");
      fail("nothing to resume in " + cfg_.runDir + " (" + why + "); start with `ciq tune`");
      return false;
    }
    // Read again for the message: readJournal named the damage by line number.
    RecordedStart start;
    std::string why;
    if (!startFromJson(prior.start, start, why, jpath + ": start line"))
      return fail(why + "; start over with `ciq tune --fresh`");
    if (start.spaceIdentity != cfg_.space.identity() || start.seed != cfg_.search.seed ||
        start.strategy != cfg_.search.strategy) {
      fail(jpath + ": the search space, seed or strategy changed since this search started; "
                          "resume needs the same ciq.yaml (or start over with `ciq tune --fresh`)");
      return false;
    }
    // A search killed before its canary passed (or whose canary failed) runs
    // it on resume: the proof that controls reach the compiler is not optional.
    canaryDone_ = prior.canaryDone;
    if (!prior.inputs.is_null())
      if (std::string changed = changedInput(prior.inputs, cfg_); !changed.empty())
        return fail(jpath + ": " + changed + "; results of the old and new inputs must not mix: start over "
                                   "with `ciq tune --fresh --config " + shellQuote(cfg_.path) + "`");
    for (const auto &d : prior.damaged)
      warn(d + "; that line is skipped (its evaluation, if it was one, is measured again under a new id)");
    // A pool that follows the workers keeps the size it started with: the
    // same seed and history must give the same pools after a resume, on a
    // host with more or fewer GPUs too.
    if (cfg_.search.poolFollowsWorkers() && start.search.poolSize > 0) {
      cfg_.search.poolSize = start.search.poolSize;
      fitGenerationsToBudget();
    }
    // A finished search has nothing to continue unless the budget was raised
    // (--max-evaluations): running its end again would only rewrite its lock.
    BudgetCount spent = countBudget(prior.evaluations);
    if (!binaries())
      spent.distinct = spent.configurations;
    auto most = mostEvaluations(cfg_.search.strategy, cfg_.space);
    bool exhausted = most && (double)prior.evaluations.size() >= *most;
    if (prior.done && (spent.distinct >= budget_ || spent.configurations >= configurationCap() || exhausted)) {
      std::string lock = llvm::sys::fs::exists(cfg_.lockfile) ? cfg_.lockfile + " is left as it is"
                                                              : "no lock is written";
      // A strategy that ran out of points (exhaustive over the whole space)
      // caps any budget there: raising it, as the other message says, adds
      // nothing, and `--max-evaluations N` got that same advice back.
      if (exhausted)
        return fail("nothing to resume in " + cfg_.runDir + ": its search finished, and " + cfg_.search.strategy +
                    " has evaluated every point of its space (" + std::to_string(prior.evaluations.size()) +
                    " evaluations, the baseline included), so no budget adds one; " + lock +
                    "; widen space: in ciq.yaml and start a new search with `ciq tune --config " +
                    shellQuote(cfg_.path) + "`");
      return fail("nothing to resume in " + cfg_.runDir + ": its search finished (" +
                  (binaries() ? std::to_string(spent.distinct) + " distinct binaries of a budget of " +
                                    std::to_string(budget_) + ", " + std::to_string(spent.configurations) +
                                    " configurations"
                              : std::to_string(spent.configurations) + " evaluations of a budget of " +
                                    std::to_string(budget_)) +
                  "), and " + lock + "; raise the budget with `ciq resume --max-evaluations N` "
                  "to extend it, or start a new search with `ciq tune --config " + shellQuote(cfg_.path) + "`");
    }
    // Extending a finished search: the raised budget is what the user asked
    // to spend, and ciq.yaml (generations included) cannot change on a
    // resume. Its own search.generations ended it: without more of them the
    // extension evaluated nothing and only wrote the lock again.
    if (prior.done && 1 + cfg_.search.poolSize * cfg_.search.generations < budget_)
      fitGenerationsToBudget();
    evals_ = prior.evaluations;
    priorTrials_ = prior.minimizeTrials;
    if (!referenceKept())
      return false;
    firstNewId_ = std::max<int>(prior.nextId, (int)evals_.size());
    resumedCount_ = evals_.size();
    inputsRecorded_ = !prior.inputs.is_null();
  } else if (std::string priorConfig = prior.started ? prior.started->configPath : "?";
             !prior.start.is_null() && priorConfig != cfg_.path && !opts_.fresh && !opts_.canaryOnly) {
    fail(cfg_.runDir + " holds the search of " + priorConfig + "; give " + cfg_.path +
                " its own run_dir:, or pass --fresh to replace that search (its journal and results.csv are kept as journal.jsonl.previous "
                "and results.csv.previous)");
    return false;
  } else if (unfinished && !opts_.fresh && !opts_.canaryOnly) {
    fail(cfg_.runDir + " holds an unfinished search (" + std::to_string(prior.evaluations.size()) +
                " evaluations); continue it with `ciq resume --config " + shellQuote(cfg_.path) +
                "`, or start over with `ciq tune --fresh --config " + shellQuote(cfg_.path) + "`");
    return false;
  } else if (llvm::sys::fs::exists(jpath)) {
    // A finished or discarded search is kept beside, never overwritten: its
    // journal and its results.csv (this search writes a new one).
    llvm::sys::fs::rename(jpath, jpath + ".previous");
    std::string csv = cfg_.runDir + "/results.csv", kept = "the earlier search's journal is kept as " + jpath + ".previous";
    if (llvm::sys::fs::exists(csv) && !llvm::sys::fs::rename(csv, csv + ".previous"))
      kept += " and its results as " + csv + ".previous";
    if (!opts_.canaryOnly)
      progress_.note(kept);
  }
  // The baseline's output (benchmark.correctness.compare) belongs to this
  // search: a new one measures its own.
  if (!opts_.resume)
    llvm::sys::fs::remove(cfg_.runDir + "/reference-output.json");
  std::string err;
  if (!journal_.open(jpath, err))
    return fail(err + (opts_.resume ? "; " + diskHint() : std::string()));
  // Nothing is recorded without it: a search that cannot write it starts again.
  if (!opts_.resume && !journal_.append(startToJson(startOf(cfg_))))
    return fail(journal_.error() + "; free space (or make it writable), then start the search again with `ciq tune "
                "--config " + shellQuote(cfg_.path) + "`");
  for (size_t i = 0; i < evals_.size(); ++i) {
    byHash_.emplace(evals_[i].candidateHash, i);
    if (evals_[i].ok && !reuseKey(evals_[i]).empty())
      byDevice_.emplace(reuseKey(evals_[i]), i);
  }
  return true;
}

bool TuneRun::prepare() {
  // Before anything in the run directory is read or moved.
  std::string lockErr;
  if (!runLock_.acquire(cfg_.runDir, cfg_.target.empty() ? cfg_.path : cfg_.target, lockErr))
    return fail(lockErr);
  if (opts_.canaryOnly)
    cfg_.runDir += "/canary";
  if (cfg_.benchmark.enabled) {
    // A program the build does not make is checked now; one it makes, once
    // the baseline is built (before it is measured).
    std::string err;
    auto program = resolveBenchmarkProgram(cfg_, err);
    if (!program && !benchmarkProgramIsBuilt(cfg_, absolutePath(cfg_.benchmark.command[0], benchmarkWorkDir(cfg_))))
      return fail(err);
  }
  // tpe without pool_size: one proposal per worker (per Slurm job in
  // flight); the default budget does not shrink with the pool.
  if (cfg_.search.poolFollowsWorkers())
    cfg_.search.poolSize =
        std::max(1, cfg_.executor.kind == "slurm" ? cfg_.executor.slurm.maxJobs : workerCount(cfg_));
  budget_ = opts_.maxEvaluations > 0        ? opts_.maxEvaluations
            : cfg_.search.maxEvaluations > 0 ? cfg_.search.maxEvaluations
            : cfg_.search.poolFollowsWorkers() ? 1 + SearchConfig::kDefaultPoolSize * cfg_.search.generations
                                             : 1 + cfg_.search.poolSize * cfg_.search.generations;
  // A strategy that runs out of points (exhaustive over a space smaller
  // than the budget) ends the search there, and the counter says so ([3/3],
  // not [3/49]).
  if (auto most = mostEvaluations(cfg_.search.strategy, cfg_.space); most && *most < (double)budget_)
    budget_ = std::max(1, (int)*most);
  // A budget (BUDGET, max_evaluations, --max-evaluations) is what the user
  // asked to spend: without generations of their own, enough generations to
  // spend it; with them, the header says where the search will stop. Before
  // the journal's start line, which records the generations.
  // A pool that follows the workers always gets the generations its budget
  // needs (generations then only sets the default budget).
  int byGenerations = 1 + cfg_.search.poolSize * cfg_.search.generations;
  if (budget_ > byGenerations && (!cfg_.search.generationsSet || cfg_.search.poolFollowsWorkers()))
    fitGenerationsToBudget();
  llvm::sys::fs::create_directories(cfg_.runDir + "/logs");
  if (!openJournal())
    return false;
  try {
    strategy_ = makeStrategy(cfg_.search, cfg_.space, cfg_.pareto);
  } catch (const std::exception &e) {
    return fail(cfg_.path + ": search.strategy: " + e.what());
  }
  if (!checkArchitectures())
    return false;
  if (!startWorkers())
    return false;
  expectLikeBaseline();
  progress_.begin(budget_, !opts_.quiet);
  return true;
}

// Before the baseline: the architecture measured on against the SASS the
// build compiles (Architectures.h); with narrow_architectures, every tuning
// compile is narrowed to it (the workers copy cfg_ after this).
bool TuneRun::checkArchitectures() {
  auto driver = makeBuildDriver(cfg_);   // a command build knows no objects yet: no build architectures
  std::string err;
  if (!driver->discover(err))
    return true; // the builder reports the same problem, as an error
  auto m = measuredArchitecture(cfg_);
  cfg_.measuredArchitecture = m.arch;
  cfg_.buildArchitectures = sassArchitectures(driver->objects());
  cfg_.buildMode = compileBuildMode(driver->objects(), cfg_.buildDir);
  // A runtime search on JIT-compiled code measures noise: stop before it.
  if (cfg_.benchmark.enabled)
    if (std::string p = jitOnlyProblem(m, cfg_.buildArchitectures, cfg_.path); !p.empty())
      return fail(p);
  for (const auto &w : architectureWarnings(m, cfg_.buildArchitectures, cfg_.narrowArchitectures, cfg_.path))
    warn(w);
  if (!cfg_.narrowArchitectures)
    return true;
  if (m.arch.empty()) {
    warn("narrow_architectures: no GPU and no tune_architectures in " + cfg_.path +
                  ", so nothing to narrow to; tuning compiles keep the build's architectures");
    return true;
  }
  cfg_.narrowTo = m.arch;
  progress_.note("narrow_architectures: tuning compiles produce SASS for " + m.arch + " only (" + m.source + ")");
  return true;
}

// Worker 0 builds in the user's build tree; with several GPUs (runtime
// objectives), each further worker gets a twin build tree and one GPU.
bool TuneRun::startWorkers() {
  int n = opts_.canaryOnly ? 1 : workerCount(cfg_);
  std::vector<std::string> gpus = workerGpus(n);
  for (int k = 0; k < n; ++k) {
    auto w = std::make_unique<Worker>();
    w->index = k;
    std::string err;
    if (k == 0)
      w->cfg = cfg_;
    else if (!prepareWorkerConfig(cfg_, k, w->cfg, err))
      return fail(err);
    w->builder = std::make_unique<CandidateBuilder>(w->cfg);
    std::string socket;
    if (!socketPathFor(w->cfg.runDir, socket, err) || !w->builder->start(socket, err))
      return fail(err);
    if (cfg_.benchmark.enabled) {
      std::map<std::string, std::string> env;
      if (n > 1)
        env["CUDA_VISIBLE_DEVICES"] = w->gpu = gpus[k];
      w->bench = std::make_unique<BenchmarkRunner>(w->cfg.benchmark, benchmarkWorkDir(w->cfg), env);
      w->bench->setReferenceFile(cfg_.runDir + "/reference-output.json");
      std::string visible = env.count("CUDA_VISIBLE_DEVICES") ? env["CUDA_VISIBLE_DEVICES"] : "";
      w->phase = std::make_unique<MeasuredPhase>(visible, "ciq tune " + cfg_.target + " (" + cfg_.path + ")",
                                                 [this](const std::string &l) { progress_.note(l); });
    }
    workers_.push_back(std::move(w));
  }
  std::set<std::string> distinct(gpus.begin(), gpus.end());
  if (n > 1 && distinct.size() == gpus.size())
    progress_.note("evaluating " + std::to_string(n) + " candidates at once, one per GPU, worker build trees under " +
                   cfg_.runDir + "/worker-*");
  else if (n > 1) // more workers than GPUs: builds overlap the measurements
    progress_.note("evaluating " + std::to_string(n) + " candidates at once on " + std::to_string(distinct.size()) +
                   " GPU(s): the others build while a GPU measures one candidate at a time; worker build trees "
                   "under " + cfg_.runDir + "/worker-*");
  if (cfg_.executor.kind == "slurm" && !opts_.canaryOnly) {
    slurm_ = std::make_unique<SlurmExecutor>(cfg_, builder().daemon());
    std::string err;
    if (!slurm_->start(opts_.resume, err))
      return fail(err);
    progress_.note("evaluating up to " + std::to_string(cfg_.executor.slurm.maxJobs) + " candidates at once as Slurm jobs (" +
                   cfg_.runDir + "/slurm)");
  }
  return true;
}

// Every measured phase holds the GPU alone (across processes) and checks
// its state before and after.
bool TuneRun::beginPhase(Worker &w) {
  std::string err;
  if (!w.phase || w.phase->begin(err))
    return true;
  fail(err);
  return false;
}

void TuneRun::endPhase(Worker &w) {
  if (w.phase)
    notePhaseProblems(w.phase->end());
}

void TuneRun::notePhaseProblems(const std::vector<std::string> &problems) {
  for (const auto &p : problems)
    progress_.note("GPU: " + p + " while measuring: figures measured now are not trustworthy");
}

// What the baseline tells every worker to expect from later builds and runs.
void TuneRun::expectLikeBaseline() {
  if (evals_.empty() || !evals_.front().ok)
    return;
  for (auto &w : workers_)
    w->builder->expectLike(evals_.front());
}

Evaluation TuneRun::evaluate(const Point &p, int generation, const std::string &id, Worker &w) {
  bool parallel = workers_.size() > 1;
  Evaluation e = newEvaluation(cfg_.space, p, generation, id);
  // Same command lines and ACF bytes as an earlier candidate: not rebuilt.
  if (auto it = byHash_.find(e.candidateHash); it != byHash_.end())
    return configTwin(evals_[it->second], e);
  if (!parallel)
    progress_.building(e.candidateId);
  PipelineOptions o;
  o.logPath = logPath(e.candidateId);
  if (opts_.keepInvalid || cfg_.keepInvalid)
    o.artifactsDir = cfg_.runDir + "/invalid/" + e.candidateId;
  o.deviceTwin = [this](const Evaluation &built) -> const Evaluation * {
    // Kernels compiled at run time are not in the build's device code: such a
    // candidate is always measured.
    auto it = reuseKey(built).empty() || compilesAtRunTime() ? byDevice_.end() : byDevice_.find(reuseKey(built));
    return it == byDevice_.end() ? nullptr : &evals_[it->second];
  };
  if (!parallel)
    o.onMeasuring = [&] { progress_.measuring(e.candidateId); };
  o.note = [this](const std::string &l) { progress_.note(l); };
  // Racing (benchmark.racing): against the best candidate measured so far.
  RaceAgainst race;
  if (runtimeObjective() && cfg_.benchmark.racing && generation > 0) {
    WinnerChoice best = chooseWinner(cfg_, evals_);
    if (best.index >= 0 && evals_[best.index].runs.size() >= 2) {
      race.runs = evals_[best.index].runs;
      race.minimize = cfg_.objectives.front().direction == "minimize";
      o.race = &race;
    }
  }
  evaluateCandidate(w, e, o);
  return e;
}

void TuneRun::record(Evaluation &e) {
  // Not the candidate's result (a build killed twice, a write the disk
  // refused): kept out of the journal, and the search stops.
  if (e.reason == reason::BuildInterrupted || e.reason == reason::DiskFault) {
    if (interrupted_.empty())
      interrupted_ = e.message;
    return;
  }
  if (recordingFailed_ || !journal(evaluationToJson(e)))
    return; // not journaled: never scored, and the search stops
  evals_.push_back(e);
  if (inSearch_)
    verdicts_.gpuBusySeconds += e.measureMs / 1000;
  size_t i = evals_.size() - 1;
  byHash_.emplace(e.candidateHash, i);
  if (e.ok && !reuseKey(e).empty())
    byDevice_.emplace(reuseKey(e), i);
  markFront(cfg_, evals_);
  if (!writeResults())
    return;
  WinnerChoice w = chooseWinner(cfg_, evals_);
  progress_.evaluated(cfg_, e, evals_, w.index >= 0 ? &evals_[w.index] : nullptr, counted());
  builder().daemon().setStatus(progress_.status(cfg_, evals_));
}

std::vector<ScoredPoint> TuneRun::history(int beforeGeneration) const {
  std::vector<ScoredPoint> h;
  for (const auto &e : evals_)
    if (e.generation < beforeGeneration)
      h.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  for (const auto &p : skipped_)
    if (p.generation < beforeGeneration)
      h.push_back(p);
  return h;
}

bool TuneRun::evaluateBaseline() {
  if (!evals_.empty()) {
    // Resumed: the baseline is the journal's first evaluation, and no search
    // goes on without a valid one.
    const Evaluation &b = evals_.front();
    if (b.generation == 0 && b.ok) {
      if (!inputsRecorded_ && !journal(captureInputs(cfg_, builder().driver().objects())))
        return false; // (killed between the baseline and its inputs line)
      return inputsRecorded_ = true;
    }
    fail(cfg_.runDir + "/journal.jsonl: the baseline " + b.candidateId + " is " +
                (b.generation == 0 ? "INVALID (" + b.reason + ": " + b.message + ")" : "missing") +
                ", and no search goes on without a valid baseline; start over with `ciq tune --fresh --config " +
                shellQuote(cfg_.path) + "`");
    return false;
  }
  evaluateBatch({cfg_.space.baseline()}, 0);
  expectLikeBaseline();
  if (!interrupted_.empty())
    return stopInterrupted();
  if (recordingFailed_)
    return false;
  if (evals_.empty()) // stopped (`ciq stop`) before the baseline's Slurm job ended
    return fail("stopped before the baseline was evaluated; start again with `ciq tune`");
  const Evaluation &b = evals_.front();
  if (b.ok && !inputsRecorded_) { // the build's dependency records exist now
    if (!journal(captureInputs(cfg_, builder().driver().objects())))
      return false;
    inputsRecorded_ = true;
  }
  if (!b.ok) {
    fail("the baseline (your build with no control applied) is INVALID: " + b.reason + ": " + b.message +
                "; fix the build or benchmark first (" + b.replay + ")");
    return false;
  }
  return finalistsCanRun();
}

// The finalists run each build's own copy of the benchmark's program
// (snapshotBenchmark): a command that names none is refused once the
// baseline has built the program, not after the whole search.
bool TuneRun::finalistsCanRun() {
  std::string err;
  if (!runtimeObjective() || slurm_ || !resolveBenchmarkProgram(cfg_, err))
    return true; // no program here yet (Slurm builds on the nodes): the finalists check it
  std::string dir = cfg_.runDir + "/finalists/check";
  auto cmd = snapshotBenchmark(cfg_, dir, err, compilesAtRunTime());
  llvm::sys::fs::remove_directories(dir);
  return cmd ? true : fail(err);
}

// The proof that controls reach the compiler: a deliberately degrading
// configuration must change the device code (and, with a benchmark, should
// regress the score).
bool TuneRun::runCanary() {
  if (!opts_.canaryOnly) {
    if (!cfg_.search.canary || (opts_.resume && canaryDone_))
      return true;
    if (!opts_.canary) { // --no-canary: recorded, so that a resume does not run it either
      return opts_.resume || journal({{"op", "canary"}, {"skipped", true}});
    }
  }
  Evaluation c;
  c.candidateId = "canary";
  if (opts_.canaryAcf.empty())
    c.rendered.ptxas = {"--opt-level=0"};
  else {
    auto h = sha256File(opts_.canaryAcf);
    if (!h)
      return fail("canary: cannot read ACF " + opts_.canaryAcf);
    c.rendered.acfs.push_back({opts_.canaryAcfStage, opts_.canaryAcf, *h});
  }
  c.candidateHash = c.rendered.hash();
  std::string what = c.rendered.summary();
  progress_.building("canary");
  builder().build(c, logPath("canary"));
  if (c.reason == reason::DiskFault)
    return fail("canary: " + c.message + "; nothing was recorded for it: continue with `ciq resume --config " +
                shellQuote(cfg_.path) + "`");
  const Evaluation &b = evals_.front();
  // A changed hash proves nothing where ptxas did not run at compile time
  // (-dlto: the device code is LTO IR, SASS is made at the device link).
  for (const Evaluation *e : std::initializer_list<const Evaluation *>{&b, &c})
    for (const auto &o : e->objects)
      if (!o.ptxasRan) {
        if (!journal({{"op", "canary"}, {"ok", false}, {"reason", reason::NotMeasurable}}))
          return false;
        return fail("canary: ptxas did not run when " + o.source +
                           " was compiled (-dlto or no SASS target: ptxas runs at the device link, which "
                           "ciq-ptxas does not wrap), so ptxas controls do not reach the compiler here; compile "
                           "SASS for the tuned architecture (drop -dlto while tuning)");
      }
  // Kernels compiled at run time exist only once the benchmark ran.
  bool measured = c.ok && compilesAtRunTime() && bench();
  if (measured) {
    scoreCompileMetrics(cfg_, c);
    measureCandidate(*workers_[0], c);
  }
  bool changed = c.ok && c.deviceCodeSha256 != b.deviceCodeSha256;
  if (changed && bench() && opts_.canaryOnly) {
    if (!measured) {
      scoreCompileMetrics(cfg_, c);
      measureCandidate(*workers_[0], c);
    }
    std::string metric = cfg_.objectives.front().metric;
    if (c.ok && c.scores.count(metric) && b.scores.count(metric) &&
        normalizedObjectives(cfg_, c) <= normalizedObjectives(cfg_, b))
      warn("canary: " + what + " changed the device code but did not regress " + metric + " (" +
                    std::to_string(b.scores.at(metric)) + " -> " + std::to_string(c.scores.at(metric)) +
                    "): does the benchmark time the tuned kernels? is the measurement noisy (CV%)?");
  }
  if (!journal({{"op", "canary"}, {"ok", changed}, {"device_code_sha256", c.deviceCodeSha256},
                {"baseline_device_code_sha256", b.deviceCodeSha256}, {"reason", c.reason}}))
    return false;
  if (changed) {
    progress_.note("canary: " + what + " changed the device code (" + b.deviceCodeSha256.substr(0, 12) + " -> " +
                   c.deviceCodeSha256.substr(0, 12) + "): controls reach the compiler");
    return true;
  }
  if (!c.ok && c.reason != reason::StaleBuild) {
    warn("canary: the degrading build failed (" + c.reason + ": " + c.message + "), so it proves nothing");
    return !opts_.canaryOnly;
  }
  if (std::string none = noDeviceCodeReason(cfg_, b); c.ok && !none.empty())
    return fail("canary: " + none);
  fail("canary: " +
              (c.ok ? what + " produced the same device code (" + b.deviceCodeSha256.substr(0, 12) +
                          ") as the default compile"
                    : c.message) +
              "; the configuration did not reach the compiler: a compiler cache, stale objects or a missing "
              "launcher hide it (docs/troubleshooting.md); search.canary: false skips this check");
  return false;
}

void TuneRun::evaluateBatch(const std::vector<Point> &points, int generation) {
  if (slurm_)
    return evaluateOnSlurm(points, generation);
  if (points.size() == 1) {
    Evaluation e = evaluate(points[0], generation, nextName(0), *workers_[0]);
    record(e);
    return;
  }
  std::vector<Evaluation> results(points.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < points.size(); ++k)
    threads.emplace_back([&, k] {
      results[k] = evaluate(points[k], generation, nextName(k), *workers_[k]);
    });
  for (auto &t : threads)
    t.join();
  for (auto &e : results) {
    // A configuration twin inside the same batch was not known when it started.
    if (auto it = byHash_.find(e.candidateHash); it != byHash_.end() && e.duplicateKind.empty()) {
      e.duplicateOf = evals_[it->second].candidateId;
      e.duplicateKind = "config";
    }
    record(e);
  }
}

// The batch's candidates as Slurm jobs, each one `ciq worker`; results are
// recorded in pool order, with the same twin rules as one local worker: a
// candidate whose command lines (or device code) an earlier one of the batch
// had is that one's duplicate, so the journal equals a local search's.
void TuneRun::evaluateOnSlurm(const std::vector<Point> &points, int generation) {
  std::vector<Evaluation> batch;
  std::vector<Evaluation *> jobs;
  std::set<std::string> hashes;
  for (const auto &p : points) {
    batch.push_back(newEvaluation(cfg_.space, p, generation, nextName(batch.size())));
    batch.back().replay = "ciq replay " + batch.back().candidateId + " --config " + shellQuote(cfg_.path);
  }
  for (auto &e : batch)
    if (!byHash_.count(e.candidateHash) && hashes.insert(e.candidateHash).second)
      jobs.push_back(&e);
  if (!slurm_->evaluate(jobs, opts_.keepInvalid || cfg_.keepInvalid))
    return; // stopped: nothing of this batch is recorded; `ciq resume` picks it up
  for (auto &e : batch) {
    if (auto it = byHash_.find(e.candidateHash); it != byHash_.end()) {
      Evaluation twin = configTwin(evals_[it->second], e);
      record(twin);
      continue;
    }
    if (e.ok && !reuseKey(e).empty())
      if (auto it = byDevice_.find(reuseKey(e)); it != byDevice_.end())
        shareDeviceResult(e, evals_[it->second], cfg_.benchmark.enabled);
    record(e);
  }
}

bool TuneRun::failFirstGeneration() {
  std::map<std::string, int> reasons;
  const Evaluation *example = nullptr;
  for (const auto &e : evals_)
    if (e.generation == 1 && !e.ok) {
      ++reasons[e.reason];
      if (!example)
        example = &e;
    }
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[r, n] : reasons)
    top.push_back({n, r});
  std::sort(top.rbegin(), top.rend());
  std::string list;
  for (const auto &[n, r] : top)
    list += (list.empty() ? "" : ", ") + r + " x" + std::to_string(n);
  return fail("every candidate of generation 1 is INVALID (" + list + "); e.g. " + example->candidateId +
                     " (" + example->rendered.summary() + "): " + example->message + "; replay it with `" +
                     example->replay + "` (search.exit_on_failure: false searches on)");
}

// The pool with inert controls left unset (InertControls.h), minus the points
// that then repeat an earlier evaluation or each other: no evaluation is
// spent on a control that cannot change the code.
std::vector<Point> TuneRun::unspent(std::vector<Point> pool, int generation) {
  auto inert = findInertControls(cfg_.space, evals_, generation);
  for (const auto &i : inert)
    if (inertAnnounced_.insert(i.control).second) {
      progress_.note(i.why);
      journal({{"op", "inert_control"}, {"control", cfg_.space.controls[i.control].name},
               {"evidence", i.evidence}, {"generation", generation}});
    }
  // exhaustive records every point (bench/landscapes); kernels compiled at
  // run time are not in the build's device code.
  bool predict = binaries() && cfg_.search.strategy != strategies::exhaustive && !compilesAtRunTime();
  // Built only where it is used: it pairs every evaluation with every other.
  std::optional<TwinPredictor> twins;
  if (predict)
    twins.emplace(cfg_.space.controls.size(), evals_, generation, [this](const Evaluation &e) { return reuseKey(e); });
  std::vector<Point> out;
  std::set<Point> seen;
  for (const auto &p : pool) {
    Point q = withoutInert(p, inert);
    bool earlier = std::any_of(evals_.begin(), evals_.end(),
                               [&](const Evaluation &e) { return e.generation < generation && e.point == q; });
    if (earlier || !seen.insert(q).second) {
      if (q != p)
        skipped_.push_back({p, false, {}, generation});
      continue;
    }
    // Predicted to build an earlier candidate's binary: the strategy learns
    // that binary's score for it, and no compile is spent.
    if (const Evaluation *twin = twins ? twins->predict(q) : nullptr) {
      skipped_.push_back({p, true, normalizedObjectives(cfg_, *twin), generation});
      if (predictedTwins_.insert(q).second && predictedTwins_.size() == 1)
        progress_.note("twins so far make " + std::to_string(twins->equivalences()) +
                       " control value(s) equivalent for this program: configurations predicted to build a "
                       "measured binary are not compiled (e.g. " + render(cfg_.space, q).summary() + ", like " +
                       twin->candidateId + ")");
      continue;
    }
    out.push_back(q);
  }
  return out;
}

bool TuneRun::searchGenerations() {
  auto started = std::chrono::steady_clock::now();
  inSearch_ = true;
  bool done = searchLoop();
  inSearch_ = false;
  verdicts_.searchSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return done;
}

bool TuneRun::searchLoop() {
  JournalContents j = readJournal(journal_.path());
  // A pool whose every point, its inert controls dropped, was evaluated
  // before spends nothing: it does not count against search.generations
  // (common with tpe's pool of 1 once a control is found inert), at most
  // kSpentNothing of them in a row. The same on a resume: unspent() only
  // reads earlier generations.
  // Without generations of the user's own, the search proposes until the
  // budget of distinct binaries is spent: generations of twins add more.
  bool openEnded = binaries() && (!cfg_.search.generationsSet || cfg_.search.poolFollowsWorkers());
  int last = cfg_.search.generations, nothingInARow = 0;
  for (int g = 1;; ++g) {
    if (!budgetLeft()) {
      verdicts_.searchEnd = counted() >= budget_ ? SearchEnd::Budget : SearchEnd::ConfigurationCap;
      break;
    }
    if (g > last && !openEnded) {
      verdicts_.searchEnd = SearchEnd::Generations;
      break;
    }
    std::vector<Point> pool = strategy_->pool(g, history(g));
    if (pool.empty()) {
      verdicts_.searchEnd = SearchEnd::SpaceExhausted;
      break;
    }
    progress_.generation(g, std::max(g, cfg_.search.generations));
    std::vector<Point> fresh = unspent(pool, g);
    if (recordingFailed_)
      return false;
    if (!fresh.empty())
      nothingInARow = 0;
    else if (++nothingInARow <= kSpentNothing)
      ++last;
    else if (openEnded) { // every proposal repeats an evaluated point or a known binary
      verdicts_.searchEnd = SearchEnd::NothingNew;
      break;
    }
    std::vector<Point> todo;
    for (const auto &p : fresh) {
      bool done = std::any_of(evals_.begin(), evals_.end(),
                              [&](const Evaluation &e) { return e.generation == g && e.point == p; });
      if (!done) // else evaluated before the engine was killed
        todo.push_back(p);
    }
    // One batch per worker count: every worker builds and measures its own
    // candidate; results are recorded in pool order, so the journal (and a
    // resume) does not depend on which worker finished first.
    for (size_t i = 0; i < todo.size() && budgetLeft();) {
      size_t n = std::min({parallelism(), todo.size() - i, room()});
      std::vector<Point> batch(todo.begin() + i, todo.begin() + i + n);
      i += n;
      size_t before = evals_.size();
      evaluateBatch(batch, g);
      if (!interrupted_.empty())
        return stopInterrupted();
      if (recordingFailed_)
        return false;
      for (size_t k = before; k < evals_.size(); ++k)
        if (evals_[k].reason == reason::StaleBuild)
          return fail(evals_[k].message);
      if (builder().daemon().stopRequested()) {
        if (slurm_)
          slurm_->cancelAll();
        progress_.note("stopped after " + evals_.back().candidateId + "; continue with `ciq resume --config " +
                       shellQuote(cfg_.path) + "`");
        outcome_.status = TuneOutcome::Status::Stopped;
        return false;
      }
    }
    if (std::find(j.completedGenerations.begin(), j.completedGenerations.end(), g) == j.completedGenerations.end() &&
        !journal({{"op", "generation"}, {"generation", g}}))
      return false;
    bool anyOk = std::any_of(evals_.begin(), evals_.end(), [&](const Evaluation &e) { return e.generation == 1 && e.ok; });
    bool anyGen1 = std::any_of(evals_.begin(), evals_.end(), [&](const Evaluation &e) { return e.generation == 1; });
    if (g == 1 && anyGen1 && !anyOk && cfg_.search.exitOnFailure)
      return failFirstGeneration();
  }
  return true;
}

// Before a runtime winner is declared, the best few candidates are measured
// again interleaved with the baseline, so that one lucky sample cannot win.
// However many finalists are configured (even 0), the winner must be
// significantly better than the baseline in this measurement (the test of
// `ciq validate`), or no lock is written.
bool TuneRun::runFinalists(WinnerChoice &w) {
  if (!runtimeObjective() || w.index < 0)
    return true;
  if (w.index == 0) {
    w.improved = false;
    w.why = "no candidate scored better than the baseline";
    return true;
  }
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals_)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  std::vector<size_t> finalists = {(size_t)w.index};
  std::set<std::string> builds = {reuseKey(evals_[0]), reuseKey(evals_[w.index])};
  for (size_t i : rankOrder(pts, false)) {
    if ((int)finalists.size() >= std::max(1, cfg_.benchmark.finalists) || !evals_[i].ok)
      break;
    if (i != 0 && builds.insert(reuseKey(evals_[i])).second)
      finalists.push_back(i);
  }
  progress_.note("re-measuring " + std::to_string(finalists.size()) + " finalist(s) interleaved with the baseline" +
                 (cfg_.benchmark.finalists <= 0 ? " (benchmark.finalists: 0 still tests the winner: no lock without "
                                                  "a significant gain)"
                                                : ""));
  std::vector<size_t> order = {0};
  order.insert(order.end(), finalists.begin(), finalists.end());
  std::vector<std::vector<double>> values;
  nlohmann::json where;   // Slurm: the node, job and GPU state of the measurement (journaled)
  if (!(slurm_ ? measureFinalistsOnNode(w, order, values, where) : measureFinalistsHere(order, values)))
    return false;
  if (!values.empty()) // empty: the Slurm job failed, no lock (w.why says why)
    judgeFinalists(w, order, values, where);
  return !recordingFailed_;
}

// The finalists rebuilt in the main build tree, snapshotted, and measured
// interleaved on this host's GPU.
bool TuneRun::measureFinalistsHere(const std::vector<size_t> &order, std::vector<std::vector<double>> &values) {
  std::vector<std::vector<std::string>> commands;
  std::string err;
  for (size_t i : order) {
    Evaluation e = evals_[i];
    e.kernels.clear();
    e.objects.clear();
    e.ok = false;
    builder().build(e, logPath(evals_[i].candidateId + ".final"));
    if (e.reason == reason::DiskFault)
      return fail("finalists: " + e.message + "; no lock is written; " + resumeHint());
    if (!e.ok)
      return fail("finalist " + evals_[i].candidateId + " no longer builds: " + e.message);
    auto cmd = snapshotBenchmark(cfg_, cfg_.runDir + "/finalists/" + evals_[i].candidateId, err, compilesAtRunTime());
    if (!cmd)
      return fail(err);
    commands.push_back(*cmd);
    snapshots_[evals_[i].rendered.hash()] = *cmd;
  }
  if (!beginPhase(*workers_[0]))
    return false;
  // Programs that compile at run time: each run gets its build's candidate
  // and the framework cache its evaluation filled. Adaptive repeats: up to
  // max_repeats rounds until the winner's verdict is made; a finalist
  // significantly worse than the best one stops early (racing).
  BeforeRun serve;
  if (compilesAtRunTime())
    serve = [&](size_t k) { serveRuntime(evals_[order[k]]); };
  auto res = runInterleaved(*bench(), commands, rounds(), logPath("finalists"), cfg_.benchmark.warmup, serve,
                            enoughRounds(Judged::BestAgainstFirst), [this] { return stopRequested(); });
  if (serve)
    builder().daemon().clearCandidate();
  endPhase(*workers_[0]);
  if (res.stopped)
    return stoppedIn("finalists");
  if (!res.ok) // a run that failed here (intermittently: it passed in the search) is no result
    return fail("finalists: " + res.reason + ": " +
                (res.failedBuild >= 0 ? evals_[order[res.failedBuild]].candidateId +
                                            (res.failedBuild == 0 ? " (the baseline)" : "") + ", " + res.failedRun
                                      : res.message) +
                "; no lock is written; the search is kept: fix the benchmark, then measure the "
                "finalists again with `ciq resume --config " + shellQuote(cfg_.path) + "`");
  if (!res.raced.empty()) {
    std::string ids;
    for (size_t k : res.raced)
      ids += (ids.empty() ? "" : ", ") + evals_[order[k]].candidateId;
    progress_.note("finalists: racing stopped " + ids + " early as significantly worse than the best finalist, " +
                   std::to_string(res.runsSaved) + " run(s) saved");
  }
  values = res.values;
  return true;
}

// executor: slurm: one job measures the finalists on one node
// (SlurmFinalists.h). A job that fails, after the executor's one requeue
// on a node fault, writes no lock and says why (values stay empty); `ciq
// stop` cancels it (false, stopped, as during the search: `ciq resume`
// measures the finalists again).
bool TuneRun::measureFinalistsOnNode(WinnerChoice &w, const std::vector<size_t> &order,
                                    std::vector<std::vector<double>> &values, nlohmann::json &where) {
  std::vector<const Evaluation *> evals;
  for (size_t i : order)
    evals.push_back(&evals_[i]);
  NodeFinalists m = measureFinalistsOnSlurm(cfg_, *slurm_, evals);
  where = m.where;
  if (m.stopped) {
    progress_.note("stopped while the finalists were measured; continue with `ciq resume --config " +
                   shellQuote(cfg_.path) + "`");
    outcome_.status = TuneOutcome::Status::Stopped;
    return false;
  }
  if (!m.ok) {
    w.improved = false;
    w.why = "the finalists' Slurm job failed (" + m.reason + ": " + m.message + "), so no lock is written";
    progress_.note("finalists: " + w.why);
    nlohmann::json line = {{"op", "finalists"}, {"rows", nlohmann::json::array()}, {"reason", m.reason},
                           {"message", m.message}};
    line.update(where);
    return journal(line);
  }
  values = m.values;
  progress_.note("finalists measured interleaved on " + m.where.value("node", std::string("?")) + " by one Slurm job");
  // The node's GPU state while measuring goes into the lock, and a GPU that
  // throttled or was shared there withholds it (finish()).
  lockExtra_["finalists_measurement"] = m.measurement;
  verdicts_.gpuProblems.insert(verdicts_.gpuProblems.end(), m.gpuProblems.begin(), m.gpuProblems.end());
  return true;
}

// The verdict on the finalists' interleaved values, wherever they were
// measured: the journal's finalists row, the best against the baseline, the
// winner only if significantly better.
void TuneRun::judgeFinalists(WinnerChoice &w, const std::vector<size_t> &order,
                             const std::vector<std::vector<double>> &values, const nlohmann::json &where) {
  const Objective &o = cfg_.objectives.front();
  bool minimize = o.direction == "minimize";
  nlohmann::json rows = nlohmann::json::array();
  size_t best = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    Summary s = summarize(values[k]);
    rows.push_back({{"candidate_id", evals_[order[k]].candidateId}, {"median", s.median}, {"cv_percent", s.cvPercent},
                    {"noise_percent", medianCiHalfWidthPercent(values[k])},
                    {"values", values[k]}});
    double bestMedian = median(values[best]);
    if (k > 0 && (best == 0 || (minimize ? s.median < bestMedian : s.median > bestMedian)))
      best = k;
  }
  nlohmann::json line = {{"op", "finalists"}, {"rows", rows}};
  if (where.is_object())
    line.update(where);
  journal(line); // runFinalists stops on a failure
  Verdict v = judge(values[0], values[best], minimize, maxCvPercent());
  progress_.note("finalists: best " + evals_[order[best]].candidateId + " median " + std::to_string(v.winner.median) +
                 " vs baseline " + std::to_string(v.baseline.median) + " " + o.unit +
                 (v.significant ? "" : " (not significant: " + v.reason + ")"));
  w.index = (int)order[best];
  w.improved = v.significant;
  w.why = v.significant ? "" : "not significantly better than the baseline: " + v.reason;
  verdicts_.speedup = v.speedup;
  verdicts_.pValue = v.welch.pValue;
  Evaluation &win = evals_[w.index];
  win.scores[o.metric] = v.winner.median;
  win.cvPercent = v.winner.cvPercent;
  evals_[0].scores[o.metric] = v.baseline.median;
}

const Evaluation *TuneRun::knownBuild(const std::string &candidateHash) const {
  auto it = byHash_.find(candidateHash);
  return it == byHash_.end() || !evals_[it->second].ok ? nullptr : &evals_[it->second];
}

// Removes every control of the winner whose removal is not worse
// (Minimize.h): what the lock ships earns its place.
bool TuneRun::minimize(WinnerChoice &w) {
  if (!w.improved || w.index <= 0)
    return true;
  const Evaluation &win = evals_[w.index];
  const Objective &o = cfg_.objectives.front();
  int trial = 0;
  std::map<std::string, Evaluation> built;   // candidate hash -> its build (compile-only scores)
  std::string diskFault;                     // a build the disk refused: no verdict
  WorseThan compare = [&](const Point &current, const Point &reduced, std::string &detail,
                          std::string &error) -> std::optional<bool> {
    Rendered cur = render(cfg_.space, current), red = render(cfg_.space, reduced);
    std::string tag = win.candidateId + "-min" + std::to_string(++trial);
    if (runtimeObjective()) {
      std::vector<std::string> problems;
      auto rows = measureVariants(builder(), bench(), cfg_, {{"without", red}, {"with", cur}}, rounds(), tag, error,
                                  measureOptions(&problems));
      notePhaseProblems(problems);
      if (!rows)
        return std::nullopt;
      // The reference is the reduced build: is the current winner significantly better?
      const VariantResult &r = (*rows)[1];
      char buf[160];
      snprintf(buf, sizeof buf, "without it %.6g %s, with it %.6g %s: %s, p = %.3g", (*rows)[0].median,
               o.unit.c_str(), r.median, o.unit.c_str(), speedupText(r, o.unit, 4).c_str(), r.pValue);
      detail = buf;
      return r.significant;
    }
    auto score = [&](const Rendered &rd) -> std::optional<std::vector<double>> {
      Evaluation e;
      e.candidateHash = rd.hash();
      if (const Evaluation *k = knownBuild(e.candidateHash))
        return normalizedObjectives(cfg_, *k);
      if (auto it = built.find(e.candidateHash); it != built.end())
        return normalizedObjectives(cfg_, it->second);
      e.candidateId = tag;
      e.rendered = rd;
      builder().build(e, logPath(tag));
      if (e.reason == reason::DiskFault) // no verdict on the control: the minimization stops
        return diskFault = e.message, std::nullopt;
      if (e.ok)
        scoreCompileMetrics(cfg_, e);
      built[e.candidateHash] = e;
      if (!e.ok)
        return std::nullopt;
      return normalizedObjectives(cfg_, e);
    };
    auto c = score(cur), r = score(red);
    if (!diskFault.empty())
      return error = diskFault, std::nullopt;
    if (!c)
      return error = "the winner no longer builds", std::nullopt;
    detail = r ? "exact comparison of the objectives" : "without it the build is INVALID";
    return !r || *c < *r;
  };
  // Each comparison is journaled as it is made; a resumed search reads the
  // ones it made before instead of measuring them again.
  WorseThan worse = [&](const Point &current, const Point &reduced, std::string &detail,
                        std::string &error) -> std::optional<bool> {
    for (const auto &t : priorTrials_)
      if (t.from == win.candidateId && t.current == current && t.reduced == reduced) {
        detail = t.detail;
        return t.worse;
      }
    auto r = compare(current, reduced, detail, error);
    if (r && !journal(minimizeTrialToJson({win.candidateId, current, reduced, *r, detail})))
      return error = outcome_.error, std::nullopt;
    return r;
  };
  std::string err;
  auto m = minimizeWinner(cfg_.space, win.point, worse, err);
  if (!m)
    return stopRequested() ? stoppedIn("minimization")
                           : fail("minimizing " + win.candidateId + ": " + err + "; no lock is written; " + resumeHint());
  for (const auto &st : m->steps)
    verdicts_.minimization.push_back((st.dropped ? "dropped " : "kept ") + st.removed + " (" + st.detail + ")");
  lockExtra_["minimization"] = {{"from", win.candidateId}, {"steps", minimizeToJson(*m)}};
  if (!journal({{"op", "minimize"}, {"candidate_id", win.candidateId}, {"steps", minimizeToJson(*m)}}))
    return false;
  if (m->point == win.point)
    return true;
  // The minimized winner: a point evaluated in the search, or built here.
  minimized_ = Evaluation{};
  minimized_.point = m->point;
  minimized_.rendered = render(cfg_.space, m->point);
  minimized_.candidateHash = minimized_.rendered.hash();
  minimized_.candidateId = win.candidateId + "-min";
  builder().build(minimized_, logPath(minimized_.candidateId));
  if (minimized_.reason == reason::DiskFault)
    return fail("minimization: " + minimized_.message + "; no lock is written; " + resumeHint());
  if (!minimized_.ok)
    return fail("the minimized winner " + minimized_.rendered.summary() + " does not build: " + minimized_.message);
  scoreCompileMetrics(cfg_, minimized_);
  return journal(buildToJson(minimized_));   // `ciq explain <id>-min`
}

// The winner's gain split into application parameters and compiler controls
// (Attribution.h); for a runtime objective its "both" row, measured last, is
// the verdict the lock is written on.
bool TuneRun::attribute(WinnerChoice &w) {
  if (!w.improved || w.index <= 0)
    return true;
  Evaluation &win = minimized_.candidateId.empty() ? evals_[w.index] : minimized_;
  bool runtime = runtimeObjective();
  std::string err;
  std::vector<std::string> problems;
  auto rows = measureVariants(builder(), runtime ? bench() : nullptr, cfg_, attributionVariants(win.rendered),
                              rounds(), "attribution", err, measureOptions(&problems));
  notePhaseProblems(problems);
  if (!rows)
    return stopRequested() ? stoppedIn("attribution") : fail("attribution: " + err + "; no lock is written; " + resumeHint());
  for (const auto &r : *rows)
    verdicts_.attribution.push_back(formatVariant(r, cfg_.objectives.front().unit));
  lockExtra_["attribution"] = variantsToJson(*rows);
  if (!journal({{"op", "attribution"}, {"rows", variantsToJson(*rows)}}))
    return false;
  if (runtime) {
    const VariantResult &both = rows->back();
    const std::string &metric = cfg_.objectives.front().metric;
    evals_[0].scores[metric] = rows->front().median;
    win.scores[metric] = both.median;
    win.cvPercent = both.cvPercent;
    verdicts_.speedup = both.speedup.value_or(0); // 0: not printed
    verdicts_.pValue = both.pValue;
    if (!both.significant) {
      w.improved = false;
      w.why = "measured again after minimization, not significantly better: " + both.verdict;
    }
  }
  return true;
}

bool TuneRun::finish() {
  // A resumed search that evaluates nothing more still leaves results.csv
  // equal to the journal (one stopped by results.csv itself, say).
  if (opts_.resume) {
    markFront(cfg_, evals_);
    if (!writeResults())
      return false;
  }
  WinnerChoice w = chooseWinner(cfg_, evals_);
  if (!w.improved && w.index > 0)
    w.why = "no candidate scored better than the baseline";
  if (!runFinalists(w) || !minimize(w) || !attribute(w))
    return false;
  if (workers_[0]->phase) {
    nlohmann::json m = workers_[0]->phase->record();
    for (const auto &p : m["problems"])
      verdicts_.gpuProblems.push_back(p.get<std::string>());
    lockExtra_["measurement"] = m;
    if (!verdicts_.gpuProblems.empty() && w.improved) {
      w.improved = false;
      w.why = "the GPU throttled or was shared while measuring (" + verdicts_.gpuProblems.front() + ")";
    }
  }
  progress_.end();
  verdicts_.counts = countBudget(evals_);
  verdicts_.budget = budget_;
  verdicts_.configurationCap = configurationCap();
  verdicts_.predictedTwins = (int)predictedTwins_.size();
  std::vector<Evaluation> shown = evals_;
  WinnerChoice sw = w;
  if (!minimized_.candidateId.empty() && w.improved) {
    shown.push_back(minimized_);
    sw.index = (int)shown.size() - 1;
  }
  outcome_.summary = TuneSummary{cfg_, shown, sw, verdicts_};
  const Evaluation *win = w.index >= 0 ? &shown[sw.index] : nullptr;
  // Journaled before the lock: no lock is written from a result the journal lacks.
  if (!journal({{"op", "winner"}, {"candidate_id", win ? win->candidateId : ""}, {"improved", w.improved}}))
    return false;
  if (win && w.improved && opts_.writeLock) {
    std::string err;
    if (!writeLock(cfg_, evals_.front(), *win, err, lockExtra_))
      return fail(err);
    outcome_.lock = TuneOutcome::Lock::Written;
  } else if (!w.improved) {
    outcome_.lock = llvm::sys::fs::exists(cfg_.lockfile) ? TuneOutcome::Lock::Unchanged : TuneOutcome::Lock::Absent;
  }
  outcome_.lockfile = cfg_.lockfile;
  return journal({{"op", "done"}});
}

TuneOutcome TuneRun::run() {
  if (!prepare() || !runSearch())
    if (outcome_.status == TuneOutcome::Status::Done)
      outcome_.status = TuneOutcome::Status::Failed; // e.g. a canary that proves nothing: its warning said why
  return outcome_;
}

// false: stopped, outcome_ says why.
bool TuneRun::runSearch() {
  if (opts_.canaryOnly)
    progress_.note("ciq: canary for " + cfg_.target + ": the default compile, then a deliberately degrading one");
  else
    progress_.note("ciq: tuning " + cfg_.target + " (" + workloadSummary() + "), space of " + std::to_string((long long)cfg_.space.size()) + " points, " +
                 strategy_->name() + " search, budget " + std::to_string(budget_) + " evaluations" + generationsCap());
  if (!evaluateBaseline())
    return false;
  if (!runCanary())
    return false;
  if (opts_.canaryOnly)
    return journal({{"op", "done"}});
  return searchGenerations() && finish();
}

} // namespace

TuneOutcome runTune(TuneConfig cfg, const TuneOptions &opts) {
  TuneRun run(std::move(cfg), opts);
  return run.run();
}

std::vector<Evaluation> loadEvaluations(const TuneConfig &cfg) {
  return readJournal(cfg.runDir + "/journal.jsonl").evaluations;
}

} // namespace ciq
