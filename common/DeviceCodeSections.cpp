// Comparing the section lines of two device codes (DeviceCode::sections):
// which sections differ, and whether only names nvcc derives from the
// translation unit do.
#include "common/DeviceCode.h"

#include <llvm/ADT/Twine.h>

#include <algorithm>
#include <map>

namespace ciq {

namespace {

bool namesFileLocalEntity(llvm::StringRef name) {
  return name.contains("_INTERNAL_") || name.contains("_GLOBAL__N_") || name.contains("__nv_static_");
}

// "arch name" -> its sorted values ("size digest", or "digest" for a symbol
// table); a name twice (two cubins of one architecture) keeps every value.
std::map<std::string, std::vector<std::string>> byName(const std::vector<std::string> &lines) {
  std::map<std::string, std::vector<std::string>> m;
  for (const auto &l : lines) {
    auto [arch, rest] = llvm::StringRef(l).split(' ');
    auto [name, value] = rest.split(' ');
    m[(arch + " " + name).str()].push_back(value.str());
  }
  for (auto &[k, v] : m)
    std::sort(v.begin(), v.end());
  return m;
}

} // namespace

std::string deviceCodeSectionDifferences(const std::vector<std::string> &locked, const std::vector<std::string> &built,
                                         size_t most) {
  auto a = byName(locked), b = byName(built);
  std::vector<std::string> out;
  size_t more = 0;
  auto add = [&](const std::string &what) {
    if (out.size() < most)
      out.push_back(what);
    else
      ++more;
  };
  auto sizeOf = [](const std::string &value) {
    auto sp = value.find(' ');
    return sp == std::string::npos ? std::string() : value.substr(0, sp);
  };
  for (const auto &[key, va] : a) {
    auto it = b.find(key);
    if (it == b.end())
      add(key + ": not built");
    else if (it->second != va) {
      std::string sa = sizeOf(va.front()), sb = sizeOf(it->second.front());
      add(key + (va.size() == 1 && it->second.size() == 1 && !sa.empty() && sa != sb
                     ? ": " + sa + " bytes in the tuned build, " + sb + " built"
                     : ": other contents"));
    }
  }
  for (const auto &[key, vb] : b)
    if (!a.count(key))
      add(key + ": only in this build");
  std::string s;
  for (const auto &o : out)
    s += (s.empty() ? "" : "; ") + o;
  if (more)
    s += "; " + std::to_string(more) + " more";
  return s;
}

std::optional<std::string> onlyFileLocalNamesDiffer(const std::vector<std::string> &locked,
                                                    const std::vector<std::string> &built) {
  if (locked.empty() || built.empty() || locked == built)
    return std::nullopt;
  auto a = byName(locked), b = byName(built);
  // Sections only one side has: each must name a file-local entity, and their
  // contents ("arch size digest"), names left out, must pair up.
  std::vector<std::string> onlyA, onlyB;
  std::string lockedName, builtName, symtab;
  for (const auto &[key, va] : a) {
    auto it = b.find(key);
    if (it != b.end()) {
      if (it->second == va)
        continue;
      // A symbol table is hashed with its symbols' names; its sizes and
      // values are those of the sections, compared on their own.
      bool table = llvm::StringRef(va.front()).find(' ') == llvm::StringRef::npos;
      if (!table)
        return std::nullopt;
      symtab = key;
      continue;
    }
    if (!namesFileLocalEntity(key))
      return std::nullopt;
    lockedName = lockedName.empty() ? key : lockedName;
    for (const auto &v : va)
      onlyA.push_back(llvm::StringRef(key).split(' ').first.str() + " " + v);
  }
  for (const auto &[key, vb] : b) {
    if (a.count(key))
      continue;
    if (!namesFileLocalEntity(key))
      return std::nullopt;
    builtName = builtName.empty() ? key : builtName;
    for (const auto &v : vb)
      onlyB.push_back(llvm::StringRef(key).split(' ').first.str() + " " + v);
  }
  std::sort(onlyA.begin(), onlyA.end());
  std::sort(onlyB.begin(), onlyB.end());
  if (onlyA != onlyB)
    return std::nullopt;
  if (!lockedName.empty())
    return lockedName + " in the tuned build, " + builtName.substr(builtName.find(' ') + 1) + " here";
  return symtab + ": the names of its symbols";
}

} // namespace ciq
