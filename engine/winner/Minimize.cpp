#include "engine/winner/Minimize.h"

#include <map>

namespace ciq {

std::string controlGroup(const Control &c) {
  switch (c.render) {
  case RenderKind::Define: return "application parameters";
  case RenderKind::Ptxas: return "ptxas controls";
  case RenderKind::Nvcc: return "nvcc controls";
  case RenderKind::Acf: return "ACFs";
  case RenderKind::Kernel: return "per-kernel controls";
  }
  return "controls";
}

namespace {

// Tries `reduced`; on "not worse" it becomes the winner.
std::optional<bool> tryRemoval(Point &current, const Point &reduced, const std::string &what, const WorseThan &worse,
                               MinimizeResult &r, std::string &error) {
  MinimizeStep s;
  s.removed = what;
  auto w = worse(current, reduced, s.detail, error);
  if (!w)
    return std::nullopt;
  s.dropped = !*w;
  if (s.dropped)
    current = reduced;
  r.steps.push_back(s);
  return s.dropped;
}

} // namespace

std::optional<MinimizeResult> minimizeWinner(const SearchSpace &space, const Point &winner, const WorseThan &worse,
                                             std::string &error) {
  MinimizeResult r;
  Point current = winner;
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < space.controls.size() && i < current.size(); ++i)
    if (current[i] != kUnset && space.controls[i].canUnset)
      groups[controlGroup(space.controls[i])].push_back(i);
  // With one group, removing it is the baseline, already beaten.
  if (groups.size() > 1)
    for (const auto &[name, members] : groups) {
      Point reduced = current;
      for (size_t i : members)
        reduced[i] = kUnset;
      if (!space.feasible(reduced)) // a point the constraints rule out is never built
        continue;
      if (!tryRemoval(current, reduced, "group " + name, worse, r, error))
        return std::nullopt;
    }
  for (size_t i = 0; i < space.controls.size() && i < current.size(); ++i) {
    if (current[i] == kUnset || !space.controls[i].canUnset)
      continue;
    Point reduced = current;
    reduced[i] = kUnset;
    size_t set = 0;
    for (int v : current)
      set += v != kUnset;
    if (set <= 1) // the last control: without it, the baseline
      break;
    if (!space.feasible(reduced))
      continue;
    if (!tryRemoval(current, reduced, "control " + space.controls[i].name, worse, r, error))
      return std::nullopt;
  }
  r.point = current;
  return r;
}

nlohmann::json minimizeToJson(const MinimizeResult &r) { return minimizeStepsToJson(r.steps); }

} // namespace ciq
