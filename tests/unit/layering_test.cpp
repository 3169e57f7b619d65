// ARCHITECTURE.md, "Which folder may include which": every include of a ciq
// header points up the list of folders (or stays in its own folder).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

} // namespace
