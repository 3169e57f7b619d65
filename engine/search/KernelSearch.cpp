#include "engine/search/KernelSearch.h"

#include "common/InvalidReason.h"
#include "common/KernelDirective.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace ciq {
namespace {

int valueOf(const Control &c, int index) { return std::atoi(c.values[(size_t)index].c_str()); }

// The control's value indexes in the order worth trying: those on the
// preferred side of `from` nearest first, then the other side nearest first.
std::vector<int> orderAround(const Control &c, int from, bool upFirst) {
  std::vector<int> up, down;
  for (size_t i = 0; i < c.values.size(); ++i)
    (valueOf(c, (int)i) > from ? up : down).push_back((int)i);
  std::sort(up.begin(), up.end(), [&](int a, int b) { return valueOf(c, a) < valueOf(c, b); });
  std::sort(down.begin(), down.end(), [&](int a, int b) { return valueOf(c, a) > valueOf(c, b); });
  std::vector<int> out = upFirst ? up : down;
  const auto &rest = upFirst ? down : up;
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// One directive's values, most promising first, for a kernel as the
// baseline compiled it.
std::vector<int> directiveOrder(const Control &c, const SpaceKernel &k) {
  bool spills = k.spillBytes > 0;
  if (c.option == kDirectiveMaxnreg)   // spilling: room first; else the occupancy steps below
    return orderAround(c, k.registers, spills);
  if (c.option == kDirectiveMinBlocks) // spilling: ask for fewer blocks (more registers each)
    return orderAround(c, k.minBlocks > 0 ? k.minBlocks : 1, !spills);
  std::vector<int> all;
  for (size_t i = 0; i < c.values.size(); ++i)
    all.push_back((int)i);
  return all;
}

// The trial a point carries for one kernel: the one control of the kernel
// it sets apart from the base (none, or several: not a single trial).
std::optional<KernelTrial> trialIn(const KernelPlan &k, const Point &base, const Point &p) {
  std::optional<KernelTrial> t;
  for (size_t c : k.controls) {
    if (c >= p.size() || p[c] == base[c])
      continue;
    if (t)
      return std::nullopt;
    t = KernelTrial{c, p[c]};
  }
  return t;
}

bool carriesOtherTrials(const std::vector<KernelPlan> &plans, const KernelPlan &self, const Point &base,
                        const Point &p) {
  for (const auto &k : plans)
    if (&k != &self)
      for (size_t c : k.controls)
        if (c < p.size() && p[c] != base[c])
          return true;
  return false;
}

const KernelTime *caseKernel(const CaseResult &c, const std::string &key) {
  for (const auto &k : c.kernels)
    if (k.launches > 0 && kernelKey(k.mangled) == key)
      return &k;
  return nullptr;
}

// The GPU time of every kernel the case's traced run launched.
double caseGpuMs(const CaseResult &c) {
  double ms = 0;
  for (const auto &k : c.kernels)
    ms += k.gpuMs;
  return ms;
}

// The case whose whole GPU time e's kernel slowed most against the base's
// same case: the time it added (per launch, times the base's launches
// there) as a share of the base's case, when both timed it there. Judged on
// the whole case, so a kernel of 2% of a case is not held to 1% of itself
// (and another kernel's trial in the same binary changes nothing).
std::optional<KernelVerdict::SlowCase> slowestCase(const Evaluation &e, const Evaluation &base, const std::string &key) {
  std::optional<KernelVerdict::SlowCase> worst;
  for (const auto &c : e.cases)
    for (const auto &b : base.cases) {
      const KernelTime *k = b.name == c.name ? caseKernel(c, key) : nullptr, *bk = k ? caseKernel(b, key) : nullptr;
      double whole = caseGpuMs(b);
      if (!k || !bk || whole <= 0)
        continue;
      double ms = k->gpuMs / (double)k->launches, baseMs = bk->gpuMs / (double)bk->launches;
      double percent = 100 * (ms - baseMs) * (double)bk->launches / whole;
      if (!worst || percent > worst->casePercent)
        worst = KernelVerdict::SlowCase{{}, c.name, ms / baseMs, percent};
    }
  return worst;
}

} // namespace

std::vector<KernelPlan> kernelPlans(const SearchSpace &space, const std::vector<SpaceKernel> &kernels) {
  std::vector<KernelPlan> plans;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < space.controls.size(); ++i) {
    const Control &c = space.controls[i];
    if (c.render != RenderKind::Kernel)
      continue;
    auto [it, fresh] = at.insert({c.kernelKey, plans.size()});
    if (fresh)
      plans.push_back({c.kernelKey, c.kernelLabel, {}, {}});
    plans[it->second].controls.push_back(i);
  }
  for (auto &plan : plans) {
    SpaceKernel k;
    for (const auto &s : kernels)
      if (s.key == plan.key)
        k = s;
    // Which directive leads: occupancy for a kernel that spills under its
    // launch bounds (examples/spill: 2.16x from .minnctapersm alone), the
    // register ceiling for one that does not.
    std::vector<size_t> order = plan.controls;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      auto rank = [&](size_t i) {
        const std::string &d = space.controls[i].option;
        if (d == kDirectiveSmemSpilling)
          return 1;
        bool lead = k.spillBytes > 0 ? d == kDirectiveMinBlocks : d == kDirectiveMaxnreg;
        return lead ? 0 : 2;
      };
      return rank(a) < rank(b);
    });
    for (size_t c : order)
      for (int v : directiveOrder(space.controls[c], k))
        plan.trials.push_back({c, v});
  }
  return plans;
}

size_t mostTrials(const std::vector<KernelPlan> &plans) {
  size_t most = 0;
  for (const auto &k : plans)
    most = std::max(most, k.trials.size());
  return most;
}

std::optional<Point> designRound(const Point &base, const std::vector<KernelPlan> &plans, size_t r) {
  Point p = base;
  bool any = false;
  for (const auto &k : plans)
    if (r < k.trials.size()) {
      p[k.trials[r].control] = k.trials[r].value;
      any = true;
    }
  return any ? std::optional<Point>(p) : std::nullopt;
}

Point soloRound(const Point &base, const KernelTrial &t) {
  Point p = base;
  p[t.control] = t.value;
  return p;
}

double kernelMsPerLaunch(const Evaluation &e, const std::string &key) {
  for (const auto &k : e.kernelTimes)
    if (k.launches > 0 && kernelKey(k.mangled) == key)
      return k.gpuMs / (double)k.launches;
  return -1;
}

bool kernelTimesUsable(const Evaluation &e) {
  return !e.kernelTimes.empty() && (e.ok || e.reason == reason::CaseRegression);
}

std::vector<KernelVerdict> judgeKernels(const std::vector<KernelPlan> &plans, const Point &base,
                                        const Evaluation &baseEval, const std::vector<const Evaluation *> &stage,
                                        double maxRegressionPercent) {
  std::vector<KernelVerdict> out;
  for (const auto &k : plans) {
    KernelVerdict v{k.key, k.label, kernelMsPerLaunch(baseEval, k.key), {}, std::nullopt, 1, {}, {}};
    std::map<size_t, std::pair<int, double>> perControl;   // control -> (value, ratio)
    for (const KernelTrial &t : k.trials) {
      double best = -1;   // a trial measured twice (a round and a retry): its faster time
      std::optional<KernelVerdict::SlowCase> slow;   // of the measurement with the best time
      for (const Evaluation *e : stage) {
        auto carried = trialIn(k, base, e->point);
        double ms = kernelTimesUsable(*e) ? kernelMsPerLaunch(*e, k.key) : -1;
        if (!carried || !(*carried == t) || ms <= 0 || v.baseMs <= 0 || (best >= 0 && ms / v.baseMs >= best))
          continue;
        best = ms / v.baseMs;
        slow = slowestCase(*e, baseEval, k.key);
      }
      v.tried.push_back({t, best});
      if (best < 0 || best > 1 - kMinKernelGain)
        continue;
      if (slow && slow->casePercent > maxRegressionPercent) {
        slow->trial = t;
        v.slowsCase.push_back(*slow);
        continue;
      }
      if (best < v.bestRatio) {
        v.bestRatio = best;
        v.best = t;
      }
      auto it = perControl.find(t.control);
      if (it == perControl.end() || best < it->second.second)
        perControl[t.control] = {t.value, best};
    }
    for (const auto &[c, vr] : perControl)
      v.bestPerControl.push_back({c, vr.first});
    out.push_back(v);
  }
  return out;
}

std::vector<KernelTrial> trialsToRetry(const std::vector<KernelPlan> &plans, const Point &base,
                                       const std::vector<const Evaluation *> &stage) {
  std::vector<KernelTrial> out;
  for (const auto &k : plans)
    for (const KernelTrial &t : k.trials) {
      bool seen = false, told = false, alone = false;
      for (const Evaluation *e : stage) {
        auto carried = trialIn(k, base, e->point);
        if (!carried || !(*carried == t))
          continue;
        seen = true;
        // Its own kernel timed: a case whose trace was lost (unreadable,
        // not written) times the other kernels, not this one.
        told = told || (kernelTimesUsable(*e) && kernelMsPerLaunch(*e, k.key) > 0);
        alone = alone || !carriesOtherTrials(plans, k, base, e->point);
      }
      if (seen && !told && !alone)
        out.push_back(t);
    }
  return out;
}

std::vector<std::pair<const KernelPlan *, std::vector<KernelTrial>>>
untriedTrials(const std::vector<KernelPlan> &plans, const Point &base, const std::vector<const Evaluation *> &stage) {
  std::vector<std::pair<const KernelPlan *, std::vector<KernelTrial>>> out;
  for (const auto &k : plans) {
    std::vector<KernelTrial> left;
    for (const KernelTrial &t : k.trials)
      if (std::none_of(stage.begin(), stage.end(), [&](const Evaluation *e) {
            auto carried = trialIn(k, base, e->point);
            return carried && *carried == t;
          }))
        left.push_back(t);
    if (!left.empty())
      out.push_back({&k, std::move(left)});
  }
  return out;
}

std::vector<Point> combinations(const Point &base, const std::vector<KernelVerdict> &verdicts) {
  Point first = base, second = base;
  bool any = false;
  for (const auto &v : verdicts) {
    if (!v.best)
      continue;
    any = true;
    first[v.best->control] = v.best->value;
    for (const auto &t : v.bestPerControl)
      second[t.control] = t.value;
  }
  if (!any)
    return {};
  std::vector<Point> out = {first};
  if (second != first)
    out.push_back(second);
  return out;
}

std::string trialText(const SearchSpace &space, const KernelTrial &t) {
  const Control &c = space.controls[t.control];
  std::string d = c.option == kDirectiveSmemSpilling ? "enable_smem_spilling" : "." + c.option + " " + c.values[(size_t)t.value];
  return "kernel " + c.kernelLabel + ": " + d;
}

std::vector<Point> withoutKernelControls(const SearchSpace &space, const std::vector<Point> &pool) {
  std::vector<Point> out;
  for (Point p : pool) {
    for (size_t i = 0; i < p.size() && i < space.controls.size(); ++i)
      if (space.controls[i].render == RenderKind::Kernel)
        p[i] = kUnset;
    if (std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  }
  return out;
}

} // namespace ciq
