// engine/MakeRules: the files a CMake Makefile tree remakes from the tuned
// objects, read from rules written as CMake 3.25 writes them (a target in a
// folder with a space, separable compilation's device link, a static library).
#include "engine/compile/MakeRules.h"
#include "tests/unit/engine_test_util.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace ciq;
using ciq::test::TempProject;

TEST(MakeRules, OutputsThatConsumeTheTunedObjectsAreFound) {
  TempProject tree;
  std::string b = tree.dir() + "/b d";
  tree.write("b d/CMakeFiles/Makefile2",
        "CMakeFiles/app.dir/build: CMakeFiles/app.dir/depend\n"
        "\t$(MAKE) $(MAKESILENT) -f CMakeFiles/app.dir/build.make CMakeFiles/app.dir/build\n"
        "\t$(MAKE) $(MAKESILENT) -f \"s p/CMakeFiles/k2.dir/build.make\" \"s p/CMakeFiles/k2.dir/build\"\n"
        "\t$(MAKE) $(MAKESILENT) -f CMakeFiles/xapp.dir/build.make CMakeFiles/xapp.dir/build\n");
  tree.write("b d/CMakeFiles/app.dir/build.make",
        "# CMAKE generated file: DO NOT EDIT!\n"
        "CMakeFiles/app.dir/main.cu.o: CMakeFiles/app.dir/flags.make\n"
        "CMakeFiles/app.dir/main.cu.o: /src\\ dir/main.cu\n"
        "\t/usr/local/cuda/bin/nvcc -c \"/src dir/main.cu\" -o CMakeFiles/app.dir/main.cu.o\n"
        "app_OBJECTS = \\\n\"CMakeFiles/app.dir/main.cu.o\"\n"
        "CMakeFiles/app.dir/cmake_device_link.o: CMakeFiles/app.dir/main.cu.o\n"
        "CMakeFiles/app.dir/cmake_device_link.o: s\\ p/libk$$2.a\n"
        "app: CMakeFiles/app.dir/main.cu.o\n"
        "app: CMakeFiles/app.dir/cmake_device_link.o\n"
        "CMakeFiles/app.dir/build: app\n");
  tree.write("b d/s p/CMakeFiles/k2.dir/build.make",
        "s\\ p/CMakeFiles/k2.dir/k_1.cu.o: /src\\ dir/s\\ p/k\\ 1.cu\n"
        "s\\ p/libk$$2.a: s\\ p/CMakeFiles/k2.dir/k_1.cu.o\n"
        "s\\ p/libk$$2.a: s\\ p/CMakeFiles/k2.dir/build.make\n");
  // Another target whose name ends like one of the tuned ones.
  tree.write("b d/CMakeFiles/xapp.dir/build.make", "xapp: CMakeFiles/app.dir/main.cu.o\n");

  auto files = makeTargetRuleFiles(b, {"app", "k2"});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], b + "/CMakeFiles/app.dir/build.make");
  EXPECT_EQ(files[1], b + "/s p/CMakeFiles/k2.dir/build.make");

  auto out = makeDependants(b, files, {b + "/CMakeFiles/app.dir/main.cu.o", b + "/s p/CMakeFiles/k2.dir/k_1.cu.o"});
  std::vector<std::string> want = {b + "/CMakeFiles/app.dir/cmake_device_link.o", b + "/app", b + "/s p/libk$2.a"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(out, want);
  // Only the objects tuned: the library's rule does not count.
  EXPECT_EQ(makeDependants(b, files, {b + "/CMakeFiles/app.dir/main.cu.o"}),
            (std::vector<std::string>{b + "/CMakeFiles/app.dir/cmake_device_link.o", b + "/app"}));
  // An object no rule read consumes is named: its link might be skipped.
  std::vector<std::string> unconsumed;
  makeDependants(b, files, {b + "/CMakeFiles/app.dir/main.cu.o", b + "/CMakeFiles/other.dir/o.cu.o"}, &unconsumed);
  EXPECT_EQ(unconsumed, std::vector<std::string>{b + "/CMakeFiles/other.dir/o.cu.o"});
}

TEST(MakeRules, ANinjaTreeHasNoRuleFiles) {
  TempProject tree;
  std::string b = tree.dir();
  tree.write("build.ninja", "rule x\n");
  EXPECT_TRUE(makeTargetRuleFiles(b, {"app"}).empty());
  EXPECT_TRUE(makeDependants(b, {}, {b + "/a.o"}).empty());
}

// CMake writes '=' as "$(EQUALS)" and a backslash as "\\" in rule paths: a
// target in a folder "s p=1" (make-link-equals.test) still has its outputs.
TEST(MakeRules, EqualsAndBackslashInRulePathsAreRead) {
  TempProject tree;
  std::string b = tree.dir() + "/b";
  tree.write("b/CMakeFiles/Makefile2",
        "\t$(MAKE) $(MAKESILENT) -f \"s p=1/CMakeFiles/k.dir/build.make\" \"s p=1/CMakeFiles/k.dir/build\"\n");
  tree.write("b/s p=1/CMakeFiles/k.dir/build.make",
        "s\\ p$(EQUALS)1/CMakeFiles/k.dir/a$$$(EQUALS)\\\\b.cu.o: /src/a$$=b.cu\n"
        "s\\ p$(EQUALS)1/libk.a: s\\ p$(EQUALS)1/CMakeFiles/k.dir/a$$$(EQUALS)\\\\b.cu.o\n");
  auto files = makeTargetRuleFiles(b, {"k"});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(makeDependants(b, files, {b + "/s p=1/CMakeFiles/k.dir/a$=\\b.cu.o"}),
            (std::vector<std::string>{b + "/s p=1/libk.a"}));
}
