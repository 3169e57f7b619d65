// The user's -keep / -save-temps in a compile ciq splits (wrapper/UserKeep.h):
// where nvcc would keep the files, which options leave the command ciq runs,
// and what lands in the user's folder.
#include "wrapper/UserKeep.h"

#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq::wrapper;

namespace {

UserKeep keepOf(const std::vector<std::string> &argv, const std::string &append = "") {
  NvccCommand cmd = parseNvcc(argv, "", append, "/w");
  return userKeepOf(cmd, "/w");
}

std::string readAll(const std::string &p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(UserKeep, FolderIsKeepDirElseWorkingDirectory) {
  EXPECT_EQ(keepOf({"-c", "k.cu", "-o", "k.o"}).dir, "");
  EXPECT_EQ(keepOf({"-c", "k.cu", "-keep"}).dir, "/w");
  EXPECT_EQ(keepOf({"-c", "k.cu", "--save-temps"}).dir, "/w");
  EXPECT_EQ(keepOf({"-c", "k.cu", "-keep", "-keep-dir", "kd"}).dir, "/w/kd");
  EXPECT_EQ(keepOf({"-c", "k.cu", "--keep-dir=/abs", "-save-temps"}).dir, "/abs");
  // -keep-dir alone keeps nothing (nvcc 13.0 writes no file there).
  EXPECT_EQ(keepOf({"-c", "k.cu", "-keep-dir", "kd"}).dir, "");
  EXPECT_EQ(keepOf({"-c", "k.cu", "-keep"}).problem, "");
}

TEST(UserKeep, KeepDirOutsideArgvIsAProblem) {
  UserKeep k = keepOf({"-c", "k.cu", "-keep"}, "--keep-dir=/elsewhere");
  EXPECT_NE(k.problem.find("nvcc option --keep-dir=/elsewhere in NVCC_APPEND_FLAGS"), std::string::npos)
      << k.problem;
}

TEST(UserKeep, StripsEverySpellingAndNoValueOfAnotherOption) {
  std::vector<std::string> in = {"-c", "k.cu",        "-keep",      "--keep",   "-save-temps", "--save-temps",
                                 "-keep-dir", "kd",   "--keep-dir=x", "-Xcompiler", "-keep", "-o", "k.o"};
  std::vector<std::string> want = {"-c", "k.cu", "-Xcompiler", "-keep", "-o", "k.o"};
  EXPECT_EQ(withoutKeepOptions(in), want);
  std::vector<std::string> none = {"-c", "keep.cu", "-o", "keep.o", "-DKEEP"};
  EXPECT_EQ(withoutKeepOptions(none), none);
}

TEST(UserKeep, CopiesKeptFilesWithBuiltOnesInstead) {
  llvm::SmallString<128> root;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-userkeep", root));
  std::string keep = std::string(root) + "/keep", user = std::string(root) + "/user", work = std::string(root) + "/w";
  llvm::sys::fs::create_directories(keep);
  llvm::sys::fs::create_directories(work);
  std::ofstream(keep + "/k.ptx") << "original";
  std::ofstream(keep + "/k.cudafe1.cpp") << "front";
  std::ofstream(keep + "/ciq.deps") << "k.o: k.cu";
  std::ofstream(work + "/0.k.ptx") << "edited";
  EXPECT_NE(copyKeptFiles(keep, user, {}, {}).find("the keep folder " + user + " does not exist"), std::string::npos);
  llvm::sys::fs::create_directories(user);
  EXPECT_EQ(copyKeptFiles(keep, user, {keep + "/ciq.deps"}, {{keep + "/k.ptx", work + "/0.k.ptx"}}), "");
  EXPECT_EQ(readAll(user + "/k.ptx"), "edited");
  EXPECT_EQ(readAll(user + "/k.cudafe1.cpp"), "front");
  EXPECT_FALSE(llvm::sys::fs::exists(user + "/ciq.deps"));
  std::string bad = copyKeptFiles(keep, user, {}, {{keep + "/k.ptx", work + "/missing"}});
  EXPECT_NE(bad.find("cannot copy " + work + "/missing"), std::string::npos) << bad;
  llvm::sys::fs::remove_directories(std::string(root));
}
