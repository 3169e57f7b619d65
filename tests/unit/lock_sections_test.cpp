// Issue 57: a lock of sections, one winner per architecture
// (common/LockSections.h): written and merged by tunes, read back, refused
// when damaged, and applied per architecture by ciq-ptxas --lock
// (common/LockMode.h) and ciq_apply_lock() (engine/winner/LockApply.h).
#include "common/LockSections.h"
#include "engine/winner/LockApply.h"
#include "engine/winner/LockWriter.h"
#include "common/LockMode.h"
#include "common/FolderLock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sys/wait.h>
#include <unistd.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

struct TempDir {
  std::string dir;
  TempDir() {
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniqueDirectory("ciq-lock-sections", p);
    dir = p.str().str();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(dir); }
};

// One architecture's winner: a register cap (and, when given, nvcc options).
Lockfile winner(const std::string &arch, const std::string &cap, std::vector<std::string> nvcc = {},
                std::vector<std::string> defines = {"TILE=16"}) {
  Lockfile l;
  l.target = "bench";
  l.section = arch;
  l.architectures = {arch};
  l.candidateId = "c" + cap;
  l.ptxasOptions = {"--maxrregcount=" + cap};
  l.nvccOptions = nvcc;
  l.defines = defines;
  l.measured = "compile-only";
  l.deviceCodeSha256 = std::string(64, 'a');
  l.candidateHash = candidateHashOf(l.ptxasOptions, l.nvccOptions, l.defines, {});
  return l;
}

LockSet setOf(std::vector<Lockfile> sections) {
  LockSet s;
  s.target = "bench";
  s.sections = sections;
  return s;
}

std::string writeSet(const TempDir &d, const LockSet &set) {
  std::string path = d.dir + "/bench.ciq.lock", err;
  EXPECT_TRUE(writeLockSet(path, set, err)) << err;
  return path;
}

void writeText(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

} // namespace

TEST(LockSections, TwoSectionsReadBackEachItsOwnWinner) {
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_80", "32"), winner("sm_90", "40")})), err;
  auto set = readLockSet(path, err);
  ASSERT_TRUE(set) << err;
  EXPECT_THAT(set->names(), ElementsAre("sm_80", "sm_90"));
  ASSERT_TRUE(set->sectionFor("sm_90a"));
  EXPECT_EQ(set->sectionFor("sm_90a")->ptxasOptions, std::vector<std::string>{"--maxrregcount=40"});
  EXPECT_EQ(set->sectionFor("sm_80")->measured, "compile-only");
  EXPECT_EQ(set->sectionFor("sm_100"), nullptr);
  // The one-winner reader says to read by section.
  EXPECT_FALSE(readLockfile(path, err));
  EXPECT_THAT(err, HasSubstr("holds a section per architecture (sm_80, sm_90)"));
}

TEST(LockSections, ATuneAddsItsSectionAndReplacesOnlyItsOwn) {
  LockSet into = setOf({winner("sm_80", "32")});
  SectionMerge m;
  std::string err;
  ASSERT_TRUE(mergeSections(into, setOf({winner("sm_90", "40")}), m, err)) << err;
  EXPECT_THAT(into.names(), ElementsAre("sm_80", "sm_90"));
  EXPECT_TRUE(m.replaced.empty());
  SectionMerge again;
  ASSERT_TRUE(mergeSections(into, setOf({winner("sm_90", "48")}), again, err)) << err;
  EXPECT_THAT(again.replaced, ElementsAre("sm_90"));
  EXPECT_EQ(into.sectionFor("sm_90")->candidateId, "c48");
  EXPECT_EQ(into.sectionFor("sm_80")->candidateId, "c32");
  // The same section again (`ciq resume` of a finished search) replaces nothing.
  SectionMerge same;
  ASSERT_TRUE(mergeSections(into, setOf({winner("sm_90", "48")}), same, err)) << err;
  EXPECT_TRUE(same.replaced.empty());
}

// One lockfile given to two targets: a tune of the second discarded every
// section of the first, silently. It is refused in one line, nothing changed.
TEST(LockSections, ATuneOfAnotherTargetNeverDiscardsTheLocksSections) {
  LockSet into = setOf({winner("sm_80", "32"), winner("sm_90", "40")});
  LockSet other = setOf({winner("sm_90", "48")});
  other.target = other.sections[0].target = "bench2";
  SectionMerge m;
  std::string err;
  EXPECT_FALSE(mergeSections(into, other, m, err));
  EXPECT_THAT(err, HasSubstr("holds the lock of target 'bench' (sm_80, sm_90), and this tune's winner is of target "
                             "'bench2'"));
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_THAT(into.names(), ElementsAre("sm_80", "sm_90"));
  EXPECT_EQ(into.sectionFor("sm_90")->candidateId, "c40");
  // A new lock (no sections yet) takes the tune's target.
  LockSet none;
  ASSERT_TRUE(mergeSections(none, other, m, err)) << err;
  EXPECT_EQ(none.target, "bench2");
}

// sm_90 and sm_90a are one GPU: ciq-ptxas gave an sm_90a compile the sm_90
// section of a hand-made lock holding both, and verify passed sm_90a against
// sm_90's SASS. One line refuses such a lock.
TEST(LockSections, TwoSectionsOfOneGpuAreRefused) {
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_90", "40"), winner("sm_90a", "32")})), err;
  EXPECT_FALSE(readLockSet(path, err));
  EXPECT_THAT(err, HasSubstr("architectures: sections sm_90 and sm_90a are for one GPU"));
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

TEST(LockSections, DifferentDefinesAreRefusedWhenMergedAndWhenRead) {
  LockSet into = setOf({winner("sm_80", "32")});
  SectionMerge m;
  std::string err;
  EXPECT_FALSE(mergeSections(into, setOf({winner("sm_90", "40", {}, {"TILE=32"})}), m, err));
  EXPECT_THAT(err, HasSubstr("section sm_90 has the -D parameters [TILE=32] and sm_80 [TILE=16]"));
  EXPECT_THAT(into.names(), ElementsAre("sm_80")); // nothing changed
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_80", "32"), winner("sm_90", "40", {}, {"TILE=32"})}));
  EXPECT_FALSE(readLockSet(path, err));
  EXPECT_THAT(err, HasSubstr("one lock cannot mix them"));
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

TEST(LockSections, ASchemaOneLockReadsAsOneWinnerForEveryArchitecture) {
  TempDir d;
  Lockfile one = winner("sm_90", "40");
  nlohmann::json j = winnerToJson(one);
  j["schema_version"] = 1;
  j["architectures"] = {"sm_80", "sm_90"};
  std::string path = d.dir + "/old.lock", err;
  writeText(path, j.dump());
  auto set = readLockSet(path, err);
  ASSERT_TRUE(set) << err;
  EXPECT_TRUE(set->oneWinner());
  ASSERT_TRUE(set->sectionFor("sm_80"));
  EXPECT_EQ(set->sectionFor("sm_100"), set->sectionFor("sm_80")); // the old rule: its checks decide
  // The next tune replaces it with sections.
  SectionMerge m;
  ASSERT_TRUE(mergeSections(*set, setOf({winner("sm_80", "32")}), m, err)) << err;
  EXPECT_TRUE(m.replacedOneWinner);
  EXPECT_THAT(set->names(), ElementsAre("sm_80"));
}

TEST(LockSections, ABadArchitectureNameOrDamagedSectionIsOneLine) {
  TempDir d;
  nlohmann::json j = lockSetToJson(setOf({winner("sm_80", "32")}));
  j.erase(kLockShaKey);
  j["architectures"]["sm_9x"] = j["architectures"]["sm_80"];
  std::string path = d.dir + "/bad.lock", err;
  writeText(path, j.dump());
  EXPECT_FALSE(readLockSet(path, err));
  EXPECT_THAT(err, HasSubstr("architectures: 'sm_9x' is not an architecture name"));
  j["architectures"].erase("sm_9x");
  j["architectures"]["sm_80"]["winner"]["rendered"]["ptxas"] = 5;
  writeText(path, j.dump());
  EXPECT_FALSE(readLockSet(path, err));
  EXPECT_THAT(err, HasSubstr("architectures: sm_80: winner.rendered: \"ptxas\""));
  j["architectures"] = nlohmann::json::object();
  writeText(path, j.dump());
  EXPECT_FALSE(readLockSet(path, err));
  EXPECT_THAT(err, HasSubstr("architectures: no section"));
}

TEST(LockSections, CiqPtxasGivesEachArchitectureOfAFatCompileItsSection) {
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_80", "32"), winner("sm_90", "40")}));
  using namespace ciq::wrapper;
  auto fat = checkLock(path, LockPolicy::Error, "", "", {"sm_80", "sm_90", "sm_100"}, "--lock-policy=warn");
  ASSERT_TRUE(fat.apply) << fat.message;
  EXPECT_EQ(fat.candidate.ptxasOptions, std::vector<std::string>{}); // nothing for every architecture
  EXPECT_EQ(fat.candidate.defines, std::vector<std::string>{"TILE=16"});
  EXPECT_EQ(fat.perArch.at("sm_80").ptxasOptions, std::vector<std::string>{"--maxrregcount=32"});
  EXPECT_EQ(fat.perArch.at("sm_90").ptxasOptions, std::vector<std::string>{"--maxrregcount=40"});
  EXPECT_TRUE(fat.perArch.at("sm_100").ptxasOptions.empty()); // no section: the defaults
  auto one = checkLock(path, LockPolicy::Error, "", "", {"sm_90"}, "--lock-policy=warn");
  ASSERT_TRUE(one.apply);
  EXPECT_TRUE(one.perArch.empty());
  EXPECT_EQ(one.candidate.ptxasOptions, std::vector<std::string>{"--maxrregcount=40"});
  auto none = checkLock(path, LockPolicy::Error, "", "", {"sm_100"}, "--lock-policy=warn");
  EXPECT_TRUE(none.defaults);
  EXPECT_FALSE(none.apply || none.fail);
}

TEST(LockSections, SectionsThatDifferInNvccOptionsCannotShareOneCompile) {
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_80", "32", {"--extra-device-vectorization"}), winner("sm_90", "40")}));
  auto fat = wrapper::checkLock(path, wrapper::LockPolicy::Error, "", "", {"sm_80", "sm_90"}, "--lock-policy=warn");
  EXPECT_TRUE(fat.fail);
  EXPECT_THAT(fat.message, HasSubstr("builds sm_80 and sm_90 in one nvcc run, and their sections differ in nvcc options"));
  EXPECT_THAT(fat.message, HasSubstr("(or use --lock-policy=warn to build without the lock)"));
}

TEST(LockSections, ApplyLockRendersPerArchitectureThroughTheWrapper) {
  TempDir d;
  std::string path = writeSet(d, setOf({winner("sm_80", "32"), winner("sm_90", "40"), winner("sm_70", "24")}));
  LockBuild b;
  b.target = "bench";
  b.buildDir = "/b";
  b.nvccPath = "/usr/local/cuda/bin/nvcc";
  b.nvccVersion = "13.0.88";
  b.ptxasVersion = "13.0.88";
  b.architectures = {"80", "90", "100"};
  LockRender r = renderLockForBuild(path, b);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_TRUE(r.throughWrapper);
  EXPECT_TRUE(r.options.empty());
  EXPECT_THAT(r.defines, ElementsAre("TILE=16"));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_THAT(r.notes[0], HasSubstr("sm_100 has no section in"));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("section sm_70 is for an architecture bench does not compile"));
  // One winner for every architecture built: the compile line carries it.
  b.architectures = {"90"};
  r = renderLockForBuild(path, b);
  EXPECT_FALSE(r.throughWrapper);
  EXPECT_THAT(r.options, ElementsAre("-Xptxas=--maxrregcount=40"));
}

// Issue 57 item 3: the old rule (one winner's options on every architecture
// of the build) only for a lock that asks for it (lock_every_architecture:
// true): every architecture the build compiles gets a section with the
// winner; without it, only the measured architecture's.
TEST(LockSections, TheOldRuleOnlyForALockThatAsksForIt) {
  TempDir d;
  TuneConfig cfg;
  cfg.target = "k";
  cfg.buildDir = d.dir;
  cfg.lockfile = d.dir + "/k.ciq.lock";
  cfg.objectives = {{"spill_bytes", "minimize", "bytes"}};
  cfg.measuredArchitecture = "sm_90";
  cfg.buildArchitectures = {"sm_80", "sm_90"};
  Evaluation base, win;
  win.candidateId = "c0003";
  win.rendered.ptxas = {"--maxrregcount=40"};
  KernelStats k;
  k.name = "_Z1kv";
  k.arch = "sm_90";
  win.kernels = {k};
  std::string err;
  auto measured = makeLock(cfg, base, win, cfg.lockfile, err);
  ASSERT_TRUE(measured) << err;
  EXPECT_THAT(lockSetOf(*measured).names(), ElementsAre("sm_90"));
  cfg.lockEveryArchitecture = true;
  auto every = makeLock(cfg, base, win, cfg.lockfile, err);
  ASSERT_TRUE(every) << err;
  EXPECT_THAT(lockSetOf(*every).names(), ElementsAre("sm_80", "sm_90"));
}

// Two tunes that end at once, each adding its section to one lockfile: the
// read, merge and write of each hold the lock's folder, so neither loses
// the other's section. The other writer here holds the folder (as
// addToLockfile does), signals, then writes sm_80 a moment later; without
// the hold, addToLockfile read the lock before that write and sm_80 was
// lost (the later rename kept one section).
TEST(LockSections, TwoWritersAtOnceKeepEachOthersSections) {
  TempDir d;
  std::string path = d.dir + "/bench.ciq.lock", err;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 1;
    {
      FolderLock hold(d.dir);
      char c = hold.held() ? 'y' : 'n';
      if (write(ready[1], &c, 1) == 1) {
        usleep(300 * 1000);
        std::string e;
        code = writeLockSet(path, setOf({winner("sm_80", "32")}), e) ? 0 : 1;
      }
    }
    _exit(code);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  SectionMerge m;
  LockSet set;
  ASSERT_TRUE(addToLockfile(path, setOf({winner("sm_90", "40")}), m, set, err)) << err;
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto back = readLockSet(path, err);
  ASSERT_TRUE(back) << err;
  EXPECT_THAT(back->names(), ElementsAre("sm_80", "sm_90"));
  close(ready[0]);
  close(ready[1]);
}
