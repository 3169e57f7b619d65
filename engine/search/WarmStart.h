// The warm start of a re-tune after an edit of the program (issue 49 item 5),
// as pure functions of the earlier search: engine/run/WarmPlan.cpp plans a
// `ciq tune` with them, and bench/search_efficiency --warm replays the same
// plan on the recorded landscapes.
#pragma once

#include "engine/search/Search.h"

#include <string>
#include <vector>

namespace ciq {

// How many configurations of the earlier search the first generation begins with.
constexpr size_t kWarmPoints = 3;

// The configurations generation 1 begins with: the earlier winner's points
// (`winners`: the locked build, which a minimization may have made smaller;
// empty when the winner did not beat the default compile), then the earlier
// evaluations' best ranked OK points (lexicographic), at most kWarmPoints.
// `binaries` names each earlier evaluation's binary (twins share one; empty,
// or an empty name: its own): a point whose binary is the baseline's or an
// earlier warm point's is left out, since it would build that binary again
// and measure nothing new (bench/search_efficiency --warm: on landscapes
// with many twins the three slots held one binary).
std::vector<Point> warmPoints(const std::vector<ScoredPoint> &earlier, const std::vector<std::string> &binaries,
                              const std::vector<Point> &winners, const Point &baseline);

// Generation 1 of a warm search: the warm points, then the strategy's own
// pool without them.
std::vector<Point> warmFirst(const std::vector<Point> &warm, const std::vector<Point> &pool);

// The strategy's history in a warm search: the earlier search's evaluations
// (`learned`, generation 0, flagged `earlier`) first, less those whose point
// this search measured again (the edited program's score replaces the old
// one), then this search's `history`. Earlier points are not "taken": a
// strategy may propose them again, since an edit can move the optimum to a
// point the earlier search ranked below its best.
std::vector<ScoredPoint> warmHistory(const std::vector<ScoredPoint> &learned, const std::vector<ScoredPoint> &history);

// Whether the strategy is given the earlier evaluations as generation 0 of
// its history: every one but exhaustive, which visits every point anyway.
bool warmLearns(const std::string &strategy);

} // namespace ciq
