// wrapper/RegisterCap.h on ptxas 13.0's own words (captured from
// `nvcc -arch=sm_90 -Xptxas -v,-maxrregcount=32`), and engine/search/InertControls.h.
#include "engine/search/InertControls.h"
#include "wrapper/PtxasStats.h"
#include "wrapper/RegisterCap.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::wrapper;

namespace {
const char *kTwoArchs =
    "ptxas info    : Overriding global maxrregcount 32 with entry-specific value 128 computed using thread count\n"
    "ptxas info    : Overriding maximum register limit 256 for '_Z5plainPf' with  32 of maxrregcount option\n"
    "ptxas info    : Overriding global maxrregcount 32 with entry-specific value 40 of .maxnreg\n"
    "ptxas info    : Compiling entry function '_Z3lbBPf' for 'sm_80'\n"
    "ptxas info    : Used 8 registers, used 0 barriers\n"
    "ptxas info    : Compiling entry function '_Z5plainPf' for 'sm_80'\n"
    "ptxas info    : Compiling entry function '_Z2mxPf' for 'sm_80'\n"
    "ptxas info    : Overriding global maxrregcount 32 with entry-specific value 128 computed using thread count\n"
    "ptxas info    : Overriding maximum register limit 256 for '_Z5plainPf' with  32 of maxrregcount option\n"
    "ptxas info    : Overriding global maxrregcount 32 with entry-specific value 40 of .maxnreg\n"
    "ptxas info    : Compiling entry function '_Z3lbBPf' for 'sm_90'\n"
    "ptxas info    : Compiling entry function '_Z5plainPf' for 'sm_90'\n"
    "ptxas info    : Compiling entry function '_Z2mxPf' for 'sm_90'\n";
} // namespace

TEST(RegisterCap, AttributedPerArchitectureInCompileOrder) {
  auto ks = parsePtxasVerbose(kTwoArchs);
  ASSERT_EQ(ks.size(), 6u);
  EXPECT_EQ(markRegisterCapOverrides(kTwoArchs, ks), 0);
  for (int a = 0; a < 2; ++a) {
    EXPECT_EQ(ks[3 * a].capOverride, "entry-specific value 128 computed using thread count");
    EXPECT_TRUE(ks[3 * a + 1].capApplied);
    EXPECT_EQ(ks[3 * a + 1].capOverride, "");
    EXPECT_EQ(ks[3 * a + 2].capOverride, "entry-specific value 40 of .maxnreg");
  }
}

TEST(RegisterCap, AmbiguousLinesAreCountedNotGuessed) {
  // Three entries, one named, one override line: which of the other two? ptxas does not say.
  std::string text = "ptxas info    : Overriding global maxrregcount 32 with entry-specific value 255 computed using thread count\n"
                     "ptxas info    : Overriding maximum register limit 256 for '_Z1bv' with  32 of maxrregcount option\n"
                     "ptxas info    : Compiling entry function '_Z1av' for 'sm_90'\n"
                     "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90'\n"
                     "ptxas info    : Compiling entry function '_Z1cv' for 'sm_90'\n";
  auto ks = parsePtxasVerbose(text);
  EXPECT_EQ(markRegisterCapOverrides(text, ks), 1);
  for (const auto &k : ks)
    EXPECT_EQ(k.capOverride, "");
}

TEST(InertControls, RegisterCapIgnoredByEveryKernel) {
  SearchSpace space;
  Control cap;
  cap.name = "maxrregcount";
  cap.option = "--maxrregcount={}";
  cap.values = {"24", "32"};
  Control o;
  o.name = "opt-level";
  o.option = "--opt-level={}";
  o.values = {"1", "2"};
  space.controls = {o, cap};
  Evaluation e;
  e.candidateId = "c0001";
  e.generation = 1;
  e.ok = true;
  e.point = {kUnset, 0};
  KernelStats k;
  k.name = "_Z1av";
  k.capOverride = "entry-specific value 255 computed using thread count";
  e.kernels = {k, k};
  // Only from earlier generations: a resumed search derives the same set.
  EXPECT_TRUE(findInertControls(space, {e}, 1).empty());
  auto inert = findInertControls(space, {e}, 2);
  ASSERT_EQ(inert.size(), 1u);
  EXPECT_EQ(inert[0].control, 1);
  EXPECT_EQ(withoutInert({1, 1}, inert), (Point{1, kUnset}));
  // One kernel that took the cap: the control is not inert.
  e.kernels[1].capOverride = "";
  EXPECT_TRUE(findInertControls(space, {e}, 2).empty());
}

// With --override-directive-values in the space, a cap __launch_bounds__
// beat without the override is not inert: with it the cap takes effect.
TEST(InertControls, ACapIgnoredWithoutTheOverrideIsNotInert) {
  SearchSpace space;
  Control cap;
  cap.name = "maxrregcount";
  cap.option = "--maxrregcount={}";
  cap.values = {"24", "32"};
  Control ov;
  ov.name = "override-directive-values";
  ov.option = "--override-directive-values";
  ov.values = {"on"};
  space.controls = {ov, cap};
  Evaluation e;
  e.candidateId = "c0001";
  e.generation = 1;
  e.ok = true;
  e.point = {kUnset, 0};
  KernelStats k;
  k.name = "_Z1av";
  k.capOverride = "entry-specific value 255 computed using thread count";
  e.kernels = {k};
  EXPECT_TRUE(findInertControls(space, {e}, 2).empty());
  // Ignored with the override set as well: inert.
  e.point = {0, 0};
  EXPECT_EQ(findInertControls(space, {e}, 2).size(), 1u);
}
