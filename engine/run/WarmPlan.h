// The warm start of a re-tune (issue 49 item 5, issue 55 item 4): from the
// run directory's earlier search when only the program's sources changed,
// else from the committed lock of a fresh run directory. The plan is
// journaled ("warm"), so `ciq resume` proposes the same pools. Owned by
// TuneRun; it returns the lines to tell the user instead of printing them
// (the pure rules are engine/search/WarmStart.h).
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Journal.h"
#include "engine/search/Search.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

class WarmPlan {
public:
  struct Plan {
    std::string from, changed, winner;   // the earlier journal (or lock), what changed, its winner
    std::vector<Point> points;           // generation 1 begins with these
    std::vector<ScoredPoint> learned;    // the earlier evaluations, as generation 0 of the history
  };
  // What planning from the lock came to: whether it planned a start (to be
  // journaled), and the line to tell the user ("": nothing to say).
  struct LockOutcome {
    bool planned = false;
    std::string note;
  };

  explicit operator bool() const { return plan_.has_value(); }
  const Plan &operator*() const { return *plan_; }
  const Plan *operator->() const { return &*plan_; }

  // From the earlier search in `prior` (its journal kept at `from`): a
  // warm start, or none.
  void planFromJournal(const JournalContents &prior, const std::string &from, const TuneConfig &cfg);
  // A fresh run directory with a committed lock of this target.
  LockOutcome planFromLock(const TuneConfig &cfg);
  nlohmann::json toJson() const;
  // A resumed warm search: the plan its start journaled; a warning line
  // when that line is damaged (the search goes on without it), else "".
  std::string fromJson(const nlohmann::json &j, const TuneConfig &cfg);
  // The line that says how the search starts warm ("": it does not).
  std::string note(const SearchSpace &space) const;

private:
  std::optional<Plan> plan_;
};

} // namespace ciq
