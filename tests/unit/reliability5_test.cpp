// Issue 51 (reliability and security, fifth round), items 3 to 10: CUDA
// compiles told by the compiler that runs, every reader typed and bounded,
// benchmark runs guarded, and the lines a fault gives. One test (or a few)
// per item, each failing before its change.
#include "common/FileIO.h"
#include "engine/compile/BuildDriver.h"
#include "engine/compile/TorchRoute.h"
#include "common/ProcessTrack.h"
#include "common/CompileTemp.h"
#include "engine/measure/KernelTrace.h"
#include "engine/winner/Objectives.h"
#include "engine/winner/Winner.h"
#include "tests/unit/engine_test_util.h"

#include <csignal>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ciq;
using nlohmann::json;

// Item 3: a C++ compile in a folder named my-nvcc-tests/ is no CUDA compile;
// nvcc behind ciq-ptxas and ccache is one, by the program that runs.
TEST(Reliability5, CudaCompileToldByTheCompilerNotTheText) {
  std::vector<std::string> cxx = {"/usr/bin/c++", "-I/home/u/my-nvcc-tests/include", "-o",
                                  "CMakeFiles/app.dir/main.cpp.o", "-c", "/home/u/my-nvcc-tests/main.cpp"};
  EXPECT_FALSE(isCudaCompileLine(cxx, "/home/u/my-nvcc-tests/main.cpp", "/usr/local/cuda/bin/nvcc"));
  std::vector<std::string> cu = {"/opt/ciq/bin/ciq-ptxas", "--lock", "x.lock", "ccache", "/usr/local/cuda/bin/nvcc",
                                 "-x", "cu", "-c", "/src/k.cpp", "-o", "k.o"};
  EXPECT_EQ(compilerOfCommand(cu), "/usr/local/cuda/bin/nvcc");
  EXPECT_TRUE(isCudaCompileLine(cu, "/src/k.cpp", ""));
  // The build tree's CUDA compiler under another name.
  std::vector<std::string> wrapped = {"/opt/tools/cudacc", "-c", "/src/k.cpp", "-o", "k.o"};
  EXPECT_TRUE(isCudaCompileLine(wrapped, "/src/k.cpp", "/opt/tools/cudacc"));
  EXPECT_FALSE(isCudaCompileLine(wrapped, "/src/k.cpp", ""));
  EXPECT_EQ(compilerOfCommand({"env", "A=1", "B=2", "sccache", "nvcc", "-c"}), "nvcc");
  // clang++ compiling CUDA says so with -x cuda.
  EXPECT_TRUE(isCudaCompileLine({"clang++", "-x", "cuda", "-c", "/src/k.cpp"}, "/src/k.cpp", ""));
}

namespace {
// Runs `f` in a child with a deadline; the child's exit status, or -SIGALRM
// when it hung past `seconds` (the engine stalled for ever before).
int inChild(const std::function<int()> &f, unsigned seconds = 10) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(seconds);
    _exit(f());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}
} // namespace

// Item 5: a FIFO at a kernel-trace path hung the engine (a blocking open);
// a link to /dev/zero there read without end. Both are one error line now.
TEST(Reliability5, KernelTraceFifoOrDeviceLinkIsRefusedAtOnce) {
  ciq::test::TempProject p;
  std::string prefix = p.dir() + "/kernel-trace";
  ASSERT_EQ(::mkfifo((prefix + ".4242.json").c_str(), 0600), 0);
  int rc = inChild([&] {
    std::string err;
    auto t = readKernelTrace(prefix, err);
    return !t && err.find("a FIFO") != std::string::npos ? 0 : 1;
  });
  EXPECT_EQ(rc, 0) << "(-14: hung on the FIFO)";
  ::unlink((prefix + ".4242.json").c_str());
  ASSERT_EQ(::symlink("/dev/zero", (prefix + ".4243.json").c_str()), 0);
  rc = inChild([&] {
    std::string err;
    auto t = readKernelTrace(prefix, err);
    return !t && err.find("symbolic link") != std::string::npos ? 0 : 1;
  });
  EXPECT_EQ(rc, 0) << "(-14: read /dev/zero without end)";
  // A regular file over the bound is refused, not read.
  std::string err;
  EXPECT_FALSE(readRegularFile("/dev/zero", 1 << 20, err));
  EXPECT_NE(err.find("a device"), std::string::npos) << err;
  std::string big = p.write("big", std::string(2000, 'x'));
  EXPECT_FALSE(readRegularFile(big, 1000, err));
  EXPECT_NE(err.find("larger than 1000 bytes"), std::string::npos) << err;
  EXPECT_EQ(readRegularFile(big, 2000, err).value_or(""), std::string(2000, 'x'));
}

namespace {
std::string linkText(const std::string &link) {
  char buf[4096];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, (size_t)n) : "";
}
} // namespace

// Item 6: `ciq lock env` kept a CUDA_HOME view in the user's cache whose
// entries PyTorch builds run; a link there to another program (or the view
// itself a link) was followed as long as bin/nvcc and include/ looked right.
TEST(Reliability5, CudaHomeViewHoldsOnlyWhatCiqMade) {
  ciq::test::TempProject p;
  std::string root = p.dir() + "/toolkit";
  p.write("toolkit/bin/nvcc", "#!/bin/sh\n");
  p.write("toolkit/bin/cicc", "#!/bin/sh\n");
  p.write("toolkit/include/cuda.h", "");
  std::string evil = p.write("evil", "#!/bin/sh\n");
  llvm::sys::fs::create_directories(p.dir() + "/cache");
  std::string view = p.dir() + "/cache/cuda-home", err;
  ASSERT_TRUE(makeCudaHomeView(view, root, err)) << err;
  ASSERT_EQ(linkText(view + "/bin/cicc"), root + "/bin/cicc");
  // A planted program in place of cicc, and an entry ciq never makes.
  ASSERT_EQ(::unlink((view + "/bin/cicc").c_str()), 0);
  ASSERT_EQ(::symlink(evil.c_str(), (view + "/bin/cicc").c_str()), 0);
  ASSERT_EQ(::symlink(evil.c_str(), (view + "/bin/objcopy").c_str()), 0);
  ASSERT_TRUE(makeCudaHomeView(view, root, err)) << err;
  EXPECT_EQ(linkText(view + "/bin/cicc"), root + "/bin/cicc");
  struct stat st;
  EXPECT_NE(::lstat((view + "/bin/objcopy").c_str(), &st), 0);
  // The view itself a link to a complete view elsewhere: replaced by a
  // folder of its own; what the link named is left alone.
  std::string elsewhere = p.dir() + "/elsewhere";
  ASSERT_EQ(::rename(view.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), view.c_str()), 0);
  ASSERT_TRUE(makeCudaHomeView(view, root, err)) << err;
  ASSERT_EQ(::lstat(view.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_TRUE(llvm::sys::fs::exists(elsewhere + "/bin/nvcc"));
}

// Item 7: a compile killed with SIGKILL left its $TMPDIR/ciq-compile-*
// folder (up to 3.3 MB) for good. Its folder names its owner (pid and start
// time); the next tune removes this user's folders whose owner is gone.
TEST(Reliability5, StaleCompileTempsOfKilledCompilesAreRemoved) {
  ciq::test::TempProject p;
  std::string tmp = p.dir() + "/tmp";
  llvm::sys::fs::create_directories(tmp);
  ASSERT_EQ(::setenv("TMPDIR", tmp.c_str(), 1), 0);
  std::string live;
  {
    wrapper::CompileTemp t;
    live = t.path();
    ASSERT_FALSE(live.empty());
    EXPECT_EQ(llvm::sys::path::filename(live).str().rfind("ciq-compile-" + std::to_string(getpid()) + ".", 0), 0u)
        << live;
    // A killed compile's: a process that is gone.
    pid_t child = fork();
    if (child == 0)
      _exit(0);
    waitpid(child, nullptr, 0);
    std::string dead = tmp + "/ciq-compile-" + std::to_string(child) + ".12345-abcdef";
    p.write("tmp/ciq-compile-" + std::to_string(child) + ".12345-abcdef/tmpxft_1_k.ptx", "x");
    // An older ciq's folder (no owner in its name), and a link: left alone.
    p.write("tmp/ciq-compile-a1b2c3/f", "x");
    p.write("elsewhere/keep", "x");
    ASSERT_EQ(::symlink((p.dir() + "/elsewhere").c_str(), (tmp + "/ciq-compile-1.2-zzzzzz").c_str()), 0);
    EXPECT_EQ(wrapper::removeStaleCompileTemps(tmp), 1);
    EXPECT_FALSE(llvm::sys::fs::exists(dead));
    EXPECT_TRUE(llvm::sys::fs::exists(live)) << "a running compile's folder was removed";
    EXPECT_TRUE(llvm::sys::fs::exists(tmp + "/ciq-compile-a1b2c3/f"));
    EXPECT_TRUE(llvm::sys::fs::exists(p.dir() + "/elsewhere/keep"));
  }
  EXPECT_FALSE(llvm::sys::fs::exists(live));
  ::unsetenv("TMPDIR");
}

// Item 10: a receipt a compiler cache answered reported the hit's wall time
// as compile_ms with no flag; compile_ms objectives and the summary mixed
// cache hits with compiles. A cached object makes compile_ms unmeasurable
// for its candidate (never a score of the cache's time), and the summary
// counts such compiles.
TEST(Reliability5, CachedCompilesAreNoCompileTime) {
  Objective ms{"compile_ms", "minimize", "ms", {}, "sum", {}};
  Objective bytes{"device_code_bytes", "minimize", "bytes", {}, "sum", {}};
  Evaluation e;
  e.candidateId = "c0000";
  e.ok = true;
  ObjectRecord a, b;
  a.source = "a.cu", a.wallMs = 900, a.deviceCodeBytes = 10;
  b.source = "b.cu", b.wallMs = 3, b.deviceCodeBytes = 20, b.cached = true;
  e.objects = {a, b};
  std::string why;
  EXPECT_FALSE(compileMetric(ms, e, why));
  EXPECT_NE(why.find("b.cu came from the compiler cache"), std::string::npos) << why;
  EXPECT_EQ(compileMetric(bytes, e, why).value_or(-1), 30);
  e.objects[1].cached = false;
  EXPECT_EQ(compileMetric(ms, e, why).value_or(-1), 903);

  TuneConfig cfg;
  cfg.objectives = {ms};
  e.objects[1].cached = true;
  e.scores["compile_ms"] = 903;
  std::vector<Evaluation> evals = {e};
  char *buf = nullptr;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  printSummary(cfg, evals, WinnerChoice{0, false, ""}, f, Verdicts{});
  fclose(f);
  std::string out(buf, n);
  free(buf);
  EXPECT_NE(out.find("compiler cache: 1 compile(s) of 1 configuration(s) were answered by the compiler cache"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("compile_ms is not scored from them"), std::string::npos) << out;
}

// Item 9: two controls of one ptxas option are refused (config_test's
// TwoControlsOfOneOption); two of one define are how a space gives one
// binary twice on purpose (the engine's twin fixtures), and stay allowed.
TEST(Reliability5, TwoControlsOfOneDefineStayAllowed) {
  ciq::test::TempProject p;
  std::string err;
  auto c = p.load("target: app\nspace:\n  controls:\n    - {name: knob, define: KNOB, choice: [1, 2]}\n"
                  "    - {name: knob-again, define: KNOB, choice: [1, 2]}\n",
                  err);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->space.controls.size(), 2u);
  EXPECT_FALSE(p.load("target: app\nspace:\n  controls:\n    - {name: a, nvcc: \"--extra-device-vectorization\", "
                      "literal: on}\n    - {name: b, nvcc: \"--extra-device-vectorization\", literal: on}\n",
                      err));
  EXPECT_NE(err.find("controls 'a' ("), std::string::npos) << err;
  EXPECT_NE(err.find("'b' ("), std::string::npos) << err;
}
