#include "engine/run/TuneRun.h"
#include "common/FileIO.h"
#include "engine/search/WarmStart.h"

#include <cstdlib>

namespace ciq {

// One candidate in one worker (LocalExecutor.h): deviceTwin names the
// evaluation whose result stands for it once it is built (BatchTwins.h).
void TuneRun::evaluate(Evaluation &e, Worker &w, const std::function<const Evaluation *(const Evaluation &)> &deviceTwin) {
  bool parallel = workers_.size() > 1;
  if (!parallel)
    progress_.building(e.candidateId);
  PipelineOptions o;
  o.logPath = logPath(e.candidateId);
  if (opts_.keepInvalid || cfg_.keepInvalid)
    o.artifactsDir = cfg_.runDir + "/invalid/" + e.candidateId;
  o.deviceTwin = deviceTwin;
  if (!parallel)
    o.onMeasuring = [&] { progress_.measuring(e.candidateId); };
  o.note = [this](const std::string &l) { progress_.note(l); };
  // Racing (benchmark.racing): against the best candidate measured so far.
  RaceAgainst race;
  if (runtimeObjective() && cfg_.benchmark.racing && e.generation > 0) {
    std::shared_lock<std::shared_mutex> lock(evalsMutex_);   // the search records meanwhile
    WinnerChoice best = chooseWinner(cfg_, evals_);
    if (best.index >= 0 && evals_[best.index].runs.size() >= 2) {
      race.runs = evals_[best.index].runs;
      race.minimize = cfg_.objectives.front().direction == "minimize";
      o.race = &race;
    }
    if (best.index >= 0 && !evals_[best.index].cases.empty()) { // each case races the incumbent's same case
      for (const auto &c : evals_[best.index].cases)
        race.caseRuns[c.name] = c.runs;
      race.minimize = cfg_.objectives.front().direction == "minimize";
      o.race = &race;
    }
  }
  evaluateCandidate(w, e, o);
  // Before the worker's next build replaces it.
  if (std::string line = programs_.copy(w.cfg, e, compilesAtRunTime()); !line.empty())
    progress_.note(line);
  // benchmark.cases: scored here, before a later candidate can copy it as
  // its twin (record() scores again: the same result), so twins do not
  // depend on when this one is recorded.
  if (!cfg_.benchmark.cases.empty() && e.duplicateKind != "config") {
    std::optional<Evaluation> baseline;
    {
      std::shared_lock<std::shared_mutex> lock(evalsMutex_);
      if (!evals_.empty())
        baseline = evals_.front();
    }
    scoreCases(cfg_, e, baseline ? &*baseline : nullptr);
  }
}

void TuneRun::record(Evaluation &e) {
  // Not the candidate's result (a build killed twice, a write the disk
  // refused, a GPU lock another user holds or planted, an engine socket
  // replaced): kept out of the journal, and the search stops; `ciq resume`
  // goes on once it is fixed.
  if (stopsTheSearch(e.reason)) {
    if (interrupted_.empty())
      interrupted_ = e.message;
    return;
  }
  // benchmark.cases: the score is the cases' ratios to the baseline (the
  // first evaluation; the baseline itself scores 1), journaled with them.
  if (e.duplicateKind != "config")
    scoreCases(cfg_, e, evals_.empty() ? nullptr : &evals_.front());
  if (recordingFailed_ || !journal(evaluationToJson(e)))
    return; // not journaled: never scored, and the search stops
  {
    std::unique_lock<std::shared_mutex> lock(evalsMutex_);
    evals_.push_back(e);
    size_t i = evals_.size() - 1;
    byHash_.emplace(e.candidateHash, i);
    if (e.ok && !reuseKey(e).empty())
      byDevice_.emplace(reuseKey(e), i);
    markFront(cfg_, evals_);
  }
  if (inSearch_) {
    verdicts_.gpuBusySeconds += e.measureMs / 1000;
    ++verdicts_.searchedHere;
    readForeignWait();
    clock_.searchRecorded();
  }
  if (!writeResults())
    return;
  programs_.prune(evals_);
  WinnerChoice w = chooseWinner(cfg_, evals_);
  progress_.evaluated(cfg_, e, evals_, w.index >= 0 ? &evals_[w.index] : nullptr, counted());
  progress_.phase(clock_.phase(), remainingEstimate());
  publishStatus();
}

std::vector<ScoredPoint> TuneRun::history(int beforeGeneration) const {
  std::vector<ScoredPoint> h;
  for (const auto &e : evals_)
    if (e.generation < beforeGeneration)
      h.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  for (const auto &p : skipped_)
    if (p.generation < beforeGeneration)
      h.push_back(p);
  if (warm_)   // an earlier search's evaluations, learned before generation 1
    return warmHistory(warm_->learned, h);
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
  removeTree(dir);
  return cmd ? true : fail(err);
}

// The batch goes to the executor (local workers or Slurm jobs), then its
// complete candidates are recorded in pool order, so the journal (and a
// resume) does not depend on which one finished first.
void TuneRun::evaluateBatch(const std::vector<Point> &points, int generation) {
  std::vector<Evaluation> batch;
  for (const auto &p : points) {
    batch.push_back(newEvaluation(cfg_.space, p, generation, nextName(batch.size())));
    batch.back().replay = "ciq replay " + batch.back().candidateId + " --config " + shellQuote(cfg_.path);
  }
  size_t complete = executor().evaluate(batch, knownResults());
  for (size_t k = 0; k < complete; ++k)
    record(batch[k]);
}

KnownResults TuneRun::knownResults() {
  KnownResults known;
  known.byConfiguration = [this](const std::string &hash) -> std::optional<Evaluation> {
    std::shared_lock<std::shared_mutex> lock(evalsMutex_);
    auto it = byHash_.find(hash);
    return it == byHash_.end() ? std::nullopt : std::optional<Evaluation>(evals_[it->second]);
  };
  known.reuseKey = [this](const Evaluation &e) {
    std::shared_lock<std::shared_mutex> lock(evalsMutex_);
    return compilesAtRunTime() ? std::string() : reuseKey(e);
  };
  known.byDeviceCode = [this](const Evaluation &built) -> std::optional<Evaluation> {
    std::shared_lock<std::shared_mutex> lock(evalsMutex_);
    auto it = byDevice_.find(reuseKey(built));
    return it == byDevice_.end() ? std::nullopt : std::optional<Evaluation>(evals_[it->second]);
  };
  return known;
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
std::vector<Point> TuneRun::unspent(std::vector<Point> pool, int generation, int before,
                                    const std::set<Point> &inFlight) {
  auto inert = findInertControls(cfg_.space, evals_, before);
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
    twins.emplace(cfg_.space.controls.size(), evals_, before, [this](const Evaluation &e) { return reuseKey(e); });
  DefaultRules defaults = compilerDefaults();
  std::vector<Point> out;
  std::set<Point> seen;
  for (const auto &p : pool) {
    Point d = withDefaultsUnset(defaults, p);
    Point q = withoutInert(d, inert);
    auto earlier = std::find_if(evals_.begin(), evals_.end(),
                                [&](const Evaluation &e) { return e.generation < before && e.point == q; });
    if (earlier != evals_.end() && d != p && q == d) {
      // Its values equal the compiler's defaults where it differs from an
      // evaluated point: that point's twin, its score known, nothing compiled.
      skip({p, earlier->ok, normalizedObjectives(cfg_, *earlier), generation});
      if (predictedTwins_.insert(p).second && defaultsAnnounced_++ == 0)
        progress_.note("configurations that set a control to the compiler's default (e.g. " +
                       render(cfg_.space, p).summary() + ", like " + earlier->candidateId +
                       ") build what leaving it unset builds: they are not compiled");
      continue;
    }
    if (earlier != evals_.end() || inFlight.count(q) || !seen.insert(q).second) {
      if (q != p)
        skip({p, false, {}, generation});
      continue;
    }
    // Predicted to build an earlier candidate's binary: the strategy learns
    // that binary's score for it, and no compile is spent.
    if (const Evaluation *twin = twins ? twins->predict(q) : nullptr) {
      skip({p, true, normalizedObjectives(cfg_, *twin), generation});
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

} // namespace ciq

namespace ciq {

// What the compiler does for an unset control, as far as this build leaves
// it the compiler's (DefaultValues.h): read from the tuned objects' compile
// lines, which a command build or FindCUDA does not give.
DefaultRules TuneRun::compilerDefaults() {
  std::vector<std::vector<std::string>> commands;
  bool known = cfg_.build.kind == "cmake";
  for (const auto &o : builder().driver().objects()) {
    known = known && !o.command.empty();
    commands.push_back(o.command);
  }
  auto var = [](const char *name) {
    const char *v = getenv(name);
    return std::string(v ? v : "");
  };
  std::string env = var("NVCC_PREPEND_FLAGS") + " " + var("NVCC_APPEND_FLAGS");
  return defaultRules(cfg_.space, commands, known, env);
}

} // namespace ciq
