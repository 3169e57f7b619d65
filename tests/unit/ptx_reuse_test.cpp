// PTX reuse's pure parts: which commands and candidates it takes, the key,
// and reading a depfile. The compiles themselves are lit tests with the real
// nvcc (tests/lit/wrapper/ptx-reuse*.test).
#include "wrapper/PtxReuse.h"
#include "wrapper/PtxReuseStore.h"

#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq;
using namespace ciq::wrapper;

namespace {

std::string unsupportedFor(std::vector<std::string> argv, std::string runDir = "/tmp/run") {
  NvccCommand cmd = parseNvcc(argv, "", "", "/tmp");
  return PtxReuse(ReuseContext{"/usr/local/cuda/bin/nvcc", "/tmp", runDir, "/tmp/k.o", argv, &cmd, 0})
      .unsupported();
}

TEST(PtxReuse, TakesCompilesToOneObject) {
  EXPECT_EQ(unsupportedFor({"-c", "k.cu", "-o", "k.o", "-arch=sm_90"}), "");
  EXPECT_EQ(unsupportedFor({"-dc", "k.cu", "-o", "k.o", "-MD", "-MT", "k.o", "-MF", "k.d"}), "");
  EXPECT_EQ(unsupportedFor({"-c", "k.cu", "-o", "k.o"}, ""), "no CIQ_RUN_DIR");
  // Issue 56 item 4: the user's intermediates are kept by ciq (UserKeep.h).
  EXPECT_EQ(unsupportedFor({"-c", "k.cu", "-o", "k.o", "--keep"}), "");
  EXPECT_EQ(unsupportedFor({"-c", "k.cu", "-o", "k.o", "-save-temps", "-keep-dir", "kd"}), "");
  EXPECT_EQ(unsupportedFor({"-c", "k.cu", "-o", "k.o", "-MD"}), "a dependency file without -MF");
  EXPECT_EQ(unsupportedFor({"-ptx", "k.cu", "-o", "k.ptx"}).empty(), false);
  EXPECT_EQ(unsupportedFor({"-c", "a.cu", "b.cu"}), "2 inputs");
}

TEST(PtxReuse, OnlyPtxasControlsArePtxasOnly) {
  CandidateMessage c;
  c.ptxasOptions = {"--opt-level=1"};
  c.acfs = {{"ptxas", "/r/acf/x.acf", "x"}};
  EXPECT_TRUE(ptxasOnly(c));
  c.acfs.push_back({"nvcc", "/r/acf/y.acf", "y"});
  EXPECT_FALSE(ptxasOnly(c));
  c.acfs.pop_back();
  c.defines = {"TILE=4"};
  EXPECT_FALSE(ptxasOnly(c));
  c.defines.clear();
  c.nvccOptions = {"--extra-device-vectorization"};
  EXPECT_FALSE(ptxasOnly(c));
}

TEST(PtxReuse, KeyCoversCommandAndDirectory) {
  KeyInputs a{"/usr/local/cuda/bin/nvcc", "/b", {"-c", "k.cu", "-o", "k.o"}};
  KeyInputs b = a, c = a;
  b.userArgs.push_back("-DX=1");
  c.cwd = "/other";
  EXPECT_EQ(frontEndKey(a), frontEndKey(a));
  EXPECT_NE(frontEndKey(a), frontEndKey(b));
  EXPECT_NE(frontEndKey(a), frontEndKey(c));
}

TEST(PtxReuse, ReadsDepfilePrerequisites) {
  EXPECT_EQ(depfilePrerequisites("k.o : /s/k.cu \\\n /s/my\\ dir/t.h\\\n  /usr/include/x.h\n"),
            (std::vector<std::string>{"/s/k.cu", "/s/my dir/t.h", "/usr/include/x.h"}));
  EXPECT_EQ(depfilePrerequisites("k.o: k.cu k.h\n"), (std::vector<std::string>{"k.cu", "k.h"}));
  EXPECT_TRUE(depfilePrerequisites("").empty());
}

} // namespace

// A kept entry whose manifest has a field of the wrong type (another version,
// a damaged file) is a miss: the compile goes on in full, nothing aborts.
TEST(PtxReuse, WrongTypedManifestIsAMiss) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-ptx-manifest", dir));
  std::string d = dir.str().str();
  for (const char *text : {R"({"format": 5})", R"({"format": "ciq-ptx-reuse-1", "deps": 7})",
                           R"({"format": "ciq-ptx-reuse-1", "deps": [{"path": "/x", "sha256": 3}]})",
                           R"({"format": "ciq-ptx-reuse-1", "front_end_steps": "a"})", R"([1, 2])"}) {
    std::ofstream(d + "/manifest.json") << text;
    std::string stale;
    EXPECT_NO_THROW(EXPECT_FALSE(loadEntry(d, stale).has_value()) << text);
  }
  llvm::sys::fs::remove_directories(d);
}

// nvcc's depfile of a source in a folder whose name holds a '"' ends with a
// path cut at the quote, which is no file: keeping the entry failed, and a
// lock of sections (whose split compile keeps one) failed the compile that
// nvcc alone builds. The absent path is kept as absent: the entry holds
// until a file of that name appears.
TEST(PtxReuse, ADependencyThatIsNoFileIsKeptAsAbsent) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-ptx-absent", dir));
  std::string d = dir.str().str(), src = d + "/a\"b";
  ASSERT_FALSE(llvm::sys::fs::create_directories(src));
  ASSERT_FALSE(llvm::sys::fs::create_directories(d + "/tmp/keep"));
  std::ofstream(src + "/k.cu") << "__global__ void k() {}\n";
  std::ofstream(d + "/k.o") << "object";
  std::ofstream(d + "/k.d") << "k.o : " << src << "/k.cu \\\n    " << d << "/a\n";
  EXPECT_EQ(commitEntry(d + "/tmp", d + "/entry", KeptEntry{}, d + "/k.o", d + "/k.d", d, false), "");
  std::string stale;
  EXPECT_TRUE(loadEntry(d + "/entry", stale).has_value()) << stale;
  std::ofstream(d + "/a") << "now a file";
  EXPECT_FALSE(loadEntry(d + "/entry", stale).has_value());
  EXPECT_EQ(stale, d + "/a");
  llvm::sys::fs::remove_directories(d);
}
