// Issue 15 (kill it, fuzz it, attack it) and issue 12 items 13-14: bad
// messages never end the engine, readers report file/key/expectation, the
// socket and its folder are this user's only, names from remote answers stay
// one path component, compiles of a killed search are tracked and ended, the
// journal's lines carry checksums and its inputs are recorded.
#include "engine/assets/BoosterCatalog.h"
#include "engine/compile/BuildTreeGuard.h"
#include "engine/compile/Daemon.h"
#include "engine/compile/InputIdentity.h"
#include "engine/record/Journal.h"
#include "common/JsonRead.h"
#include "common/Lockfile.h"
#include "common/ProcessTrack.h"
#include "engine/assets/Releases.h"
#include "common/Sha256.h"
#include "common/Socket.h"
#include "engine/assets/SpaceManifest.h"
#include "tests/unit/engine_test_util.h"

#include <csignal>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ciq;
using nlohmann::json;

namespace {

std::string tempDir() {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ciq-robust", dir);
  return dir.str().str();
}

std::string deepArray(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

void writeText(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

// One request/answer on a fresh connection to the daemon.
std::optional<json> ask(const std::string &socket, const std::string &line) {
  std::string err;
  auto s = connectUnix(socket, 2, err);
  if (!s)
    return std::nullopt;
  std::string text = line + "\n";
  (void)!::send(s->fd(), text.data(), text.size(), MSG_NOSIGNAL);
  return s->receive(5);
}

} // namespace

TEST(JsonRead, TypesAreCheckedAndNamed) {
  json j = {{"a", 5}, {"b", {1, "x"}}};
  std::string s;
  std::vector<int> v;
  JsonFields f(j, "f.json:3");
  f.opt("a", s);
  EXPECT_EQ(f.error(), "f.json:3: \"a\": expected a string, found an integer");
  JsonFields g(j, "f.json:3");
  g.opt("b", v);
  EXPECT_EQ(g.error(), "f.json:3: \"b\"[1]: expected an integer, found a string");
  JsonFields h(json::array(), "x");
  EXPECT_FALSE(h.ok());
}

TEST(JsonRead, DeepNestingIsRefusedBeforeAnyDom) {
  json j;
  std::string err;
  EXPECT_FALSE(parseJson(deepArray(100000), "lock", j, err));
  EXPECT_NE(err.find("nested deeper than 64"), std::string::npos) << err;
  EXPECT_TRUE(parseJson(deepArray(10), "ok", j, err)) << err;
  EXPECT_FALSE(parseJson("{\"a\":", "cut", j, err));
  EXPECT_NE(err.find("cut: not valid JSON (parse error at line 1"), std::string::npos) << err;
}

// Item 5: one short message of the wrong types must not end the engine.
TEST(Daemon, BadMessagesGetAnErrorAndTheEngineGoesOn) {
  std::string dir = tempDir();
  Daemon d;
  d.setLogPath(dir + "/socket.log");
  std::string err;
  ASSERT_TRUE(d.start(dir + "/e.sock", err)) << err;
  d.setStatus({{"state", "alive"}});
  for (const char *bad : {R"({"v":1,"op":5})", R"({"v":"1","op":"status"})",
                          R"({"v":1,"op":"receipt","kernels":5})", R"({"v":1,"op":"hello","argv":[1]})",
                          R"({"v":1,"op":"receipt","kernels":[{"registers":"x"}]})", "[1,2]", "not json"}) {
    auto reply = ask(d.socketPath(), bad);
    ASSERT_TRUE(reply) << bad;
    EXPECT_EQ((*reply)["op"], "error") << bad;
  }
  auto status = ask(d.socketPath(), R"({"v":1,"op":"status"})");
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["state"], "alive");
  EXPECT_GE(d.rejectedMessages(), 7);
  std::ifstream log(dir + "/socket.log");
  std::string first;
  std::getline(log, first);
  EXPECT_NE(first.find("refused a message"), std::string::npos) << first;
  d.stop();
  llvm::sys::fs::remove_directories(dir);
}

TEST(Socket, LineLengthIsBounded) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  LineSocket reader(sv[0]);
  reader.setMaxLineBytes(1 << 20);
  std::thread writer([fd = sv[1]] {
    std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 64; ++i) // 4 MiB without a newline
      if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0)
        break;
    ::close(fd);
  });
  EXPECT_FALSE(reader.receive(10));
  EXPECT_NE(reader.error().find("without a newline"), std::string::npos) << reader.error();
  ::shutdown(sv[0], SHUT_RDWR);
  writer.join();
}

// Item 1: a compile of another (killed) engine gets no candidate, and only
// receipts with this engine's token count.
TEST(Daemon, OnlyThisInstancesCompilesCount) {
  std::string dir = tempDir();
  Daemon d;
  std::string err;
  ASSERT_TRUE(d.start(dir + "/e.sock", err)) << err;
  CandidateMessage c;
  c.candidateId = "c0001";
  d.setCandidate(c);
  auto old = ask(d.socketPath(), R"({"v":1,"op":"hello","engine_token":"an-earlier-engine"})");
  ASSERT_TRUE(old);
  EXPECT_EQ((*old)["op"], "error");
  EXPECT_NE((*old)["message"].get<std::string>().find("another ciq engine"), std::string::npos);
  json hello = makeMessage("hello", {{"engine_token", d.token()}});
  // A receipt answers its connection's hello (ReceiptCheck.h): both on one connection.
  auto compile = [&](const std::string &receiptToken) {
    auto s = connectUnix(d.socketPath(), 2, err);
    EXPECT_TRUE(s) << err;
    s->send(hello);
    auto mine = s->receive(5);
    EXPECT_TRUE(mine && (*mine)["op"] == "candidate" && (*mine)["engine_token"] == d.token());
    s->send(makeMessage("receipt", {{"candidate_id", "c0001"}, {"engine_token", receiptToken}, {"status", "ok"}}));
    auto reply = s->receive(5);
    return reply ? (*reply)["op"].get<std::string>() : "closed";
  };
  EXPECT_EQ(compile("stale"), "error");
  EXPECT_TRUE(d.receipts().empty());
  EXPECT_EQ(compile(d.token()), "ack");
  EXPECT_EQ(d.receipts().size(), 1u);
  d.stop();
  llvm::sys::fs::remove_directories(dir);
}

// Item 7: the fallback folder for long socket paths must be ours, 0700.
TEST(Socket, FallbackFolderIsVerified) {
  std::string tmp = tempDir();
  setenv("TMPDIR", tmp.c_str(), 1);
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  std::string savedXdg = xdg ? xdg : "";
  unsetenv("XDG_RUNTIME_DIR");
  std::string runDir = "/" + std::string(120, 'r');
  std::string dir = tmp + "/ciq-" + std::to_string(getuid()), path, err;
  ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
  chmod(dir.c_str(), 0777); // another user made it first, world-writable
  EXPECT_FALSE(socketPathFor(runDir, path, err));
  EXPECT_NE(err.find("mode 0777, not 0700"), std::string::npos) << err;
  rmdir(dir.c_str());
  ASSERT_EQ(symlink(tmp.c_str(), dir.c_str()), 0); // a link planted in its place
  EXPECT_FALSE(socketPathFor(runDir, path, err));
  EXPECT_NE(err.find("not a directory"), std::string::npos) << err;
  unlink(dir.c_str());
  if (getuid() == 0) { // owned by someone else
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    ASSERT_EQ(chown(dir.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(socketPathFor(runDir, path, err));
    EXPECT_NE(err.find("belongs to uid 65534"), std::string::npos) << err;
    rmdir(dir.c_str());
  }
  EXPECT_TRUE(socketPathFor(runDir, path, err)) << err;
  EXPECT_EQ(path.rfind(dir + "/", 0), 0u) << path;
  struct stat st {};
  ASSERT_EQ(lstat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  unsetenv("TMPDIR");
  if (!savedXdg.empty())
    setenv("XDG_RUNTIME_DIR", savedXdg.c_str(), 1);
  llvm::sys::fs::remove_directories(tmp);
}

// Item 7: SO_PEERCRED on both ends (needs root to act as another user).
TEST(Socket, PeersOfAnotherUserAreRefused) {
  if (getuid() != 0)
    GTEST_SKIP() << "needs root to connect as another uid";
  std::string dir = tempDir();
  chmod(dir.c_str(), 0755);
  Daemon d;
  std::string err;
  ASSERT_TRUE(d.start(dir + "/e.sock", err)) << err;
  chmod((dir + "/e.sock").c_str(), 0666); // even when the mode would let them in
  pid_t child = fork();
  if (child == 0) {
    if (setuid(65534) != 0)
      _exit(3);
    std::string e;
    auto s = connectUnix(dir + "/e.sock", 1, e); // the client refuses root's engine...
    _exit(s ? 1 : (e.find("belongs to uid 0") != std::string::npos ? 0 : 2));
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // ...and the engine refuses the client (checked with a raw connect).
  child = fork();
  if (child == 0) {
    if (setuid(65534) != 0)
      _exit(3);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    strncpy(a.sun_path, (dir + "/e.sock").c_str(), sizeof a.sun_path - 1);
    if (connect(fd, (sockaddr *)&a, sizeof a) != 0)
      _exit(4);
    LineSocket s(fd);
    s.send(makeMessage("status"));
    _exit(s.receive(3) ? 1 : 0); // closed without an answer
  }
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  d.stop();
  llvm::sys::fs::remove_directories(dir);
}

// Item 6: wrong-typed and deeply nested lockfiles are one error line.
TEST(Lockfile, WrongTypesAreOneLine) {
  std::string dir = tempDir();
  Lockfile l;
  l.target = "app";
  l.architectures = {"sm_90"};
  l.candidateId = "c0001";
  l.candidateHash = candidateHashOf({}, {}, {}, {});
  std::string err;
  ASSERT_TRUE(writeLockfile(dir + "/ciq.lock", l, err)) << err;
  json good;
  ASSERT_TRUE(parseJsonFile(dir + "/ciq.lock", good, err)) << err;
  struct Case {
    const char *what;
    std::function<void(json &)> edit;
    const char *expect;
  } cases[] = {
      {"engine_version", [](json &j) { j["engine_version"] = 5; }, "\"engine_version\": expected a string"},
      {"compiler.nvcc", [](json &j) { j["compiler"]["nvcc"] = 5; }, "compiler: \"nvcc\": expected an object"},
      {"nvcc.version", [](json &j) { j["compiler"]["nvcc"]["version"] = 5; }, "\"version\": expected a string"},
      {"rendered", [](json &j) { j["winner"]["rendered"]["ptxas"] = {1}; }, "\"ptxas\"[0]: expected a string"},
      {"score.unit", [](json &j) { j["score"] = {{"unit", 5}}; }, "\"unit\": expected a string"},
  };
  for (auto &c : cases) {
    json j = good;
    c.edit(j["architectures"]["sm_90"]); // the winner's section (schema 2)
    writeText(dir + "/bad.lock", j.dump());
    EXPECT_FALSE(readLockfile(dir + "/bad.lock", err)) << c.what;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.what << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos);
  }
  std::string text = good.dump();
  text.replace(text.find("\"gpu\":{}"), 8, "\"gpu\":" + deepArray(100000));
  writeText(dir + "/deep.lock", text);
  EXPECT_FALSE(readLockfile(dir + "/deep.lock", err));
  EXPECT_NE(err.find("nested deeper"), std::string::npos) << err;
  EXPECT_FALSE(readLockfile(dir, err));
  EXPECT_NE(err.find("is a directory"), std::string::npos) << err;
  llvm::sys::fs::remove_directories(dir);
}

// Item 8: names that become paths are one component; file:// is refused.
TEST(Assets, RemoteNamesStayInsideTheCache) {
  std::string err;
  json acfs = json::array({{{"filename", "a.acf"}, {"sha256", sha256Hex("A")}, {"size_bytes", 1}}});
  json pack = {{"pack_id", "p"}, {"artifact_name", "p.zip"}, {"artifact_sha256", sha256Hex("zip")},
               {"artifact_size_bytes", 3}, {"manifest_path", "m.json"}, {"manifest_sha256", sha256Hex("{}")},
               {"acf_count", 1}, {"acfs", acfs}, {"cuda_version", "13.0"}, {"controls_stage", "ptxas"}};
  json catalog = {{"schema_version", "1.0"}, {"catalog_version", "1"}, {"release_tag", "t"}, {"packs", {pack}}};
  ASSERT_TRUE(parseBoosterCatalog(catalog.dump(), "c.json", err)) << err;
  json escape = catalog;
  escape["release_tag"] = "../../../../tmp/owned";
  EXPECT_FALSE(parseBoosterCatalog(escape.dump(), "c.json", err));
  EXPECT_NE(err.find("'release_tag'"), std::string::npos) << err;
  json packId = catalog;
  packId["packs"][0]["pack_id"] = "../p";
  EXPECT_FALSE(parseBoosterCatalog(packId.dump(), "c.json", err));
  EXPECT_NE(err.find("'pack_id'"), std::string::npos) << err;
  json acfName = catalog;
  acfName["packs"][0]["acfs"][0]["filename"] = "../../a.acf";
  EXPECT_FALSE(parseBoosterCatalog(acfName.dump(), "c.json", err));
  EXPECT_NE(err.find("'filename'"), std::string::npos) << err;

  json release = {{"tag_name", "t1"},
                  {"assets", {{{"name", "a.zip"}, {"browser_download_url", "https://x/a.zip"}, {"size", 3}}}}};
  ASSERT_TRUE(parseReleaseAnswer(release.dump(), err)) << err;
  json fileUrl = release;
  fileUrl["assets"][0]["browser_download_url"] = "file:///home/me/.ssh/id_rsa";
  EXPECT_FALSE(parseReleaseAnswer(fileUrl.dump(), err));
  EXPECT_NE(err.find("not an http(s) URL"), std::string::npos) << err;
  json numName = release;
  numName["assets"][0]["name"] = 5;
  EXPECT_FALSE(parseReleaseAnswer(numName.dump(), err));
  EXPECT_NE(err.find("\"name\": expected a string"), std::string::npos) << err;
  json tag = release;
  tag["tag_name"] = "../x";
  EXPECT_FALSE(parseReleaseAnswer(tag.dump(), err));

  json manifest = {{"manifest_format", "1.0.0"}, {"tag", "../../up"}, {"entries", json::array()}};
  EXPECT_FALSE(parseSpaceManifest(manifest.dump(), "m.json", err));
  EXPECT_NE(err.find("'tag'"), std::string::npos) << err;
}

// Items 1 and 3: every registered compile group is ended, and only those.
TEST(ProcessTrack, RegisteredGroupsAreReaped) {
  std::string run = tempDir();
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0); // a compile in a group of its own, as ninja and ciq-ptxas make them
    execlp("sleep", "sleep", "300", (char *)nullptr);
    _exit(127);
  }
  setpgid(child, child);
  for (int i = 0; i < 100 && getpgid(child) != child; ++i)
    usleep(10000);
  {
    CompileRegistration reg(run); // registers this test's own group too: never killed (it is the caller's)
    reg.addGroup(child);
    EXPECT_EQ(reapCompiles(run, 0.2), 1); // this test is the child's parent: it stays a zombie until waited for
  }
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(reapCompiles(run, 1), 0);
  llvm::sys::fs::remove_directories(run);
}

// Item 4: what a kill -9 left in the build tree is removed by the next ciq.
TEST(BuildTreeGuard, RepairsOnlyAfterTheEngineIsGone) {
  std::string build = tempDir();
  llvm::sys::fs::create_directories(build + "/CMakeFiles");
  std::string obj = build + "/k.o";
  writeText(obj, "candidate");
  std::string list = candidateObjectsList(build);
  writeText(list, "# ciq engine " + std::to_string(getpid()) + " " + std::to_string(processStartTime(getpid())) +
                      "\n" + obj + "\n");
  std::string note;
  repairBuildTree(build, build + "/run", note); // this process "is" the engine: still running
  EXPECT_TRUE(note.empty());
  EXPECT_TRUE(llvm::sys::fs::exists(obj));
  writeText(list, "# ciq engine 999999999 1\n" + obj + "\n");
  repairBuildTree(build, build + "/run", note);
  EXPECT_NE(note.find("removed 1 object(s) of an interrupted ciq search"), std::string::npos) << note;
  EXPECT_FALSE(llvm::sys::fs::exists(obj));
  EXPECT_FALSE(llvm::sys::fs::exists(list));
  llvm::sys::fs::remove_directories(build);
}

// Issue 12 item 14: damaged lines are reported, intact ones kept, ids never reused.
TEST(Journal, DamagedLinesAreReportedAndIdsNeverReused) {
  std::string dir = tempDir();
  std::string path = dir + "/journal.jsonl";
  {
    Journal j;
    std::string err;
    ASSERT_TRUE(j.open(path, err)) << err;
    j.append({{"op", "start"}, {"seed", 1}});
    for (int i = 0; i < 6; ++i) {
      Evaluation e;
      e.candidateId = "c000" + std::to_string(i);
      e.ok = true;
      e.point = {i};
      j.append(evaluationToJson(e));
    }
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // NULs in the middle of c0004's line (line 6), types changed in c0005's... line 7 keeps its checksum but
  // a hand-edited line without one has a wrong type.
  size_t l6 = 0;
  for (int n = 0; n < 5; ++n)
    l6 = text.find('\n', l6) + 1;
  text.replace(l6 + 40, 4, std::string(4, '\0'));
  text += R"({"op":"evaluation","candidate_id":"c0009","generation":"x"})" "\n";
  text += R"({"op":5})" "\n";
  text += R"({"op":"evaluation","candidate_id":"c00)"; // torn by a kill: no newline
  writeText(path, text);
  JournalContents c = readJournal(path);
  ASSERT_EQ(c.damaged.size(), 3u);
  EXPECT_NE(c.damaged[0].find("journal.jsonl:6: damaged"), std::string::npos) << c.damaged[0];
  // Lines that are not records come first, then records with a wrong field.
  EXPECT_NE(c.damaged[1].find(":9: \"op\": expected a string"), std::string::npos) << c.damaged[1];
  EXPECT_NE(c.damaged[2].find(":8: \"generation\": expected an integer, found a string"), std::string::npos)
      << c.damaged[2];
  ASSERT_EQ(c.evaluations.size(), 5u); // c0000-c0003 and c0005: nothing intact lost
  EXPECT_EQ(c.evaluations.back().candidateId, "c0005");
  EXPECT_GE(c.nextId, 6); // c0004 (damaged) and c0005 are never given again
  llvm::sys::fs::remove_directories(dir);
}

// Issue 12 item 13: the inputs' identity, and the one line naming a change.
TEST(InputIdentity, NamesTheChangedInput) {
  ciq::test::TempProject p;
  std::string src = p.write("kern.cu", "__global__ void k() {}\n");
  TuneConfig cfg = p.loadOk("target: app\nobjectives: [registers]\nspace:\n  controls:\n"
                            "    - name: o\n      ptxas: \"--opt-level={}\"\n      choice: [1, 2]\n");
  CudaObject o;
  o.source = src;
  o.object = p.dir() + "/kern.o";
  o.target = "app";
  json inputs = captureInputs(cfg, {o});
  EXPECT_EQ(inputs["files"][src], sha256Hex("__global__ void k() {}\n"));
  EXPECT_EQ(changedInput(inputs, cfg), "");
  p.write("kern.cu", "__global__ void k() { /* edited */ }\n");
  EXPECT_EQ(changedInput(inputs, cfg), src + " changed since this search started");
  llvm::sys::fs::remove(src);
  EXPECT_EQ(changedInput(inputs, cfg), src + " is gone since this search started");
  p.write("ciq.yaml", "target: app\n");
  EXPECT_NE(changedInput(inputs, cfg).find("ciq.yaml changed"), std::string::npos);
}
