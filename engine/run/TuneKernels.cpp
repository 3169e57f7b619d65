// Per-kernel controls join the space once the baseline has shown the
// kernels (engine/config/KernelSpace.h). They are derived from the baseline
// alone, so a resumed search, whose baseline is the journal's, derives the
// same controls in the same order, and the points it journaled mean what
// they meant.
#include "engine/run/TuneRun.h"

#include "engine/run/BaselineKernelControls.h"

namespace ciq {

// A per-translation-unit control must name a CUDA source the baseline
// compiled: one that names none would change nothing, and every candidate
// setting it would measure the same binary.
bool TuneRun::checkUnits() {
  if (evals_.empty() || !evals_.front().ok)
    return true;
  std::set<std::string> units;
  for (const auto &c : cfg_.space.controls)
    if (!c.unit.empty())
      units.insert(c.unit);
  const auto &objs = evals_.front().objects;
  std::string sources;
  for (const auto &o : objs)
    sources += (sources.empty() ? "" : ", ") + o.source;
  for (const auto &u : units) {
    // One unit, one source: a file name two folders share would give both
    // the options while the summary and the lock name one.
    auto n = std::count_if(objs.begin(), objs.end(), [&](const ObjectRecord &o) { return unitMatches(u, o.source); });
    if (n == 1)
      continue;
    return fail(cfg_.path + ": space: unit '" + u + "' names " +
                (n == 0 ? "none" : std::to_string(n)) + " of the CUDA sources the baseline compiled (" +
                (sources.empty() ? std::string("none: kernels compiled at run time") : sources) + "); name " +
                (n == 0 ? "one of them" : "one alone, by more of its path") +
                ", relative to the project or by file name");
  }
  return true;
}

bool TuneRun::addKernelControls() {
  if (!checkUnits())
    return false;
  if (!kernelControlsOn(cfg_) || evals_.empty() || !evals_.front().ok)
    return true;
  BaselineKernelControls bk = baselineKernelControls(cfg_, evals_.front());
  if (!bk.launchedOnly)
    progress_.note("per-kernel controls: for every kernel the build compiles (" + bk.why +
                   "), each scored by the whole program's objective");
  const KernelControls &kc = bk.controls;
  if (!kc.error.empty())
    return fail(kc.error);
  for (const auto &n : kc.notes)
    progress_.note(n);
  if (kc.controls.empty() && !kc.notes.empty())
    return true;   // the lines above say why
  if (kc.controls.empty()) {
    progress_.note("per-kernel controls: none for the " + std::to_string(bk.kernels) +
                   " kernel(s) of the baseline (no register ceiling below what they use, no __launch_bounds__ to "
                   "relax)");
    return true;
  }
  std::string names;
  for (const auto &c : kc.controls) {
    names += (names.empty() ? "" : ", ") + c.name;
    cfg_.space.controls.push_back(c);
  }
  std::string err;
  if (!cfg_.space.compileConstraints(err))
    return fail(err);
  for (auto &e : evals_)
    e.point.resize(cfg_.space.controls.size(), kUnset);
  try {
    strategy_ = makeStrategy(cfg_.search, cfg_.space, cfg_.pareto);
  } catch (const std::exception &e) {
    return fail(cfg_.path + ": search.strategy: " + e.what());
  }
  progress_.note("per-kernel controls: " + names + " (space now " + cfg_.space.sizeSummary() + ")");
  planKernelStage(bk.launchedOnly);
  if (resumedCount_ > 1)
    return true; // journaled by the run that added them
  nlohmann::json controls = nlohmann::json::array();
  for (const auto &c : kc.controls)
    controls.push_back({{"name", c.name}, {"kernel", c.kernelKey}, {"directive", c.option}, {"values", c.values}});
  return journal({{"op", "kernel_controls"}, {"controls", controls}, {"space_identity", cfg_.space.identity()}});
}

} // namespace ciq
