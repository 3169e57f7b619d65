#include "engine/compile/InputIdentity.h"
#include "engine/config/CMakeCache.h"
#include "common/CompilerVersion.h"
#include "common/JsonRead.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <llvm/Support/FileSystem.h>
#include <map>
#include <set>
#include <sstream>

namespace ciq {
namespace {

using Hashes = std::map<std::string, std::string>;

// The files each object was compiled from, as ninja recorded them from the
// compiler's depfile (`ninja -t deps`); Makefile generators keep theirs in
// compiler_depend.make, read the same way (every path before a ':' or after).
std::set<std::string> dependencies(const TuneConfig &cfg, const std::vector<CudaObject> &objects) {
  std::set<std::string> files;
  for (const auto &o : objects)
    files.insert(o.source);
  if (!llvm::sys::fs::exists(cfg.buildDir + "/build.ninja") &&
      !llvm::sys::fs::exists(cfg.buildDir + "/build-" + cfg.config + ".ninja"))
    return files;
  std::vector<std::string> cmd = {"ninja", "-C", cfg.buildDir, "-t", "deps"};
  // build.ninja names outputs relative to the build tree.
  for (const auto &o : objects)
    cmd.push_back(o.object.rfind(cfg.buildDir + "/", 0) == 0 ? o.object.substr(cfg.buildDir.size() + 1) : o.object);
  auto r = runSubprocess(cmd);
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    // "obj: #deps 12, deps mtime ... (VALID)" then "    /path/to/dep" lines.
    if (line.size() > 4 && line.compare(0, 4, "    ") == 0) {
      std::string p = line.substr(4);
      if (!p.empty() && p[0] != '/')
        p = cfg.buildDir + "/" + p;
      files.insert(p);
    }
  }
  return files;
}

std::string hashOrMissing(const std::string &path) {
  auto h = sha256File(path);
  return h ? *h : "missing";
}

std::string nvccOf(const TuneConfig &cfg) {
  auto cache = readCMakeCache(cfg.buildDir);
  return cacheValue(cache, "CMAKE_CUDA_COMPILER", "nvcc");
}

} // namespace

nlohmann::json captureInputs(const TuneConfig &cfg, const std::vector<CudaObject> &objects) {
  Hashes files, spaces;
  for (const auto &f : dependencies(cfg, objects))
    files[f] = hashOrMissing(f);
  for (const auto &s : cfg.space.sources)
    if (s.provider == "file")
      spaces[s.name] = hashOrMissing(s.name);
  std::string err, nvcc = nvccOf(cfg);
  auto version = compilerVersion(nvcc, err);
  return {{"op", "inputs"},
          {"files", files},
          {"compiler", {{"path", nvcc}, {"version", version ? *version : "unknown"}}},
          {"config", {{cfg.path, hashOrMissing(cfg.path)}}},
          {"space_files", spaces}};
}

std::string changedInput(const nlohmann::json &recorded, const TuneConfig &cfg) {
  Hashes files, config, spaces;
  const nlohmann::json *compiler;
  std::string nvcc, version;
  JsonFields f(recorded, "the journal's inputs line");
  f.opt("files", files).opt("config", config).opt("space_files", spaces).object("compiler", compiler);
  JsonFields c(*compiler, "the journal's inputs line: compiler");
  c.opt("path", nvcc).opt("version", version);
  if (!f.ok() || !c.ok())
    return f.ok() ? c.error() : f.error();
  for (const auto *group : {&config, &spaces, &files})
    for (const auto &[path, sha] : *group) {
      std::string now = hashOrMissing(path);
      if (now != sha)
        return path + (now == "missing" ? " is gone" : sha == "missing" ? " appeared" : " changed") +
               " since this search started";
    }
  std::string err, nowNvcc = nvccOf(cfg);
  auto nowVersion = compilerVersion(nowNvcc, err);
  std::string nv = nowVersion ? *nowVersion : "unknown";
  if (nowNvcc != nvcc || nv != version)
    return "the CUDA compiler changed since this search started (" + nvcc + " " + version + " -> " + nowNvcc + " " +
           nv + ")";
  return "";
}

std::string onlySourcesChanged(const nlohmann::json &recorded, const TuneConfig &cfg) {
  Hashes files, config, spaces;
  const nlohmann::json *compiler;
  std::string nvcc, version;
  JsonFields f(recorded, "the journal's inputs line");
  f.opt("files", files).opt("config", config).opt("space_files", spaces).object("compiler", compiler);
  if (!f.ok())
    return "";
  JsonFields c(*compiler, "the journal's inputs line: compiler");
  c.opt("path", nvcc).opt("version", version);
  if (!c.ok())
    return "";
  for (const auto *group : {&config, &spaces})
    for (const auto &[path, sha] : *group)
      if (hashOrMissing(path) != sha)
        return "";
  std::string err, nowNvcc = nvccOf(cfg);
  auto nowVersion = compilerVersion(nowNvcc, err);
  if (nowNvcc != nvcc || !nowVersion || *nowVersion != version)
    return "";
  for (const auto &[path, sha] : files)
    if (hashOrMissing(path) != sha)
      return path;
  return "";
}

} // namespace ciq
