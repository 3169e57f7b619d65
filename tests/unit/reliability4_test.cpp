// Issue 42 (reliability, fourth round): no abort or hang on any input, no
// resume that redoes finished work, no other user able to stop a tune
// quietly. One test (or a few) per item, each failing before its change.
#include "common/FileIO.h"
#include "common/JsonRead.h"
#include "common/Lockfile.h"
#include "common/Socket.h"
#include "common/Subprocess.h"
#include "engine/compile/Daemon.h"
#include "engine/winner/Winner.h"
#include "wrapper/EngineClient.h"
#include "tests/unit/engine_test_util.h"
#include "tests/unit/scratch.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <gtest/gtest.h>

using namespace ciq;
using nlohmann::json;

namespace {

void writeText(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

Lockfile sampleLock() {
  Lockfile l;
  l.target = "app";
  l.architectures = {"sm_90"};
  l.candidateId = "c0001";
  l.candidateHash = candidateHashOf({}, {}, {}, {});
  l.score = {{"objective", "time_ms"}, {"unit", "ms"}, {"direction", "minimize"}, {"baseline", 2.0}, {"winner", 1.0}};
  return l;
}

// A "billion laughs" block: 9 levels of 10 aliases each, 10^9 values when
// expanded, under `key` (930 bytes or so).
std::string aliasBomb(const std::string &key) {
  std::string y = key + ":\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string p = "*a" + std::to_string(i - 1);
    y += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k)
      y += ", " + p;
    y += "]\n";
  }
  return y;
}

} // namespace

// Item 2: a YAML alias bomb in ciq.yaml or a space file is refused at once,
// with one line naming the file, instead of walking 10^9 values.
TEST(Reliability4, YamlAliasBombIsRefused) {
  test::TempProject p;
  std::string space = "controls:\n  - name: opt-level\n    ptxas: \"--opt-level={}\"\n    choice: [1, 2, 3]\n";
  std::string yaml = "target: app\nobjectives: [registers]\nspace:\n  include: [./space.yaml]\n";
  std::string spacePath = p.write("space.yaml", space), cfgPath = p.write("ciq.yaml", yaml), err;
  ASSERT_TRUE(loadConfig(cfgPath, err)) << err;
  struct Case {
    std::string file, text;
  } cases[] = {{cfgPath, yaml + aliasBomb("x_bomb")}, {spacePath, space + aliasBomb("x_bomb")}};
  for (const auto &c : cases) {
    p.write(c.file.substr(c.file.rfind('/') + 1), c.text);
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(loadConfig(cfgPath, err)) << c.file;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_NE(err.find(c.file + ":"), std::string::npos) << err;
    EXPECT_NE(err.find("expands to more than 100000 values through its aliases"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    p.write("ciq.yaml", yaml);
    p.write("space.yaml", space);
  }
}

// Item 1: every field ciq reads back from a lock is typed (a number as
// score.direction aborted `ciq lock show`), and the lock's own hash covers
// the score, which candidate_hash does not.
TEST(Reliability4, LockScoreIsTypedAndHashed) {
  test::Scratch dir("ciq-r4");
  std::string path = dir.path() + "/ciq.lock", err;
  ASSERT_TRUE(writeLockfile(path, sampleLock(), err)) << err;
  json good;
  ASSERT_TRUE(parseJsonFile(path, good, err)) << err;
  ASSERT_TRUE(good.contains(kLockShaKey));
  EXPECT_TRUE(readLockfile(path, err)) << err;
  struct Case {
    const char *what;
    const char *key;    // where in the lock
    json value;
    const char *expect; // the one error line's part
  } cases[] = {
      {"direction", "direction", 5, "score: \"direction\": expected a string"},
      {"objective", "objective", json::array(), "score: \"objective\": expected a string"},
      {"baseline", "baseline", "2", "score: \"baseline\": expected a number"},
      {"attribution", "attribution", json::array({5}), "score.attribution[0]: expected a JSON object"},
      {"validation", "validation", {{"runs", "x"}}, "score.validation: \"runs\": expected a number"},
  };
  for (auto &c : cases) {
    json j = good;
    j["architectures"]["sm_90"]["score"][c.key] = c.value; // the winner's section (schema 2)
    j.erase(kLockShaKey); // as written by hand: the types alone refuse it
    writeText(path, j.dump());
    EXPECT_FALSE(readLockfile(path, err)) << c.what;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.what << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  json top = good;
  top["architectures"]["sm_90"]["tuned_architecture"] = 90;
  top.erase(kLockShaKey);
  writeText(path, top.dump());
  EXPECT_FALSE(readLockfile(path, err));
  EXPECT_NE(err.find("\"tuned_architecture\": expected a string"), std::string::npos) << err;
  // A well-typed edit of a lock ciq wrote: its hash refuses it.
  json edited = good;
  edited["architectures"]["sm_90"]["score"]["winner"] = 0.5;
  writeText(path, edited.dump(2));
  EXPECT_FALSE(readLockfile(path, err));
  EXPECT_NE(err.find("\"lock_sha256\" does not match the lock's content: the lock was edited by hand"),
            std::string::npos)
      << err;
  // ... unless the reader is told to skip integrity (stripping an edited lock's arguments).
  EXPECT_TRUE(readLockfile(path, err, /*checkIntegrity=*/false)) << err;
  // Key order and spacing are not content.
  writeText(path, good.dump());
  EXPECT_TRUE(readLockfile(path, err)) << err;
}

// Item 1, follow-up: a lock without lock_sha256 (an older ciq's, or edited on
// purpose) was accepted silently. It is still read, every field typed (a
// wrong type refused as in a sealed lock) and its winner checked, but it is
// marked unsealed, so readers say one warning line naming `ciq lock seal`,
// which adds the hash and changes nothing else.
TEST(Reliability4, UnsealedLockIsReadTypedWarnedAndSealable) {
  test::Scratch dir("ciq-r4");
  std::string path = dir.path() + "/ciq.lock", err;
  ASSERT_TRUE(writeLockfile(path, sampleLock(), err)) << err;
  auto sealedLock = readLockfile(path, err);
  ASSERT_TRUE(sealedLock) << err;
  EXPECT_TRUE(sealedLock->sealed);
  json j;
  ASSERT_TRUE(parseJsonFile(path, j, err)) << err;
  j.erase(kLockShaKey);
  j["architectures"]["sm_90"]["score"]["winner"] = 0.5; // an edit no hash covers any more
  writeText(path, j.dump(2));
  auto l = readLockfile(path, err);
  ASSERT_TRUE(l) << err;
  EXPECT_FALSE(l->sealed);
  std::string w = unsealedLockWarning(path);
  EXPECT_NE(w.find(path + ": no \"lock_sha256\""), std::string::npos) << w;
  EXPECT_NE(w.find("`ciq lock seal " + path + "`"), std::string::npos) << w;
  EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  // Typed all the same: a wrong type is refused, not sealed.
  json wrong = j;
  wrong["architectures"]["sm_90"]["score"]["direction"] = 5;
  writeText(path, wrong.dump(2));
  bool already = true;
  EXPECT_FALSE(sealLockfile(path, already, err));
  EXPECT_NE(err.find("score: \"direction\": expected a string"), std::string::npos) << err;
  // Sealed as it is: the hash added, every other key unchanged; then it reads sealed.
  writeText(path, j.dump(2));
  ASSERT_TRUE(sealLockfile(path, already, err)) << err;
  EXPECT_FALSE(already);
  json resealed;
  ASSERT_TRUE(parseJsonFile(path, resealed, err)) << err;
  ASSERT_TRUE(resealed.contains(kLockShaKey));
  EXPECT_EQ(resealed[kLockShaKey], lockSha256Of(j));
  resealed.erase(kLockShaKey);
  EXPECT_EQ(resealed, j);
  l = readLockfile(path, err);
  ASSERT_TRUE(l) << err;
  EXPECT_TRUE(l->sealed);
  EXPECT_EQ(l->score["winner"], 0.5);
  ASSERT_TRUE(sealLockfile(path, already, err)) << err;
  EXPECT_TRUE(already);
}

// Item 6: a run directory every user can write to is refused before the
// engine listens there (another user could unlink the socket and bind
// theirs); a socket replaced during a build is noticed, with its owner.
TEST(Reliability4, WorldWritableRunDirectoryIsRefused) {
  test::Scratch dir("ciq-r4");
  chmod(dir.path().c_str(), 0777);
  std::string path, err;
  EXPECT_FALSE(socketPathFor(dir.path(), path, err));
  // Checked whatever the socket's path (issue 51 item 1: a long run dir
  // moved the socket away and skipped the check; CI's paths are long).
  EXPECT_NE(err.find("the run directory is unsafe: " + dir.path()), std::string::npos) << err;
  EXPECT_NE(err.find("has mode 0777: other users may write to it"), std::string::npos) << err;
  EXPECT_NE(err.find("make it yours alone (chown it, chmod go-w"), std::string::npos) << err;
  chmod(dir.path().c_str(), 0755);
  EXPECT_TRUE(socketPathFor(dir.path(), path, err)) << err;
}

TEST(Reliability4, ReplacedEngineSocketIsNoticed) {
  test::Scratch dir("ciq-r4");
  std::string path = dir.path() + "/engine.sock", err;
  Daemon d;
  ASSERT_TRUE(d.start(path, err)) << err;
  EXPECT_EQ(d.socketProblem(), "");
  UnixListener impostor; // unlinks the engine's socket and binds its own
  ASSERT_TRUE(impostor.listen(path, err)) << err;
  EXPECT_EQ(d.socketProblem(), "was replaced by a socket of uid " + std::to_string(getuid()));
  impostor.close();
  unlink(path.c_str());
  EXPECT_EQ(d.socketProblem(), "was removed");
  d.stop();
}

// The wrapper refuses another user's socket at once: its line says so, not
// "did not answer within 20 s ... raise CIQ_SOCKET_TIMEOUT".
TEST(Reliability4, AnotherUsersSocketIsRefusedAsSuch) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root, to act as another user (nobody)";
  test::Scratch dir("ciq-r4");
  chmod(dir.path().c_str(), 0777);
  std::string path = dir.path() + "/engine.sock";
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(3);
    UnixListener l;
    std::string e;
    if (!l.listen(path, e))
      _exit(4);
    chmod(path.c_str(), 0777);
    pause();
    _exit(0);
  }
  for (int i = 0; i < 200 && access(path.c_str(), F_OK) != 0; ++i)
    usleep(10000);
  wrapper::EngineClient client(path, 20);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client.requestCandidate(CompileRequest{}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_NE(client.error().find("refusing the engine socket " + path), std::string::npos) << client.error();
  EXPECT_NE(client.error().find("belongs to uid 65534"), std::string::npos) << client.error();
  EXPECT_EQ(client.error().find("did not answer"), std::string::npos) << client.error();
  EXPECT_EQ(client.error().find("CIQ_SOCKET_TIMEOUT"), std::string::npos) << client.error();
}

// A receipt the engine refuses: the wrapper's line gives the engine's why,
// not "did not answer ... no ack for the receipt".
TEST(Reliability4, RefusedReceiptSaysWhy) {
  test::Scratch dir("ciq-r4");
  std::string path = dir.path() + "/engine.sock", err;
  UnixListener engine;
  ASSERT_TRUE(engine.listen(path, err)) << err;
  std::thread fake([&] {
    LineSocket s = engine.accept(10);
    if (!s.valid() || !s.receive(10))
      return;
    s.send(makeMessage("candidate", CandidateMessage{}));
    if (s.receive(10))
      s.send(makeMessage("error", {{"message", "receipt of c0001 answers no hello of this connection"}}));
  });
  wrapper::EngineClient client(path, 20);
  ASSERT_TRUE(client.requestCandidate(CompileRequest{})) << client.error();
  EXPECT_FALSE(client.sendReceipt(Receipt{}));
  fake.join();
  EXPECT_EQ(client.error(),
            "the ciq engine refused this compile's receipt: receipt of c0001 answers no hello of this connection");
}

// Item 8: after `ciq resume` of a search that ran in the killed process, the
// summary said "GPU busy 0% of the search phase (benchmark runs 0.0 s of
// 0.0 s)"; it now says what its figures cover.
TEST(Reliability4, GpuBusyAfterResumeSaysWhatItCovers) {
  TuneConfig cfg;
  cfg.benchmark.enabled = true;
  cfg.objectives.push_back({"time_ms", "minimize", "ms", {}, "sum", {}});
  std::vector<Evaluation> evals(2);
  evals[0].candidateId = "c0000";
  evals[1].candidateId = "c0001";
  evals[1].generation = 1;
  for (auto &e : evals)
    e.ok = true, e.scores["time_ms"] = 10;
  auto print = [&](const Verdicts &v) {
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    printSummary(cfg, evals, WinnerChoice{0, false, ""}, f, v);
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
  };
  Verdicts fresh;
  fresh.searchSeconds = 4, fresh.gpuBusySeconds = 2, fresh.searchedHere = 1;
  EXPECT_NE(print(fresh).find("GPU busy 50% of the search phase (benchmark runs 2.0 s of 4.0 s)"), std::string::npos);
  Verdicts resumed;
  resumed.searchSeconds = 0.01, resumed.resumedEvaluations = 2;
  std::string out = print(resumed);
  EXPECT_EQ(out.find("GPU busy 0%"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU busy: not measured: the search phase ran before `ciq resume` (its 2 evaluations are in "
                     "the journal"),
            std::string::npos)
      << out;
  resumed.searchSeconds = 4, resumed.gpuBusySeconds = 1, resumed.searchedHere = 3;
  EXPECT_NE(print(resumed).find("GPU busy 25% of this process's search phase (benchmark runs 1.0 s of 4.0 s, 3 "
                                "evaluations; the 2 journaled before `ciq resume` are not counted)"),
            std::string::npos)
      << print(resumed);
}

// Item 9: a kill -9 between a rewrite's temporary file and its rename (the
// test hook CIQ_TEST_KILL_BEFORE_RENAME) leaves the old file whole and the
// new bytes in <file>.tmp.<pid>: the lock (writeLockfile) and results.csv
// are written through writeFileAtomically.
TEST(Reliability4, KillBeforeRenameLeavesTheOldFile) {
  test::Scratch dir("ciq-r4");
  std::string lock = dir.path() + "/ciq.lock", err;
  Lockfile old = sampleLock();
  ASSERT_TRUE(writeLockfile(lock, old, err)) << err;
  std::string before = readWholeFile(lock).value_or("");
  auto killedWriting = [&](const char *hook, const std::function<void()> &write) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("CIQ_TEST_KILL_BEFORE_RENAME", hook, 1);
      write();
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << hook << ": status " << status;
    return pid;
  };
  Lockfile changed = old;
  changed.candidateId = "c0002";
  pid_t pid = killedWriting("ciq.lock", [&] {
    std::string e;
    writeLockfile(lock, changed, e);
  });
  EXPECT_EQ(readWholeFile(lock).value_or(""), before);
  auto tmp = readWholeFile(lock + ".tmp." + std::to_string(pid));
  ASSERT_TRUE(tmp);
  EXPECT_NE(tmp->find("\"c0002\""), std::string::npos);
  EXPECT_TRUE(readLockfile(lock, err)) << err;
  // NAME:N: the Nth rewrite of that name; others pass.
  std::string csv = dir.path() + "/results.csv";
  pid = killedWriting("results.csv:2", [&] {
    std::string e;
    writeFileAtomically(dir.path() + "/other.csv", "x\n", e);
    writeFileAtomically(csv, "a\n", e);
    writeFileAtomically(csv, "a\nb\n", e);
  });
  EXPECT_EQ(readWholeFile(csv).value_or(""), "a\n");
  EXPECT_EQ(readWholeFile(dir.path() + "/other.csv").value_or(""), "x\n");
  EXPECT_EQ(readWholeFile(csv + ".tmp." + std::to_string(pid)).value_or(""), "a\nb\n");
}

// Item 7: a compile ends with the engine. The wrapper's run of the compiler
// watches its engine connection (closed by the kernel when the engine dies)
// and ends the compiler's group at once; a compile of the engine's own build
// (CIQ_ENGINE_TOKEN) whose engine is gone fails instead of compiling on
// without a candidate.
TEST(Reliability4, RunEndsWhenItsWatchedDescriptorCloses) {
  int life[2];
  ASSERT_EQ(pipe2(life, O_CLOEXEC), 0);
  SubprocessOptions o;
  o.endWhenReadable = life[0];
  std::thread engineDies([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    close(life[1]);
  });
  auto start = std::chrono::steady_clock::now();
  auto r = runSubprocess({"sh", "-c", "sleep 30 & sleep 30"}, o);
  engineDies.join();
  close(life[0]);
  EXPECT_TRUE(r.endedByWatch);
  EXPECT_EQ(r.termSignal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Reliability4, CompileOfAKilledEnginesBuildFails) {
  test::Scratch dir("ciq-r4");
  std::string path = dir.path() + "/engine.sock", err;
  { // bound, never listened on, closed: the file stays, nobody listens (the engine was killed)
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(bind(fd, (sockaddr *)&addr, sizeof addr), 0) << strerror(errno);
    close(fd);
  }
  CompileRequest req;
  req.engineToken = "0123";
  wrapper::EngineClient ofTheBuild(path, 20);
  EXPECT_FALSE(ofTheBuild.requestCandidate(req));
  EXPECT_FALSE(ofTheBuild.compileUnchanged());
  EXPECT_NE(ofTheBuild.error().find("the ciq engine that started this build has ended (nothing listens on "
                                    "CIQ_SOCKET=" + path + "): the compile stops with it"),
            std::string::npos)
      << ofTheBuild.error();
  // A variable a shell kept (no token): compiled without a candidate, as before.
  wrapper::EngineClient kept(path, 20);
  EXPECT_FALSE(kept.requestCandidate(CompileRequest{}));
  EXPECT_TRUE(kept.compileUnchanged());
  unlink(path.c_str());
  wrapper::EngineClient gone(path, 20);
  EXPECT_FALSE(gone.requestCandidate(req));
  EXPECT_FALSE(gone.compileUnchanged());
  EXPECT_NE(gone.error().find("does not exist): the compile stops with it"), std::string::npos) << gone.error();
}
