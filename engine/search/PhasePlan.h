// The plan of a timed tune (issue 55 item 1): what each phase after the
// search may spend, made again after every phase from the measured costs
// and the time left, so time a phase did not use goes back to the search.
// Pure arithmetic: the clock (engine/run/TuneClock.h) keeps the time, this
// decides how it is shared.
#pragma once
#include "engine/search/TimeBudget.h"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace ciq {

// The phases after the search may take at most this share of the whole
// time budget when their estimate asks for more: beyond it the search was
// starved (a docking app's search ended after 4 of 49 binaries at 1m00s of
// 5m, keeping 4m08s that the phases after it used 43 s of). The goal of
// issue 55 is after the search at most 0.3x the search: 0.3 / 1.3.
constexpr double kAfterSearchShare = 0.23;
// Fewer interleaved rounds than this make no verdict: the finalists'
// share never plans fewer, whatever the budget.
constexpr int kLeastRounds = 3;

struct PhasePlan {
  double left = 0;   // seconds left when the plan was made
  // What each phase after the search needs at the measured costs, and the
  // share it gets (kAfterSearchNames order): the shares never add up to
  // more than the time left, nor (past the least the verdict needs) to
  // more than kAfterSearchShare of the budget.
  std::array<double, kAfterSearchPhases> need{}, share{};
  // What the search (and the per-kernel stage) may still spend: the time
  // left less the shares.
  double search = 0;
  // Why a share is smaller than its need, for the summary ("minimization:
  // 40s of the 1m10s it needs").
  std::vector<std::string> cuts;

  // The shares of phase `from` (kAfterSearchNames index) and later ones.
  double reserve(int from = 0) const;
};

// The plan for a tune of `budget` seconds with `left` seconds left, from
// the phase `from` on (0: the search is still running). The least the
// verdict needs (the finalists' kLeastRounds rounds and the rehearsal) is
// planned first; the rest of each phase's need is given in phase order out
// of what the cap leaves.
PhasePlan planPhases(const PhaseCosts &costs, const AfterSearchShape &shape, double budget, double left, int from = 0);

// Whether the search may take one more binary of `one` seconds under the
// plan: while it ends before the phases after it must start.
bool searchMayTakeOne(const PhasePlan &plan, double one);

// Whether interleaved rounds after the search end now, `roundsDone` rounds
// in, at `elapsed` seconds of the tune, before their phase's `deadline`:
// after the least a verdict needs (kLeastRounds), a round starts only when
// one more, as long as the last one took, ends by the deadline. Checked
// only for the time already past it, the last round overran the later
// phases' shares by up to a round (caps under --time 60s on a loaded host:
// 5 finalists' rounds where 4 fitted, and the tune used 102%).
bool roundsEndAtDeadline(size_t roundsDone, double elapsed, double lastRoundSeconds, double deadline);

// Time the phases after the search did not use goes back to the search
// (issue 55 item 1): after the finalists, when what is left beyond the
// later phases' shares buys at least this many binaries and a second
// re-measurement of the finalists.
constexpr int kLeastReturned = 2;
bool timeReturnsToSearch(const PhasePlan &afterFinalists, const PhaseCosts &costs, double finalistsSeconds);

} // namespace ciq
