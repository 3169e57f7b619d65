// Fuzzing every reader of outside input (issue 15 item 6): from a valid
// sample of each file kind, a fixed-seed generator makes a few hundred
// inputs (values swapped for other types, keys removed, deep nesting, byte
// flips, NULs, cuts) and runs the reader on each in a forked child. A child
// that dies of a signal or an uncaught exception is a crash; the goal is 0.
// Clean rejections (one error line) and acceptances are both fine.
#include "sample_kernel.h"
#include "engine/assets/BoosterCatalog.h"
#include "engine/config/Config.h"
#include "engine/compile/Daemon.h"
#include "engine/record/Journal.h"
#include "common/JsonRead.h"
#include "common/Lockfile.h"
#include "engine/assets/Releases.h"
#include "engine/analysis/RunData.h"
#include "common/Sha256.h"
#include "engine/assets/SpaceManifest.h"
#include "engine/compile/BuildDriver.h"
#include "engine/measure/KernelTrace.h"
#include "tests/unit/engine_test_util.h"

#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ciq;
using nlohmann::json;

namespace {

constexpr int kCases = 300;
constexpr unsigned kSeed = 15;

// Runs one case in a child; true when it crashed (the status is kept in lastStatus).
int lastStatus = 0;
bool crashes(const std::function<void()> &reader) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // Readers print errors, never crash: silence them, keep the exit status.
    freopen("/dev/null", "w", stderr);
    alarm(60); // a reader that hangs (a YAML alias bomb did) fails too, as SIGALRM
    reader();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  lastStatus = status;
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

json randomValue(std::mt19937 &rng) {
  switch (rng() % 11) {
  case 0: return 5;
  case 1: return -1;
  case 2: return 1e308;
  case 3: return "x";
  case 4: return "../../../../tmp/escape";
  case 5: return nullptr;
  case 6: return true;
  case 7: return json::array({1, "a", nullptr});
  case 8: return json::object({{"k", 5}});
  case 9: return 18446744073709551615ull;
  default: return std::string(1000, 'z');
  }
}

// Every node of a JSON document, by pointer, to pick one at random.
void collect(const json &j, const json::json_pointer &at, std::vector<json::json_pointer> &out) {
  out.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      collect(it.value(), at / it.key(), out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i)
      collect(j[i], at / i, out);
}

std::string mutateBytes(std::string text, std::mt19937 &rng) {
  if (text.empty())
    return text;
  switch (rng() % 5) {
  case 0: text[rng() % text.size()] ^= (char)(1 + rng() % 255); break;
  case 1: text.insert(rng() % text.size(), std::string(1 + rng() % 4, '\0')); break;
  case 2: text.resize(rng() % text.size()); break;
  case 3: text.insert(rng() % text.size(), std::string(2000, '[')); break;
  default: {
    size_t a = rng() % text.size();
    text.insert(rng() % text.size(), text.substr(a, 1 + rng() % 40));
  }
  }
  return text;
}

// Half structured (a value of another type, a key removed), half bytes.
std::string mutateJson(const json &doc, std::mt19937 &rng) {
  if (rng() % 2)
    return mutateBytes(doc.dump(), rng);
  json j = doc;
  std::vector<json::json_pointer> nodes;
  collect(j, json::json_pointer(), nodes);
  auto at = nodes[rng() % nodes.size()];
  if (at.empty())
    return randomValue(rng).dump();
  if (rng() % 4 == 0) {
    json &parent = j[at.parent_pointer()];
    if (parent.is_object())
      parent.erase(at.back());
    else
      j[at] = randomValue(rng);
  } else {
    j[at] = randomValue(rng);
  }
  return j.dump();
}

// YAML: a scalar or a whole line swapped for another shape, or bytes.
// Aliases of aliases, 9 levels of 10 ("billion laughs", issue 42 item 2),
// under a key of its own.
std::string aliasBomb() {
  std::string y = "bomb:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string p = "*a" + std::to_string(i - 1), row = "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k)
      row += (k ? ", " : "") + p;
    y += row + "]\n";
  }
  return y;
}

std::string mutateYaml(const std::string &text, std::mt19937 &rng) {
  if (rng() % 16 == 0)
    return text + aliasBomb();
  if (rng() % 2)
    return mutateBytes(text, rng);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  size_t k = rng() % lines.size();
  static const char *shapes[] = {"[1, 2]", "{a: 1}", "\"\"", "-5", "1e400", "~", "!!binary AAAA", "*alias",
                                 "&a [*a]", "\"../../x\""};
  size_t colon = lines[k].find(": ");
  if (colon != std::string::npos && rng() % 3)
    lines[k] = lines[k].substr(0, colon + 2) + shapes[rng() % 10];
  else if (rng() % 2)
    lines.erase(lines.begin() + k);
  else
    lines.insert(lines.begin() + k, lines[rng() % lines.size()]);
  std::string out;
  for (const auto &l : lines)
    out += l + "\n";
  return out;
}

void writeText(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

int fuzzFile(const std::string &path, const std::function<std::string(std::mt19937 &)> &make,
             const std::function<void()> &reader) {
  std::mt19937 rng(kSeed);
  int crashed = 0;
  for (int i = 0; i < kCases; ++i) {
    std::string input = make(rng);
    writeText(path, input);
    if (crashes(reader)) {
      ++crashed;
      ADD_FAILURE() << "crash (wait status " << lastStatus << ") on case " << i << " of " << path << ":\n"
                    << input.substr(0, 2000);
    }
  }
  return crashed;
}

json sampleLock() {
  Lockfile l;
  l.target = "app";
  l.architectures = {"sm_90"};
  l.candidateId = "c0003";
  l.ptxasOptions = {"--opt-level=2"};
  l.candidateHash = candidateHashOf(l.ptxasOptions, {}, {}, {});
  l.score = {{"objective", "time_ms"}, {"unit", "ms"}, {"baseline", 2.0}, {"winner", 1.0}};
  l.acfs = {{"ptxas", "ciq-acf/x.acf", sha256Hex("x")}};
  return lockToJson(l);
}

} // namespace

TEST(Fuzz, Lockfile) {
  ciq::test::TempProject p;
  std::string path = p.dir() + "/ciq.lock";
  json doc = sampleLock();
  EXPECT_EQ(fuzzFile(path, [&](std::mt19937 &r) { return mutateJson(doc, r); },
                     [&] {
                       std::string err;
                       readLockfile(path, err);
                     }),
            0);
}

TEST(Fuzz, JournalAndResultsCsv) {
  ciq::test::TempProject p;
  std::string run = p.dir() + "/run";
  llvm::sys::fs::create_directories(run);
  Evaluation e;
  e.candidateId = "c0001";
  e.generation = 1;
  e.point = {1, 2};
  e.ok = true;
  e.scores = {{"registers", 40}};
  e.kernels = {ciq::test::sampleKernel(40, 8, 8, 16)};
  ObjectRecord o;
  o.source = "a.cu";
  o.output = "a.o";
  o.deviceCodeSha256 = sha256Hex("d");
  o.status = "ok";
  o.deviceCodeBytes = 100;
  o.wallMs = 5;
  e.objects = {o};
  e.rendered.ptxas = {"--opt-level=2"};
  json start = {{"op", "start"}, {"objectives", {{{"metric", "registers"}, {"direction", "minimize"}}}}, {"seed", 1}};
  std::string journal = journalLineText(start) + "\n" + journalLineText(evaluationToJson(e)) + "\n";
  std::string journalPath = run + "/journal.jsonl";
  int crashed = fuzzFile(journalPath,
                         [&](std::mt19937 &r) {
                           // a whole journal, one of its lines changed
                           json line = r() % 2 ? start : evaluationToJson(e);
                           return journal + mutateJson(line, r) + "\n";
                         },
                         [&] {
                           readJournal(journalPath);
                           std::string err;
                           loadRun(journalPath, err);
                         });
  std::string csv = "candidate_id,generation,status,reason,baseline,pareto,duplicate_of,duplicate_kind,score,"
                    "score_unit,cv_percent,build_ms,measure_ms,candidate_hash,device_code_sha256,controls,"
                    "rendered,log,registers\n"
                    "c0000,0,OK,,1,0,,,40,registers,,10,0,aa,bb,{},,log,40\n"
                    "c0001,1,OK,,0,1,,,32,registers,,10,0,cc,dd,\"{\"\"o\"\":1}\",-Xptxas x,log,32\n";
  std::string csvPath = p.dir() + "/results.csv";
  crashed += fuzzFile(csvPath, [&](std::mt19937 &r) { return mutateBytes(csv, r); },
                      [&] {
                        std::string err;
                        loadRun(csvPath, err);
                      });
  EXPECT_EQ(crashed, 0);
}

TEST(Fuzz, CiqYamlAndSpaceFiles) {
  ciq::test::TempProject p;
  std::string space = "controls:\n  - name: opt-level\n    ptxas: \"--opt-level={}\"\n    choice: [1, 2, 3]\n"
                      "  - name: tile\n    define: TILE\n    range: {start: 2, end: 8, step: 2}\n";
  std::string yaml = "target: app\nobjectives: [registers, spill_bytes]\nsearch:\n  strategy: genetic\n"
                     "  pool_size: 4\n  generations: 2\n  seed: 3\ntimeouts:\n  build_s: 60\n"
                     "space:\n  include: [./space.yaml]\n";
  std::string spacePath = p.write("space.yaml", space);
  std::string cfgPath = p.write("ciq.yaml", yaml);
  std::string err;
  ASSERT_TRUE(loadConfig(cfgPath, err)) << err; // also warms the option tables in the parent
  int crashed = fuzzFile(cfgPath, [&](std::mt19937 &r) { return mutateYaml(yaml, r); },
                         [&] { loadConfig(cfgPath, err); });
  writeText(cfgPath, yaml);
  crashed += fuzzFile(spacePath, [&](std::mt19937 &r) { return mutateYaml(space, r); },
                      [&] { loadConfig(cfgPath, err); });
  EXPECT_EQ(crashed, 0);
}

TEST(Fuzz, ManifestsCatalogsAndApiAnswers) {
  json manifest = {{"manifest_format", "1.0.0"}, {"tag", "search-spaces-1"}, {"generated_at", "2025"},
                   {"entries",
                    {{{"compiler", "ptxas"}, {"compiler_version", "13.0"}, {"variant", "default"},
                      {"filename", "ptxas-13.0-default.yaml"}, {"sha256", sha256Hex("s")}, {"size_bytes", 1},
                      {"search_space_format", "yaml"}, {"description", "d"}}}}};
  json acfs = json::array({{{"filename", "a.acf"}, {"sha256", sha256Hex("A")}, {"size_bytes", 1}}});
  json catalog = {{"schema_version", "1.0"}, {"catalog_version", "1"}, {"release_tag", "t"},
                  {"packs",
                   {{{"pack_id", "p"}, {"artifact_name", "p.zip"}, {"artifact_sha256", sha256Hex("zip")},
                     {"artifact_size_bytes", 3}, {"manifest_path", "m.json"}, {"manifest_sha256", sha256Hex("{}")},
                     {"acf_count", 1}, {"acfs", acfs}, {"cuda_version", "13.0"}, {"controls_stage", "ptxas"},
                     {"supported_gpus", {"sm_90"}}}}}};
  json release = {{"tag_name", "t1"}, {"draft", false}, {"published_at", "2025"},
                  {"assets", {{{"name", "a.zip"}, {"browser_download_url", "https://x/a.zip"}, {"size", 3}}}}};
  std::mt19937 rng(kSeed);
  int crashed = 0;
  for (int i = 0; i < kCases; ++i) {
    std::string m = mutateJson(manifest, rng), c = mutateJson(catalog, rng), a = mutateJson(release, rng);
    crashed += crashes([&] {
      std::string err;
      if (auto parsed = parseSpaceManifest(m, "m.json", err))
        for (const auto &e : parsed->entries)
          (void)e.filename.size();
      parseBoosterCatalog(c, "c.json", err);
      parseReleaseAnswer(a, err);
    });
  }
  EXPECT_EQ(crashed, 0);
}

// Socket messages: one engine in a child takes every mutated message; it
// must answer the last status request after all of them.
TEST(Fuzz, SocketMessages) {
  ciq::test::TempProject p;
  std::string sock = p.dir() + "/e.sock";
  json receipt = makeMessage("receipt", Receipt{});
  receipt["kernels"] = json::array({KernelStats{}});
  json hello = makeMessage("hello", CompileRequest{});
  std::mt19937 rng(kSeed);
  std::vector<std::string> messages;
  for (int i = 0; i < kCases; ++i)
    messages.push_back(mutateJson(i % 2 ? receipt : hello, rng));
  bool crashed = crashes([&] {
    Daemon d;
    std::string err;
    if (!d.start(sock, err))
      _exit(3);
    CandidateMessage c;
    c.candidateId = "c0001";
    d.setCandidate(c);
    d.setStatus({{"alive", true}});
    for (const auto &m : messages) {
      auto s = connectUnix(sock, 2, err);
      if (!s)
        _exit(4);
      std::string line = m + "\n";
      (void)!::send(s->fd(), line.data(), line.size(), MSG_NOSIGNAL);
      s->receive(2);
    }
    auto s = connectUnix(sock, 2, err);
    if (!s)
      _exit(5);
    s->send(makeMessage("status"));
    auto reply = s->receive(5);
    _exit(reply && reply->value("alive", false) ? 0 : 6);
  });
  // The child left without closing its engine: its socket stays, and
  // remove_directories leaves sockets (it removes files, folders and links).
  ::unlink(sock.c_str());
  EXPECT_FALSE(crashed) << "wait status " << lastStatus;
}

// Issue 51 item 4: a kernel trace (written by the benchmark's process) and
// the build tree's compile_commands.json (written by CMake, editable by
// anyone who can write the tree): values of other types, keys removed,
// bytes changed. compile_commands.json's "arguments" of numbers aborted
// discover() (get<std::vector<std::string>>).
TEST(Fuzz, KernelTraceAndCompileCommands) {
  ciq::test::TempProject p;
  json trace = {{"format", "ciq-kernel-trace"}, {"status", "ok"}, {"pid", 42}, {"dropped_records", 0},
                {"kernels",
                 {{{"name", "_Z4kernPf"}, {"launches", 3}, {"total_ns", 1500}, {"grid", {1, 1, 1}}, {"block", {128, 1, 1}}}}}};
  std::string prefix = p.dir() + "/trace";
  int crashed = fuzzFile(prefix + ".42.json", [&](std::mt19937 &r) { return mutateJson(trace, r); },
                         [&] {
                           std::string err;
                           readKernelTrace(prefix, err);
                         });
  p.write("build/CMakeCache.txt", "CMAKE_CUDA_COMPILER:FILEPATH=/usr/local/cuda/bin/nvcc\nCMAKE_GENERATOR:INTERNAL=Ninja\n");
  json db = json::array(
      {{{"directory", p.dir() + "/build"}, {"file", p.dir() + "/k.cu"}, {"output", "CMakeFiles/app.dir/k.cu.o"},
        {"arguments", {"/usr/local/cuda/bin/nvcc", "-c", "k.cu", "-o", "CMakeFiles/app.dir/k.cu.o"}}},
       {{"directory", p.dir() + "/build"}, {"file", p.dir() + "/main.cpp"},
        {"command", "/usr/bin/c++ -c main.cpp -o CMakeFiles/app.dir/main.cpp.o"}}});
  TuneConfig cfg;
  cfg.buildDir = p.dir() + "/build";
  cfg.target = "app";
  crashed += fuzzFile(cfg.buildDir + "/compile_commands.json", [&](std::mt19937 &r) { return mutateJson(db, r); },
                      [&] {
                        CMakeBuild b(cfg);
                        std::string err;
                        b.discover(err);
                      });
  EXPECT_EQ(crashed, 0);
}
