// `ciq diagnose` on one synthetic search per pathology plus a clean one. Each
// is written by the engine's own writers (Journal::append, startToJson, evaluationToJson,
// writeResultsCsv) and read back through the loader the command uses
// (loadRun), so the run schema between them is covered too.
#include "engine/analysis/Diagnose.h"
#include "engine/record/Evaluation.h"
#include "engine/record/Journal.h"
#include "engine/run/ResultsCsv.h"
#include "engine/winner/Winner.h"

#include <functional>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <random>
#include <set>

using namespace ciq;

namespace {

struct Synth {
  TuneConfig cfg;
  RecordedStart start;
  std::vector<Evaluation> evals;
  std::mt19937 rng{42};
  int next = 1;

  Synth() {
    Objective o;
    o.metric = "time_ms";
    o.unit = "ms";
    cfg.objectives = {o};
    start.spaceSize = 1.0e6;
    start.seed = 1;
    start.strategy = "genetic";
    start.search.poolSize = 8;
    start.search.generations = 6;
    start.objectives = {{"time_ms", "minimize", "ms"}};
    Evaluation b = make(0, 10.0, true);
    b.rendered = Rendered{};
    b.rendered.controls = nlohmann::json::object();
    evals.push_back(b);
  }
  static std::string hex(int n) {
    char buf[17];
    snprintf(buf, sizeof buf, "%016x", unsigned(n * 2654435761u));
    return std::string(buf) + std::string(48, 'a');
  }
  Evaluation make(int gen, double score, bool ok, const std::string &reason = "compile_error") {
    Evaluation e;
    int id = next++;
    char buf[8];
    snprintf(buf, sizeof buf, "c%04d", evals.size() ? id : 0);
    e.candidateId = buf;
    e.generation = gen;
    e.ok = ok;
    e.reason = ok ? "" : reason;
    if (ok) {
      e.scores["time_ms"] = score;
      e.cvPercent = 1.0 + std::uniform_real_distribution<>(0, 1)(rng);
    }
    e.candidateHash = hex(id);
    e.deviceCodeSha256 = hex(id + 100000);
    int a = int(rng() % 4), c = int(rng() % 5);
    e.rendered.controls = {{"opt-level", std::to_string(a)}, {"maxrregcount", std::to_string(32 * (c + 1))}};
    e.rendered.ptxas = {"--opt-level=" + std::to_string(a)};
    e.point = {a, c, int(rng() % 7)};
    e.replay = "CIQ_CANDIDATE=" + e.candidateId + " cmake --build build --target app";
    return e;
  }
  // generations x pool, score(gen, i) and ok(gen, i) decide each candidate.
  void fill(int generations, int pool, std::function<double(int, int)> score,
            std::function<bool(int, int)> ok = [](int, int) { return true; }) {
    for (int g = 1; g <= generations; ++g)
      for (int i = 0; i < pool; ++i)
        evals.push_back(make(g, score(g, i), ok(g, i)));
  }
  // journal.jsonl and results.csv in `dir`, as a search writes them.
  void write(const std::string &dir) {
    std::string error;
    Journal j;
    ASSERT_TRUE(j.open(dir + "/journal.jsonl", error)) << error;
    j.append(startToJson(start));
    markFront(cfg, evals);
    for (const auto &e : evals)
      j.append(evaluationToJson(e));
    ASSERT_TRUE(writeResultsCsv(dir + "/results.csv", cfg, evals, error)) << error;
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
         for (auto &e : s.evals)
           e.deviceCodeSha256 = s.evals.front().deviceCodeSha256;
         for (auto &e : s.evals)
           if (e.ok)
             e.scores["time_ms"] = 10.0;
         return s;
       },
       // One score everywhere: nothing better to find, so no stalled_best.
       {"identical_device_code"}},
      {"identical scores, device code differs",
       [] {
         Synth s = clean();
         for (auto &e : s.evals)
           if (e.ok && e.generation != 0)
             e.scores["time_ms"] = 7.0;
         return s;
       },
       {"identical_scores"}},
      {"baseline INVALID (nothing searched)",
       [] {
         Synth s;
         s.evals.front().ok = false;
         s.evals.front().reason = "run_crash";
         s.evals.front().scores.clear();
         s.evals.front().cvPercent = -1;
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
      // Issue 32 item 11, `make demo`: tpe finds the better of two values at
      // evaluation 3; the rest repeat the two. Not stalled: there is nothing
      // better to find.
      {"tpe on a landscape of two values, the better found early",
       [] {
         Synth s;
         s.start.strategy = s.start.search.strategy = "tpe";
         s.evals.front().scores["time_ms"] = 8.88;
         s.fill(40, 1, [](int g, int) { return g == 3 || (g > 3 && g % 2) ? 6.8 : 8.88; });
         return s;
       },
       {}},
      {"tpe stalled on a landscape of many values",
       [] {
         Synth s;
         s.start.strategy = s.start.search.strategy = "tpe";
         s.fill(40, 1, [](int g, int) { return g == 3 ? 5.0 : 8.0 + (g % 5) * 0.1; });
         return s;
       },
       {"stalled_best"}},
      {"optimum 0 reached at the baseline (spill bytes 0): optimal, not stalled",
       [] {
         Synth s;
         s.evals.front().scores["time_ms"] = 0.0;
         s.fill(6, 8, [](int g, int i) { return i % 2 ? 0.0 : 4.0 + i + g * 0.01; });
         return s;
       },
       {}},
      {"high CV",
       [] {
         Synth s = clean();
         for (auto &e : s.evals)
           if (e.ok)
             e.cvPercent = 12.0 + (e.generation % 3);
         return s;
       },
       {"high_cv"}},
      {"low diversity in late generations",
       [] {
         Synth s = clean();
         for (auto &e : s.evals)
           if (e.generation >= 5) {
             e.candidateHash = Synth::hex(999);
             e.point = {1, 1, 1};
           }
         return s;
       },
       {"low_diversity"}},
  };
}

class DiagnoseCases : public testing::TestWithParam<size_t> {};

TEST_P(DiagnoseCases, ClassifiedAsExpected) {
  const Case c = cases()[GetParam()];
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-diagnose-case", dir));
  Synth s = c.build();
  s.write(std::string(dir));
  std::string error;
  auto run = loadRun(std::string(dir), error);
  ASSERT_TRUE(run) << c.name << ": " << error;
  std::set<std::string> got;
  for (const auto &f : diagnose(*run))
    got.insert(f.kind);
  EXPECT_EQ(got, c.expected) << c.name;
  // The journal alone gives the same findings as results.csv with it.
  llvm::sys::fs::remove(dir + "/results.csv");
  auto journalOnly = loadRun(std::string(dir), error);
  ASSERT_TRUE(journalOnly) << c.name << ": " << error;
  std::set<std::string> fromJournal;
  for (const auto &f : diagnose(*journalOnly))
    fromJournal.insert(f.kind);
  EXPECT_EQ(fromJournal, c.expected) << c.name << " (journal only)";
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(EveryPathology, DiagnoseCases, testing::Range<size_t>(0, cases().size()));

// The advice is for the strategy that ran: tpe has no generations or pool
// (issue 32 item 11: the demo was told to raise search.generations).
TEST(Diagnose, StalledAdviceFitsTheStrategy) {
  Synth s;
  s.start.strategy = s.start.search.strategy = "tpe";
  s.fill(40, 1, [](int g, int) { return g == 3 ? 5.0 : 8.0 + (g % 5) * 0.1; });
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-diagnose-tpe", dir));
  s.write(std::string(dir));
  std::string error;
  auto run = loadRun(std::string(dir), error);
  ASSERT_TRUE(run) << error;
  bool seen = false;
  for (const auto &f : diagnose(*run))
    if (f.kind == "stalled_best") {
      seen = true;
      EXPECT_NE(f.title.find("evaluation 3; 37 evaluations since"), std::string::npos) << f.title;
      EXPECT_NE(f.next.find("search.max_evaluations"), std::string::npos) << f.next;
      EXPECT_EQ(f.next.find("generations"), std::string::npos) << f.next;
      EXPECT_EQ(f.next.find("pool_size"), std::string::npos) << f.next;
    }
  EXPECT_TRUE(seen);
  llvm::sys::fs::remove_directories(dir);
}

// Issue 50 item 4: tpe's generation numbers count its proposals, most of
// which a twin prediction never builds; the finding counts evaluations
// (33 here, proposals numbered up to 297), as results.csv numbers them.
TEST(Diagnose, StalledCountsEvaluationsNotProposals) {
  Synth s;
  s.start.strategy = s.start.search.strategy = "tpe";
  for (int i = 1; i <= 33; ++i)
    s.evals.push_back(s.make(i * 9, i == 2 ? 5.0 : 8.0 + (i % 5) * 0.1, true));
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-diagnose-proposals", dir));
  s.write(std::string(dir));
  std::string error;
  auto run = loadRun(std::string(dir), error);
  ASSERT_TRUE(run) << error;
  bool seen = false;
  for (const auto &f : diagnose(*run))
    if (f.kind == "stalled_best") {
      seen = true;
      EXPECT_NE(f.title.find("last improved in evaluation 2; 31 evaluations since"), std::string::npos) << f.title;
      EXPECT_NE(f.threshold.find("17 evaluations"), std::string::npos) << f.threshold;
    }
  EXPECT_TRUE(seen);
  llvm::sys::fs::remove_directories(dir);
}

// The diagnosis says why nothing was flagged: the best is already the least possible.
TEST(Diagnose, ZeroOptimumIsSaid) {
  Synth s;
  s.evals.front().scores["time_ms"] = 0.0;
  s.fill(6, 8, [](int g, int i) { return 3.0 + i + g; });
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-diagnose-zero", dir));
  s.write(std::string(dir));
  std::string error, text;
  auto run = loadRun(std::string(dir), error);
  ASSERT_TRUE(run) << error;
  llvm::raw_string_ostream os(text);
  printFindings(*run, diagnose(*run), os);
  EXPECT_NE(os.str().find("note: already optimal: time_ms is 0 from c0000 (the baseline) on, the least it can be"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("stalled_best"), std::string::npos) << text;
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
