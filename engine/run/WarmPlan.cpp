// A re-tune after an edit of the program starts warm (issue 49 item 5):
// when the run directory holds an earlier search of the same space,
// strategy, objectives, ciq, ciq.yaml and CUDA compiler, and only the
// program's sources changed, the first generation begins with the earlier
// winner and the next best configurations, and (except for exhaustive,
// which visits every point anyway) the earlier evaluations inform the
// strategy as evaluations of generation 0. The plan is journaled ("warm"),
// so `ciq resume` proposes the same pools.
#include "engine/run/WarmPlan.h"
#include "engine/Version.h"
#include "engine/config/Space.h"
#include "engine/winner/Objectives.h"
#include "common/LockSections.h"
#include "common/Lockfile.h"

#include <llvm/ADT/StringExtras.h>
#include "engine/compile/InputIdentity.h"
#include "engine/search/WarmStart.h"

#include <llvm/Support/FileSystem.h>
#include <stdexcept>

namespace ciq {

namespace {

nlohmann::json scoredToJson(const ScoredPoint &p) {
  return {{"point", p.point}, {"ok", p.ok}, {"objectives", p.objectives}};
}

// "" when p is a point of `space`: one value (or kUnset) for each control;
// with per-kernel controls, which join the space after the baseline (after
// a resume reads the journal), the values past the space's are theirs.
std::string pointProblem(const SearchSpace &space, const Point &p, bool kernelControlsLater) {
  if (p.size() != space.controls.size() && !(kernelControlsLater && p.size() > space.controls.size()))
    return std::to_string(p.size()) + " values for " + std::to_string(space.controls.size()) + " controls";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i >= space.controls.size()) {   // a per-kernel control's, checked when they join
      if (p[i] < kUnset)
        return "no value " + std::to_string(p[i]) + " for per-kernel control " + std::to_string(i);
      continue;
    }
    if (p[i] != kUnset && (p[i] < 0 || (size_t)p[i] >= space.controls[i].values.size()))
      return "no value " + std::to_string(p[i]) + " for control " + space.controls[i].name;
  }
  return "";
}

// The lock's winner as a point of `space`, by control name and value; ""
// or, when a control or value is not the space's, what is missing.
std::optional<Point> lockPoint(const SearchSpace &space, const Lockfile &lock, std::string &missing) {
  Point p = space.baseline();
  for (auto it = lock.controls.begin(); it != lock.controls.end(); ++it) {
    std::string value = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    bool found = false;
    for (size_t i = 0; i < space.controls.size() && !found; ++i) {
      const Control &c = space.controls[i];
      if (c.name != it.key())
        continue;
      auto v = std::find(c.values.begin(), c.values.end(), value);
      if (v != c.values.end()) {
        p[i] = (int)(v - c.values.begin());
        found = true;
      }
    }
    if (!found) {
      missing = it.key() + " = " + value;
      return std::nullopt;
    }
  }
  return p;
}

// The winner a tune of `arch` starts from: its architecture's section (a
// lock of sections holds other architectures' winners too, which a reader of
// one winner refused: "was not read"); with no architecture measured, the
// one winner every section holds. nullptr: none.
const Lockfile *warmSectionOf(const LockSet &set, const std::string &arch) {
  if (!arch.empty())
    return set.sectionFor(arch);
  for (const auto &s : set.sections)
    if (s.candidateHash != set.sections.front().candidateHash)
      return nullptr;
  return set.sections.empty() ? nullptr : &set.sections.front();
}

} // namespace

// A search in a fresh run directory (a new clone, CI) with the committed
// lock of this target starts warm from it (issue 55 item 4): once the
// baseline has given the space its per-kernel controls, the lock's winner,
// mapped by control name and value, begins generation 1 (its per-kernel
// directives lead the per-kernel stage).
WarmPlan::LockOutcome WarmPlan::planFromLock(const TuneConfig &cfg) {
  if (plan_ || !llvm::sys::fs::exists(cfg.lockfile) || llvm::sys::fs::exists(cfg.runDir + "/journal.jsonl.previous"))
    return {};
  std::string err, missing;
  auto set = readLockSet(cfg.lockfile, err);
  if (!set)
    return {false, "warm start: the lock " + cfg.lockfile + " was not read (" + err + "); the search starts cold"};
  const Lockfile *lock = warmSectionOf(*set, cfg.measuredArchitecture);
  if (!lock) {
    std::string arch = cfg.measuredArchitecture.empty() ? "every architecture the build compiles, together"
                                                        : cfg.measuredArchitecture;
    return {false, "warm start: the lock " + cfg.lockfile + " has no winner for " + arch + " (its sections: " +
                       llvm::join(set->names(), ", ") + "); the search starts cold"};
  }
  auto p = lockPoint(cfg.space, *lock, missing);
  if (!p)
    return {false, "warm start: the lock's winner sets " + missing + ", which this search space has not; the "
                   "search starts cold"};
  if (*p == cfg.space.baseline())
    return {};
  Plan w;
  w.from = cfg.lockfile;
  w.changed = "the lock";
  w.winner = lock->candidateId;
  w.points = {*p};
  plan_ = std::move(w);
  return {true, "warm start: no earlier search in " + cfg.runDir + "; generation 1 begins with the winner of " +
                    cfg.lockfile + " (" + render(cfg.space, *p).summary() + ")"};
}

// The earlier search in `prior` (journal at `from`): a warm start, or none.
void WarmPlan::planFromJournal(const JournalContents &prior, const std::string &from, const TuneConfig &cfg) {
  if (!prior.started || prior.inputs.is_null() || prior.evaluations.empty())
    return;
  const RecordedStart &s = *prior.started;
  if (s.spaceIdentity != cfg.space.identity() || s.strategy != cfg.search.strategy ||
      s.engineVersion != CIQ_VERSION || s.objectives.size() != cfg.objectives.size())
    return;
  for (size_t i = 0; i < s.objectives.size(); ++i)
    if (s.objectives[i].metric != cfg.objectives[i].metric)
      return;
  std::string changed = onlySourcesChanged(prior.inputs, cfg);
  if (changed.empty())
    return;
  Plan w;
  w.from = from;
  w.changed = changed;
  std::vector<ScoredPoint> pts;
  std::vector<std::string> binaries;   // a twin is named by the candidate whose binary it is
  for (const auto &e : prior.evaluations) {
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg, e), 0});
    binaries.push_back(e.duplicateOf.empty() ? e.candidateId : e.duplicateOf);
  }
  // The winner as locked (the minimized one is a "build" line), then the best ranked.
  std::string winner = prior.winner.is_object() ? prior.winner.value("candidate_id", std::string()) : "";
  std::vector<Point> winners;
  for (const auto *list : {&prior.builds, &prior.evaluations})
    for (const auto &e : *list)
      if (!winner.empty() && e.candidateId == winner && prior.winner.value("improved", false))
        winners.push_back(e.point);
  w.points = warmPoints(pts, binaries, winners, cfg.space.baseline());
  if (w.points.empty())
    return;
  if (warmLearns(cfg.search.strategy))
    w.learned = std::move(pts);
  w.winner = winner;
  plan_ = std::move(w);
}

nlohmann::json WarmPlan::toJson() const {
  nlohmann::json learned = nlohmann::json::array();
  for (const auto &p : plan_->learned)
    learned.push_back(scoredToJson(p));
  return {{"op", "warm"}, {"from", plan_->from}, {"changed", plan_->changed}, {"winner", plan_->winner},
          {"points", plan_->points}, {"learned", learned}};
}

// A resumed warm search: the plan its start journaled.
std::string WarmPlan::fromJson(const nlohmann::json &j, const TuneConfig &cfg) {
  if (!j.is_object())
    return "";
  try {
    Plan w;
    w.from = j.value("from", std::string());
    w.changed = j.value("changed", std::string());
    w.winner = j.value("winner", std::string());
    w.points = j.at("points").get<std::vector<Point>>();
    for (const auto &p : j.at("learned"))
      w.learned.push_back({p.at("point").get<Point>(), p.at("ok").get<bool>(),
                           p.at("objectives").get<std::vector<double>>(), 0});
    // Rendered and proposed as they are: a point that is not one of this
    // space's (a line edited by hand: its checksum removed) aborted ciq.
    for (const auto &p : w.points)
      if (std::string why = pointProblem(cfg.space, p, kernelControlsOn(cfg)); !why.empty())
        throw std::out_of_range("point " + nlohmann::json(p).dump() + ": " + why);
    for (const auto &p : w.learned)
      if (std::string why = pointProblem(cfg.space, p.point, kernelControlsOn(cfg)); !why.empty())
        throw std::out_of_range("learned point " + nlohmann::json(p.point).dump() + ": " + why);
    plan_ = std::move(w);
  } catch (const std::exception &e) {
    return "journal: the warm line is damaged (" + std::string(e.what()) + "); the search goes on without it";
  }
  return "";
}

std::string WarmPlan::note(const SearchSpace &space) const {
  if (!plan_)
    return "";
  std::string points;
  for (const auto &p : plan_->points) {
    std::string r = render(space, p).summary();
    points += (points.empty() ? "" : "; ") + (r.empty() ? std::string("(none)") : r);
  }
  return "warm start: " + plan_->changed + " changed since the search in " + plan_->from +
         " (same ciq, CUDA compiler, ciq.yaml and space): generation 1 begins with " +
         (plan_->winner.empty() ? std::string("its best") : "its winner " + plan_->winner + " and the next best") +
         " (" + points + ")" +
         (plan_->learned.empty() ? std::string()
                                 : "; its " + std::to_string(plan_->learned.size()) + " evaluations inform the search");
}

} // namespace ciq
