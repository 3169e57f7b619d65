#include "engine/measure/ArtifactInstall.h"
#include "common/EnvNames.h"
#include "common/FileIO.h"
#include "common/JsonRead.h"

#include <nlohmann/json.hpp>
#include <llvm/Support/FileSystem.h>
#include <unistd.h>

namespace ciq {

namespace fs = llvm::sys::fs;

namespace {

const std::string kMarker = std::string(env::BuildArtifacts) + "=";

} // namespace

std::optional<std::vector<ArtifactCopy>> readArtifactManifest(const std::string &path, std::string &error) {
  nlohmann::json manifest;
  if (!parseJsonFile(path, manifest, error))
    return std::nullopt;
  if (!manifest.is_array()) {
    error = path + ": not a manifest of build artifacts (a JSON array)";
    return std::nullopt;
  }
  std::vector<ArtifactCopy> out;
  for (size_t i = 0; i < manifest.size(); ++i) {
    ArtifactCopy a;
    JsonFields f(manifest[i], path + ": [" + std::to_string(i) + "]");
    f.need("copy", a.copy).need("place", a.place);
    if (!f.ok()) {
      error = f.error();
      return std::nullopt;
    }
    out.push_back(std::move(a));
  }
  return out;
}

bool writeArtifactManifest(const std::string &path, const std::vector<ArtifactCopy> &files, std::string &error) {
  nlohmann::json manifest = nlohmann::json::array();
  for (const auto &a : files)
    manifest.push_back({{"copy", a.copy}, {"place", a.place}});
  return writeFileAtomically(path, manifest.dump(1) + "\n", error);
}

std::string artifactManifestOf(const std::vector<std::string> &cmd) {
  for (const auto &arg : cmd)
    if (arg.rfind(kMarker, 0) == 0)
      return arg.substr(kMarker.size());
  return "";
}

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
  auto manifest = readArtifactManifest(cmd[1].substr(kMarker.size()), error);
  if (!manifest)
    return false;
  for (const auto &[copy, place] : *manifest) {
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
