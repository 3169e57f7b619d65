// Issue 42 item 7: a candidate build ends within a second of its engine's
// death, a kill -9 included. The processes that do not go through ciq-ptxas
// (make, a recipe that sleeps, a host compiler, a child in a session of its
// own) outlived a killed engine; the build guard (common/build_guard_main.cpp)
// now ends them. Here a forked stand-in engine runs the build through
// runSubprocess as BuildDriver does, and is killed with SIGKILL.
#include "common/Paths.h"
#include "common/Subprocess.h"
#include "scratch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ciq;

namespace {

void writeFile(const std::string &path, const std::string &text, bool executable = false) {
  std::ofstream(path) << text;
  if (executable)
    chmod(path.c_str(), 0755);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Live (not zombie) processes whose environment carries `mark`: every
// process of the build, whatever its group or session.
std::set<int> marked(const std::string &mark) {
  std::set<int> found;
  for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
    std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string env = readFile("/proc/" + pid + "/environ");
    if (env.find(mark) == std::string::npos)
      continue;
    std::string stat = readFile("/proc/" + pid + "/stat");
    size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X')
      found.insert(std::stoi(pid));
  }
  return found;
}

size_t lines(const std::string &path) {
  std::string text = readFile(path);
  return (size_t)std::count(text.begin(), text.end(), '\n');
}

// A make build with a slow host compile (a fake host compiler that sleeps),
// a recipe that sleeps, and a recipe that leaves a child in a session of
// its own; each writes a line to `started` when it runs.
void writeSlowBuild(const std::string &dir) {
  writeFile(dir + "/slow_cc.sh", "#!/bin/sh\necho host >> started\nexec sleep 60 \"$@\"\n", true);
  writeFile(dir + "/Makefile",
            "all: host recipe session\n"
            "host:\n\t./slow_cc.sh -c main.cpp -o main.o\n"
            "recipe:\n\techo recipe >> started; sleep 60\n"
            "session:\n\tsetsid sh -c 'echo session >> started; exec sleep 60' & sleep 60\n"
            ".PHONY: all host recipe session\n");
}

} // namespace

TEST(BuildGuard, AKilledEngineLeavesNoProcessOfItsBuild) {
  test::Scratch dir("ciq-guard");
  writeSlowBuild(dir.path());
  std::string mark = "CIQ_GUARD_TEST_MARK=" + std::to_string(getpid()) + "." + dir.path();
  pid_t engine = fork();
  ASSERT_GE(engine, 0);
  if (engine == 0) {
    // The stand-in engine: the build as BuildDriver::runStep starts it.
    SubprocessOptions o;
    o.cwd = dir.path();
    o.setEnv = {{mark.substr(0, mark.find('=')), mark.substr(mark.find('=') + 1)}};
    o.stdoutFile = dir.path() + "/build.log";
    o.mergeStderrIntoStdout = true;
    o.niceness = 5;
    o.guard = buildGuardPath();
    runSubprocess({"make", "-j3", "-k"}, o);
    _exit(0);
  }
  std::string started = dir.path() + "/started";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines(started) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(lines(started), 3u) << readFile(dir.path() + "/build.log");
  // Each step wrote its line before starting its sleep: on a loaded machine
  // the sleeps come a moment later.
  std::set<int> before = marked(mark);
  while (before.size() < 7 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    before = marked(mark);
  }
  EXPECT_GE(before.size(), 7u); // guard, make, 3 shells or compilers, sleeps, the session's
  kill(engine, SIGKILL);
  waitpid(engine, nullptr, 0);
  auto killedAt = std::chrono::steady_clock::now();
  std::set<int> left = marked(mark);
  while (!left.empty() && std::chrono::steady_clock::now() < killedAt + std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left = marked(mark);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " of the build's " << before.size()
                            << " processes were alive 1 s after the engine's kill -9";
  for (int pid : left)
    kill(pid, SIGKILL); // this test's own, by pid
  while (waitpid(-1, nullptr, WNOHANG) > 0)
    ; // what came back here (a subreaper) from the stand-in engine
}

TEST(BuildGuard, TheBuildsStatusSignalAndNicenessAreItsOwn) {
  SubprocessOptions o;
  o.guard = buildGuardPath();
  EXPECT_EQ(runSubprocess({"sh", "-c", "exit 3"}, o).exitCode, 3);
  auto sig = runSubprocess({"sh", "-c", "kill -USR2 $$"}, o);
  EXPECT_EQ(sig.termSignal, SIGUSR2);
  // The guard keeps this process's priority; the build gets the niceness.
  o.niceness = 7;
  auto nice = runSubprocess({"sh", "-c", "cut -d' ' -f19 /proc/$PPID/stat; cut -d' ' -f19 /proc/$$/stat"}, o);
  EXPECT_EQ(nice.out, std::to_string(getpriority(PRIO_PROCESS, 0)) + "\n" +
                          std::to_string(getpriority(PRIO_PROCESS, 0) + 7) + "\n");
  auto missing = runSubprocess({"/nonexistent/ciq-no-such-build"}, o);
  EXPECT_EQ(missing.exitCode, 127);
  EXPECT_NE(missing.err.find("ciq-build-guard: cannot run '/nonexistent/ciq-no-such-build'"), std::string::npos);
}

TEST(BuildGuard, ABuildTimeoutStillEndsTheGuardedBuild) {
  SubprocessOptions o;
  o.guard = buildGuardPath();
  o.timeoutSeconds = 0.5;
  o.killGraceSeconds = 1;
  auto start = std::chrono::steady_clock::now();
  auto r = runSubprocess({"sh", "-c", "sleep 60"}, o);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}
