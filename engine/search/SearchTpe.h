// The model-based strategy `tpe`: a tree-structured Parzen estimator over the
// mixed categorical/integer space, with a learned feasibility model for
// INVALID points, proposing a batch of pool_size points per generation
// (by default one per worker: docs/search-space.md#strategies).
#pragma once
#include "engine/search/SearchParts.h"

#include <memory>
#include <vector>

namespace ciq {

std::unique_ptr<Strategy> makeTpeStrategy(const SearchConfig &cfg, const SearchSpace &space, bool pareto);

// Controls the strategy stops sampling (left unset): set in at least two
// evaluations, every one of them scored worse than the baseline or was
// INVALID, and at least one of them set this control alone (so the blame is
// certain: a control only ever tried beside a harmful one is not banned),
// and, for an ordered control (a range, log sampling, or a choice of 3 or
// more numbers in order), at least two of its values among them. None while
// the baseline is unknown or INVALID.
std::vector<bool> harmfulControls(const SearchSpace &space, const std::vector<ScoredPoint> &history, bool pareto);

// Per control, its values the strategy stops sampling: the same rule for a
// single value (set in at least two evaluations, all worse than the baseline
// or INVALID, at least one of them with this value alone).
std::vector<std::vector<bool>> harmfulValues(const SearchSpace &space, const std::vector<ScoredPoint> &history,
                                             bool pareto);

// The start of `tpe` (its first 4 evaluations after the baseline, drawn from
// this list with want = 4 whatever the pool size; also `ciq sample`'s points
// beyond): points near the default. A quarter of the pool sets
// one control each (every control in turn, its values in seeded order), so a
// small budget learns what a control does alone; the rest leaves each control
// unset with probability 1/2.
std::vector<Point> nearDefaultPool(const SearchSpace &space, size_t want, std::set<Point> &taken, SearchRng &rng);

} // namespace ciq
