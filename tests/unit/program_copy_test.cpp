// Issue 56 item 7: a program copy's command.json survives a moved run dir
// and build tree (engine/run/ProgramCopyCommand.h): a resumed tune rewrites
// its paths, and its artifact manifest's, to where they are now.
#include "common/FileIO.h"
#include "engine/measure/ArtifactInstall.h"
#include "engine/run/ProgramCopyCommand.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <fstream>

using namespace ciq;

TEST(ProgramCopy, MovedPathKeepsFolderBoundaries) {
  EXPECT_EQ(movedPath("/old/run/programs/c1/app", "/old/run", "/new/r"), "/new/r/programs/c1/app");
  EXPECT_EQ(movedPath("CIQ_BUILD_ARTIFACTS=/old/run/m.json", "/old/run", "/new/r"), "CIQ_BUILD_ARTIFACTS=/new/r/m.json");
  EXPECT_EQ(movedPath("/old/run", "/old/run", "/new/r"), "/new/r");
  EXPECT_EQ(movedPath("/old/runner/app", "/old/run", "/new/r"), "/old/runner/app");   // another folder
  EXPECT_EQ(movedPath("--x=/elsewhere/old/run/a", "/old/run", "/new/r"), "--x=/elsewhere/old/run/a");
  EXPECT_EQ(movedPath("python3", "/old/run", "/new/r"), "python3");
}

TEST(ProgramCopy, ResumeAfterTheTreeMovedRunsTheCopiesWhereTheyAreNow) {
  llvm::SmallString<128> tmp;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-copy", tmp));
  std::string root = tmp.str().str(), before = root + "/before", after = root + "/after";
  std::string copy = before + "/run/programs/c0003", build = before + "/build";
  ASSERT_FALSE(llvm::sys::fs::create_directories(copy));
  ASSERT_FALSE(llvm::sys::fs::create_directories(build));
  std::ofstream(copy + "/app") << "program";
  std::ofstream(copy + "/libk.so") << "library";
  std::string err;
  ASSERT_TRUE(writeArtifactManifest(copy + "/artifacts.json", {{copy + "/libk.so", build + "/libk.so"}}, err)) << err;
  auto cmd = withArtifacts(copy + "/artifacts.json", {copy + "/app", "--size", "64"});
  ASSERT_TRUE(writeFileAtomically(copy + "/command.json", programCopyJson(cmd, copy, build), err)) << err;
  // Where it was written, it reads as written.
  auto same = readProgramCopy(copy, build, err);
  ASSERT_TRUE(same) << err;
  EXPECT_EQ(*same, cmd);

  ASSERT_FALSE(llvm::sys::fs::rename(before, after));
  std::string copy2 = after + "/run/programs/c0003", build2 = after + "/build";
  auto moved = readProgramCopy(copy2, build2, err);
  ASSERT_TRUE(moved) << err;
  EXPECT_EQ(*moved, withArtifacts(copy2 + "/artifacts.json", {copy2 + "/app", "--size", "64"}));
  auto files = readArtifactManifest(artifactManifestOf(*moved), err);
  ASSERT_TRUE(files) << err;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].copy, copy2 + "/libk.so");
  EXPECT_EQ((*files)[0].place, build2 + "/libk.so");
  EXPECT_TRUE(llvm::sys::fs::exists((*files)[0].copy));
  // Rewritten on disk: the next read needs no move.
  auto again = readProgramCopy(copy2, build2, err);
  ASSERT_TRUE(again) << err;
  EXPECT_EQ(*again, *moved);

  // An earlier release's bare array is read as it is; a damaged one is an error.
  std::ofstream(copy2 + "/command.json") << "[\"/abs/app\"]";
  auto bare = readProgramCopy(copy2, build2, err);
  ASSERT_TRUE(bare) << err;
  EXPECT_EQ(*bare, std::vector<std::string>{"/abs/app"});
  std::ofstream(copy2 + "/command.json") << "{\"command\": 3}";
  EXPECT_FALSE(readProgramCopy(copy2, build2, err));
  EXPECT_NE(err.find("command"), std::string::npos) << err;
  llvm::sys::fs::remove_directories(root);
}
