#include "engine/search/DefaultValues.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <cstdlib>

namespace ciq {
namespace {

// "--opt-level={}" -> "opt-level".
std::string stemOf(const std::string &option) {
  llvm::StringRef s(option);
  s = s.ltrim('-');
  return s.take_until([](char c) { return c == '=' || c == '{' || c == ' '; }).str();
}

// What the compile lines (and the environment's extra flags) hand to ptxas
// and to nvcc: ptxas's through -Xptxas/--ptxas-options, split on commas.
struct BuildTokens {
  std::vector<std::string> nvcc, ptxas;
  bool opaque = false;   // an options file or response file: not read here
};

void addPtxasValue(llvm::StringRef v, BuildTokens &t) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  v.split(parts, ',', -1, false);
  for (auto p : parts)
    t.ptxas.push_back(p.trim().str());
}

void readArgv(const std::vector<std::string> &argv, BuildTokens &t) {
  for (size_t i = 1; i < argv.size(); ++i) {
    llvm::StringRef a(argv[i]);
    if (a == "-Xptxas" || a == "--ptxas-options") {
      if (i + 1 < argv.size())
        addPtxasValue(argv[++i], t);
    } else if (a.consume_front("-Xptxas=") || a.consume_front("--ptxas-options=")) {
      addPtxasValue(a, t);
    } else {
      if (a == "-optf" || a == "--options-file" || a.startswith("-optf=") || a.startswith("--options-file=") ||
          a.startswith("@"))
        t.opaque = true;
      t.nvcc.push_back(a.str());
    }
  }
}

// Whether the build (or another control of the space) sets what `stem`
// names, so that unset does not mean the compiler's default.
bool setElsewhere(const std::string &stem, const BuildTokens &t) {
  auto names = [&](llvm::StringRef tok) { return tok.contains(stem); };
  for (const auto &p : t.ptxas) {
    llvm::StringRef s(p);
    if (names(s))
      return true;
    if (stem == "opt-level" && s.startswith("-O"))
      return true;
    if (stem == "register-usage-level" && s.contains("regUsageLevel"))
      return true;
  }
  for (const auto &n : t.nvcc) {
    llvm::StringRef s(n);
    if (names(s))
      return true;
    // nvcc's device debug and device optimization level set ptxas's -O.
    if ((stem == "opt-level" || stem == "allow-expensive-optimizations") &&
        (s == "-G" || s == "--device-debug" || s.ltrim('-').startswith("dopt")))
      return true;
    if (stem == "fmad" && s.ltrim('-').startswith("use_fast_math"))
      return true;
  }
  return false;
}

int indexOf(const Control &c, const std::string &value) {
  auto it = std::find(c.values.begin(), c.values.end(), value);
  return it == c.values.end() ? -1 : (int)(it - c.values.begin());
}

} // namespace

bool DefaultRules::any() const {
  return expensive >= 0 || std::any_of(unsetIndex.begin(), unsetIndex.end(), [](int i) { return i >= 0; });
}

DefaultRules defaultRules(const SearchSpace &space, const std::vector<std::vector<std::string>> &commands,
                          bool commandsKnown, const std::string &envFlags) {
  DefaultRules r;
  r.unsetIndex.assign(space.controls.size(), -1);
  BuildTokens build;
  for (const auto &argv : commands)
    readArgv(argv, build);
  std::vector<std::string> env = {"nvcc"};
  llvm::SmallVector<llvm::StringRef, 8> words;
  llvm::StringRef(envFlags).split(words, ' ', -1, false);
  for (auto w : words)
    env.push_back(w.str());
  readArgv(env, build);
  if (!commandsKnown || commands.empty() || build.opaque)
    return r;
  // Everything the space renders besides control c, read like a compile line.
  auto others = [&](size_t c) {
    BuildTokens t = build;
    for (size_t k = 0; k < space.controls.size(); ++k)
      if (k != c && space.controls[k].render == RenderKind::Ptxas)
        t.ptxas.push_back(space.controls[k].option);
      else if (k != c)
        t.nvcc.push_back(space.controls[k].option);
    return t;
  };
  for (size_t c = 0; c < space.controls.size(); ++c) {
    const Control &ctl = space.controls[c];
    if (ctl.render != RenderKind::Ptxas || !ctl.canUnset)
      continue;
    std::string stem = stemOf(ctl.option);
    if (stem.empty() || setElsewhere(stem, others(c)))
      continue;
    if (stem == "opt-level")
      r.optLevel = (int)c;
    if (stem == "allow-expensive-optimizations") {
      r.expensive = (int)c;
      r.expensiveTrue = indexOf(ctl, "true");
      r.expensiveFalse = indexOf(ctl, "false");
    } else if (!ctl.compilerDefault.empty()) {
      r.unsetIndex[c] = indexOf(ctl, ctl.compilerDefault);
    }
  }
  // The expensive optimizations' default follows the opt level: known only
  // where nothing but the opt-level control (or nothing at all) sets it.
  if (r.expensive >= 0) {
    BuildTokens rest = build;
    for (size_t k = 0; k < space.controls.size(); ++k)
      if ((int)k != r.expensive && (int)k != r.optLevel)
        (space.controls[k].render == RenderKind::Ptxas ? rest.ptxas : rest.nvcc).push_back(space.controls[k].option);
    if (setElsewhere("opt-level", rest))
      r.expensive = -1;
  }
  // The opt level an unset opt-level control leaves: its compiler_default,
  // else ptxas's 3.
  if (r.optLevel >= 0) {
    const Control &o = space.controls[r.optLevel];
    if (!o.compilerDefault.empty())
      r.defaultLevel = std::atoi(o.compilerDefault.c_str());
    for (const auto &v : o.values) {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        r.expensive = -1;   // a value that is no plain level: its default is not predicted
      r.levelOf.push_back(std::atoi(v.c_str()));
    }
  }
  return r;
}

Point withDefaultsUnset(const DefaultRules &rules, const Point &p) {
  Point q = p;
  for (size_t c = 0; c < q.size() && c < rules.unsetIndex.size(); ++c)
    if (rules.unsetIndex[c] >= 0 && q[c] == rules.unsetIndex[c])
      q[c] = kUnset;
  if (rules.expensive < 0 || (size_t)rules.expensive >= q.size() || q[rules.expensive] == kUnset)
    return q;
  int level = rules.defaultLevel;
  if (rules.optLevel >= 0 && (size_t)rules.optLevel < p.size() && p[rules.optLevel] != kUnset)
    level = rules.levelOf.at(p[rules.optLevel]);
  int same = level >= 2 ? rules.expensiveTrue : rules.expensiveFalse;
  if (same >= 0 && q[rules.expensive] == same)
    q[rules.expensive] = kUnset;
  return q;
}

} // namespace ciq
