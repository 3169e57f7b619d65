// The tune's time: the plan each phase is given from the clock (TuneClock.h)
// and the measured costs (PhasePlan.h), the status `ciq status` shows, the
// runs of the finalists reused by the minimization and the attribution, and
// the rounds journaled for `ciq resume`.
#include "engine/run/TuneRun.h"

#include <cmath>
#include <limits>
#include <memory>

namespace ciq {

// Build and run costs from the evaluations, and a search candidate's wall
// clock from this process's search (several workers overlap candidates),
// less the time waited for another process's GPU lock.
PhaseCosts TuneRun::costs() const {
  PhaseCosts c = measuredCosts(evals_);
  if (verdicts_.searchedHere > 0 && clock_.searchSeconds() > 0)
    c.candidateSeconds = clock_.searchSeconds() / verdicts_.searchedHere;
  return c;
}

// The total every worker waited for another process's GPU lock, into the clock.
void TuneRun::readForeignWait() {
  double waited = 0;
  for (const auto &w : workers_)
    if (w->phase)
      waited += w->phase->foreignWaitSeconds();
  clock_.setForeignWait(waited);
}

// Controls the winner sets: the minimization's trials at most.
static int controlsSet(const Point &p) {
  return (int)std::count_if(p.begin(), p.end(), [](int v) { return v != kUnset; });
}

AfterSearchShape TuneRun::afterShape() const {
  AfterSearchShape s;
  s.runtime = runtimeObjective();
  // Fixed repeats run every round; adaptive ones plan for the rounds a
  // decided verdict usually takes, and a deadline ends longer ones.
  const BenchmarkConfig &b = cfg_.benchmark;
  s.rounds = b.adaptive ? std::min(rounds(), std::max(10, 2 * b.minRepeats)) : rounds();
  s.cases = (int)finalistCases();
  s.finalists = std::max(1, cfg_.benchmark.finalists);
  s.rehearsal = opts_.writeLock && cfg_.build.kind != "none";
  s.programsKept = programs_.kept();
  WinnerChoice w = chooseWinner(cfg_, evals_);
  s.controls = w.index > 0 ? controlsSet(evals_[w.index].point) : 1;
  return s;
}

PhasePlan TuneRun::plan(int from) const {
  PhaseCosts c = costs();
  // A rehearsal this run made already: its measured cost.
  if (rehearsalMs_ > 0)
    c.wholeBuildSeconds = std::max(c.wholeBuildSeconds, rehearsalMs_ / 1000);
  return planPhases(c, afterShape(), clock_.budget(), clock_.left(), from);
}

double TuneRun::afterReserve(int from) const { return plan(from).reserve(from); }

// One comparison of the minimization: its share of the phase's need.
double TuneRun::minimizeTrialSeconds() const {
  return plan(1).need[1] / std::max(1, std::min(afterShape().controls, 8));
}

// The binaries the search must still leave room for: the per-kernel
// stage's share before it starts, its combinations while its rounds run.
int TuneRun::binariesKept() const { return inKernelStage_ ? combineKept_ : kernelReserve_; }

// The search takes a candidate only while one more fits beside the shares
// of the phases after it (and the per-kernel stage's binaries).
bool TuneRun::searchTimeLeft() const {
  if (!clock_.timed())
    return true;
  double one = costs().candidateSeconds;
  // Before a candidate was built, every cost comes from the baseline's
  // whole-program build: the first candidate is taken while half of that
  // estimate fits, and measures what a candidate costs.
  bool measured = std::any_of(evals_.begin(), evals_.end(),
                              [](const Evaluation &e) { return e.generation > 0 && e.buildMs > 0; });
  return searchMayTakeOne(plan(0), (measured ? 1 : 0.5) * one * (1 + binariesKept()));
}

// Elapsed and what is left: the search's remaining budget at its pace, plus
// the phases after it; under a time budget, at most the time left.
double TuneRun::remainingEstimate() const {
  PhaseCosts c = costs();
  double left = 0;
  int phase = afterPhaseIndex();
  if (phase < 0) {
    int todo = std::max(0, budget_ - counted());
    left = todo * c.candidateSeconds + afterReserve(0);
  } else
    left = std::max(0.0, afterReserve(phase) - clock_.inPhase());
  return std::min(left, std::max(0.0, clock_.left()));
}

int TuneRun::afterPhaseIndex() const {
  for (int p = 0; p < kAfterSearchPhases; ++p)
    if (clock_.phase() == kAfterSearchNames[p])
      return p;
  return -1;
}

// A phase begins: its wall time is kept for the summary, the progress line
// and `ciq status` show it, and under a time budget a line says where the
// tune stands.
void TuneRun::enterPhase(const std::string &name) {
  clock_.enter(name);
  verdicts_.phaseSeconds = clock_.phases();
  if (name.empty())
    return;
  double left = remainingEstimate();
  progress_.phase(name, left);
  if (clock_.timed())
    progress_.note("phase: " + name + " (elapsed " + durationText(clock_.elapsed()) + " of " +
                   durationText(clock_.budget()) + ", about " + durationText(left) + " left)");
  publishStatus();
}

void TuneRun::publishStatus() {
  nlohmann::json s = progress_.status(cfg_, evals_);
  s["phase"] = clock_.phase();
  s["elapsed_s"] = std::round(clock_.elapsed() * 10) / 10;
  s["remaining_s"] = std::round(remainingEstimate() * 10) / 10;
  if (clock_.timed())
    s["time_budget_s"] = clock_.budget();
  if (clock_.foreignWait() > 0)
    s["gpu_lock_wait_s"] = std::round(clock_.foreignWait() * 10) / 10;
  builder().daemon().setStatus(s);
}

// Interleaved rounds after the search end at the phase's deadline (the
// time left less the shares of the later phases): after at least
// kLeastRounds rounds so a verdict can be made, no round starts that would
// end past it at the pace of the last one (roundsEndAtDeadline); the
// verdict is then the one those runs support.
EnoughRounds TuneRun::timed(EnoughRounds enough, int phase) {
  if (!clock_.timed())
    return enough;
  double until = clock_.budget() - afterReserve(phase + 1);
  // When the last round began: asked after every round, each call ends one.
  auto roundBegan = std::make_shared<double>(clock_.elapsed());
  return [this, enough, until, phase, roundBegan](const std::vector<std::vector<double>> &values) {
    RoundsDecision d = enough ? enough(values) : RoundsDecision{};
    size_t least = std::numeric_limits<size_t>::max();
    for (const auto &v : values)
      if (!v.empty())
        least = std::min(least, v.size());
    double now = clock_.elapsed(), lastRound = now - *roundBegan;
    *roundBegan = now;
    if (!d.stop && least != std::numeric_limits<size_t>::max() && roundsEndAtDeadline(least, now, lastRound, until)) {
      d.stop = true;
      timeCut(std::string(kAfterSearchNames[phase]) + ": the time budget ended a re-measurement after " +
              std::to_string(least) + " round(s)");
    }
    return d;
  };
}

void TuneRun::timeCut(const std::string &line) { clock_.cut(line); }

// The finalists' runs of the build of `renderedHash` (an evaluation of the
// search, the baseline, or the minimized winner), by the binary it made.
const std::vector<double> *TuneRun::measuredRuns(const std::string &renderedHash, int caseIndex) const {
  if (remeasure_.count(renderedHash))   // the rehearsed program is not the one the finalists ran
    return nullptr;
  std::string key;
  if (auto it = byHash_.find(renderedHash); it != byHash_.end() && evals_[it->second].ok)
    key = reuseKey(evals_[it->second]);
  else if (!minimized_.candidateId.empty() && minimized_.candidateHash == renderedHash)
    key = reuseKey(minimized_);
  if (key.empty())
    return nullptr;
  auto it = finalistRuns_.find(key);
  size_t c = caseIndex < 0 ? 0 : (size_t)caseIndex;
  if (it == finalistRuns_.end() || c >= it->second.size())
    return nullptr;
  return &it->second[c];
}

// The finalists' values (build x case) kept by binary, for the phases after them.
void TuneRun::keepFinalistRuns(const std::vector<size_t> &order, const std::vector<std::vector<double>> &values) {
  size_t nc = finalistCases();
  for (size_t b = 0; b < order.size(); ++b) {
    std::string key = reuseKey(evals_[order[b]]);
    if (key.empty() || (b + 1) * nc > values.size())
      continue;
    std::vector<std::vector<double>> perCase(values.begin() + b * nc, values.begin() + (b + 1) * nc);
    finalistRuns_[key] = std::move(perCase);
  }
}

// Taken once: the same measurement made again in this run measures anew.
const std::vector<std::vector<double>> *TuneRun::priorRounds(const std::string &key) {
  auto it = priorRounds_.find(key);
  if (it == priorRounds_.end() || it->second.empty())
    return nullptr;
  replaying_ = std::move(it->second);
  priorRounds_.erase(it);
  for (const auto &round : replaying_)
    roundsReplayed_ += (int)std::count_if(round.begin(), round.end(), [](double v) { return !std::isnan(v); });
  return &replaying_;
}

// A journal that cannot take the line stops the search at its next check
// (recordingFailed_); the run itself is kept for this process's verdict.
void TuneRun::journalRun(const std::string &key, int round, size_t build, double value) {
  journal(runToJson(key, round, build, value));
  publishStatus();   // `ciq status`: the elapsed and remaining time move during long re-measurements
}

} // namespace ciq

namespace ciq {

// The stage the time budget cut, when the binary budget still has room.
static bool cutByTime(const std::optional<SearchEnd> &end) {
  return end && (*end == SearchEnd::Time || *end == SearchEnd::KernelStageCut);
}

// After the finalists: the plan is made again, and what the minimization,
// rehearsal and attribution will not need goes back to the stage the time
// budget cut, when it buys binaries and a second re-measurement.
bool TuneRun::timeReturns() {
  if (!clock_.timed() || stopRequested() || !cutByTime(verdicts_.searchEnd))
    return false;
  if (counted() >= budget_ || compiled() >= configurationCap())
    return false;
  readForeignWait();
  return timeReturnsToSearch(plan(1), costs(), clock_.inPhase());
}

// The cut stage runs again in the time returned, then the finalists, unless
// the best candidate stayed the one the finalists just judged.
bool TuneRun::searchAgain(WinnerChoice &w) {
  bool kernels = *verdicts_.searchEnd == SearchEnd::KernelStageCut;
  PhasePlan after = plan(1);
  progress_.note("clock: " + durationText(after.left - after.reserve(1)) + " left beyond what the minimization, "
                 "rehearsal and attribution need: the time goes back to the " +
                 (kernels ? "per-kernel stage" : "search"));
  timeCut("the phases after the search did not need " + durationText(after.left - after.reserve(1)) + " at " +
          durationText(clock_.elapsed()) + ": it went back to the " + (kernels ? "per-kernel stage" : "search"));
  int judged = w.index;
  verdicts_.searchEnd.reset();
  if (!(kernels ? searchKernels() : searchGenerations()))
    return false;
  WinnerChoice next = chooseWinner(cfg_, evals_);
  if (next.index == judged)
    return true;   // the finalists' verdict on it stands
  w = next;
  if (!w.improved && w.index > 0)
    w.why = "no candidate scored better than the baseline";
  enterPhase("finalists");
  return runFinalists(w);
}

// The summary's time budget lines: the budget and what it bought, why a
// tune ended before 90% of it, what it cut; time waited for another
// process's GPU lock, apart.
void TuneRun::noteTimeUsed() {
  verdicts_.timeBudget = clock_.cuts();
  readForeignWait();
  verdicts_.gpuLockWaitSeconds = clock_.foreignWait();
  if (!clock_.timed())
    return;
  double used = clock_.elapsed(), budget = clock_.budget();
  char share[32];
  snprintf(share, sizeof share, " (%.0f%%)", 100 * used / budget);
  std::string head = durationText(budget) + " (" + clock_.source() + "), " + durationText(used) + " used" + share;
  if (used < 0.9 * budget)
    head += "; ended early: " + endedEarlyWhy();
  verdicts_.timeBudget.insert(verdicts_.timeBudget.begin(), head);
}

std::string TuneRun::endedEarlyWhy() const {
  if (verdicts_.searchEnd && !cutByTime(verdicts_.searchEnd))
    return "the search ended before its share of the time (" +
           searchEndText(*verdicts_.searchEnd, budget_, configurationCap(), countBudget(evals_),
                         !runtimeObjective()) +
           ")";
  return "what was left after the finalists bought fewer than " + std::to_string(kLeastReturned) +
         " binaries and a second re-measurement, so no further measurement could change the verdict";
}

// Under a time budget the baseline's cost says at once whether a candidate
// can fit: when not even one does beside the least the verdict needs, one
// line says so and what budget would hold one (the tune then ends with the
// baseline's verdict).
void TuneRun::noteBaselineCost() {
  if (!clock_.timed() || evals_.empty())
    return;
  PhaseCosts c = costs();
  PhasePlan p = plan(0);
  double one = c.candidateSeconds;
  if (one <= 0 || clock_.left() > 0.5 * one + p.reserve(0))
    return;
  double wants = clock_.elapsed() + one + p.need[0] + p.need[2];
  timeCut("the baseline took " + durationText(clock_.elapsed()) + " of " + durationText(clock_.budget()) +
          ": no candidate fits beside the finalists and the rehearsal; a time budget of at least " +
          durationText(std::ceil(wants / 60) * 60) + " holds one");
  progress_.note("time budget: " + clock_.cuts().back());
}

} // namespace ciq
