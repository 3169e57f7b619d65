// The tune's clock (issue 49): the time budget (items 1 and 4), the phases
// and their wall time (items 2 and 6), the runs of the finalists reused by
// the minimization and the attribution (item 2), and the rounds journaled
// for `ciq resume` (item 3).
#include "engine/run/TuneRun.h"

#include <cmath>

namespace ciq {

namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

double TuneRun::elapsed() const { return since(started_); }

double TuneRun::timeLeft() const {
  return timeBudget_ > 0 ? timeBudget_ - elapsed() : std::numeric_limits<double>::infinity();
}

// Build and run costs from the evaluations, and a search candidate's wall
// clock from this process's search (several workers overlap candidates).
PhaseCosts TuneRun::costs() const {
  PhaseCosts c = measuredCosts(evals_);
  if (verdicts_.searchedHere > 0 && searchClock_ > 0)
    c.candidateSeconds = searchClock_ / verdicts_.searchedHere;
  return c;
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
  s.programsKept = keepsPrograms();
  int best = -1;
  WinnerChoice w = chooseWinner(cfg_, evals_);
  best = w.index;
  s.controls = best > 0 ? controlsSet(evals_[best].point) : 1;
  return s;
}

double TuneRun::afterReserve(int from) const {
  auto need = afterSearchSeconds(costs(), afterShape());
  double sum = 0;
  for (int p = std::max(0, from); p < kAfterSearchPhases; ++p)
    sum += need[p];
  return sum;
}

// The search takes a candidate only while one more fits beside what the
// phases after it (and the per-kernel stage's share) need.
bool TuneRun::searchTimeLeft() const {
  if (timeBudget_ <= 0)
    return true;
  PhaseCosts c = costs();
  double one = c.candidateSeconds;
  int stage = inKernelStage_ ? 0 : kernelReserve_;
  // Before a candidate was built, every cost comes from the baseline's
  // whole-program build: the first candidate is taken while half of that
  // estimate fits, and measures what a candidate costs.
  bool measured = std::any_of(evals_.begin(), evals_.end(),
                              [](const Evaluation &e) { return e.generation > 0 && e.buildMs > 0; });
  if (!measured)
    return timeLeft() > 0.5 * (afterReserve(0) + one * (1 + stage));
  return timeLeft() > afterReserve(0) + one * (1 + stage);
}

// Elapsed and what is left: the search's remaining budget at its pace, plus
// the phases after it; under a time budget, at most the time left.
double TuneRun::remainingEstimate() const {
  PhaseCosts c = costs();
  double left = 0;
  int phase = -1;
  for (int p = 0; p < kAfterSearchPhases; ++p)
    if (phase_ == kAfterSearchNames[p])
      phase = p;
  if (phase < 0) {
    int todo = std::max(0, budget_ - counted());
    left = todo * c.candidateSeconds + afterReserve(0);
  } else
    left = std::max(0.0, afterReserve(phase) - since(phaseStarted_));
  return std::min(left, std::max(0.0, timeLeft()));
}

// A phase begins: its wall time is kept for the summary, the progress line
// and `ciq status` show it, and under a time budget a line says where the
// tune stands.
void TuneRun::enterPhase(const std::string &name) {
  if (!phase_.empty() && phase_ != "baseline")
    verdicts_.phaseSeconds.push_back({phase_, since(phaseStarted_)});
  phase_ = name;
  phaseStarted_ = std::chrono::steady_clock::now();
  if (name.empty())
    return;
  double left = remainingEstimate();
  progress_.phase(name, left);
  if (timeBudget_ > 0)
    progress_.note("phase: " + name + " (elapsed " + durationText(elapsed()) + " of " + durationText(timeBudget_) +
                   ", about " + durationText(left) + " left)");
  publishStatus();
}

void TuneRun::publishStatus() {
  nlohmann::json s = progress_.status(cfg_, evals_);
  s["phase"] = phase_;
  s["elapsed_s"] = std::round(elapsed() * 10) / 10;
  s["remaining_s"] = std::round(remainingEstimate() * 10) / 10;
  if (timeBudget_ > 0)
    s["time_budget_s"] = timeBudget_;
  builder().daemon().setStatus(s);
}

// Interleaved rounds after the search end at the phase's deadline (the
// time left less what the later phases need), after at least 3 rounds so
// a verdict can be made; the verdict is then the one those runs support.
EnoughRounds TuneRun::timed(EnoughRounds enough, int phase) {
  if (timeBudget_ <= 0)
    return enough;
  double until = timeBudget_ - afterReserve(phase + 1);
  return [this, enough, until, phase](const std::vector<std::vector<double>> &values) {
    RoundsDecision d = enough ? enough(values) : RoundsDecision{};
    size_t least = std::numeric_limits<size_t>::max();
    for (const auto &v : values)
      if (!v.empty())
        least = std::min(least, v.size());
    if (!d.stop && least != std::numeric_limits<size_t>::max() && least >= 3 && elapsed() > until) {
      d.stop = true;
      timeCut(std::string(kAfterSearchNames[phase]) + ": the time budget ended a re-measurement after " +
              std::to_string(least) + " round(s)");
    }
    return d;
  };
}

void TuneRun::timeCut(const std::string &line) {
  if (std::find(verdicts_.timeBudget.begin(), verdicts_.timeBudget.end(), line) == verdicts_.timeBudget.end())
    verdicts_.timeBudget.push_back(line);
}

// The finalists' runs of the build of `renderedHash` (an evaluation of the
// search, the baseline, or the minimized winner), by the binary it made.
const std::vector<double> *TuneRun::measuredRuns(const std::string &renderedHash, int caseIndex) const {
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
