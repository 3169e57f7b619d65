#include "engine/search/WarmStart.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>
#include <set>

namespace ciq {

std::vector<Point> warmPoints(const std::vector<ScoredPoint> &earlier, const std::vector<std::string> &binaries,
                              const std::vector<Point> &winners, const Point &baseline) {
  auto binaryOf = [&](const Point &p) {
    for (size_t i = 0; i < earlier.size() && i < binaries.size(); ++i)
      if (earlier[i].point == p)
        return binaries[i];
    return std::string();
  };
  std::set<std::string> built;   // the binaries of the baseline and of the points taken
  if (std::string b = binaryOf(baseline); !b.empty())
    built.insert(b);
  std::vector<Point> out;
  auto add = [&](const Point &p) {
    if (p.size() != baseline.size() || p == baseline || std::find(out.begin(), out.end(), p) != out.end() ||
        out.size() >= kWarmPoints)
      return;
    std::string b = binaryOf(p);
    if (b.empty() || built.insert(b).second)
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

std::vector<ScoredPoint> warmHistory(const std::vector<ScoredPoint> &learned, const std::vector<ScoredPoint> &history) {
  std::set<Point> measured;
  for (const auto &h : history)
    measured.insert(h.point);
  std::vector<ScoredPoint> out;
  for (const auto &e : learned)
    if (!measured.count(e.point)) {
      out.push_back(e);
      out.back().generation = 0;
      out.back().earlier = true;
    }
  out.insert(out.end(), history.begin(), history.end());
  return out;
}

bool warmLearns(const std::string &strategy) { return strategy != strategies::exhaustive; }

} // namespace ciq
