#include "common/BuildMode.h"

#include <llvm/ADT/StringRef.h>

namespace ciq {

nlohmann::json buildModeToJson(const BuildMode &m) {
  return {{"build_type", m.buildType}, {"device_debug", m.deviceDebug}, {"lineinfo", m.lineinfo}};
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
  return m;
}

std::string describeBuildMode(const BuildMode &m) {
  std::string s = m.buildType.empty() ? "a build" : "a " + m.buildType + " build";
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
