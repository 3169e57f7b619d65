// benchmark.cases: every case of one candidate measured interleaved, the
// way the repeats of one build are (round r runs the cases in balancedOrder),
// so that drift of the machine hits every case alike; each case stops on its
// own (fixed count, adaptive noise target, racing against the incumbent's
// runs of the same case).
#include "engine/measure/Benchmark.h"

#include <algorithm>
#include "engine/measure/Interleave.h"
#include "engine/measure/KernelTrace.h"
#include "engine/measure/Stats.h"

namespace ciq {

namespace {

struct CaseState {
  CaseMeasure m;
  MeasureOutcome kernels;   // the case's traced run (kernels, kernelsFrom, kernelsWhy)
  std::vector<double> walls;
  bool active = true;
};

// Fills `m` from the cases' runs: each case's summary, the kernels of every
// case; returns the slowest case's median wall time (the run-time limit
// follows it: a fast case's limit would kill the big one).
double summarizeCases(std::vector<CaseState> &st, MeasureOutcome &m) {
  m.stoppedBy = "cases";   // each case's own reason is in its CaseMeasure
  m.cvPercent = -1;         // per case only
  double bestWall = 0;
  for (auto &c : st) {
    Summary s = summarize(c.m.values);
    c.m.median = s.median;
    c.m.cvPercent = s.cvPercent;
    c.m.noisePercent = medianCiHalfWidthPercent(c.m.values);
    m.runsSaved += c.m.runsSaved;
    c.m.kernels = c.kernels.kernels;
    bestWall = std::max(bestWall, median(c.walls));
    m.cases.push_back(c.m);
    // The per-kernel table shows every case's kernels.
    mergeKernelTimes(m.kernels, c.kernels.kernels);
    if (!c.kernels.kernelsFrom.empty())
      m.kernelsFrom = c.kernels.kernelsFrom;
    if (m.kernelsWhy.empty())
      m.kernelsWhy = c.kernels.kernelsWhy;
  }
  std::stable_sort(m.kernels.begin(), m.kernels.end(),
                   [](const KernelTime &a, const KernelTime &b) { return a.gpuMs > b.gpuMs; });
  return bestWall;
}

} // namespace

MeasureOutcome BenchmarkRunner::measureCases(const std::string &logPath, const RaceAgainst *race) {
  MeasureOutcome m;
  const BenchmarkConfig &b = b_;
  auto failed = [&](const BenchmarkCase &c, const RunOutcome &r) {
    m.wallMs += r.wallMs;
    m.reason = r.reason;
    m.message = "case '" + c.name + "': " + r.message;
    selectCase(nullptr);
    return m;
  };
  // A case whose output fails the check fails the candidate.
  for (const auto &c : b.cases) {
    selectCase(&c);
    RunOutcome r = checkCorrectness(logPath);
    if (!r.ok)
      return failed(c, r);
    m.wallMs += r.wallMs;
  }
  bool adaptive = b.adaptive;
  int cap = adaptive ? b.maxRepeats : b.repeats;
  std::vector<CaseState> st(b.cases.size());
  for (size_t k = 0; k < st.size(); ++k)
    st[k].m.name = b.cases[k].name;
  double measuredMs = 0;
  for (int round = 0;; ++round) {
    bool any = false;
    for (size_t k : balancedOrder(st.size(), round)) {
      CaseState &c = st[k];
      if (!c.active)
        continue;
      any = true;
      selectCase(&b.cases[k]);
      bool traced = round == 0 && tracesWarmup();
      RunOutcome r = traced ? tracedWarmupRun(logPath) : runOnce(logPath);
      if (!r.ok)
        return failed(b.cases[k], r);
      m.wallMs += r.wallMs;
      if (traced)
        noteKernelFigures(c.kernels, r, "warmup_run");
      if (round < b.warmup)
        continue;
      c.m.values.push_back(r.value);
      if (b.metric.kind == "kernel_time")
        noteKernelFigures(c.kernels, r, "measured_runs");
      c.walls.push_back(r.wallMs);
      measuredMs += r.wallMs;
      const std::vector<double> *incumbent = nullptr;
      if (race)
        if (auto it = race->caseRuns.find(c.m.name); it != race->caseRuns.end())
          incumbent = &it->second;
      c.active = !enoughRuns(c.m.values, b, incumbent, race && race->minimize, adaptive, cap, c.m.stoppedBy,
                             c.m.runsSaved);
    }
    if (!any)
      break;
    if (adaptive && measuredMs / 1000 >= b.maxMeasureSeconds) // the candidate's budget, over all its cases
      for (auto &c : st)
        if (c.active) {
          c.active = false;
          c.m.stoppedBy = "max_measure_s";
        }
  }
  selectCase(nullptr);
  double bestWall = summarizeCases(st, m);
  m.ok = true;
  noteBestRunWallMs(bestWall);
  return m;
}

} // namespace ciq
