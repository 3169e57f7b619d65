#include "engine/search/TwinPredictor.h"

namespace ciq {
namespace {

// The one control two points differ in, or -1 (none, or more than one).
int soleDifference(const Point &a, const Point &b) {
  if (a.size() != b.size())
    return -1;
  int diff = -1;
  for (size_t c = 0; c < a.size(); ++c)
    if (a[c] != b[c]) {
      if (diff >= 0)
        return -1;
      diff = (int)c;
    }
  return diff;
}

} // namespace

TwinPredictor::TwinPredictor(size_t controls, const std::vector<Evaluation> &evals, int beforeGeneration,
                             const std::function<std::string(const Evaluation &)> &binaryKey)
    : parent_(controls), usable_(controls, true) {
  struct Seen {
    const Evaluation *e;
    std::string key;
  };
  std::vector<Seen> seen;
  for (const auto &e : evals)
    if (e.generation < beforeGeneration && e.ok && e.point.size() == controls)
      if (std::string k = binaryKey(e); !k.empty())
        seen.push_back({&e, k});
  std::vector<std::pair<size_t, std::pair<int, int>>> apart;   // control, values shown to differ
  for (size_t i = 0; i < seen.size(); ++i)
    for (size_t j = i + 1; j < seen.size(); ++j) {
      int c = soleDifference(seen[i].e->point, seen[j].e->point);
      if (c < 0)
        continue;
      int a = seen[i].e->point[c], b = seen[j].e->point[c];
      if (seen[i].key == seen[j].key)
        unite(c, a, b);
      else
        apart.push_back({(size_t)c, {a, b}});
      learnCondition((size_t)c, seen[i].e->point, seen[i].key == seen[j].key);
    }
  for (const auto &[k, cond] : conditions_)
    ignoredRules_ += cond.same >= kIgnoredAfter && !cond.apart;
  for (const auto &[c, ab] : apart)
    if (find(c, ab.first) == find(c, ab.second))
      usable_[c] = false;
  for (const auto &s : seen) {
    known_.emplace(canonical(s.e->point), s.e);
    seen_.push_back(s.e);
  }
  // Per control and context (every other control's value): the values tried
  // there and the binaries they gave.
  for (const auto &s : seen)
    for (size_t c = 0; c < controls; ++c) {
      Point ctx = s.e->point;
      ctx[c] = kMasked;
      Context &x = contexts_[{c, ctx}];
      x.values.insert(s.e->point[c]);
      x.keys.insert(s.key);
      if (!x.first)
        x.first = s.e;
    }
}

int TwinPredictor::find(size_t control, int value) const {
  const auto &p = parent_[control];
  for (auto it = p.find(value); it != p.end() && it->second != value; it = p.find(value))
    value = it->second;
  return value;
}

void TwinPredictor::unite(size_t control, int a, int b) {
  int ra = find(control, a), rb = find(control, b);
  if (ra == rb)
    return;
  // The smaller value is the class's representative: independent of the order learnt.
  auto &p = parent_[control];
  p[ra] = ra;
  p[rb] = rb;
  if (ra < rb)
    p[rb] = ra;
  else
    p[ra] = rb;
  ++merged_;
}

Point TwinPredictor::canonical(const Point &p) const {
  Point q = p;
  for (size_t c = 0; c < q.size() && c < usable_.size(); ++c)
    if (usable_[c])
      q[c] = find(c, q[c]);
  return q;
}

// A pair differing in control c alone (p one of them) is evidence for c
// under every value p gives the other controls.
void TwinPredictor::learnCondition(size_t c, const Point &p, bool sameBinary) {
  for (size_t d = 0; d < p.size(); ++d) {
    if (d == c || p[d] == kUnset)
      continue;
    Condition &x = conditions_[{c, d, p[d]}];
    if (sameBinary)
      ++x.same;
    else
      x.apart = true;
  }
}

// The controls p's values make ignored (their conditions' controls kept),
// and an evaluated point equal to p but for them.
const Evaluation *TwinPredictor::predictIgnored(const Point &p) const {
  std::vector<bool> ignored(p.size(), false), condition(p.size(), false);
  bool any = false;
  for (const auto &[k, x] : conditions_) {
    auto [c, d, v] = k;
    if (x.same >= kIgnoredAfter && !x.apart && d < p.size() && c < p.size() && p[d] == v)
      ignored[c] = condition[d] = any = true;
  }
  if (!any)
    return nullptr;
  for (const Evaluation *e : seen_) {
    bool match = true;
    for (size_t c = 0; c < p.size() && match; ++c)
      match = (ignored[c] && !condition[c]) || e->point[c] == p[c];
    if (match)
      return e;
  }
  return nullptr;
}

const Evaluation *TwinPredictor::predict(const Point &p) const {
  if (merged_ == 0 && ignoredRules_ == 0)
    return nullptr;
  auto it = known_.find(canonical(p));
  if (it != known_.end())
    return it->second;
  // A control whose kInertAfter values all gave one binary where the other
  // controls are as in p (--register-usage-level under --opt-level=1): its
  // other values are predicted to give that binary too (issue 41 item 7).
  for (size_t c = 0; c < p.size() && c < parent_.size(); ++c) {
    Point ctx = p;
    ctx[c] = kMasked;
    auto x = contexts_.find({c, ctx});
    if (x != contexts_.end() && x->second.keys.size() == 1 && (int)x->second.values.size() >= kInertAfter)
      return x->second.first;
  }
  return predictIgnored(p);
}

} // namespace ciq
