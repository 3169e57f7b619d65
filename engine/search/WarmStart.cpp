#include "engine/search/WarmStart.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>

namespace ciq {

std::vector<Point> warmPoints(const std::vector<ScoredPoint> &earlier, const std::vector<Point> &winners,
                              const Point &baseline) {
  std::vector<Point> out;
  auto add = [&](const Point &p) {
    if (p.size() == baseline.size() && p != baseline && std::find(out.begin(), out.end(), p) == out.end() &&
        out.size() < kWarmPoints)
      out.push_back(p);
  };
  for (const auto &p : winners)
    add(p);
  for (size_t i : rankOrder(earlier, false))
    if (earlier[i].ok)
      add(earlier[i].point);
  return out;
}

std::vector<Point> warmFirst(const std::vector<Point> &warm, const std::vector<Point> &pool) {
  std::vector<Point> out = warm;
  for (const auto &p : pool)
    if (std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  return out;
}

bool warmLearns(const std::string &strategy) { return strategy != strategies::exhaustive; }

} // namespace ciq
