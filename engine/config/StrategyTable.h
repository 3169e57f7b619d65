// The table of search strategy names (engine/config/Strategies.def), for the config
// reader, the strategy factory and the messages that list them.
#pragma once
#include <string>

namespace ciq {

struct StrategyInfo {
  const char *name;
  const char *description;
};

inline constexpr StrategyInfo kStrategies[] = {
#define CIQ_STRATEGY(n, d) {#n, d},
#include "engine/config/Strategies.def"
#undef CIQ_STRATEGY
};

// The names as constants (strategies::tpe, strategies::exhaustive, ...), so no
// other file spells one.
namespace strategies {
#define CIQ_STRATEGY(n, d) inline constexpr const char *n = #n;
#include "engine/config/Strategies.def"
#undef CIQ_STRATEGY
} // namespace strategies

// The first line of the table.
inline constexpr const char *kDefaultStrategy = kStrategies[0].name;

inline bool isStrategy(const std::string &name) {
  for (const auto &s : kStrategies)
    if (name == s.name)
      return true;
  return false;
}

// "tpe, genetic, random or exhaustive"
inline std::string strategyNames() {
  std::string out;
  size_t n = sizeof(kStrategies) / sizeof(kStrategies[0]);
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kStrategies[i].name);
  return out;
}

} // namespace ciq
