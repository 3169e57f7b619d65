#include "common/BuildMode.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>

namespace ciq {

nlohmann::json buildModeToJson(const BuildMode &m) {
  nlohmann::json j = {{"build_type", m.buildType}, {"device_debug", m.deviceDebug}, {"lineinfo", m.lineinfo}};
  if (!m.deviceDebugUnits.empty())
    j["device_debug_units"] = m.deviceDebugUnits;
  if (!m.lineinfoUnits.empty())
    j["lineinfo_units"] = m.lineinfoUnits;
  return j;
}

std::optional<BuildMode> lockBuildMode(const Lockfile &l) {
  auto it = l.extra.find("build");
  if (it == l.extra.end() || !it->is_object())
    return std::nullopt;
  BuildMode m;
  auto str = it->find("build_type");
  if (str != it->end() && str->is_string())
    m.buildType = str->get<std::string>();
  auto flag = [&](const char *key) {
    auto f = it->find(key);
    return f != it->end() && f->is_boolean() && f->get<bool>();
  };
  m.deviceDebug = flag("device_debug");
  m.lineinfo = flag("lineinfo");
  auto units = [&](const char *key, std::vector<std::string> &out) {
    auto f = it->find(key);
    if (f != it->end() && f->is_array())
      for (const auto &u : *f)
        if (u.is_string())
          out.push_back(u.get<std::string>());
  };
  units("device_debug_units", m.deviceDebugUnits);
  units("lineinfo_units", m.lineinfoUnits);
  return m;
}

bool modePerSource(const BuildMode &m) { return !m.deviceDebugUnits.empty() || !m.lineinfoUnits.empty(); }

std::string unitPath(const std::string &path, const std::string &base) {
  llvm::SmallString<256> p(path);
  if (!llvm::sys::path::is_absolute(p)) {
    p = base;
    llvm::sys::path::append(p, path);
  }
  llvm::sys::path::remove_dots(p, true);
  return p.str().str();
}

BuildMode buildModeOfSource(const BuildMode &lock, const std::string &source, const std::string &lockDir) {
  BuildMode m = lock;
  std::string here = unitPath(source, lockDir);
  auto in = [&](const std::vector<std::string> &units) {
    for (const auto &u : units)
      if (unitPath(u, lockDir) == here)
        return true;
    return false;
  };
  m.deviceDebug |= in(lock.deviceDebugUnits);
  m.lineinfo |= in(lock.lineinfoUnits);
  m.deviceDebugUnits.clear();
  m.lineinfoUnits.clear();
  return m;
}

std::string describeBuildMode(const BuildMode &m) {
  std::string s = m.buildType.empty() ? "a build" : "a " + m.buildType + " build";
  if (modePerSource(m)) {
    auto list = [](const std::vector<std::string> &units) {
      std::string l;
      for (const auto &u : units)
        l += (l.empty() ? "" : ", ") + u;
      return l;
    };
    s += m.deviceDebug ? " with -G" : m.deviceDebugUnits.empty() ? " without -G" : " with -G on " + list(m.deviceDebugUnits);
    if (m.lineinfo || !m.lineinfoUnits.empty())
      s += m.lineinfo ? " -lineinfo" : ", -lineinfo on " + list(m.lineinfoUnits);
    return s;
  }
  if (!m.deviceDebug && !m.lineinfo)
    return s + " without -G";
  return s + " with" + (m.deviceDebug ? " -G" : "") + (m.lineinfo ? " -lineinfo" : "");
}

std::string buildModeDifference(const BuildMode &lock, const BuildMode &here) {
  bool typeDiffers = !lock.buildType.empty() && !here.buildType.empty() &&
                     !llvm::StringRef(lock.buildType).equals_insensitive(here.buildType);
  if (!typeDiffers && lock.deviceDebug == here.deviceDebug && lock.lineinfo == here.lineinfo)
    return "";
  return "it was tuned in " + describeBuildMode(lock) + "; this is " + describeBuildMode(here);
}

} // namespace ciq
