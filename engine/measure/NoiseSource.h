// Why a candidate's runs stayed noisier than the adaptive target: the
// likely source read off the runs themselves (in the order they ran), and
// what to do about it. Used by the tune's summary and `ciq diagnose`.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct NoiseSource {
  // gpu_state | clock_change | first_run_outlier | bimodal | drift | random
  std::string kind;
  std::string evidence;   // the numbers that named it, one phrase
  std::string next;       // what to change
};

// The source of the spread of `runs` (in run order). Checked in this order,
// first match wins:
//  - first_run_outlier: the first run lies alone (no other run within half
//    its distance to the others' median), more than 5 robust deviations
//    (1.4826 x MAD of the others) and more than the target from that median;
//  - bimodal: the widest gap of the sorted runs splits them into two groups
//    of at least 3 runs and 20% each, and is wider than 3 times the larger
//    group's own standard deviation;
//  - drift: the runs trend with their index (Pearson correlation of value and
//    index, two-sided p < 0.01) and the fitted line moves more than the
//    target over the runs;
//  - random: none of these (spread without a pattern).
// Fewer than 5 runs: nullopt (too few to tell).
// gpuProblems: what MeasuredPhase saw wrong with the GPU while the runs ran
// (throttling, clocks below the application clock, other processes); any
// makes the source gpu_state, checked before the others.
// smClockMhz: the SM clock read before and after the runs (MeasuredPhase);
// when it moved by more than the target (a run's time scales with the
// clock, so such a move alone can explain the spread), the source is
// clock_change, checked next.
std::optional<NoiseSource> noiseSource(const std::vector<double> &runs, double targetPercent,
                                       const std::vector<std::string> &gpuProblems = {},
                                       const std::vector<double> &smClockMhz = {});

} // namespace ciq
