// The per-kernel stage of a search (engine/search/KernelSearch.h): after the
// command-line search has spent its share of the budget, every kernel's
// per-kernel controls are tried at once on top of its best configuration,
// each judged on its own kernel's GPU time; the per-kernel bests are then
// combined and the combination measured as a whole. Its rounds are a
// function of the journaled evaluations, so `ciq resume` takes up where a
// killed stage stopped, repeating nothing.
#include "engine/run/TuneRun.h"

#include <atomic>
#include <cmath>

namespace ciq {
namespace {

bool setsKernelControl(const SearchSpace &space, const Point &p) {
  for (size_t i = 0; i < p.size() && i < space.controls.size(); ++i)
    if (p[i] != kUnset && space.controls[i].render == RenderKind::Kernel)
      return true;
  return false;
}

std::string speedup(double ratio) { return fmt::ratio(1 / ratio); }

// "kernel a: .maxnreg 64, 56; kernel b: .minnctapersm 2" for the untried.
std::string untriedText(const SearchSpace &space,
                        const std::vector<std::pair<const KernelPlan *, std::vector<KernelTrial>>> &untried) {
  std::string out;
  for (const auto &[plan, trials] : untried) {
    std::string values, last;
    for (const KernelTrial &t : trials) {
      const Control &c = space.controls[t.control];
      std::string d = c.option == kDirectiveSmemSpilling ? "enable_smem_spilling" : "." + c.option;
      std::string v = c.option == kDirectiveSmemSpilling ? "" : " " + c.values[(size_t)t.value];
      values += (values.empty() ? "" : ",") + (d == last ? v : (values.empty() ? "" : " ") + d + v);
      last = d;
    }
    out += (out.empty() ? "" : "; ") + ("kernel " + plan->label + ": " + values);
  }
  return out;
}

} // namespace

// The stage as a stream of candidates: its design rounds, then solo retries
// of trials whose round gave no kernel times, then the combinations.
class KernelFeed : public SearchFeed {
public:
  KernelFeed(StreamHost &h, size_t base, int generation) : h_(h), base_(base), g0_(generation) {
    const Point &basePoint = h.evaluations()[base].point;
    for (size_t k = 0;; ++k) {
      auto p = designRound(basePoint, h.stagePlans(), k);
      if (!p)
        break;
      queue_.push_back(*p);
    }
    h_.keepForCombinations(2);   // the time plan keeps the combinations' binaries while the rounds run
    // A warm start's per-kernel directives (an earlier winner, a committed
    // lock) are the first round: each kernel's is judged like any trial.
    if (const Point *warm = h.warmPoint()) {
      Point p = basePoint;
      for (size_t i = 0; i < p.size() && i < warm->size(); ++i)
        if (h.config().space.controls[i].render == RenderKind::Kernel && (*warm)[i] != kUnset)
          p[i] = (*warm)[i];
      if (p != basePoint)
        queue_.insert(queue_.begin(), p);
    }
  }
  std::vector<Evaluation> take(size_t most) override;
  bool more() const override { return !ended_ && !halted_; }
  bool halted() const override { return halted_; }
  // Whether the budget cut the design rounds short.
  bool cut() const { return cut_; }
  void record(Evaluation &e) override;

private:
  enum class Phase { Design, Retry, Combine, Done };
  bool advance();
  std::vector<const Evaluation *> stage() const {
    std::vector<const Evaluation *> out;
    for (const auto &e : h_.evaluations())
      if (e.generation >= g0_ && setsKernelControl(h_.config().space, e.point))
        out.push_back(&e);
    return out;
  }
  bool evaluated(const Point &p) const {
    const auto &evals = h_.evaluations();
    return std::any_of(evals.begin(), evals.end(), [&](const Evaluation &e) { return e.point == p; });
  }
  void noteVerdicts(const std::vector<KernelVerdict> &verdicts);
  void noteInterference();
  std::vector<KernelVerdict> judge() const {
    const Evaluation &base = h_.evaluations()[base_];
    return judgeKernels(h_.stagePlans(), base.point, base, stage(), h_.config().benchmark.maxRegressionPercent);
  }
  // The budget (binaries or time) ended the rounds: the per-kernel bests
  // of the trials timed so far are combined and measured all the same (the
  // plan kept their binaries); false when no kernel has a faster trial.
  bool combineNow() {
    cut_ = true;
    h_.keepForCombinations(0);
    verdicts_ = judge();
    noteVerdicts(verdicts_);
    queue_ = combinations(h_.evaluations()[base_].point, verdicts_);
    next_ = 0;
    phase_ = queue_.empty() ? Phase::Done : Phase::Combine;
    ended_ = queue_.empty();
    h_.note(std::string("per-kernel search: the budget ended its rounds; ") +
                      (ended_ ? "no kernel has a faster trial to combine"
                              : "the per-kernel bests of the trials timed so far are combined and measured"));
    return !ended_;
  }
  // The combinations are built whatever the time left (the plan kept
  // their time): the binary budget and the configuration cap still hold.
  bool combineFits() const {
    return h_.counted() < h_.budget() && h_.compiled() < h_.configurationCap();
  }

  StreamHost &h_;
  const size_t base_;
  const int g0_;
  Phase phase_ = Phase::Design;
  std::vector<Point> queue_;
  size_t next_ = 0;
  int outstanding_ = 0;
  std::vector<KernelVerdict> verdicts_;
  bool ended_ = false;
  bool cut_ = false;
  std::atomic<bool> halted_{false};
};

std::vector<Evaluation> KernelFeed::take(size_t most) {
  std::vector<Evaluation> out;
  if (h_.stopRequested())
    halted_ = true;
  while (!halted_ && !ended_ && out.size() < most) {
    bool combining = phase_ == Phase::Combine;
    if (combining ? !combineFits() : !h_.budgetLeft()) {
      if (outstanding_ > 0)
        break;
      if (combining || !combineNow()) {
        phase_ = Phase::Done;
        ended_ = true;
        break;
      }
      continue;
    }
    // The rounds and retries leave room for the two combinations; twins
    // cost nothing, so the rounds go on while distinct binaries fit.
    int keep = combining ? 0 : 2;
    int room = combining ? std::min(h_.budget() - h_.counted(), h_.configurationCap() - h_.compiled()) : (int)h_.room();
    if (next_ < queue_.size() && room - keep <= outstanding_) {
      if (outstanding_ > 0)
        break;
      if (!combining) {   // the rounds or retries end here: their bests are combined in the 2 kept
        if (phase_ == Phase::Design && stage().empty())
          h_.note("per-kernel search: no room for its rounds: " + std::to_string(h_.room()) +
                            " binar(ies) or configuration(s) left, 2 kept for the combinations");
        if (!combineNow())
          break;
        continue;
      }
      next_ = queue_.size();   // no room for more combinations
    }
    if (next_ < queue_.size()) {
      const Point &p = queue_[next_++];
      if (evaluated(p))   // before the engine was killed, or a round equal to a combination
        continue;
      int g = g0_ + (int)phase_;
      Evaluation e = newEvaluation(h_.config().space, p, g, h_.nextName((size_t)outstanding_));
      e.replay = "ciq replay " + e.candidateId + " --config " + shellQuote(h_.config().path);
      out.push_back(std::move(e));
      ++outstanding_;
      continue;
    }
    if (outstanding_ > 0 || !advance())
      break;
  }
  return out;
}

// The next phase, once every candidate of this one is recorded: false when
// the stage is over.
bool KernelFeed::advance() {
  const Point &base = h_.evaluations()[base_].point;
  queue_.clear();
  next_ = 0;
  if (phase_ == Phase::Design) {
    phase_ = Phase::Retry;
    for (const KernelTrial &t : trialsToRetry(h_.stagePlans(), base, stage()))
      queue_.push_back(soloRound(base, t));
    if (!queue_.empty()) {
      h_.note("per-kernel search: " + std::to_string(queue_.size()) +
                        " trial(s) alone again: their rounds gave no kernel times");
      return true;
    }
  }
  if (phase_ == Phase::Retry) {
    phase_ = Phase::Combine;
    h_.keepForCombinations(0);
    verdicts_ = judge();
    noteVerdicts(verdicts_);
    queue_ = combinations(base, verdicts_);
    if (!queue_.empty())
      return true;
  }
  if (phase_ == Phase::Combine && !verdicts_.empty())
    noteInterference();
  phase_ = Phase::Done;
  ended_ = true;
  return false;
}

void KernelFeed::record(Evaluation &e) {
  --outstanding_;
  if (h_.recordTaken(e))
    halted_ = true;
}

void KernelFeed::noteVerdicts(const std::vector<KernelVerdict> &verdicts) {
  const SearchSpace &space = h_.config().space;
  for (const auto &v : verdicts) {
    size_t timed = 0;
    for (const auto &[t, ratio] : v.tried)
      timed += ratio > 0;
    std::string head = "per-kernel search: kernel " + v.label + " (" + fmt::value(v.baseMs) + " ms a launch in " +
                       h_.evaluations()[base_].candidateId + "), " + std::to_string(timed) + " of " +
                       std::to_string(v.tried.size()) + " trial(s) timed: ";
    if (v.best)
      h_.note(head + "best " + trialText(space, *v.best) + ", " + fmt::value(v.baseMs * v.bestRatio) +
                        " ms a launch (" + speedup(v.bestRatio) + ")");
    else
      h_.note(head + "none at least " + fmt::value(kMinKernelGain * 100) +
                        "% faster: it keeps the compile it had");
    for (const auto &s : v.slowsCase)
      h_.note("per-kernel search: " + trialText(space, s.trial) + " left out: faster over all cases, but " +
                        fmt::percent((s.ratio - 1) * 100) + " slower in case '" + s.caseName + "', adding " +
                        fmt::percent(s.casePercent) + " to that case's GPU time (benchmark.max_regression_percent " +
                        fmt::value(h_.config().benchmark.maxRegressionPercent) +
                        ": a combination carrying it would be refused as case_regression)");
  }
}

// The combination measured as a whole: a kernel slower in it than its best
// trial was alone (beyond the noise margin) met interference from another
// kernel's controls (a shared cache, concurrent launches).
void KernelFeed::noteInterference() {
  const Evaluation *combined = nullptr;
  for (const auto &p : combinations(h_.evaluations()[base_].point, verdicts_))
    for (const auto &e : h_.evaluations())
      if (e.point == p && kernelTimesUsable(e) && !combined)
        combined = &e;
  if (!combined)
    return;
  for (const auto &v : verdicts_) {
    double ms = kernelMsPerLaunch(*combined, v.key);
    if (!v.best || ms <= 0 || v.baseMs <= 0)
      continue;
    double ratio = ms / v.baseMs;
    if (ratio > v.bestRatio * (1 + 2 * kMinKernelGain))
      h_.note("per-kernel search: kernel " + v.label + " ran " + fmt::percent((ratio / v.bestRatio - 1) * 100) +
                        " slower in " + combined->candidateId + " (the combination) than with its control alone: "
                        "the whole-program objective decides between them");
  }
}

bool TuneRun::searchKernels() {
  if (kernelReserve_ == 0 || kernelPlans_.empty())
    return true;
  // The base: the best evaluation of the command-line search (per-kernel
  // controls unset) that has kernel times.
  std::vector<Evaluation> first;
  std::vector<size_t> at;
  int lastGeneration = 0;
  for (size_t i = 0; i < evals_.size(); ++i)
    if (!setsKernelControl(cfg_.space, evals_[i].point)) {
      first.push_back(evals_[i]);
      at.push_back(i);
      lastGeneration = std::max(lastGeneration, evals_[i].generation);
    }
  WinnerChoice w = chooseWinner(cfg_, first);
  size_t base = w.index > 0 && kernelTimesUsable(first[(size_t)w.index]) ? at[(size_t)w.index] : 0;
  if (!kernelTimesUsable(evals_[base])) {
    progress_.note("per-kernel search: skipped: " + evals_[base].candidateId + " has no kernel times (" +
                   (evals_[base].kernelTimesWhy.empty() ? "not traced" : evals_[base].kernelTimesWhy) + ")");
    return true;
  }
  inKernelStage_ = true;
  progress_.note("per-kernel search: " + std::to_string(kernelPlans_.size()) + " kernel(s) on top of " +
                 evals_[base].candidateId + ", every kernel's next trial in each binary, each judged on its own GPU time");
  enterPhase("per-kernel stage");
  auto started = std::chrono::steady_clock::now();
  clock_.searchBegins();
  inSearch_ = true;
  KernelFeed feed(static_cast<StreamHost &>(*this), base, lastGeneration + 1);
  executor().stream(feed, knownResults());
  inSearch_ = false;
  clock_.searchEnds();
  if (feed.cut()) {
    std::vector<const Evaluation *> stage;
    for (const auto &e : evals_)
      if (e.generation > lastGeneration && setsKernelControl(cfg_.space, e.point))
        stage.push_back(&e);
    auto untried = untriedTrials(kernelPlans_, evals_[base].point, stage);
    size_t n = 0;
    for (const auto &u : untried)
      n += u.second.size();
    if (n > 0)
      progress_.note("per-kernel search: " + std::to_string(n) + " trial(s) left untried (" + untriedText(cfg_.space, untried) +
                     "): raise kernel_controls.budget, the budget" + (clock_.timed() ? " or --time" : "") +
                     " to try them");
  }
  if (feed.cut() && !searchTimeLeft())
    timeCut("the per-kernel stage ended at " + durationText(clock_.elapsed()) + " before every kernel's trial was tried, "
            "keeping about " + durationText(afterReserve(0)) + " for the phases after the search");
  verdicts_.searchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  verdicts_.searchEnd = feed.cut() ? SearchEnd::KernelStageCut : budgetLeft() ? SearchEnd::KernelStage : budgetEnd();
  return streamEnded();
}

// The share of the baseline's traced GPU time spent in the planned kernels
// (-1: not traced): what per-kernel controls can gain at most.
static double plannedGpuShare(const Evaluation &base, const std::vector<KernelPlan> &plans) {
  double all = 0, planned = 0;
  for (const auto &k : base.kernelTimes) {
    all += k.gpuMs;
    std::string key = kernelKey(k.mangled);
    if (std::any_of(plans.begin(), plans.end(), [&](const KernelPlan &p) { return p.key == key; }))
      planned += k.gpuMs;
  }
  return all > 0 ? planned / all : -1;
}

// Whether the per-kernel stage runs, and the binaries kept for it: it needs
// kernel times of the baseline (the kernels it launched) and a runtime
// objective. The command-line search and the stage share what the tune can
// spend by expected gain: the stage's share grows with its kernels' share
// of the GPU time (a quarter of the binaries, up to half once they hold
// half of it), never more than its rounds plus two combinations; under a
// time budget, of the binaries that fit in the time left once the phases
// after the search are planned (at the baseline's cost a binary).
void TuneRun::planKernelStage(bool launchedOnly) {
  const KernelControlsConfig &kc = cfg_.kernelControls;
  if (kc.scoring != "per_kernel" || !runtimeObjective() || !launchedOnly)
    return;
  std::vector<KernelPlan> plans = kernelPlans(cfg_.space, spaceKernels(evals_.front().kernels));
  int rounds = (int)mostTrials(plans);
  int spend = budget_;
  std::string timeNote;
  if (clock_.timed() && costs().candidateSeconds > 0) {
    // In double first: a --time of 1e20h overflowed the int (a budget that
    // "fits about -2147483648 binaries").
    double fits = counted() + std::floor(std::max(0.0, clock_.left() - afterReserve(0)) / costs().candidateSeconds);
    int fit = fits < budget_ ? (int)fits : budget_;
    if (fit < budget_) {
      spend = fit;
      timeNote = "; the time budget fits about " + std::to_string(fit) + " binaries at the baseline's " +
                 durationText(costs().candidateSeconds) + " a binary";
    }
  }
  double gpuShare = plannedGpuShare(evals_.front(), plans);
  double fraction = gpuShare < 0 ? 0.5 : std::min(0.5, 0.25 + gpuShare / 2);
  int want = kc.budget > 0 ? kc.budget : std::min(rounds + 2, std::max(3, (int)std::floor(spend * fraction)));
  if (gpuShare >= 0)
    timeNote += "; its kernels ran " + fmt::percent(gpuShare * 100) + " of the baseline's GPU time, so it gets " +
                (fraction >= 0.5 ? "half" : fmt::percent(fraction * 100)) + " of the binaries at most";
  int most = budget_ - 2; // the baseline and one command-line candidate at least
  if (plans.empty() || std::min(want, most) < 2) {
    progress_.note("per-kernel search: the tune's budget of " + std::to_string(budget_) +
                   " binaries leaves fewer than 2 for judging each kernel on its own time (it needs at least 4); "
                   "its controls are scored by the whole program's objective");
    return;
  }
  if (kc.budget > most)
    progress_.note("per-kernel search: kernel_controls.budget " + std::to_string(kc.budget) +
                   " is more than the tune's budget of " + std::to_string(budget_) + " leaves; the stage keeps " +
                   std::to_string(most) + " (raise the tune's budget to give it more)");
  want = std::min(want, most);
  kernelPlans_ = std::move(plans);
  kernelReserve_ = want;
  progress_.note("per-kernel search: the last " + std::to_string(want) + " binaries of the budget judge each of the " +
                 std::to_string(kernelPlans_.size()) + " kernel(s) on its own GPU time (" + std::to_string(rounds) +
                 " round(s) would try every value; kernel_controls.budget sets the share" +
                 timeNote + ")");
}

} // namespace ciq
