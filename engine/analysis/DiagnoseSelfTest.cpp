// `ciq diagnose --self-test`: one synthetic search per pathology plus a clean
// one, each written as results.csv + journal.jsonl and read back through the
// same loader the command uses, so that the file formats are covered too.
#include "Diagnose.h"
#include "InvalidReason.h"

#include <functional>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <random>
#include <set>

namespace ciq {

namespace {

struct Synth {
  RunData run;
  std::mt19937 rng{42};
  int next = 1;

  Synth() {
    run.objectiveNames = {"time_ms"};
    run.start = {{"op", "start"},     {"version", 1},   {"space_size", 1.0e6},
                 {"seed", 1},         {"strategy", "genetic"},
                 {"search", {{"pool_size", 8}, {"generations", 6}}},
                 {"objectives", {{{"metric", "time_ms"}, {"direction", "minimize"}, {"unit", "ms"}}}}};
    RecordedEval b = make(0, 10.0, true);
    b.id = "c0000";
    b.baseline = true;
    b.controls = "{}";
    run.evals.push_back(b);
  }
  std::string hex(int n) {
    char buf[17];
    snprintf(buf, sizeof buf, "%016x", unsigned(n * 2654435761u));
    return std::string(buf) + std::string(48, 'a');
  }
  RecordedEval make(int gen, double score, bool ok, const std::string &reason = reason::CompileError) {
    RecordedEval e;
    int id = next++;
    char buf[8];
    snprintf(buf, sizeof buf, "c%04d", run.evals.size() ? id : 0);
    e.id = buf;
    e.generation = gen;
    e.ok = ok;
    e.reason = ok ? "" : reason;
    if (ok)
      e.score = score, e.cvPercent = 1.0 + std::uniform_real_distribution<>(0, 1)(rng);
    e.unit = "ms";
    e.candidateHash = hex(id);
    e.deviceCodeSha256 = hex(id + 100000);
    int a = int(rng() % 4), c = int(rng() % 5);
    e.controls = "{\"opt-level\":\"" + std::to_string(a) + "\",\"maxrregcount\":\"" +
                 std::to_string(32 * (c + 1)) + "\"}";
    e.rendered = "-Xptxas --opt-level=" + std::to_string(a);
    if (ok)
      e.objectives["time_ms"] = score;
    e.journal = {{"op", "evaluation"}, {"candidate_id", e.id}, {"point", {a, c, int(rng() % 7)}},
                 {"replay", "CIQ_CANDIDATE=" + e.id + " cmake --build build --target app"}};
    return e;
  }
  // generations x pool, score(gen, i) and ok(gen, i) decide each candidate.
  void fill(int generations, int pool, std::function<double(int, int)> score,
            std::function<bool(int, int)> ok = [](int, int) { return true; }) {
    for (int g = 1; g <= generations; ++g)
      for (int i = 0; i < pool; ++i)
        run.evals.push_back(make(g, score(g, i), ok(g, i)));
  }
};

// A search that improves every generation, with little noise and few failures.
Synth clean() {
  Synth s;
  s.fill(6, 8, [](int g, int i) { return 10.0 - g * 0.5 - i * 0.01; },
         [](int g, int i) { return !(g == 2 && i == 3); });
  return s;
}

struct Case {
  const char *name;
  std::function<Synth()> build;
  std::set<std::string> expected;
};

std::vector<Case> cases() {
  return {
      {"clean run", clean, {}},
      {"every score identical (a cache hid the configuration)",
       [] {
         Synth s = clean();
         for (auto &e : s.run.evals)
           e.deviceCodeSha256 = s.run.evals.front().deviceCodeSha256;
         for (auto &e : s.run.evals)
           if (e.ok)
             e.score = 10.0, e.objectives["time_ms"] = 10.0;
         return s;
       },
       {"identical_device_code", "stalled_best"}},
      {"identical scores, device code differs",
       [] {
         Synth s = clean();
         for (auto &e : s.run.evals)
           if (e.ok && !e.baseline)
             e.score = 7.0, e.objectives["time_ms"] = 7.0;
         return s;
       },
       {"identical_scores", "stalled_best"}},
      {"baseline INVALID (nothing searched)",
       [] {
         Synth s;
         s.run.evals.front().ok = false;
         s.run.evals.front().reason = reason::RunCrash;
         s.run.evals.front().score.reset();
         s.run.evals.front().objectives.clear();
         return s;
       },
       {"baseline_invalid"}},
      {"all INVALID",
       [] {
         Synth s;
         s.fill(3, 6, [](int, int) { return 0.0; }, [](int, int) { return false; });
         return s;
       },
       {"all_invalid"}},
      {"rising invalid rate",
       [] {
         Synth s;
         s.fill(6, 10, [](int g, int i) { return 10.0 - g * 0.5 - i * 0.01; },
                [](int g, int i) { return i >= (g - 1) * 2; });
         return s;
       },
       {"rising_invalid"}},
      {"stalled best",
       [] {
         Synth s;
         s.fill(6, 8, [](int g, int i) { return g == 1 && i == 0 ? 5.0 : 8.0 + i * 0.1 + g * 0.01; });
         return s;
       },
       {"stalled_best"}},
      {"high CV",
       [] {
         Synth s = clean();
         for (auto &e : s.run.evals)
           if (e.ok)
             e.cvPercent = 12.0 + (e.generation % 3);
         return s;
       },
       {"high_cv"}},
      {"low diversity in late generations",
       [] {
         Synth s = clean();
         for (auto &e : s.run.evals)
           if (e.generation >= 5) {
             e.candidateHash = s.hex(999);
             e.journal["point"] = {1, 1, 1};
           }
         return s;
       },
       {"low_diversity"}},
  };
}

bool writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return false;
  os << text;
  return true;
}

std::string journalText(const RunData &run) {
  std::string out = run.start.dump() + "\n";
  for (const auto &e : run.evals) {
    nlohmann::json j = e.journal.is_object() ? e.journal : nlohmann::json::object();
    j["op"] = "evaluation";
    j["candidate_id"] = e.id;
    out += j.dump() + "\n";
  }
  return out;
}

} // namespace

int diagnoseSelfTest(llvm::raw_ostream &os) {
  llvm::SmallString<128> root;
  if (llvm::sys::fs::createUniqueDirectory("ciq-diagnose-self-test", root)) {
    os << "FAIL: cannot create a temporary directory\n";
    return 1;
  }
  int failures = 0, n = 0;
  for (const auto &c : cases()) {
    Synth s = c.build();
    llvm::SmallString<128> dir(root);
    llvm::sys::path::append(dir, "case" + std::to_string(n++));
    llvm::sys::fs::create_directories(dir);
    std::string error;
    bool written = writeFile((dir + "/results.csv").str(), writeResultsCsv(s.run)) &&
                   writeFile((dir + "/journal.jsonl").str(), journalText(s.run));
    auto run = written ? loadRun(std::string(dir), error) : std::nullopt;
    if (!run) {
      os << "FAIL " << c.name << ": cannot read the synthetic run back: " << error << "\n";
      ++failures;
      continue;
    }
    std::set<std::string> got;
    for (const auto &f : diagnose(*run))
      got.insert(f.kind);
    auto join = [](const std::set<std::string> &s) {
      std::string out;
      for (const auto &k : s)
        out += (out.empty() ? "" : ",") + k;
      return out.empty() ? std::string("(none)") : out;
    };
    bool pass = got == c.expected;
    failures += !pass;
    os << (pass ? "PASS " : "FAIL ") << c.name << ": expected " << join(c.expected) << ", got "
       << join(got) << "\n";
  }
  llvm::sys::fs::remove_directories(root);
  os << (failures ? "self-test FAILED: " : "self-test passed: ") << (n - failures) << "/" << n
     << " cases classified as expected\n";
  return failures;
}

} // namespace ciq
