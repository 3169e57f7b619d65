// Issue 56 item 2: the verdict is taken on what the lock builds. The copy of
// the program the finalists measured and the rehearsed program are the same
// bytes, every file, or the difference is named.
#include "engine/compile/ProgramIdentity.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fstream>

using namespace ciq;

namespace {

std::string tempDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-program-identity", dir));
  return dir.str().str();
}

void write(const std::string &path, const std::string &bytes) {
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  std::ofstream(path, std::ios::binary) << bytes;
}

} // namespace

TEST(ProgramIdentity, EveryFileButCiqsOwnJsonIsCompared) {
  std::string root = tempDir(), a = root + "/programs/c0003", b = root + "/rehearsal/c0003/program";
  write(a + "/app", "ELF host and device code");
  write(a + "/lib/libkern.so", "shared library");
  write(a + "/command.json", "[\"" + a + "/app\"]");
  write(b + "/app", "ELF host and device code");
  write(b + "/lib/libkern.so", "shared library");
  write(b + "/command.json", "[\"" + b + "/app\"]");   // other paths: ciq's own, not compared
  EXPECT_TRUE(compareProgramCopies(a, b).identical);
  write(b + "/lib/libkern.so", "another shared library");
  ProgramComparison c = compareProgramCopies(a, b);
  EXPECT_FALSE(c.identical);
  EXPECT_EQ(c.difference, "lib/libkern.so: other bytes");
  write(b + "/lib/libkern.so", "shared library");
  write(b + "/extra.bin", "x");
  EXPECT_EQ(compareProgramCopies(a, b).difference, "extra.bin: not in the measured copy");
  EXPECT_EQ(compareProgramCopies(a, root + "/nothing").difference, "app: not in the rehearsed program");
  EXPECT_FALSE(compareProgramCopies("", b).identical);
  llvm::sys::fs::remove_directories(root);
}

TEST(ProgramIdentity, TheCopyFolderComesFromTheCommand) {
  EXPECT_EQ(copyFolderOf({"python3", "bench.py", "/r/programs/c0003/app", "--n=4"}, "/r/programs"),
            "/r/programs/c0003");
  EXPECT_EQ(copyFolderOf({"/r/programs/c0007/sub/app"}, "/r/programs"), "/r/programs/c0007");
  EXPECT_EQ(copyFolderOf({"/elsewhere/app"}, "/r/programs"), "");
  EXPECT_EQ(copyFolderOf({"/r/programs/app"}, "/r/programs"), "");
}
