#include "sample_kernel.h"
#include "scratch.h"
#include "common/FileIO.h"
#include "common/ForeignJson.h"
#include "common/NumberFormat.h"
#include "common/Protocol.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ciq;

// The breaker's finding: run_dir/programs linked to another folder, and
// `ciq tune --fresh` emptied that folder (remove_directories lists the
// folder a link leads to). removeTree removes the link only, and never
// follows a link below the folder either.
TEST(RemoveTree, RemovesALinkNotTheFolderItLeadsTo) {
  test::Scratch victim("ciq-victim"), run("ciq-run");
  std::string err;
  ASSERT_TRUE(writeFileAtomically(victim.path() + "/thesis.tex", "precious", err)) << err;
  ASSERT_FALSE(llvm::sys::fs::create_link(victim.path(), run.path() + "/programs"));
  EXPECT_TRUE(removeTree(run.path() + "/programs"));
  EXPECT_FALSE(llvm::sys::fs::exists(run.path() + "/programs"));
  EXPECT_TRUE(llvm::sys::fs::exists(victim.path() + "/thesis.tex"));
  // A folder with a link inside: the folder goes, the link's target stays.
  ASSERT_FALSE(llvm::sys::fs::create_directories(run.path() + "/programs/c0001"));
  ASSERT_FALSE(llvm::sys::fs::create_link(victim.path(), run.path() + "/programs/c0001/link"));
  EXPECT_TRUE(removeTree(run.path() + "/programs"));
  EXPECT_FALSE(llvm::sys::fs::exists(run.path() + "/programs"));
  EXPECT_TRUE(llvm::sys::fs::exists(victim.path() + "/thesis.tex"));
  // Nothing there: nothing to remove, no failure.
  EXPECT_TRUE(removeTree(run.path() + "/programs"));
}

// A writer killed between its temporary copy and the rename (kill -9 of ciq
// tune while it wrote the lock) left "<lock>.tmp.<pid>" in the project's
// folder for good; the next write removes it, and keeps a live writer's.
TEST(LockWrite, RemovesTheTemporaryCopyOfAKilledWriterOnly) {
  test::Scratch d("ciq-atomic");
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0); // its pid is no process now
  std::string lock = d.path() + "/app.ciq.lock", err;
  std::string dead = lock + ".tmp." + std::to_string(child), live = lock + ".tmp.1";
  std::string other = d.path() + "/other.lock.tmp." + std::to_string(child);
  for (const auto &f : {dead, live, other})
    ASSERT_TRUE(writeFileAtomically(f, "half a lock", err)) << err;
  removeKilledWritersTemps(lock);
  ASSERT_TRUE(writeFileAtomically(lock, "{}", err)) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(dead));
  EXPECT_TRUE(llvm::sys::fs::exists(live));   // pid 1 is alive: its writer may still rename it
  EXPECT_TRUE(llvm::sys::fs::exists(other));  // another file's
  EXPECT_EQ(readWholeFile(lock).value_or(""), "{}");
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Subprocess, CapturesOutputAndStatus) {
  auto r = runSubprocess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Subprocess, TimeoutKillsTheWholeGroup) {
  // The grandchild holds the pipe open; the group kill must end it too.
  SubprocessOptions o;
  o.timeoutSeconds = 0.5;
  auto r = runSubprocess({"sh", "-c", "sleep 30 & sleep 30"}, o);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(r.wallMs, 3000);
}

TEST(Subprocess, TimeoutSendsTermFirstThenKill) {
  // TERM runs the program's own cleanup; one that ignores TERM is killed
  // after the grace period.
  SubprocessOptions o;
  o.timeoutSeconds = 0.3;
  o.killGraceSeconds = 0.3;
  auto r = runSubprocess({"sh", "-c", "trap 'echo cleaned; exit 143' TERM; sleep 30 & wait"}, o);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.out, "cleaned\n");
  auto stubborn = runSubprocess({"sh", "-c", "trap '' TERM; sleep 30 & sleep 30"}, o);
  EXPECT_TRUE(stubborn.timedOut);
  EXPECT_EQ(stubborn.termSignal, SIGKILL);
  EXPECT_LT(stubborn.wallMs, 3000);
}

TEST(Protocol, ByteStringsRoundTripLosslessly) {
  for (std::string bytes : {std::string("plain/k.cu"), std::string("lat\xe9n/k.cu"), std::string("\xff"),
                            std::string("ab\xc3"), std::string()}) {
    nlohmann::json j = bytesToJson(bytes);
    EXPECT_EQ(j.is_string(), bytes != "lat\xe9n/k.cu" && bytes != "\xff" && bytes != "ab\xc3") << bytes;
    EXPECT_EQ(bytesFromJson(nlohmann::json::parse(j.dump())), bytes);
  }
  CompileRequest req;
  req.source = "/p/lat\xe9n/k.cu";
  req.argv = {"nvcc", "-c", "lat\xe9n/k.cu"};
  CompileRequest back;
  std::string why;
  ASSERT_TRUE(readJson(nlohmann::json::parse(makeMessage("hello", req).dump()), back, why)) << why;
  EXPECT_EQ(back.source, req.source);
  EXPECT_EQ(back.argv, req.argv);
}

TEST(Subprocess, RedirectionsStdinAndDirectory) {
  SubprocessOptions o;
  o.cwd = "/";
  o.stdinData = "from stdin";
  o.mergeStderrIntoStdout = true;
  o.setEnv["CIQ_TEST_VAR"] = "set";
  auto r = runSubprocess({"sh", "-c", "pwd; cat; echo; echo $CIQ_TEST_VAR >&2"}, o);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "/\nfrom stdin\nset\n");
  EXPECT_EQ(r.err, "");
}

TEST(Subprocess, MissingProgramIsASpawnFailure) {
  auto r = runSubprocess({"/nonexistent/ciq-no-such-program"});
  EXPECT_TRUE(r.spawnFailed);
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_EQ(r.errorMessage, "cannot run '/nonexistent/ciq-no-such-program': No such file or directory");
}

// The pid a child wrote to `file` (0 when none).
static int pidIn(const std::string &file) {
  FILE *f = std::fopen(file.c_str(), "r");
  int pid = 0;
  if (f) {
    if (std::fscanf(f, "%d", &pid) != 1)
      pid = 0;
    std::fclose(f);
  }
  return pid;
}

static bool running(int pid) { return pid > 0 && kill(pid, 0) == 0; }

// Issue 29 item 4: a benchmark whose helper keeps stdout open after the
// benchmark exited ran into the time limit (the run ended only when its pipes
// closed). The run ends when the child exits; the helper, in a session of
// its own, is ended with it.
TEST(Subprocess, RunEndsWhenTheChildExitsNotWhenItsPipesClose) {
  ciq::test::Scratch pidFile("ciq-helper", "pid"); // empty until the helper writes its pid
  const std::string &file = pidFile.path();
  SubprocessOptions o;
  o.timeoutSeconds = 60;
  auto r = runSubprocess({"sh", "-c", "setsid sh -c 'echo $$ > " + file + "; exec sleep 60' & "
                                      "while [ ! -s " + file + " ]; do sleep 0.01; done; echo time=1"},
                         o);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "time=1\n");
  EXPECT_LT(r.wallMs, 30000);
  int helper = pidIn(file);
  EXPECT_GT(helper, 0);
  EXPECT_FALSE(running(helper)) << "the helper " << helper << " outlived the run";
}

// Issue 29 item 4: the compile timeout's group kill missed a child that had
// left the group (setsid); the run's end reaches it now.
TEST(Subprocess, TimeoutEndsAChildThatLeftTheGroup) {
  ciq::test::Scratch pidFile("ciq-setsid", "pid"); // empty until the child writes its pid
  const std::string &file = pidFile.path();
  SubprocessOptions o;
  o.timeoutSeconds = 5;
  o.killGraceSeconds = 0.2;
  auto r = runSubprocess({"sh", "-c", "setsid sh -c 'echo $$ > " + file + "; exec sleep 60' >/dev/null 2>&1 & "
                                      "while [ ! -s " + file + " ]; do sleep 0.01; done; sleep 60"},
                         o);
  EXPECT_TRUE(r.timedOut);
  int child = pidIn(file);
  EXPECT_GT(child, 0);
  EXPECT_FALSE(running(child)) << "the setsid child " << child << " outlived the compile timeout";
}

// What a child wrote before it exited is read, however much.
TEST(Subprocess, ReadsEverythingTheChildWrote) {
  auto r = runSubprocess({"sh", "-c", "head -c 300000 /dev/zero; echo end >&2"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out.size(), 300000u);
  EXPECT_EQ(r.err, "end\n");
}

TEST(Subprocess, SignalEndsAsExitCode128PlusSignal) {
  auto r = runSubprocess({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.termSignal, 15);
  EXPECT_EQ(r.exitCode, 128 + 15);
}

TEST(Subprocess, InheritedDescriptorsStayWithThisProcessButMakesJobserver) {
  int a[2], b[2];
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  std::string flags = "-j4 --jobserver-auth=" + std::to_string(b[0]) + "," + std::to_string(b[1]);
  setenv("MAKEFLAGS", flags.c_str(), 1);
  keepInheritedDescriptorsToSelf();
  unsetenv("MAKEFLAGS");
  EXPECT_TRUE(fcntl(a[0], F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(fcntl(a[1], F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(fcntl(b[0], F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(fcntl(b[1], F_GETFD) & FD_CLOEXEC);
  // What a child sees: the jobserver descriptors only.
  std::string probe = "test -e /proc/self/fd/" + std::to_string(a[1]) + " && echo leaked; test -e /proc/self/fd/" +
                      std::to_string(b[1]) + " && echo jobserver";
  EXPECT_EQ(runSubprocess({"sh", "-c", probe}).out, "jobserver\n");
  for (int fd : {a[0], a[1], b[0], b[1]})
    close(fd);
}

TEST(Protocol, ReceiptRoundTrip) {
  Receipt r;
  r.candidateId = "c0001";
  r.kernels.push_back(ciq::test::sampleKernel(64, 8, 12, 40));
  nlohmann::json j = r;
  Receipt back;
  std::string why;
  ASSERT_TRUE(readJson(j, back, why)) << why;
  EXPECT_EQ(back.kernels.at(0).spillLoads, 12);
  EXPECT_EQ(back.candidateId, "c0001");
}

// compile_commands.json with a Latin-1 folder name: parsed, and the path
// comes back as the file system's bytes (it was "not a JSON array").
TEST(ForeignJson, NonUtf8PathsParseLosslessly) {
  std::string path = "/p/lat\xe9n/k.cu";
  std::string text = "[{\"file\": \"" + path + "\", \"n\": [\"\xff\xfe\", \"caf\xc3\xa9\"]}]";
  nlohmann::json j = ciq::parseForeignJson(text);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[0]["file"].get<std::string>(), path);
  EXPECT_EQ(j[0]["n"][0].get<std::string>(), "\xff\xfe");
  EXPECT_EQ(j[0]["n"][1].get<std::string>(), "caf\xc3\xa9"); // valid UTF-8 untouched
  EXPECT_TRUE(ciq::parseForeignJson("[1,").is_discarded());
}

// Any bytes, also a real U+F780..U+F7FF (the escape range) and truncated
// sequences, survive escape + unescape (fixed seed, bounded count).
TEST(ForeignJson, EscapeRoundTripsAnyBytes) {
  std::srand(7);
  std::vector<std::string> cases = {"\xef\x9e\x80", "\xef\x9f\xbf\xe9", "\xe2\x82", "\xf0\x9f\x98\x80", ""};
  for (int k = 0; k < 2000; ++k) {
    std::string s(std::rand() % 12, '\0');
    for (auto &c : s)
      c = char(std::rand() % 256);
    cases.push_back(s);
  }
  for (const auto &s : cases) {
    std::string e = ciq::escapeInvalidUtf8(s);
    EXPECT_EQ(ciq::unescapeInvalidUtf8(e), s);
    EXPECT_TRUE(llvm::StringRef(e).find('\0') == llvm::StringRef::npos || s.find('\0') != std::string::npos);
    EXPECT_NO_THROW((void)nlohmann::json(e).dump()) << "escaped text is valid UTF-8";
  }
}

// Issue 32 item 6: one format for every time, ratio, p-value and CV printed.
TEST(NumberFormat, OneFormatEverywhere) {
  using namespace ciq;
  EXPECT_EQ(fmt::value(5.599), "5.599");
  EXPECT_EQ(fmt::value(5.18), "5.18");
  EXPECT_EQ(fmt::value(0.84243), "0.8424");
  EXPECT_EQ(fmt::value(680), "680");
  EXPECT_EQ(fmt::value(12345.6), "12346");
  EXPECT_EQ(fmt::value(0), "0");
  EXPECT_EQ(fmt::value(-0.0), "0");
  EXPECT_EQ(fmt::value(1.305882353), "1.306");
  EXPECT_EQ(fmt::value(2e-5), "2.000e-05");
  EXPECT_EQ(fmt::ratio(1.08027), "1.080x");
  EXPECT_EQ(fmt::pValue(1.63576e-31), "p < 0.0001");
  EXPECT_EQ(fmt::pValue(0.65), "p = 0.65");
  EXPECT_EQ(fmt::pValue(0.003149), "p = 0.0031");
  EXPECT_EQ(fmt::pValue(-1), "p = n/a");
  EXPECT_EQ(fmt::percent(2.44), "2.4%");
  // A CV of one run is undefined, not "no noise" (item 4).
  EXPECT_EQ(fmt::percent(0.0, 1), "n/a (1 run)");
  EXPECT_EQ(fmt::percent(0.0, 0), "n/a (0 runs)");
}
