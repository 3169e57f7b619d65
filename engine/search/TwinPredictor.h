// Which control values give this program the same binary, learnt from the
// twins so far, so that the search stops compiling configurations it can
// predict to be twins (the budget buys distinct binaries: Budget.h).
//
// Evidence is pairs of evaluations that differ in one control only: the same
// binary makes the two values equivalent for that control (for this
// program), different binaries keep them apart. A control with contradicting
// evidence (values equivalent in one context and not in another, e.g.
// --register-usage-level at -O1 and at -O3) is not used. A proposal whose
// values, each mapped to its equivalence class, land on an evaluated point is
// predicted to be that point's twin. A control whose values (three or more)
// all gave one binary where every other control had one set of values is
// inert there: its other values, in that context, are predicted twins too.
// And a control ignored under one value of another (ptxas's --opt-level=1,
// where register and scheduling controls do nothing; a kernel's launch
// bound): two pairs or more that differ in it alone, with that value set,
// gave one binary each and none gave two; a proposal with that value set
// takes the binary of an evaluated point equal to it but for such controls
// (issue 55 item 2: 10 of 16 compiles repeated a binary at --opt-level=1).
#pragma once
#include "engine/record/Evaluation.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ciq {

class TwinPredictor {
public:
  // binaryKey(e): what must be equal for two evaluations to share a result
  // ("" : never shared; the engine's reuse key). Only evaluations of
  // generations before beforeGeneration are read, so a resumed search
  // predicts the same.
  TwinPredictor(size_t controls, const std::vector<Evaluation> &evals, int beforeGeneration,
                const std::function<std::string(const Evaluation &)> &binaryKey);

  // The evaluation p is predicted to share its binary with, or null.
  const Evaluation *predict(const Point &p) const;
  // Pairs of values learnt equivalent (over all usable controls).
  int equivalences() const { return merged_; }

private:
  int find(size_t control, int value) const;
  void unite(size_t control, int a, int b);
  Point canonical(const Point &p) const;

  std::vector<std::map<int, int>> parent_;   // per control: value -> parent value (union-find)
  std::vector<bool> usable_;                 // false: contradicting evidence
  std::map<Point, const Evaluation *> known_;  // canonical point -> an evaluation with a binary
  int merged_ = 0;
  // A control inert in one context: values tried with the other controls
  // fixed, and the binaries they gave (predict()).
  static constexpr int kMasked = -2;
  static constexpr int kInertAfter = 3;
  struct Context {
    std::set<int> values;
    std::set<std::string> keys;
    const Evaluation *first = nullptr;
  };
  std::map<std::pair<size_t, Point>, Context> contexts_;
  // Control c under control d = v: pairs that differ in c alone, with d = v,
  // and whether any of them gave two binaries.
  static constexpr int kIgnoredAfter = 2;
  struct Condition {
    int same = 0;
    bool apart = false;
  };
  std::map<std::tuple<size_t, size_t, int>, Condition> conditions_;
  std::vector<const Evaluation *> seen_;
  int ignoredRules_ = 0;
  void learnCondition(size_t c, const Point &p, bool sameBinary);
  const Evaluation *predictIgnored(const Point &p) const;
};

} // namespace ciq
