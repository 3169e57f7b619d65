#include "engine/run/TuneRun.h"
#include "engine/winner/KernelTable.h"
#include "common/FileIO.h"
#include "common/FindExecutable.h"
#include "engine/config/CMakeCache.h"

#include <cerrno>

namespace ciq {

std::string candidateName(size_t index) {
  char buf[16];
  snprintf(buf, sizeof buf, "c%04zu", index);
  return buf;
}

namespace {

// How candidates are measured, for `ciq diagnose` and readers.
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

} // namespace

// The journal's start line (engine/record/Journal.h: startToJson).
RecordedStart startOf(const TuneConfig &cfg) {
  RecordedStart s;
  s.engineVersion = CIQ_VERSION;
  s.configPath = cfg.path;
  s.spaceIdentity = cfg.space.identity();
  s.spaceSize = cfg.space.feasibleSize().points;   // the points the search may visit
  s.seed = cfg.search.seed;
  s.strategy = cfg.search.strategy;
  s.search = {cfg.search.strategy, cfg.search.poolSize, cfg.search.generations, cfg.search.cullSize,
              cfg.search.elitism, cfg.search.mutateRate, cfg.search.seed};
  s.search.proposeAhead = std::max(0, cfg.search.proposeAhead);
  s.target = cfg.target;
  for (const auto &o : cfg.objectives)
    s.objectives.push_back({o.metric, o.direction, o.unit});
  s.pareto = cfg.pareto;
  s.startedAt = nowIso8601();
  s.measurement = measurementLine(cfg.benchmark);
  return s;
}

// narrow_architectures with nothing to narrow to, in a build of several
// architectures (Architectures.h); "" otherwise.
static std::string narrowingProblem(const TuneConfig &cfg) {
  if (!cfg.narrowArchitectures || !measuredArchitecture(cfg).arch.empty())
    return "";
  auto driver = makeBuildDriver(cfg);
  std::string err;
  if (!driver->discover(err))
    return ""; // the builder reports the same problem, as an error
  return narrowWithoutTargetProblem(sassArchitectures(driver->objects()), cfg.path);
}

// Legacy FindCUDA compiles through scripts that run CUDA_NVCC_EXECUTABLE,
// which no launcher reaches: unless that is the nvcc stand-in, no candidate
// can reach its compiles. Said before the journal and before any build (the
// configure warned already; the baseline's build took 127 s to say the same:
// issue 50 item 5); "" otherwise.
static std::string findCudaProblem(const TuneConfig &cfg) {
  if (cfg.build.kind != "cmake" || cfg.target.empty())
    return "";
  auto scripts = findCudaScriptCompiles(cfg.buildDir, cfg.target);
  if (scripts.empty())
    return "";
  std::string nvcc = cacheValue(readCMakeCache(cfg.buildDir), "CUDA_NVCC_EXECUTABLE");
  if (!nvcc.empty() && isCiqPtxas(findExecutable(nvcc).value_or(nvcc)))
    return "";
  return "the configuration would not reach the compiler: " + cfg.target + " compiles its " +
         std::to_string(scripts.size()) + " CUDA source(s) (" +
         llvm::sys::path::filename(scripts.front().source).str() + (scripts.size() > 1 ? ", ..." : "") +
         ") with legacy FindCUDA, whose nvcc (CUDA_NVCC_EXECUTABLE" + (nvcc.empty() ? "" : " = " + nvcc) +
         ") is not the ciq-ptxas stand-in; configure with -DCUDA_NVCC_EXECUTABLE=<a link named nvcc to ciq-ptxas> "
         "(docs/cmake.md, \"Legacy FindCUDA\"); nothing was built";
}

bool TuneRun::lockFolderWritable() {
  std::string dir = llvm::sys::path::parent_path(cfg_.lockfile).str(), why;
  int err = 0;
  if (dir.empty() || canCreateFileIn(dir, why, &err))
    return true;
  if (err == ENOENT || err == ENOTDIR)
    return fail("lockfile " + cfg_.lockfile + ": " + why + "; create it, or set lockfile: in " + cfg_.path +
                " to a path in an existing folder (checked before the search starts)");
  return fail("lockfile " + cfg_.lockfile + ": " + why + "; " + remedyFor(err) +
              ", or set lockfile: in " + cfg_.path + " to a writable folder (checked before the search starts)");
}

// The budget: --max-evaluations, else search.max_evaluations, else what
// the generations of the pool spend.
static int budgetOf(const TuneConfig &cfg, const TuneOptions &opts) {
  int budget = opts.maxEvaluations > 0            ? opts.maxEvaluations
               : cfg.search.maxEvaluations > 0    ? cfg.search.maxEvaluations
               : cfg.search.poolFollowsWorkers() ? 1 + SearchConfig::kDefaultPoolSize * cfg.search.generations
                                                 : 1 + cfg.search.poolSize * cfg.search.generations;
  // A strategy that runs out of points (exhaustive over a space smaller
  // than the budget) ends the search there, and the counter says so ([3/3],
  // not [3/49]).
  // Not where per-kernel controls join the space after the baseline: the
  // space grows then, and the budget is for it too.
  if (auto most = mostEvaluations(cfg.search.strategy, cfg.space);
      most && *most < (double)budget && !kernelControlsOn(cfg))
    budget = std::max(1, (int)*most);
  return budget;
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
  // What the search ends by writing is checked before it starts: a lock
  // folder that is missing or read-only failed the tune after all of it.
  if (opts_.writeLock && !opts_.canaryOnly && !lockFolderWritable())
    return false;
  // tpe without pool_size: one proposal per worker (per Slurm job in
  // flight); the default budget does not shrink with the pool.
  if (cfg_.search.poolFollowsWorkers())
    cfg_.search.poolSize =
        std::max(1, cfg_.executor.kind == "slurm" ? cfg_.executor.slurm.maxJobs : workerCount(cfg_));
  // Several local workers: the next generation is proposed while the last
  // one is measured (search.propose_ahead), so no worker waits for a
  // generation's last result before it builds again.
  if (cfg_.search.proposeAhead < 0)
    cfg_.search.proposeAhead = cfg_.executor.kind != "slurm" && cfg_.benchmark.enabled &&
                                       !isCompileMetric(cfg_.objectives.front().metric) && workerCount(cfg_) > 1
                                   ? 1
                                   : 0;
  budget_ = budgetOf(cfg_, opts_);
  // A budget (BUDGET, max_evaluations, --max-evaluations) is what the user
  // asked to spend: without generations of their own, enough generations to
  // spend it; with them, the header says where the search will stop. Before
  // the journal's start line, which records the generations.
  // A pool that follows the workers always gets the generations its budget
  // needs (generations then only sets the default budget).
  int byGenerations = 1 + cfg_.search.poolSize * cfg_.search.generations;
  if (budget_ > byGenerations && (!cfg_.search.generationsSet || cfg_.search.poolFollowsWorkers()))
    fitGenerationsToBudget();
  // The time budget of this process (a resume gets its own): --time, else search.max_minutes.
  if (opts_.timeSeconds > 0) {
    clock_.setBudget(opts_.timeSeconds, "--time " + (opts_.timeText.empty() ? durationText(opts_.timeSeconds)
                                                                              : opts_.timeText));
  } else if (cfg_.search.maxMinutes > 0) {
    clock_.setBudget(cfg_.search.maxMinutes * 60, "search.max_minutes " + fmt::value(cfg_.search.maxMinutes));
  }
  // Before the journal: a start that could only fail leaves no unfinished
  // search behind, so a changed ciq_tune() starts anew (issue 41 item 6).
  if (std::string p = narrowingProblem(cfg_); !p.empty())
    return fail(p);
  if (std::string p = findCudaProblem(cfg_); !p.empty())
    return fail(p);
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
  programs_.decide(runtimeObjective(), slurm_ != nullptr);   // after startWorkers: Slurm keeps no copies
  if (opts_.resume)
    programs_.adopt(evals_);
  expectLikeBaseline();
  progress_.begin(budget_, !opts_.quiet,
                  !binaries() ? "configurations" : runtimeObjective() ? "binaries" : "device codes");
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

// Worker 0 builds in the user's build tree; each further worker (runtime
// objectives: Workers.h) gets a twin build tree and a GPU, shared in turn.
bool TuneRun::startWorkers() {
  int n = opts_.canaryOnly ? 1 : workerCount(cfg_);
  std::vector<std::string> gpus = workerGpus(n);
  std::set<std::string> distinct(gpus.begin(), gpus.end());
  // Workers sharing a GPU build while it measures: their builds run below
  // the benchmark's priority (overlap: low_priority).
  bool overlap = cfg_.benchmark.enabled && distinct.size() < gpus.size();
  int niceness = overlap && cfg_.overlap == "low_priority" ? 10 : 0;
  for (int k = 0; k < n; ++k) {
    auto w = std::make_unique<Worker>();
    w->index = k;
    std::string err;
    if (k == 0)
      w->cfg = cfg_;
    else if (!prepareWorkerConfig(cfg_, k, w->cfg, err))
      return fail(err);
    w->cfg.buildNiceness = niceness;
    w->builder = std::make_unique<CandidateBuilder>(
        w->cfg, CandidateBuilder::Messages{[this](const std::string &l) { warn(l); },
                                           [this](const std::string &l) { progress_.note(l); }});
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
  local_ = std::make_unique<LocalExecutor>(
      workers_, [this](Evaluation &e, Worker &w, const auto &deviceTwin) { evaluate(e, w, deviceTwin); },
      [this] { return stopRequested(); });
  // Which overlap applied, beside the measurements it may have touched.
  if (n > 1 && !journal({{"op", "workers"}, {"workers", n}, {"gpus", distinct.size()},
                         {"overlap", overlap ? cfg_.overlap : "none"}, {"build_niceness", niceness}}))
    return false;
  if (n > 1 && !overlap)
    progress_.note("evaluating " + std::to_string(n) + " candidates at once, one per GPU, worker build trees under " +
                   cfg_.runDir + "/worker-*");
  else if (n > 1)
    progress_.note("evaluating " + std::to_string(n) + " candidates at once on " + std::to_string(distinct.size()) +
                   " GPU(s): the others build (at nice +" + std::to_string(niceness) +
                   ") while a GPU measures one candidate at a time; worker build trees under " + cfg_.runDir +
                   "/worker-*");
  if (cfg_.executor.kind == "slurm" && !opts_.canaryOnly) {
    slurm_ = std::make_unique<SlurmExecutor>(cfg_, builder().daemon(), opts_.keepInvalid || cfg_.keepInvalid,
                                            [this](const std::string &l) { warn(l); });
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
  // Each phase after the search is timed (the summary's phases line) and,
  // under a time budget, planned inside what is left (TuneTime.cpp).
  enterPhase("finalists");
  if (!runFinalists(w))
    return false;
  for (int again = 0; again < kMostReturns && timeReturns(); ++again)
    if (!searchAgain(w))
      return false;
  enterPhase("minimization");
  if (!minimize(w))
    return false;
  enterPhase("rehearsal");
  if (!rehearse(w))
    return false;
  enterPhase("attribution");
  if (!attribute(w))
    return false;
  enterPhase("");
  verdicts_.roundsReplayed = roundsReplayed_;
  noteTimeUsed();
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
    borrowKernelTimes(minimized_, evals_);
    traceMinimized();
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
    int errNo = 0;
    // A disk that refuses the lock (full, read-only) loses nothing: the
    // search is journaled up to its winner, and a resume writes the lock
    // (issue 51 item 8: the line named the errno, not what to do).
    LockWritten written;
    if (!writeLock(cfg_, evals_.front(), *win, err, lockExtra_, &errNo, &written))
      return fail(errNo ? "lockfile " + cfg_.lockfile + ": " + err + "; the search is journaled up to its winner: " +
                              diskHint(errNo)
                        : err);
    outcome_.lock = TuneOutcome::Lock::Written;
    outcome_.lockSections = written.sections;
    outcome_.lockAdded = written.added;
    outcome_.lockReplaced = written.replaced;
    outcome_.lockReplacedOneWinner = written.replacedOneWinner;
  } else if (!w.improved) {
    outcome_.lock = llvm::sys::fs::exists(cfg_.lockfile) ? TuneOutcome::Lock::Unchanged : TuneOutcome::Lock::Absent;
  }
  outcome_.lockfile = cfg_.lockfile;
  // The budget it ended under: a resume extends it only past that (Journal.h).
  return journal({{"op", "done"}, {"budget", budget_}});
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
    progress_.note("ciq: tuning " + cfg_.target + " (" + workloadSummary() + "), space of " + cfg_.space.sizeSummary() + ", " +
                 strategy_->name() + " search, budget " + budgetText() + generationsCap() +
                 (clock_.timed() ? "; time budget " + durationText(clock_.budget()) + " (" + clock_.source() +
                                        ") for the whole tune, the phases after the search planned inside it"
                                  : ""));
  if (std::string warm = warm_.note(cfg_.space); !warm.empty() && !opts_.canaryOnly)
    progress_.note(warm);
  if (!cfg_.buildNumericsNote.empty() && !opts_.canaryOnly)
    progress_.note(cfg_.buildNumericsNote);
  if (cfg_.numericsLeftOut && !cfg_.buildHasFastMath && !opts_.canaryOnly)   // where a runtime gain often lies
    progress_.note("space: the controls that change floating-point results (ptxas --fmad; nvcc --ftz, --prec-div, "
                   "--prec-sqrt, --use_fast_math) are left out; to search them, compare the output with the baseline's "
                   "(benchmark.correctness.compare, or ciq_tune(... COMPARE stdout|<file>))");
  if (!evaluateBaseline())
    return false;
  if (!opts_.canaryOnly)
    noteBaselineCost();
  if (!opts_.canaryOnly && !addKernelControls())
    return false;
  if (!opts_.canaryOnly && !opts_.resume && resumedCount_ == 0) {   // a fresh run dir: warm from the lock
    WarmPlan::LockOutcome fromLock = warm_.planFromLock(cfg_);
    if ((!fromLock.planned || journal(warm_.toJson())) && !fromLock.note.empty())
      progress_.note(fromLock.note);
  }
  if (!runCanary())
    return false;
  if (opts_.canaryOnly)
    return journal({{"op", "done"}});
  return searchGenerations() && searchKernels() && finish();
}

TuneOutcome runTune(TuneConfig cfg, const TuneOptions &opts) {
  TuneRun run(std::move(cfg), opts);
  return run.run();
}

std::vector<Evaluation> loadEvaluations(const TuneConfig &cfg) {
  return readJournal(cfg.runDir + "/journal.jsonl").evaluations;
}

} // namespace ciq
