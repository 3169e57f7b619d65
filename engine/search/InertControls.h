// Controls the evaluations so far proved to do nothing, so the search stops
// spending evaluations on them. Today one kind: a register cap
// (--maxrregcount) that ptxas overrode for every kernel it compiled, because
// each has its own limit (__launch_bounds__, __maxnreg__; ptxas -v
// "Overriding global maxrregcount ... with entry-specific value", recorded per
// kernel as KernelStats::capOverride).
#pragma once
#include "engine/record/Evaluation.h"
#include "engine/config/Space.h"

#include <string>
#include <vector>

namespace ciq {

struct InertControl {
  int control = -1;       // index in the space
  std::string evidence;   // the candidate that showed it, e.g. "c0003"
  std::string why;        // one line for the user
};

// Inert controls shown by `evals` (only those of generations before
// `beforeGeneration`, so a resumed search derives the same set).
std::vector<InertControl> findInertControls(const SearchSpace &space, const std::vector<Evaluation> &evals,
                                            int beforeGeneration);

// `p` with every inert control left unset.
Point withoutInert(const Point &p, const std::vector<InertControl> &inert);

} // namespace ciq
