// The tuning run of one `ciq tune` (Tune.h), its methods split by job over
// the Tune*.cpp files of engine/run (ARCHITECTURE.md names each file's job);
// its parts of their own: the clock (TuneClock), the program copies
// (ProgramCopies), the warm start (WarmPlan). Private to run/.
#pragma once
#include "engine/run/Tune.h"
#include "common/Subprocess.h"
#include "common/NumberFormat.h"
#include "engine/winner/Attribution.h"
#include "engine/compile/Architectures.h"
#include "engine/measure/Benchmark.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/search/Budget.h"
#include "engine/search/TimeBudget.h"
#include "engine/search/PhasePlan.h"
#include "engine/run/TuneClock.h"
#include "engine/run/StreamHost.h"
#include "engine/run/ProgramCopies.h"
#include "engine/run/WarmPlan.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/search/InertControls.h"
#include "engine/search/KernelSearch.h"
#include "engine/compile/InputIdentity.h"
#include "engine/measure/Interleave.h"
#include "common/JsonRead.h"
#include "engine/record/Journal.h"
#include "common/DiskFault.h"
#include "engine/winner/LockWriter.h"
#include "engine/winner/Minimize.h"
#include "engine/winner/Objectives.h"
#include "engine/winner/CaseScore.h"
#include "common/Paths.h"
#include "engine/executors/Pipeline.h"
#include "engine/compile/RunLock.h"
#include "engine/run/Progress.h"
#include "engine/run/ResultsCsv.h"
#include "engine/search/Search.h"
#include "engine/search/TwinPredictor.h"
#include "engine/search/DefaultValues.h"
#include "common/Sha256.h"
#include "engine/executors/slurm/SlurmExecutor.h"
#include "engine/executors/slurm/SlurmFinalists.h"
#include "engine/measure/Stats.h"
#include "engine/Version.h"
#include "engine/executors/Workers.h"
#include "engine/executors/LocalExecutor.h"

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
#include <mutex>
#include <shared_mutex>
#include <thread>

namespace ciq {

// c0001, c0002, ...: the candidate ids.
std::string candidateName(size_t index);
// The journal's start line (engine/record/Journal.h: startToJson).
RecordedStart startOf(const TuneConfig &cfg);

// The search's streams (TuneFeed, KernelFeed) see it as their StreamHost
// (StreamHost.h, implemented in TuneStreams.cpp), nothing more.
class TuneRun final : private StreamHost {
public:
  TuneRun(TuneConfig cfg, TuneOptions opts) : cfg_(std::move(cfg)), opts_(opts) {}
  TuneOutcome run();
  bool runSearch();

private:
  // StreamHost: what the search's streams read and change (TuneStreams.cpp).
  const TuneConfig &config() const override { return cfg_; }
  const std::vector<Evaluation> &evaluations() const override { return evals_; }
  std::vector<Point> notEvaluated(int generation, const std::vector<Point> &pool) const override;
  bool countsBinaries() const override { return binaries(); }
  int budget() const override { return budget_; }
  bool extending() const override { return extending_; }
  bool recordTaken(Evaluation &e) override;
  bool recordingFailed() const override { return recordingFailed_; }
  void note(const std::string &line) override { progress_.note(line); }
  const std::string &journalPath() const override { return journal_.path(); }
  std::vector<Point> proposePool(int generation, int before) override;
  void generationBegins(int generation, int of) override { progress_.generation(generation, of); }
  bool journalGeneration(int generation) override { return journal({{"op", "generation"}, {"generation", generation}}); }
  void searchEnded(SearchEnd why) override { verdicts_.searchEnd = why; }
  const std::vector<KernelPlan> &stagePlans() const override { return kernelPlans_; }
  void keepForCombinations(int binaries) override { combineKept_ = binaries; }
  const Point *warmPoint() const override {
    return warm_ && !warm_->points.empty() ? &warm_->points.front() : nullptr;
  }

  bool prepare();
  bool openJournal();   // TuneResume.cpp, with the four below
  bool resumeJournal(const JournalContents &prior, const std::string &jpath);
  bool refuseResumeWithoutStart(const JournalContents &prior, const std::string &jpath);
  bool finishedSearchExtends(const JournalContents &prior);
  bool setPriorSearchAside(const JournalContents &prior, const std::string &jpath);
  bool startJournal(const std::string &jpath);
  bool referenceKept();
  bool evaluateBaseline();
  // Per-kernel controls for the baseline's kernels (TuneKernels.cpp).
  bool addKernelControls();
  bool checkUnits();   // every per-translation-unit control names a compiled source
  bool searchGenerations();
  bool searchLoop();
  // The per-kernel stage after the command-line search (TuneKernelStage.cpp).
  bool searchKernels();
  void planKernelStage(bool launchedOnly);
  // After a stream of candidates: false when it stopped the search (a kill,
  // a disk fault, `ciq stop`), saying why (TuneStreams.cpp).
  bool streamEnded();
  // The binaries of the budget the search may spend now: the per-kernel
  // stage's share is kept back until it starts.
  int stageBudget() const { return inKernelStage_ ? budget_ : budget_ - kernelReserve_; }
  bool inSearch_ = false;   // evaluations recorded now count towards the GPU's busy time
  bool startWorkers();
  bool checkArchitectures();
  void evaluate(Evaluation &e, Worker &w, const std::function<const Evaluation *(const Evaluation &)> &deviceTwin);
  void evaluateBatch(const std::vector<Point> &points, int generation);
  // What is recorded, as the executor's threads may ask while the search
  // records (copies, under evalsMutex_).
  KnownResults knownResults();
  Executor &executor() { return slurm_ ? (Executor &)*slurm_ : (Executor &)*local_; }
  void record(Evaluation &e);
  bool runCanary();
  bool runFinalists(WinnerChoice &w);
  std::string racedNote(const InterleavedResult &res, const std::vector<size_t> &order, size_t nc) const;
  bool measureFinalistsHere(const std::vector<size_t> &order, std::vector<std::vector<double>> &values);
  bool finalistCommands(const std::vector<size_t> &order, std::vector<std::vector<std::string>> &commands);
  bool measureFinalistsOnNode(WinnerChoice &w, const std::vector<size_t> &order,
                              std::vector<std::vector<double>> &values, nlohmann::json &where);
  void judgeFinalists(WinnerChoice &w, const std::vector<size_t> &order, const std::vector<std::vector<double>> &values,
                      const nlohmann::json &where);
  // benchmark.cases: the finalists' commands are build x case, interleaved
  // (TuneFinalistCases.cpp); judged on the geometric mean of the ratios.
  size_t finalistCases() const { return std::max<size_t>(1, cfg_.benchmark.cases.size()); }
  EnoughRounds caseEnoughRounds() const;
  void judgeFinalistCases(WinnerChoice &w, const std::vector<size_t> &order,
                          const std::vector<std::vector<double>> &values);
  bool minimize(WinnerChoice &w);   // TuneAfter.cpp, with the three below
  std::optional<bool> measuredWorse(const Rendered &cur, const Rendered &red, const std::string &tag,
                                    std::string &detail, std::string &error);
  std::optional<bool> scoredWorse(const Rendered &cur, const Rendered &red, const std::string &tag,
                                  std::map<std::string, Evaluation> &built, std::string &detail, std::string &error);
  bool buildMinimized(const Evaluation &win, const Point &point);
  bool attribute(WinnerChoice &w);
  // The lock's own build before the lock (TuneRehearsal.cpp).
  bool rehearse(WinnerChoice &w);
  bool rehearseOne(const Evaluation &win, RehearsalRecord &rec);
  const RehearsalRecord *knownRehearsal(const std::string &candidateHash) const;
  // Whether the finalists measured the rehearsed program (TuneRehearsal.cpp).
  void notePrograms(const Evaluation &win, const RehearsalRecord &rec);
  std::set<std::string> remeasure_;   // rendered hashes whose finalists' runs are not the lock build's
  void applyPriorRehearsals();
  void traceMinimized();
  std::optional<std::vector<VariantResult>> attributionRows(const Evaluation &win, std::string &err);
  std::optional<std::vector<VariantResult>> attributionRowsByCase(Evaluation &win, std::string &err);
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
    m.enough = timed(m.enough, std::max(0, afterPhaseIndex()));
    m.roundsKey = clock_.phase();
    m.maxCvPercent = maxCvPercent();
    m.problems = problems;
    m.snapshots = &snapshots_;
    m.stop = [this] { return stopRequested(); };
    m.known = [this](const std::string &h) { return knownBuild(h); };
    m.priorRounds = [this](const std::string &key) { return priorRounds(key); };
    m.onRun = [this](const std::string &key, int round, size_t build, double v) { journalRun(key, round, build, v); };
    m.measuredRuns = [this](const std::string &hash, int c) { return measuredRuns(hash, c); };
    m.reuseKey = [this](const Evaluation &e) { return reuseKey(e); };
    if (compilesAtRunTime())
      m.serveRuntime = [this](const Evaluation &e) { serveRuntime(e); };
    return m;
  }
  bool finish();
  bool failFirstGeneration() override;
  // The budget counts distinct binaries (Budget.h); twins cost nothing, and
  // the configuration cap ends a search of a flat landscape.
  bool binaries() const { return cfg_.search.budgetCountsBinaries; }
  // What the budget counts, for the header line: "30 distinct binaries" (a
  // compile-only objective's are its device codes) or "30 configurations".
  std::string budgetText() const {
    if (!binaries())
      return std::to_string(budget_) + " configuration" + (budget_ == 1 ? "" : "s");
    bool one = budget_ == 1;
    std::string cap = "; at most " + std::to_string(configurationCap()) + " configurations compiled";
    if (runtimeObjective())
      return std::to_string(budget_) + (one ? " distinct binary" : " distinct binaries") + cap;
    return std::to_string(budget_) + (one ? " distinct device code" : " distinct device codes") + cap;
  }
  int counted() const override { return binaries() ? countBudget(evals_).distinct : (int)evals_.size(); }
  // The most configurations the search compiles (the baseline included):
  // search.max_configurations_per_binary x budget, so that a budget of
  // distinct binaries also bounds the search's compile time (issue 41 item 7).
  int configurationCap() const override {
    return binaries() ? cfg_.search.maxConfigurationsPerBinary * budget_ : std::numeric_limits<int>::max();
  }
  int compiled() const override { return countBudget(evals_).compiled; }
  // The cap of the stage running now: the command-line search leaves the
  // per-kernel stage its binaries' share of the cap, else a search whose
  // configurations build twins spends the cap and leaves the stage nothing
  // to compile.
  int stageConfigurationCap() const {
    if (inKernelStage_ || !binaries())
      return configurationCap();
    return configurationCap() - cfg_.search.maxConfigurationsPerBinary * kernelReserve_;
  }
  bool budgetLeft() const override {
    return counted() < stageBudget() && compiled() < stageConfigurationCap() && searchTimeLeft();
  }
  // Why a search with no budget left ended: the budget, the configuration
  // cap, else the time budget's share for the search.
  SearchEnd budgetEnd() const override {
    return counted() >= stageBudget()                 ? SearchEnd::Budget
           : compiled() >= stageConfigurationCap() ? SearchEnd::ConfigurationCap
                                                     : SearchEnd::Time;
  }
  // How many more candidates one batch may start without passing the budget
  // or the cap (each may compile: a configuration twin found later is one fewer).
  size_t room() const override {
    if (!searchTimeLeft())
      return 0;
    return (size_t)std::max(0, std::min(stageBudget() - counted(), stageConfigurationCap() - compiled()));
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
           std::to_string(cfg_.search.poolSize) + " ends it after at most " + std::to_string(most) + " configurations)";
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
  // Advice to start over names the ciq_tune() target that does it, so a
  // CMake user need not leave CMake (ciq-tune-fresh-<target>).
  bool fail(const std::string &error) {
    outcome_.status = TuneOutcome::Status::Failed;
    if (outcome_.error.empty())
      outcome_.error = withFreshTarget(error);
    return false;
  }
  std::string withFreshTarget(const std::string &error) const {
    if (error.find("ciq tune --fresh") == std::string::npos || error.find("ciq-tune-fresh-") != std::string::npos ||
        cfg_.build.kind != "cmake" || cfg_.target.empty())
      return error;
    return error + " (from CMake: cmake --build " + shellQuote(cfg_.buildDir) + " --target ciq-tune-fresh-" +
           cfg_.target + ")";
  }
  // Every journal line goes through here. A line the journal cannot take
  // (a full, read-only or failing disk, an immutable file: Journal::error)
  // stops the search at once: what is not journaled is never scored and
  // never locked, and `ciq resume` continues from the last whole line.
  bool journal(const nlohmann::json &line) {
    if (journal_.append(line))
      return true;
    recordingFailed_ = true;
    return fail(journal_.error() + "; " + diskHint(journal_.errorNumber()));
  }
  // results.csv again, from the evaluations journaled; a failure stops the
  // search like the journal's (the journal holds them all: resumable).
  bool writeResults() {
    std::string err;
    int errNo = 0;
    if (writeResultsCsv(cfg_.runDir + "/results.csv", cfg_, evals_, err, &errNo))
      return true;
    recordingFailed_ = true;
    return fail(err + "; the journal holds every evaluation so far: " + diskHint(errNo));
  }
  // err: the errno of the write that failed (0: unknown): DiskFault.h's remedy.
  std::string diskHint(int err) const {
    return remedyFor(err) + ", then continue with `ciq resume --config " + shellQuote(cfg_.path) + "`";
  }
  void warn(const std::string &warning) {
    std::lock_guard<std::mutex> lock(warnMutex_);   // workers' builds warn at once
    outcome_.warnings.push_back(warning);
    if (opts_.onWarning)
      opts_.onWarning(warning);
  }

  // The tune's clock (TuneClock.h) and the plan made from it (TuneTime.cpp).
  TuneClock clock_;
  PhaseCosts costs() const;
  void readForeignWait();
  AfterSearchShape afterShape() const;
  // The shares of the phases from `from` (kAfterSearchNames index) on.
  PhasePlan plan(int from) const;
  double afterReserve(int from) const;
  double minimizeTrialSeconds() const;
  int binariesKept() const;
  int combineKept_ = 0;   // binaries the per-kernel stage keeps for its combinations while its rounds run
  bool searchTimeLeft() const;
  double remainingEstimate() const;
  int afterPhaseIndex() const;   // the phase after the search running now (-1: none)
  void enterPhase(const std::string &name);
  void publishStatus();
  // After the finalists: time the phases after them will not need goes
  // back to the stage the time budget cut (Tune.cpp).
  static constexpr int kMostReturns = 3;
  bool timeReturns();
  bool searchAgain(WinnerChoice &w);
  void noteTimeUsed();
  void noteBaselineCost();
  std::string endedEarlyWhy() const;
  EnoughRounds timed(EnoughRounds enough, int phase);
  void timeCut(const std::string &line);
  // The finalists' runs by binary (reuseKey) and case: the minimization and
  // the attribution judge builds of those binaries on them (issue 49 item 2).
  std::map<std::string, std::vector<std::vector<double>>> finalistRuns_;
  const std::vector<double> *measuredRuns(const std::string &renderedHash, int caseIndex) const;
  void keepFinalistRuns(const std::vector<size_t> &order, const std::vector<std::vector<double>> &values);
  // Rounds journaled by a killed run, by key (Journal.h), replayed once.
  std::map<std::string, std::vector<std::vector<double>>> priorRounds_;
  std::vector<std::vector<double>> replaying_;
  const std::vector<std::vector<double>> *priorRounds(const std::string &key);
  void journalRun(const std::string &key, int round, size_t build, double value);
  int roundsReplayed_ = 0;   // runs taken from the journal (Verdicts::roundsReplayed)

  // The warm start of a re-tune (WarmPlan.h).
  WarmPlan warm_;

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
  std::unique_ptr<LocalExecutor> local_;           // else: the workers
  std::vector<Evaluation> evals_;
  // Held to change evals_ (and its indexes), shared to read them from a
  // worker's thread: the search records while workers build and measure.
  mutable std::shared_mutex evalsMutex_;
  std::mutex warnMutex_;
  std::map<std::string, size_t> byHash_, byDevice_;
  std::set<int> inertAnnounced_;
  std::set<Point> predictedTwins_;
  int defaultsAnnounced_ = 0;
  std::vector<RehearsalRecord> rehearsals_;   // every rehearsal journaled (a resume: the earlier runs' too)
  double rehearsalMs_ = 0;                         // this run's rehearsal builds
  std::vector<MinimizeTrial> priorTrials_;   // resume: the minimization's comparisons already made   // proposals not compiled: predicted twins (TwinPredictor.h)
  // Pool points not evaluated because an inert control was all that set them
  // apart: the strategy sees them as taken, so it moves on (not journaled: a
  // resumed search re-derives them, and never evaluates a point twice).
  std::vector<ScoredPoint> skipped_;
  // Once per point and generation: a search given back time (Tune.cpp)
  // proposes its generations again, as a resume does.
  void skip(ScoredPoint p) {
    for (const auto &s : skipped_)
      if (s.point == p.point && s.generation == p.generation)
        return;
    skipped_.push_back(std::move(p));
  }
  int budget_ = 0;
  // The per-kernel stage (engine/search/KernelSearch.h): its kernels and
  // trials, and the binaries kept for it (0: per-kernel controls, if any,
  // are scored by the whole program's objective with the rest).
  std::vector<KernelPlan> kernelPlans_;
  int kernelReserve_ = 0;
  bool inKernelStage_ = false;
  bool canaryDone_ = false; // resume: the journal records a passed (or skipped) canary
  Verdicts verdicts_;                  // what the summary reports after the search
  nlohmann::json lockExtra_ = nlohmann::json::object();   // minimization, attribution, measurement: into the lock
  Evaluation minimized_;               // the winner after minimization (when it changed)
  std::map<std::string, std::vector<std::string>> snapshots_;   // rendered hash -> benchmark copy (after the search)
  // The search's copies of the programs it measured (ProgramCopies.h).
  ProgramCopies programs_{cfg_, [this](const Evaluation &e) { return reuseKey(e); }};
  bool inputsRecorded_ = false;
  int firstNewId_ = 0;       // ids below are taken (journal, intact or damaged)
  std::string interrupted_;  // why the search stops: a build killed twice, a disk that refused a build's write
  bool recordingFailed_ = false;   // a journal line or results.csv could not be written: the search stops
  size_t resumedCount_ = 0;  // evaluations read from the journal
  bool extending_ = false;   // a finished search resumed with a raised budget
  // Ids continue after every id the journal used, damaged lines included.
  std::string nextName(size_t k) const override { return candidateName(firstNewId_ + (evals_.size() - resumedCount_) + k); }
  bool lockFolderWritable();   // the lockfile's folder exists and takes a new file (Tune.cpp)
  bool stopInterrupted() {
    return fail(interrupted_ + "; nothing was recorded for it: continue with `ciq resume --config " + shellQuote(cfg_.path) +
                       "`");
  }
  // The pool minus what cannot give a new binary, learnt from the
  // generations before `before` (generation - search.propose_ahead); inFlight:
  // points of the generations since, not to be proposed again.
  std::vector<Point> unspent(std::vector<Point> pool, int generation, int before,
                             const std::set<Point> &inFlight) override;
  DefaultRules compilerDefaults();
  // `ciq stop` during a re-measurement after the search (finalists,
  // minimization, attribution): its rounds end at once, no lock is written,
  // and `ciq resume` measures these phases again (the search is kept).
  bool finalistsCanRun();
  std::string resumeHint() const {
    return "the search is kept: fix the cause, then measure the phases after it again with `ciq resume "
           "--config " + shellQuote(cfg_.path) + "`";
  }
  bool stopRequested() override { return builder().daemon().stopRequested(); }
  bool stoppedIn(const std::string &phase) {
    progress_.note("stopped during the " + phase + "; continue with `ciq resume --config " +
                   shellQuote(cfg_.path) + "`");
    outcome_.status = TuneOutcome::Status::Stopped;
    return false;
  }
};

} // namespace ciq
