#include "engine/compile/BuildNumerics.h"
#include "engine/config/Metrics.h"

#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <optional>

namespace ciq {
namespace {

// nvcc's spellings: -ftz=true, --ftz=true, -ftz true, --ftz true.
const char *const kValued[] = {"ftz", "prec-div", "prec-sqrt", "fmad"};

// What -use_fast_math implies (nvcc --help): later explicit options win.
const std::pair<const char *, const char *> kFastMathImplies[] = {
    {"ftz", "true"}, {"prec-div", "false"}, {"prec-sqrt", "false"}, {"fmad", "true"}};

struct LineNumerics {
  std::map<std::string, std::string> set;
  std::vector<std::string> written;
};

std::optional<std::string> optionName(llvm::StringRef arg) {
  if (!arg.consume_front("-"))
    return std::nullopt;
  arg.consume_front("-");
  if (arg == "use_fast_math")
    return std::string("use-fast-math");
  for (const char *n : kValued)
    if (arg == n || arg.startswith(std::string(n) + "="))
      return std::string(n);
  return std::nullopt;
}

LineNumerics readLine(const std::vector<std::string> &argv) {
  LineNumerics out;
  for (size_t i = 1; i < argv.size(); ++i) {
    auto name = optionName(argv[i]);
    if (!name)
      continue;
    if (*name == "use-fast-math") {
      out.set["use-fast-math"] = "on";
      for (auto [n, v] : kFastMathImplies)
        out.set[n] = v;
      out.written.push_back(argv[i]);
      continue;
    }
    llvm::StringRef arg(argv[i]);
    std::string value;
    if (auto eq = arg.find('='); eq != llvm::StringRef::npos)
      value = arg.substr(eq + 1).str();
    else if (i + 1 < argv.size())
      value = argv[++i];
    out.set[*name] = value;
    out.written.push_back(arg.contains('=') ? arg.str() : arg.str() + " " + value);
  }
  return out;
}

std::string joined(const std::vector<std::string> &v, const char *sep = ", ") {
  std::string s;
  for (const auto &x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

bool isNumerics(const Control &c) { return c.changesResults && c.render == RenderKind::Nvcc; }

} // namespace

BuildNumerics readBuildNumerics(const std::vector<CompileLine> &lines) {
  BuildNumerics out;
  if (lines.empty())
    return out;
  std::vector<LineNumerics> read;
  for (const auto &l : lines)
    read.push_back(readLine(l.argv));
  std::set<std::string> names;
  for (const auto &r : read) {
    for (const auto &[n, v] : r.set)
      names.insert(n);
    for (const auto &w : r.written)
      if (std::find(out.written.begin(), out.written.end(), w) == out.written.end())
        out.written.push_back(w);
  }
  for (const auto &n : names) {
    auto first = read.front().set.find(n);
    bool same = first != read.front().set.end() && std::all_of(read.begin(), read.end(), [&](const LineNumerics &r) {
                  auto it = r.set.find(n);
                  return it != r.set.end() && it->second == first->second;
                });
    if (same)
      out.fixed[n] = first->second;
    else
      out.mixed.insert(n);
  }
  return out;
}

bool numericsMatter(const TuneConfig &cfg) {
  if (cfg.build.kind != "cmake")
    return false;
  if (std::any_of(cfg.space.controls.begin(), cfg.space.controls.end(), isNumerics))
    return true;
  return cfg.numericsLeftOut;
}

std::string applyBuildNumerics(TuneConfig &cfg, const BuildNumerics &build) {
  if (!build.any())
    return "";
  cfg.buildHasFastMath = build.fixed.count("use-fast-math") > 0;
  std::vector<std::string> dropped, rebased, mixed;
  auto &controls = cfg.space.controls;
  for (auto it = controls.begin(); it != controls.end();) {
    auto fixed = isNumerics(*it) ? build.fixed.find(it->name) : build.fixed.end();
    if (isNumerics(*it) && build.mixed.count(it->name))
      mixed.push_back(it->name);
    if (fixed == build.fixed.end()) {
      ++it;
    } else if (cfg.spaceIsDefault && it->canUnset) {
      dropped.push_back(it->name);
      it = controls.erase(it);
    } else {
      it->compilerDefault = fixed->second;
      rebased.push_back(it->name + "=" + fixed->second);
      ++it;
    }
  }
  std::string note = "space: the build compiles with " + joined(build.written, " ");
  if (!dropped.empty())
    note += "; nvcc's numerics controls " + joined(dropped) +
            " are left out (the baseline already has the build's values; a candidate could only undo them)";
  if (!rebased.empty())
    note += "; unset, " + joined(rebased) + " (the build's values, not nvcc's defaults)";
  if (dropped.empty() && rebased.empty() && cfg.numericsLeftOut && cfg.buildHasFastMath)
    note += "; nvcc's numerics controls have nothing to add to it";
  if (!build.mixed.empty()) {
    std::vector<std::string> m(build.mixed.begin(), build.mixed.end());
    note += "; only some CUDA compiles set " + joined(m) +
            (mixed.empty() ? "" : " (kept in the space: candidates set them on every compile)");
  }
  if (dropped.empty() && rebased.empty() && mixed.empty() && !cfg.numericsLeftOut)
    return "";
  return note;
}

} // namespace ciq
