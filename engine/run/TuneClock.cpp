#include "engine/run/TuneClock.h"

#include <algorithm>

namespace ciq {

void TuneClock::enter(const std::string &name) {
  if (!phase_.empty() && phase_ != "baseline")
    phases_.push_back({phase_, inPhase()});
  phase_ = name;
  phaseStarted_ = Clock::now();
}

void TuneClock::cut(const std::string &line) {
  if (std::find(cuts_.begin(), cuts_.end(), line) == cuts_.end())
    cuts_.push_back(line);
}

} // namespace ciq
