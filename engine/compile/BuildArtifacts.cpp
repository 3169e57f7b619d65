#include "engine/compile/BuildArtifacts.h"
#include "common/EnvNames.h"
#include "common/FileIO.h"
#include "common/Paths.h"
#include "engine/compile/ProgramLibraries.h"

#include <algorithm>
#include <glob.h>
#include <nlohmann/json.hpp>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

namespace fs = llvm::sys::fs;

namespace {

std::vector<std::string> matches(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      if (!fs::is_directory(g.gl_pathv[i]))
        out.push_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

} // namespace

std::optional<std::string> snapshotArtifacts(const TuneConfig &cfg, const std::string &dir, std::string &error,
                                             const std::vector<std::string> &programs) {
  const auto &b = cfg.benchmark;
  std::vector<std::pair<std::string, std::string>> files;   // (file, what names it, for errors)
  for (const auto &pattern : b.artifacts) {
    auto found = matches(absolutePath(pattern, cfg.buildDir));
    if (found.empty()) {
      error = b.artifactsLoc.str() + ": '" + pattern + "' matches no file in " + cfg.buildDir +
              " after the build; name the files the build makes (relative to the build directory, globs allowed, "
              "e.g. 'my_ext*.so')";
      return std::nullopt;
    }
    for (const auto &f : found)
      files.push_back({f, b.artifactsLoc.str()});
  }
  // The project's shared libraries the programs load from the build tree,
  // unless benchmark.artifacts names them already.
  for (const auto &p : programs)
    for (const auto &lib : buildTreeLibraries(p, p, cfg.buildDir))
      if (std::none_of(files.begin(), files.end(), [&](const auto &f) { return physicalPath(f.first) == lib; }))
        files.push_back({lib, "the shared library " + lib + " that " + p + " loads"});
  if (files.empty())
    return std::string();
  std::vector<ArtifactCopy> manifest;
  size_t n = 0;
  for (const auto &[f, what] : files) {
    // One folder per file: two artifacts may share a name (lib/a.so, b/a.so).
    std::string to = dir + "/artifacts/" + std::to_string(n++) + "/" + llvm::sys::path::filename(f).str();
    fs::create_directories(llvm::sys::path::parent_path(to));
    if (!copyFileKeepingMode(f, to, error)) {
      error = what + ": " + error;
      return std::nullopt;
    }
    manifest.push_back({to, f});
  }
  std::string path = dir + "/artifacts.json";
  if (!writeArtifactManifest(path, manifest, error))
    return std::nullopt;
  return path;
}

} // namespace ciq
