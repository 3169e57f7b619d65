// The order the winner is chosen in, in one place: chooseWinner (Winner.h)
// and `ciq report` (analysis/Report.cpp) both use it, so the summary and the
// report name the same best candidate when candidates tie on the objectives.
#pragma once
#include <cstddef>
#include <tuple>
#include <vector>

namespace ciq {

struct WinnerKey {
  bool ok = false;
  std::vector<double> objectives;   // normalized: smaller is better (maximized ones negated)
  size_t controls = 0;              // controls set; options that do not change the score are not worth shipping
  size_t index = 0;                 // evaluation order: the earliest wins what is left
};

// OK before INVALID, then the objectives lexicographically (the first is
// primary), then the fewest controls (the baseline when nothing is better),
// then the earliest.
inline bool winnerBefore(const WinnerKey &a, const WinnerKey &b) {
  if (a.ok != b.ok)
    return a.ok;
  if (!a.ok)
    return a.index < b.index;
  return std::tie(a.objectives, a.controls, a.index) < std::tie(b.objectives, b.controls, b.index);
}

} // namespace ciq
