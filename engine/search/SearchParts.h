// Building blocks the strategies share (engine/search/Search.cpp, SearchTpe.cpp).
#pragma once
#include "engine/search/Search.h"

#include <set>
#include <vector>

namespace ciq {

// A control's state: 0..values-1 are values; `values` is "unset" when allowed.
int stateOf(const Control &c, int value);
int valueOf(const Control &c, int state);
// Every point of the history.
std::set<Point> seenPoints(const std::vector<ScoredPoint> &history);
// Adds p to the pool unless `taken` holds it or it violates the space's
// constraints (then it is taken, never proposed); returns whether it was added.
bool offerPoint(const SearchSpace &space, std::vector<Point> &pool, std::set<Point> &taken, const Point &p);
// Random new points until the pool holds `want` or the space seems used up.
void fillRandom(std::vector<Point> &pool, std::set<Point> &taken, size_t want, const SearchSpace &space,
                SearchRng &rng);

} // namespace ciq
