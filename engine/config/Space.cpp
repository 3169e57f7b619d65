#include "engine/config/Space.h"

#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace ciq {
using nlohmann::json;

static const char *renderName(RenderKind k) {
  switch (k) {
  case RenderKind::Ptxas: return "ptxas";
  case RenderKind::Nvcc: return "nvcc";
  case RenderKind::Define: return "define";
  case RenderKind::Acf: return "acf";
  case RenderKind::Kernel: return "kernel";
  }
  return "?";
}

int SearchSpace::states(size_t c) const {
  const auto &ctl = controls[c];
  return (int)ctl.values.size() + (ctl.canUnset ? 1 : 0);
}

double SearchSpace::size() const {
  double n = 1;
  for (size_t i = 0; i < controls.size(); ++i)
    n *= states(i);
  return n;
}

FeasibleCount SearchSpace::feasibleSize() const {
  if (!compiled)
    return {size(), true};
  return compiled->count();
}

std::string SearchSpace::sizeSummary() const {
  char buf[128];
  snprintf(buf, sizeof buf, "%.0f points", size());
  std::string s = buf;
  if (!compiled)
    return s;
  FeasibleCount f = feasibleSize();
  snprintf(buf, sizeof buf, ", %s%.0f within the %zu constraint%s", f.exact ? "" : "about ", f.points,
           constraints.size(), constraints.size() == 1 ? "" : "s");
  return s + buf;
}

bool SearchSpace::compileConstraints(std::string &error) {
  compiled.reset();
  if (constraints.empty())
    return true;
  compiled = ConstraintSet::compile(*this, error);
  return compiled != nullptr;
}

int SearchSpace::find(const std::string &name) const {
  for (size_t i = 0; i < controls.size(); ++i)
    if (controls[i].name == name)
      return (int)i;
  return -1;
}

std::string SearchSpace::identity() const {
  // Only what changes the meaning of a point: names, renderings, domains
  // (ACFs by content). Help texts and origins do not.
  json all = json::array();
  for (const auto &c : controls) {
    json vals = c.render == RenderKind::Acf ? json(c.acfSha256) : json(c.values);
    all.push_back({{"name", c.name}, {"render", renderName(c.render)}, {"option", c.option},
                   {"stage", c.acfStage}, {"values", vals}, {"can_unset", c.canUnset}});
    if (c.render == RenderKind::Kernel)
      all.back()["kernel"] = c.kernelKey;
  }
  // Constraints change which points exist; a space without them keeps the
  // identity it had before constraints were there.
  if (!constraints.empty()) {
    json cs = json::array();
    for (const auto &c : constraints)
      cs.push_back(c.expr);
    return sha256Hex(json{{"controls", all}, {"constraints", cs}}.dump());
  }
  return sha256Hex(all.dump());
}

// Replaces "{}" with the value; a template without "{}" is a flag.
static std::string fillTemplate(const std::string &tmpl, const std::string &value) {
  auto pos = tmpl.find("{}");
  if (pos == std::string::npos)
    return tmpl;
  return tmpl.substr(0, pos) + value + tmpl.substr(pos + 2);
}

Rendered render(const SearchSpace &space, const Point &p) {
  Rendered r;
  for (size_t i = 0; i < space.controls.size() && i < p.size(); ++i) {
    if (p[i] == kUnset)
      continue;
    const Control &c = space.controls[i];
    const std::string &v = c.values.at(p[i]);
    switch (c.render) {
    case RenderKind::Ptxas:
    case RenderKind::Nvcc:
      // A template of several words is several arguments (checkOptionsKnown
      // has joined an option with its value); the value itself is one.
    {
      llvm::SmallVector<llvm::StringRef, 2> words;
      llvm::SplitString(c.option, words, " \t");
      std::vector<std::string> *to = c.render == RenderKind::Ptxas ? &r.ptxas : &r.nvcc;
      if (!c.unit.empty()) {
        auto u = std::find_if(r.units.begin(), r.units.end(), [&](const UnitOptions &x) { return x.unit == c.unit; });
        if (u == r.units.end())
          u = r.units.insert(r.units.end(), UnitOptions{c.unit, {}, {}});
        to = c.render == RenderKind::Ptxas ? &u->ptxas : &u->nvcc;
      }
      for (llvm::StringRef word : words)
        to->push_back(fillTemplate(word.str(), v));
      break;
    }
    case RenderKind::Define:
      r.defines.push_back(c.option + "=" + v);
      break;
    case RenderKind::Acf:
      if (v.empty()) // the "none" choice of include_none
        break;
      r.acfs.push_back({c.acfStage, v, c.acfSha256.at(p[i])});
      break;
    case RenderKind::Kernel:
      r.kernels.push_back({c.kernelKey, c.option, std::atoi(v.c_str()), c.kernelLabel});
      break;
    }
    r.controls[c.name] = v;
  }
  return r;
}

} // namespace ciq
