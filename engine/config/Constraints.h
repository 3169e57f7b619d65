// Constraints between controls (`constraints:` in ciq.yaml and in space
// files, docs/config.md "Constraints"): expressions over control values by
// control name, evaluated with muparser, that a point must satisfy to be
// rendered, built or counted.
//
// A control's name is its variable; characters muparser does not take in a
// name (the '-' of "opt-level") are written '_'. A set control's value is its
// number ("true"/"on"/"yes" are 1, "false"/"off"/"no" 0). An unset control
// takes its `compiler_default:` when that is a number; otherwise the
// constraint does not apply to the point (it holds): ciq does not know what
// the source or the compiler does without the value.
#pragma once
#include "engine/record/Rendered.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ciq {

struct SearchSpace;

// One constraint as written, and where.
struct Constraint {
  std::string expr;
  std::string origin;   // "file:line"
};

// How many points of a space satisfy its constraints.
struct FeasibleCount {
  double points = 0;
  bool exact = true;    // false: estimated by sampling (a constrained group of controls over kEnumerateLimit)
};

class ConstraintSet {
public:
  ~ConstraintSet();
  // Parses space.constraints against space's controls and checks each can
  // hold; nullptr with `error` (one line: origin, the expression, what to do)
  // for a syntax error, an unknown control, a control with a value that is
  // not a number, or a constraint (or group of them) no point satisfies.
  static std::shared_ptr<const ConstraintSet> compile(const SearchSpace &space, std::string &error);

  // The points are of the space compiled against (its control indices).
  bool holds(const Point &p) const;
  FeasibleCount count() const;
  // The muparser name of a control.
  static std::string variableName(const std::string &control);

  // Groups of constrained controls up to this many combinations are
  // enumerated (exact counts and checks); larger ones are sampled.
  static constexpr double kEnumerateLimit = 1e6;

  struct Compiled;

private:
  ConstraintSet();
  std::vector<std::unique_ptr<Compiled>> list_;
  mutable std::mutex mutex_;   // muparser evaluates through the variables' storage
  FeasibleCount count_;
};

} // namespace ciq
