// ARCHITECTURE.md, "Which folder may include which": every include of a ciq
// header points up the list of folders (or stays in its own folder).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Lowest first: a folder may include its own and those before it.
const std::vector<std::string> kLayers = {
    "common",         "wrapper",          "engine/record",          "engine/measure", "engine/analysis",
    "engine/assets",  "engine/config",    "engine/search",          "engine/compile",   "engine/winner",
    "engine/executors", "engine/executors/slurm", "engine/run", "engine/commands"};

int layer(const std::string &folder) {
  auto it = std::find(kLayers.begin(), kLayers.end(), folder);
  return it == kLayers.end() ? -1 : (int)(it - kLayers.begin());
}

TEST(Layering, EveryIncludePointsUpTheList) {
  fs::path root = CIQ_TEST_SOURCE_DIR;
  std::regex include(R"re(#include "((common|wrapper|engine)/[^"]+)")re");
  std::vector<std::string> wrong;
  int files = 0;
  for (const auto &top : {"common", "wrapper", "engine"})
    for (const auto &entry : fs::recursive_directory_iterator(root / top)) {
      std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cpp")
        continue;
      std::string from = fs::relative(entry.path().parent_path(), root).string();
      int fromLayer = layer(from);
      ASSERT_GE(fromLayer, 0) << from << " (of " << entry.path() << ") is not in ARCHITECTURE.md's list";
      ++files;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      std::string s = text.str();
      for (std::sregex_iterator m(s.begin(), s.end(), include), end; m != end; ++m) {
        std::string to = fs::path((*m)[1].str()).parent_path().string();
        if (to == "engine") // the generated engine/Version.h
          continue;
        if (layer(to) > fromLayer)
          wrong.push_back(fs::relative(entry.path(), root).string() + " includes " + (*m)[1].str());
      }
    }
  EXPECT_GT(files, 200);
  EXPECT_TRUE(wrong.empty()) << "includes pointing down ARCHITECTURE.md's list:\n"
                             << [&] {
                                  std::string all;
                                  for (const auto &w : wrong)
                                    all += "  " + w + "\n";
                                  return all;
                                }();
}

// ARCHITECTURE.md: engine/ includes nothing of wrapper/ (the nvcc
// command-line model, the temp-folder cleanup and the lock's rule for a
// compile line are in common/), so ciq_engine links nothing of ciq_wrapper.
TEST(Layering, EngineIncludesNothingOfWrapper) {
  fs::path root = CIQ_TEST_SOURCE_DIR;
  std::regex include(R"re(#include "wrapper/[^"]+")re");
  std::vector<std::string> wrong;
  for (const auto &entry : fs::recursive_directory_iterator(root / "engine")) {
    std::string rel = fs::relative(entry.path(), root).string();
    if (!entry.is_regular_file())
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    if (std::regex_search(s, include))
      wrong.push_back(rel);
  }
  EXPECT_TRUE(wrong.empty()) << "engine/ files that include wrapper/: " << [&] {
    std::string all;
    for (const auto &w : wrong)
      all += " " + w;
    return all;
  }();
}

// A case-insensitive file system (macOS, Windows) cannot hold two paths that
// differ only in case: a clone there would lose one of them.
TEST(Layering, NoTwoPathsDifferOnlyInCase) {
  fs::path root = CIQ_TEST_SOURCE_DIR;
  std::map<std::string, std::string> byLower;
  std::vector<std::string> clashes;
  int paths = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    // Not the repository's own: hidden folders (.git) and build trees.
    if (it->is_directory() && (name[0] == '.' || fs::exists(it->path() / "CMakeCache.txt"))) {
      it.disable_recursion_pending();
      continue;
    }
    std::string rel = fs::relative(it->path(), root).string(), lower = rel;
    for (char &c : lower)
      c = (char)std::tolower((unsigned char)c);
    ++paths;
    if (auto [at, added] = byLower.emplace(lower, rel); !added)
      clashes.push_back(at->second + " and " + rel);
  }
  EXPECT_GT(paths, 200);
  EXPECT_TRUE(clashes.empty()) << "paths that differ only in case:\n" << [&] {
    std::string all;
    for (const auto &c : clashes)
      all += "  " + c + "\n";
    return all;
  }();
}

} // namespace
