// A time budget for the whole tune (`ciq tune --time 10m`, search.max_minutes,
// ciq_tune(... TIME 10m), `ciq resume --time`): the search ends early enough
// that the phases after it (finalists, minimization, rehearsal, attribution)
// fit in what is left, each reserved from the measured cost of one build and
// one benchmark run. A binary budget and a time budget may both hold:
// whichever ends first ends the search (issue 49 item 1).
#pragma once
#include "engine/record/Evaluation.h"

#include "common/DurationBounds.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

// "90s", "10m", "1.5h" (a positive number and one unit: s, m or h) in
// seconds, from kLeastDuration to kMostDuration (common/DurationBounds.h); nullopt for anything else
// (a bare number, another unit, 0, 0.1s, 1e20h): every way in (--time,
// ciq_tune(... TIME), search.max_minutes' echo) reads it the same way.
std::optional<double> parseDuration(const std::string &text);
// The error line for a duration that did not parse: what and the accepted form.
std::string durationError(const std::string &what, const std::string &text);
// "45s", "2m05s", "1h02m": a duration for people.
std::string durationText(double seconds);

// What one build and one benchmark run cost, measured on the evaluations so
// far (the baseline first), and what the phases after the search need.
struct PhaseCosts {
  double buildSeconds = 0;   // a candidate's build (the mean of those compiled)
  double runSeconds = 0;     // one benchmark run (one case's, with cases)
  double candidateSeconds = 0;   // one search candidate, wall clock (build and measurement)
  double wholeBuildSeconds = 0;  // the baseline's build: every object and the links (the rehearsal's)
};
PhaseCosts measuredCosts(const std::vector<Evaluation> &evals);

// The shape of the phases after the search, for their reserve.
struct AfterSearchShape {
  bool runtime = false;    // a benchmark measures (else the phases only build)
  int finalists = 1;       // builds re-measured beside the baseline
  int rounds = 5;          // interleaved rounds each re-measurement plans for
  int cases = 1;           // benchmark.cases (1 without)
  int controls = 0;        // controls the winner sets: minimization trials at most
  bool rehearsal = true;   // the lock's own build
  bool programsKept = false;   // the search keeps its best programs: the finalists build nothing
};
// Seconds each phase after the search needs: finalists, minimization,
// rehearsal, attribution (in that order, kAfterSearchPhases).
constexpr int kAfterSearchPhases = 4;
std::vector<double> afterSearchSeconds(const PhaseCosts &c, const AfterSearchShape &s);
extern const char *const kAfterSearchNames[kAfterSearchPhases];

} // namespace ciq
