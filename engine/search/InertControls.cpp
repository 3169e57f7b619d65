#include "engine/search/InertControls.h"

namespace ciq {
namespace {

bool isRegisterCap(const Control &c) {
  return (c.render == RenderKind::Ptxas || c.render == RenderKind::Nvcc) &&
         c.option.find("maxrregcount") != std::string::npos;
}

// Every kernel of `e` kept its own limit instead of the cap.
bool everyKernelIgnoredTheCap(const Evaluation &e) {
  if (!e.ok || e.kernels.empty())
    return false;
  for (const auto &k : e.kernels)
    if (k.capOverride.empty())
      return false;
  return true;
}

// The control that lets a cap override __launch_bounds__
// (--override-directive-values), or -1 when the space has none.
int overrideControl(const SearchSpace &space) {
  for (size_t c = 0; c < space.controls.size(); ++c)
    if ((space.controls[c].render == RenderKind::Ptxas || space.controls[c].render == RenderKind::Nvcc) &&
        space.controls[c].option.find("override-directive-values") != std::string::npos)
      return (int)c;
  return -1;
}

} // namespace

std::vector<InertControl> findInertControls(const SearchSpace &space, const std::vector<Evaluation> &evals,
                                            int beforeGeneration) {
  std::vector<InertControl> out;
  // With the override in the space, a cap its kernels' own limits beat is
  // inert only where the override was set too: without it every kernel
  // with __launch_bounds__ ignores the cap, and with it the cap takes
  // effect (examples/spill: that pair is what removes the spills).
  int override = overrideControl(space);
  for (size_t c = 0; c < space.controls.size(); ++c) {
    if (!isRegisterCap(space.controls[c]))
      continue;
    for (const auto &e : evals) {
      if (e.generation >= beforeGeneration || c >= e.point.size() || e.point[c] == kUnset ||
          !everyKernelIgnoredTheCap(e))
        continue;
      if (override >= 0 && ((size_t)override >= e.point.size() || e.point[(size_t)override] == kUnset))
        continue;
      const KernelStats &k = e.kernels.front();
      out.push_back({(int)c, e.candidateId,
                     space.controls[c].name + " is inert: ptxas ignored the register cap for every tuned kernel in " +
                         e.candidateId + " (each keeps its own limit, e.g. " +
                         (k.demangled.empty() ? k.name : k.demangled) + ": " + k.capOverride +
                         "); later candidates leave it unset"});
      break;
    }
  }
  return out;
}

Point withoutInert(const Point &p, const std::vector<InertControl> &inert) {
  Point q = p;
  for (const auto &i : inert)
    if ((size_t)i.control < q.size())
      q[i.control] = kUnset;
  return q;
}

} // namespace ciq
