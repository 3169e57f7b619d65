#include "engine/measure/Interleave.h"

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
                                 const BeforeRun &beforeRun, const EnoughRounds &enough) {
  InterleavedResult r;
  r.values.resize(commands.size());
  r.warmup.resize(commands.size());
  for (int round = 0; round < warmupRounds + rounds; ++round) {
    if (round > warmupRounds && enough && enough(r.values))
      break;
    for (size_t i : balancedOrder(commands.size(), round)) {
      if (beforeRun)
        beforeRun(i);
      RunOutcome o = runner.runOnce(logPath, commands[i]);
      if (!o.ok) {
        r.reason = o.reason;
        r.message = "build " + std::to_string(i) + ", " + (round < warmupRounds ? "warm-up " : "") + "round " +
                    std::to_string(round + 1) + ": " + o.message;
        return r;
      }
      (round < warmupRounds ? r.warmup : r.values)[i].push_back(o.value);
    }
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
  char buf[200];
  bool better = minimize ? v.winner.median < v.baseline.median : v.winner.median > v.baseline.median;
  if (v.baseline.cvPercent > maxCvPercent || v.winner.cvPercent > maxCvPercent) {
    snprintf(buf, sizeof buf, "CV%% is %.1f (baseline) and %.1f (winner), over %.0f%%: too noisy to call",
             v.baseline.cvPercent, v.winner.cvPercent, maxCvPercent);
    v.reason = buf;
  } else if (v.welch.pValue >= alpha) {
    snprintf(buf, sizeof buf, "p = %.3g is not below %.2g: the difference may be noise", v.welch.pValue, alpha);
    v.reason = buf;
  } else if (!better) {
    v.reason = "the winner is not faster than the baseline";
  } else
    v.significant = true;
  return v;
}

int interleavedRounds(const BenchmarkConfig &b) { return std::max(b.adaptive ? b.maxRepeats : b.repeats, 5); }

EnoughRounds enoughRoundsFor(const BenchmarkConfig &b) {
  if (!b.adaptive)
    return nullptr;
  return [b](const std::vector<std::vector<double>> &values) {
    for (const auto &v : values) {
      double noise = medianCiHalfWidthPercent(v);
      if ((int)v.size() < std::max(b.minRepeats, 5) || noise < 0 || noise > b.targetNoisePercent)
        return false;
    }
    return true;
  };
}

double verdictMaxCvPercent(const BenchmarkConfig &b) { return b.adaptive ? 1e300 : 10; }

} // namespace ciq
