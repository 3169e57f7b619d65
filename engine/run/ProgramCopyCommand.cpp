#include "engine/run/ProgramCopyCommand.h"
#include "common/FileIO.h"
#include "common/JsonRead.h"
#include "engine/measure/ArtifactInstall.h"

#include <nlohmann/json.hpp>

namespace ciq {

std::string programCopyJson(const std::vector<std::string> &cmd, const std::string &copyDir,
                            const std::string &buildDir) {
  return nlohmann::json{{"command", cmd}, {"copy_dir", copyDir}, {"build_dir", buildDir}}.dump();
}

std::string movedPath(const std::string &s, const std::string &from, const std::string &to) {
  if (from.empty() || from == to)
    return s;
  auto under = [&](size_t at) {
    return s.compare(at, from.size(), from) == 0 && (s.size() == at + from.size() || s[at + from.size()] == '/');
  };
  size_t at = 0;
  if (!under(at)) {
    at = s.find('=');
    if (at == std::string::npos || !under(++at))
      return s;
  }
  return s.substr(0, at) + to + s.substr(at + from.size());
}

std::optional<std::vector<std::string>> readProgramCopy(const std::string &copyDir, const std::string &buildDir,
                                                        std::string &error) {
  std::string file = copyDir + "/command.json";
  nlohmann::json text;
  if (!parseJsonFile(file, text, error))
    return std::nullopt;
  std::vector<std::string> cmd;
  std::string oldCopy, oldBuild;
  if (text.is_array()) { // an earlier release's: absolute paths, as written
    if (!readJson(text, cmd, error))
      return std::nullopt;
    return cmd;
  }
  JsonFields f(text, file);
  f.need("command", cmd).need("copy_dir", oldCopy).need("build_dir", oldBuild);
  if (!f.ok()) {
    error = f.error();
    return std::nullopt;
  }
  if (oldCopy == copyDir && oldBuild == buildDir)
    return cmd;
  // The copy folder first: it may lie inside the build tree.
  auto move = [&](const std::string &s) {
    std::string m = movedPath(s, oldCopy, copyDir);
    return m != s ? m : movedPath(s, oldBuild, buildDir);
  };
  for (auto &arg : cmd)
    arg = move(arg);
  if (std::string manifest = artifactManifestOf(cmd); !manifest.empty()) {
    auto files = readArtifactManifest(manifest, error);
    if (!files)
      return std::nullopt;
    for (auto &a : *files)
      a.copy = move(a.copy), a.place = move(a.place);
    if (!writeArtifactManifest(manifest, *files, error))
      return std::nullopt;
  }
  if (!writeFileAtomically(file, programCopyJson(cmd, copyDir, buildDir), error))
    return std::nullopt;
  return cmd;
}

} // namespace ciq
