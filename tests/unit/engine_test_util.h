// Helpers for the engine's unit tests: a throw-away project folder holding a
// ciq.yaml beside a (minimal) configured build tree, loaded through the real
// loader, with built-in spaces read from this build's share/ciq.
#pragma once
#include "engine/config/Config.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <optional>
#include <string>

namespace ciq::test {

class TempProject {
public:
  TempProject() {
    // Built-in spaces come from this build tree, not from beside the test binary.
    setenv("CIQ_SHARE_DIR", CIQ_TEST_SHARE_DIR, 1);
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniqueDirectory("ciq-unit", p);
    dir_ = p.str().str();
    // loadConfig wants a configured build tree: a CMakeCache.txt naming the source dir.
    write("CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir_ + "\n");
  }
  ~TempProject() { llvm::sys::fs::remove_directories(dir_); }

  const std::string &dir() const { return dir_; }
  std::string write(const std::string &name, const std::string &text) const {
    std::string path = dir_ + "/" + name;
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // Writes ciq.yaml and loads it; on failure `error` holds the one line.
  std::optional<TuneConfig> load(const std::string &yaml, std::string &error) const {
    return loadConfig(write("ciq.yaml", yaml), error);
  }
  // Loads a ciq.yaml that must be valid.
  TuneConfig loadOk(const std::string &yaml) const {
    std::string err;
    auto c = load(yaml, err);
    EXPECT_TRUE(c.has_value()) << err;
    return c ? *c : TuneConfig{};
  }
  // Loads a ciq.yaml that must be rejected; returns the error line.
  std::string loadError(const std::string &yaml) const {
    std::string err;
    auto c = load(yaml, err);
    EXPECT_FALSE(c.has_value()) << "accepted:\n" << yaml;
    return err;
  }

private:
  std::string dir_;
};

// A -D control with these values (the tests' search spaces).
inline Control define(const std::string &name, std::vector<std::string> values, bool canUnset = true) {
  Control c;
  c.name = name;
  c.render = RenderKind::Define;
  c.option = name;
  c.values = std::move(values);
  c.canUnset = canUnset;
  return c;
}

} // namespace ciq::test
