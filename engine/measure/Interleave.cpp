#include "engine/measure/Interleave.h"
#include "common/NumberFormat.h"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>

namespace ciq {

std::vector<size_t> balancedOrder(size_t builds, int round) {
  std::vector<size_t> order(builds);
  for (size_t i = 0; i < builds; ++i)
    order[i] = round % 2 == 0 ? i : builds - 1 - i;
  return order;
}

InterleavedResult runInterleaved(BenchmarkRunner &runner, const std::vector<std::vector<std::string>> &commands,
                                 int rounds, const std::string &logPath, int warmupRounds,
                                 const BeforeRun &beforeRun, const EnoughRounds &enough,
                                 const StopRequested &stop, const RoundsRecord *record) {
  InterleavedResult r;
  r.values.resize(commands.size());
  r.warmup.resize(commands.size());
  std::vector<bool> active(commands.size(), true);
  size_t replay = record ? record->prior.size() : 0;
  // Resumed: the warm-up ran before the rounds replayed; the order of each
  // round stays the one it had (balancedOrder of the round's own index).
  int warm = replay ? 0 : warmupRounds;
  int measured = 0;
  for (int round = 0; round < warm + rounds; ++round) {
    if (stop && stop()) {
      r.stopped = true;
      r.reason = "stopped";
      r.message = "ciq stop before round " + std::to_string(round + 1);
      return r;
    }
    if (round > warm && enough) {
      RoundsDecision d = enough(r.values);
      if (d.stop)
        break;
      if (d.active.size() == active.size())
        active = d.active;
    }
    int m = round - warm;   // the measured round's index (<0: warm-up)
    const std::vector<double> *had = m >= 0 && (size_t)m < replay ? &record->prior[m] : nullptr;
    for (size_t i : balancedOrder(commands.size(), m < 0 ? round : m + warmupRounds)) {
      if (!active[i])
        continue;
      if (had && i < had->size() && !std::isnan((*had)[i])) {
        r.values[i].push_back((*had)[i]);
        continue;
      }
      if (beforeRun)
        beforeRun(i);
      RunOutcome o = runner.runOnce(logPath, commands[i]);
      if (!o.ok) {
        r.reason = o.reason;
        r.failedBuild = (int)i;
        r.failedRun = (m < 0 ? "warm-up round " : "round ") + std::to_string(round + 1) + ": " + o.message;
        r.message = "build " + std::to_string(i) + ", " + r.failedRun;
        return r;
      }
      (m < 0 ? r.warmup : r.values)[i].push_back(o.value);
      if (m >= 0 && record && record->onRun)
        record->onRun(m, i, o.value);
    }
    if (m >= 0)
      ++measured;
  }
  for (size_t i = 0; i < active.size(); ++i)
    if (!active[i]) {
      r.raced.push_back(i);
      r.runsSaved += measured - (int)r.values[i].size();
    }
  r.ok = true;
  return r;
}

Verdict judge(const std::vector<double> &baseline, const std::vector<double> &winner, bool minimize,
              double maxCvPercent, double alpha) {
  Verdict v;
  v.baseline = summarize(baseline);
  v.winner = summarize(winner);
  v.welch = welchTTest(baseline, winner);
  if (minimize ? v.winner.median != 0 : v.baseline.median != 0) // else undefined: stays 0
    v.speedup = minimize ? v.baseline.median / v.winner.median : v.winner.median / v.baseline.median;
  bool better = minimize ? v.winner.median < v.baseline.median : v.winner.median > v.baseline.median;
  if (v.baseline.cvPercent > maxCvPercent || v.winner.cvPercent > maxCvPercent) {
    v.reason = "CV is " + fmt::percent(v.baseline.cvPercent, baseline.size()) + " (baseline) and " +
               fmt::percent(v.winner.cvPercent, winner.size()) + " (winner), over " + fmt::value(maxCvPercent) +
               "%: too noisy to call";
  } else if (v.welch.pValue >= alpha) {
    v.reason = fmt::pValue(v.welch.pValue) + " is not below " + fmt::value(alpha) + ": the difference may be noise";
  } else if (!better) {
    v.reason = "the winner is not faster than the baseline";
  } else
    v.significant = true;
  return v;
}

int interleavedRounds(const BenchmarkConfig &b) { return std::max(b.adaptive ? b.maxRepeats : b.repeats, 5); }

namespace {

bool withinTarget(const std::vector<double> &v, const BenchmarkConfig &b) {
  double noise = medianCiHalfWidthPercent(v);
  return noise >= 0 && noise <= b.targetNoisePercent;
}

// Significant, or shown equal within the noise target: the 95% Welch
// interval of the difference of the means lies inside +-target (relative
// to build 0), so more runs would not change what is reported. A gain about
// the size of the target that is not yet significant stays undecided (a
// minimization must not drop a real 1.2% gain because 3 runs said 0.8%).
bool decided(const std::vector<double> &first, const std::vector<double> &other, const BenchmarkConfig &b) {
  WelchResult w = welchTTest(other, first);
  if (w.pValue < VerdictAlpha)
    return true;
  double m0 = summarize(first).mean;
  if (m0 == 0 || w.df <= 0) // fewer than 2 runs on a side: nothing shown yet
    return false;
  double t = boost::math::quantile(boost::math::complement(boost::math::students_t(w.df), 0.025));
  return 100 * (std::fabs(w.t * w.se) + t * w.se) / std::fabs(m0) < b.targetNoisePercent;
}

size_t bestOther(const std::vector<std::vector<double>> &values, bool minimize) {
  size_t best = 1;
  for (size_t k = 2; k < values.size(); ++k) {
    double m = median(values[k]), mb = median(values[best]);
    if (minimize ? m < mb : m > mb)
      best = k;
  }
  return best;
}

} // namespace

EnoughRounds enoughRoundsFor(const BenchmarkConfig &b, bool minimize, Judged judged) {
  if (!b.adaptive)
    return nullptr;
  return [b, minimize, judged](const std::vector<std::vector<double>> &values) {
    RoundsDecision d;
    d.active.assign(values.size(), true);
    size_t fewest = (size_t)std::max(b.minRepeats, 3);
    if (values.size() < 2) { // one build: only its noise matters
      d.stop = !values.empty() && values[0].size() >= fewest && withinTarget(values[0], b);
      return d;
    }
    size_t best = judged == Judged::BestAgainstFirst ? bestOther(values, minimize) : 0;
    size_t most = 0;
    for (const auto &v : values)
      most = std::max(most, v.size());
    bool ready = true;
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k].size() < most && k != 0 && k != best) { // dropped in an earlier round
        d.active[k] = false;
        continue;
      }
      if (values[k].size() < fewest) {
        ready = false;
        continue;
      }
      if (judged == Judged::BestAgainstFirst && b.racing && k != 0 && k != best &&
          pWorse(values[k], values[best], minimize) < b.raceAlpha) {
        d.active[k] = false;
        continue;
      }
      ready = ready && withinTarget(values[k], b);
    }
    if (!ready)
      return d;
    if (judged == Judged::BestAgainstFirst)
      d.stop = decided(values[0], values[best], b);
    else {
      d.stop = true;
      for (size_t k = 1; k < values.size(); ++k)
        d.stop = d.stop && decided(values[0], values[k], b);
    }
    return d;
  };
}

double verdictMaxCvPercent(const BenchmarkConfig &b) { return b.adaptive ? 1e300 : 10; }

} // namespace ciq
