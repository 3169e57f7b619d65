#include "engine/measure/ArtifactInstall.h"
#include "common/EnvNames.h"
#include "common/FileIO.h"

#include <nlohmann/json.hpp>
#include <llvm/Support/FileSystem.h>
#include <unistd.h>

namespace ciq {

namespace fs = llvm::sys::fs;

namespace {

const std::string kMarker = std::string(env::BuildArtifacts) + "=";

} // namespace

bool copyFileKeepingMode(const std::string &from, const std::string &to, std::string &error) {
  if (auto ec = fs::copy_file(from, to)) {
    error = "cannot copy " + from + " to " + to + ": " + ec.message();
    return false;
  }
  if (auto perms = fs::getPermissions(from))
    fs::setPermissions(to, *perms);
  return true;
}

std::vector<std::string> withArtifacts(const std::string &manifest, const std::vector<std::string> &cmd) {
  if (manifest.empty())
    return cmd;
  std::vector<std::string> out = {"/usr/bin/env", kMarker + manifest};
  out.insert(out.end(), cmd.begin(), cmd.end());
  return out;
}

bool installArtifactsFor(const std::vector<std::string> &cmd, std::string &error) {
  if (cmd.size() < 2 || cmd[0] != "/usr/bin/env" || cmd[1].rfind(kMarker, 0) != 0)
    return true;
  std::string path = cmd[1].substr(kMarker.size());
  auto text = readWholeFile(path, &error);
  if (!text)
    return false;
  auto manifest = nlohmann::json::parse(*text, nullptr, false);
  if (!manifest.is_array()) {
    error = path + ": not a manifest of build artifacts (a JSON array)";
    return false;
  }
  for (const auto &a : manifest) {
    std::string copy = a.value("copy", ""), place = a.value("place", "");
    std::string tmp = place + ".ciq-tmp." + std::to_string(getpid());
    if (!copyFileKeepingMode(copy, tmp, error))
      return false;
    if (auto ec = fs::rename(tmp, place)) {
      fs::remove(tmp);
      error = "cannot put the build's copy " + copy + " in place at " + place + ": " + ec.message();
      return false;
    }
  }
  return true;
}

} // namespace ciq
