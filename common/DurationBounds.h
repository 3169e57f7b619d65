// The bounds of a tune's time budget, in seconds, shared by every way it is
// given: `ciq tune --time` and ciq_tune(... TIME) (engine/search/TimeBudget.h)
// and search.max_minutes (engine/config/Config.cpp), so that none accepts
// what another refuses.
#pragma once

namespace ciq {

constexpr double kLeastDuration = 1, kMostDuration = 1000 * 3600.0;

} // namespace ciq
