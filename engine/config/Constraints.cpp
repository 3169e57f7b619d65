#include "engine/config/Constraints.h"
#include "engine/config/Space.h"

#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <muParser.h>
#include <numeric>
#include <optional>
#include <random>
#include <set>

namespace ciq {

namespace {

// A value as a number: decimal or boolean spellings; nullopt otherwise.
std::optional<double> numberOf(const std::string &s) {
  for (const char *t : {"true", "on", "yes"})
    if (s == t)
      return 1.0;
  for (const char *f : {"false", "off", "no"})
    if (s == f)
      return 0.0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end)
    return std::nullopt;
  return v;
}

double modulo(double a, double b) { return std::fmod(a, b); }

// One control as a constraint reads it.
struct Var {
  size_t control = 0;
  double *slot = nullptr;
  std::vector<double> values;       // per value index
  std::optional<double> unsetValue; // compiler_default, when a number
};

std::string fmtCount(double n) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

} // namespace

struct ConstraintSet::Compiled {
  Constraint c;
  mu::Parser parser;
  std::deque<double> slots;     // muparser keeps pointers to them
  std::vector<Var> vars;

  // Whether the constraint holds at p; a control unset without a numeric
  // default makes it not apply (it holds).
  bool holds(const Point &p) {
    for (Var &v : vars) {
      int i = v.control < p.size() ? p[v.control] : kUnset;
      if (i == kUnset && !v.unsetValue)
        return true;
      *v.slot = i == kUnset ? *v.unsetValue : v.values[i];
    }
    return parser.Eval() != 0;
  }
};

namespace {

double *newVariable(const char *, void *user) {
  auto *c = static_cast<ConstraintSet::Compiled *>(user);
  c->slots.push_back(0);
  return &c->slots.back();
}

} // namespace

ConstraintSet::ConstraintSet() = default;
ConstraintSet::~ConstraintSet() = default;

std::string ConstraintSet::variableName(const std::string &control) {
  std::string v = control;
  for (char &ch : v)
    if (!isalnum((unsigned char)ch) && ch != '_')
      ch = '_';
  return v;
}

namespace {

std::string known(const SearchSpace &space) {
  std::string s;
  for (const auto &c : space.controls)
    s += (s.empty() ? "" : ", ") + ConstraintSet::variableName(c.name);
  return s;
}

// Binds the expression's names to the space's controls.
bool bind(ConstraintSet::Compiled &k, const SearchSpace &space, std::string &error) {
  std::string at = k.c.origin + ": constraints: '" + k.c.expr + "': ";
  mu::varmap_type used;
  try {
    k.parser.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT);
    k.parser.SetVarFactory(newVariable, &k);
    k.parser.SetExpr(k.c.expr);
    used = k.parser.GetUsedVar();
  } catch (const mu::Parser::exception_type &e) {
    error = at + e.GetMsg() + " (muparser syntax: + - * / % ^, < <= == != >= >, && ||, ?:)";
    return false;
  }
  if (used.empty()) {
    error = at + "names no control; write it over control names (controls: " + known(space) + ")";
    return false;
  }
  for (const auto &[name, slot] : used) {
    int found = -1;
    for (size_t i = 0; i < space.controls.size(); ++i)
      if (ConstraintSet::variableName(space.controls[i].name) == name)
        found = (int)i;
    if (found < 0) {
      error = at + "'" + name + "' is not a control of the space (controls: " + known(space) +
              "); fix the name or remove the constraint";
      return false;
    }
    const Control &ctl = space.controls[found];
    Var v{(size_t)found, slot, {}, std::nullopt};
    for (const auto &s : ctl.values) {
      auto n = numberOf(s);
      if (!n) {
        error = at + "control '" + ctl.name + "' has the value '" + s +
                "', not a number; constraints compare numbers: constrain numeric controls only";
        return false;
      }
      v.values.push_back(*n);
    }
    if (ctl.canUnset && !ctl.compilerDefault.empty())
      v.unsetValue = numberOf(ctl.compilerDefault);
    k.vars.push_back(v);
  }
  return true;
}

// Calls f(point) for each combination of `states` (per control in
// `controls`: its value indices, with kUnset where listed) until f is false.
template <class F>
void enumerate(size_t width, const std::vector<size_t> &controls, const std::vector<std::vector<int>> &states, F f) {
  Point p(width, kUnset);
  std::vector<size_t> at(controls.size(), 0);
  for (;;) {
    for (size_t i = 0; i < controls.size(); ++i)
      p[controls[i]] = states[i][at[i]];
    if (!f(p))
      return;
    size_t i = 0;
    while (i < controls.size() && ++at[i] == states[i].size())
      at[i++] = 0;
    if (i == controls.size())
      return;
  }
}

std::vector<int> allStates(const Control &c, bool withUnset) {
  std::vector<int> s(c.values.size());
  std::iota(s.begin(), s.end(), 0);
  if (withUnset)
    s.push_back(kUnset);
  return s;
}

double product(const std::vector<std::vector<int>> &states) {
  double n = 1;
  for (const auto &s : states)
    n *= s.size();
  return n;
}

// A constraint no values of its controls satisfy is a mistake even though
// the points that leave one of them unset satisfy it.
bool satisfiable(ConstraintSet::Compiled &k, const SearchSpace &space, std::string &error) {
  std::vector<size_t> controls;
  std::vector<std::vector<int>> states;
  for (const Var &v : k.vars) {
    controls.push_back(v.control);
    states.push_back(allStates(space.controls[v.control], v.unsetValue.has_value()));
  }
  if (product(states) > ConstraintSet::kEnumerateLimit)
    return true;   // too many to prove; the count below samples
  bool any = false;
  enumerate(space.controls.size(), controls, states, [&](const Point &p) { return !(any = k.holds(p)); });
  if (!any)
    error = k.c.origin + ": constraints: '" + k.c.expr +
            "': no values of its controls satisfy it; fix the constraint or the controls' domains";
  return any;
}

} // namespace

std::shared_ptr<const ConstraintSet> ConstraintSet::compile(const SearchSpace &space, std::string &error) {
  std::shared_ptr<ConstraintSet> set(new ConstraintSet);
  for (const Constraint &c : space.constraints) {
    auto k = std::make_unique<Compiled>();
    k->c = c;
    if (!bind(*k, space, error) || !satisfiable(*k, space, error))
      return nullptr;
    set->list_.push_back(std::move(k));
  }
  // Groups of controls linked by constraints: each group counts apart, the
  // free controls multiply.
  size_t n = space.controls.size();
  std::vector<size_t> group(n);
  std::iota(group.begin(), group.end(), 0);
  std::function<size_t(size_t)> root = [&](size_t i) { return group[i] == i ? i : group[i] = root(group[i]); };
  std::vector<bool> constrained(n, false);
  for (const auto &k : set->list_)
    for (const Var &v : k->vars) {
      constrained[v.control] = true;
      group[root(v.control)] = root(k->vars.front().control);
    }
  std::map<size_t, std::vector<size_t>> groups;
  FeasibleCount total;
  total.points = 1;
  for (size_t i = 0; i < n; ++i) {
    if (constrained[i])
      groups[root(i)].push_back(i);
    else
      total.points *= space.states(i);
  }
  for (const auto &[r, controls] : groups) {
    std::vector<std::vector<int>> states;
    for (size_t c : controls)
      states.push_back(allStates(space.controls[c], space.controls[c].canUnset));
    std::vector<Compiled *> mine;
    std::string origins;
    for (const auto &k : set->list_)
      if (root(k->vars.front().control) == r) {
        mine.push_back(k.get());
        origins += (origins.empty() ? "" : ", ") + k->c.origin;
      }
    auto ok = [&](const Point &p) {
      for (Compiled *k : mine)
        if (!k->holds(p))
          return false;
      return true;
    };
    double feasible = 0, all = product(states);
    if (all <= kEnumerateLimit) {
      enumerate(n, controls, states, [&](const Point &p) { feasible += ok(p); return true; });
    } else {
      // Seeded: the same space always gives the same estimate.
      std::mt19937_64 rng(0x63697175);
      const int kSamples = 20000;
      Point p(n, kUnset);
      double hits = 0;
      for (int s = 0; s < kSamples; ++s) {
        for (size_t i = 0; i < controls.size(); ++i)
          p[controls[i]] = states[i][rng() % states[i].size()];
        hits += ok(p);
      }
      feasible = std::round(all * hits / kSamples);
      total.exact = false;
    }
    if (feasible == 0 && total.exact) {
      error = origins + ": constraints: together no point of the space satisfies them (of " + fmtCount(all) +
              " combinations of their controls); loosen one";
      return nullptr;
    }
    total.points *= feasible;
  }
  set->count_ = total;
  return set;
}

bool ConstraintSet::holds(const Point &p) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &k : list_)
    if (!k->holds(p))
      return false;
  return true;
}

FeasibleCount ConstraintSet::count() const { return count_; }

} // namespace ciq
