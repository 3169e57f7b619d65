// Issue 13, point 5: ciq_apply_lock()'s checks and rendering in C++
// (engine/winner/LockApply.h); tests/lit/cmake runs them through the module.
#include "engine/winner/LockApply.h"
#include "common/Lockfile.h"
#include "common/Sha256.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <llvm/Support/FileSystem.h>

using namespace ciq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

struct LockDir {
  std::string dir;
  LockDir() {
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniqueDirectory("ciq-lock-apply", p);
    dir = p.str().str();
  }
  ~LockDir() { llvm::sys::fs::remove_directories(dir); }
};

Lockfile baseLock() {
  Lockfile l;
  l.target = "bench";
  l.nvccPath = "/usr/local/cuda/bin/nvcc";
  l.nvccVersion = l.ptxasVersion = "13.0.88";
  l.architectures = {"sm_90"};
  l.candidateId = "c3";
  l.ptxasOptions = {"--opt-level=2", "--entry=a,b"};
  l.nvccOptions = {"--extra-device-vectorization"};
  l.defines = {"TILE=16"};
  l.deviceCodeSha256 = std::string(64, '0');
  return l;
}

std::string write(const LockDir &d, Lockfile l) {
  std::vector<std::pair<std::string, std::string>> acfs;
  for (const auto &a : l.acfs)
    acfs.push_back({a.stage, a.sha256});
  l.candidateHash = candidateHashOf(l.ptxasOptions, l.nvccOptions, l.defines, acfs);
  std::string path = d.dir + "/bench.ciq.lock", err;
  EXPECT_TRUE(writeLockfile(path, l, err)) << err;
  return path;
}

// The same winner as a lock of the previous format (schema 1: one winner
// for every architecture of its list), whose architecture rule still holds.
std::string writeSchemaOne(const LockDir &d, Lockfile l) {
  std::vector<std::pair<std::string, std::string>> acfs;
  for (const auto &a : l.acfs)
    acfs.push_back({a.stage, a.sha256});
  l.candidateHash = candidateHashOf(l.ptxasOptions, l.nvccOptions, l.defines, acfs);
  nlohmann::json j = winnerToJson(l);
  j["schema_version"] = kLockSchemaOneWinner;
  j[kLockShaKey] = lockSha256Of(j);
  std::string path = d.dir + "/bench.ciq.lock";
  std::ofstream(path) << j.dump(2);
  return path;
}

LockBuild build() {
  LockBuild b;
  b.target = "bench";
  b.buildDir = "/b";
  b.nvccPath = "/usr/local/cuda/bin/nvcc";
  b.nvccVersion = b.ptxasVersion = "13.0.88";
  b.architectures = {"90-real"};
  return b;
}

} // namespace

TEST(LockApply, RendersTheOneArgumentListOfLockfileH) {
  LockDir d;
  Lockfile l = baseLock();
  std::ofstream(d.dir + "/x.acf") << "acf bytes";
  l.acfs = {{"ptxas", "x.acf", *sha256File(d.dir + "/x.acf")}};
  std::string path = write(d, l);
  LockRender r = renderLockForBuild(path, build());
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_THAT(r.options, ElementsAre("-Xptxas=--opt-level=2", "-Xptxas=--entry=a\\,b", "--extra-device-vectorization",
                                     "-Xptxas=--apply-controls=" + d.dir + "/x.acf"));
  EXPECT_THAT(r.defines, ElementsAre("TILE=16"));
  EXPECT_THAT(r.depends, ElementsAre(d.dir + "/x.acf"));
  EXPECT_EQ(r.candidate, "sm_90: c3");   // the section's winner, named by its architecture
  EXPECT_FALSE(r.throughWrapper);
  // Options then defines as -D: the tokens the engine strips when it tunes again.
  std::vector<std::string> all = r.options;
  all.push_back("-DTILE=16");
  std::string err;
  EXPECT_EQ(all, lockCompileArgs(*readLockfile(path, err), path));
}

TEST(LockApply, ListsEveryProblemInOneGo) {
  LockDir d;
  Lockfile l = baseLock();
  l.target = "other";
  l.acfs = {{"nvcc", "gone.acf", std::string(64, '1')}};
  std::string path = writeSchemaOne(d, l);
  LockBuild b = build();
  b.nvccVersion = b.ptxasVersion = "12.4.131";
  b.architectures = {"80", "90"};
  LockRender r = renderLockForBuild(path, b);
  ASSERT_EQ(r.problems.size(), 5u);
  EXPECT_THAT(r.problems[0], HasSubstr("it was frozen for target 'other', not 'bench'"));
  EXPECT_THAT(r.problems[1], HasSubstr("architectures: the lock was frozen for sm_90, bench builds for CUDA_ARCHITECTURES 80 90; "
                                       "tune again (cmake --build /b --target ciq-tune-bench)"));
  EXPECT_THAT(r.problems[2], HasSubstr("nvcc version: the lock was frozen with 13.0.88, this build uses 12.4.131"));
  EXPECT_THAT(r.problems[3], HasSubstr("ptxas version: the lock was frozen with 13.0.88, this build's ptxas is 12.4.131"));
  EXPECT_THAT(r.problems[4], HasSubstr("gone.acf (stage nvcc) is missing"));
  EXPECT_TRUE(r.options.empty());
}

TEST(LockApply, UnknownArchitecturesGoThroughTheWrapperAndBrokenLocksSayWhy) {
  LockDir d;
  std::string path = write(d, baseLock());
  LockBuild b = build();
  b.architectures.clear();
  EXPECT_TRUE(renderLockForBuild(path, b).throughWrapper);
  b.nvccVersion.clear();
  EXPECT_THAT(renderLockForBuild(path, b).problems.at(0), HasSubstr("the CUDA language is not enabled"));

  std::ofstream(path) << "{\"winner\": ";
  LockRender r = renderLockForBuild(path, build());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_THAT(r.problems[0], HasSubstr("it is not a ciq lockfile ("));
  EXPECT_THAT(r.problems[0], HasSubstr("(or configure with -DCIQ_LOCK_POLICY=warn) and tune again"));
  std::ofstream(path, std::ios::trunc) << "{\"schema_version\": 3}";
  EXPECT_THAT(renderLockForBuild(path, build()).problems.at(0), HasSubstr("schema_version 3 is not supported"));
}
