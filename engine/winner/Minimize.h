// Winner minimization: a control stays in the lock only if it earns its
// place. Whole groups first (application parameters, ptxas controls, nvcc
// controls, ACFs), then each remaining control: it is removed (left to the
// compiler's default) unless the winner without it is worse - significantly
// worse for a runtime objective (the `ciq validate` test), worse at all for
// a compile-only one (exact).
#pragma once
#include "engine/config/Space.h"
#include "engine/record/AfterSearch.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// MinimizeStep: engine/record/AfterSearch.h (journaled and locked).

// Whether `reduced` is worse than `current` (with the comparison's line in
// `detail`); nullopt with `error` when it could not be measured.
using WorseThan = std::function<std::optional<bool>(const Point &current, const Point &reduced, std::string &detail,
                                                    std::string &error)>;

struct MinimizeResult {
  Point point;                      // the minimized winner
  std::vector<MinimizeStep> steps;
};

// The name of a control's group: "application parameters", "ptxas controls",
// "nvcc controls" or "ACFs".
std::string controlGroup(const Control &c);

std::optional<MinimizeResult> minimizeWinner(const SearchSpace &space, const Point &winner, const WorseThan &worse,
                                             std::string &error);

nlohmann::json minimizeToJson(const MinimizeResult &r);

} // namespace ciq
