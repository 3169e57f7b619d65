// The search-space language: every domain primitive as ciq.yaml declares it,
// rendering to ptxas / nvcc / -D / ACF, the candidate hash, the space size.
#include "engine/search/Search.h"
#include "engine/config/Space.h"
#include "tests/unit/engine_test_util.h"

#include <gmock/gmock.h>

using namespace ciq;
using ciq::test::TempProject;
using ::testing::ElementsAre;

namespace {

// A space of one control declared by `body` (the lines after "- name: x").
SearchSpace oneControl(const TempProject &p, const std::string &body) {
  return p.loadOk("target: app\nspace:\n  controls:\n    - name: x\n" + body).space;
}

Point at(const SearchSpace &s, std::initializer_list<int> v) {
  EXPECT_EQ(v.size(), s.controls.size());
  return Point(v);
}

} // namespace

// --- domains ----------------------------------------------------------------

TEST(Domain, Choice) {
  TempProject p;
  SearchSpace s = oneControl(p, "      ptxas: \"--def-load-cache={}\"\n      choice: [ca, cg, cs]\n");
  ASSERT_EQ(s.controls.size(), 1u);
  EXPECT_EQ(s.controls[0].domain, DomainKind::Choice);
  EXPECT_THAT(s.controls[0].values, ElementsAre("ca", "cg", "cs"));
  EXPECT_EQ(s.states(0), 4);   // three values and unset
}

TEST(Domain, IntegerRangeIncludesTheEnd) {
  TempProject p;
  SearchSpace s = oneControl(p, "      ptxas: \"--maxrregcount={}\"\n      range: {start: 32, end: 128, step: 32}\n");
  EXPECT_EQ(s.controls[0].domain, DomainKind::Range);
  EXPECT_THAT(s.controls[0].values, ElementsAre("32", "64", "96", "128"));
}

TEST(Domain, IntegerRangeStopsBeforeAnOvershoot) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: N\n      range: {start: 1, end: 10, step: 4}\n");
  EXPECT_THAT(s.controls[0].values, ElementsAre("1", "5", "9"));
}

TEST(Domain, RangeStepDefaultsToOne) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: N\n      range: {start: 0, end: 3}\n");
  EXPECT_THAT(s.controls[0].values, ElementsAre("0", "1", "2", "3"));
}

TEST(Domain, FloatRange) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: ALPHA\n      range: {start: 0.5, end: 1.5, step: 0.25}\n");
  EXPECT_THAT(s.controls[0].values, ElementsAre("0.5", "0.75", "1", "1.25", "1.5"));
}

TEST(Domain, FloatRangeAccumulatesNoRoundingDrift) {
  // 0.1 steps: 0.1 * 3 is 0.30000000000000004; the end must still be reached once.
  TempProject p;
  SearchSpace s = oneControl(p, "      define: F\n      range: {start: 0, end: 1, step: 0.1}\n");
  ASSERT_EQ(s.controls[0].values.size(), 11u);
  EXPECT_EQ(s.controls[0].values[3], "0.3");
  EXPECT_EQ(s.controls[0].values.back(), "1");
}

TEST(Domain, LogSamplingIntegers) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: UNROLL\n      log_sampling: {start: 1, end: 64, points: 7}\n");
  EXPECT_EQ(s.controls[0].domain, DomainKind::LogSampling);
  EXPECT_THAT(s.controls[0].values, ElementsAre("1", "2", "4", "8", "16", "32", "64"));
}

TEST(Domain, LogSamplingFloats) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: EPS\n      log_sampling: {start: 0.001, end: 1.0, points: 4}\n");
  EXPECT_THAT(s.controls[0].values, ElementsAre("0.001", "0.01", "0.1", "1"));
}

TEST(Domain, LogSamplingIntegersDropRepeats) {
  // 1..4 in 5 log steps rounds to 1, 1, 2, 3, 4: each value once.
  TempProject p;
  SearchSpace s = oneControl(p, "      define: K\n      log_sampling: {start: 1, end: 4, points: 5}\n");
  EXPECT_THAT(s.controls[0].values, ElementsAre("1", "2", "3", "4"));
}

TEST(Domain, LiteralIsOneValue) {
  TempProject p;
  SearchSpace s = oneControl(p, "      ptxas: \"--disable-optimizer-constants\"\n      literal: on\n"
                                "      knockout_prob: 0.25\n");
  EXPECT_EQ(s.controls[0].domain, DomainKind::Literal);
  EXPECT_THAT(s.controls[0].values, ElementsAre("on"));
  EXPECT_DOUBLE_EQ(s.controls[0].knockoutProb, 0.25);
  EXPECT_EQ(s.states(0), 2);
}

namespace {
double unsetFraction(const SearchSpace &s, int draws) {
  SearchRng rng(7, 1);
  int unset = 0;
  for (int i = 0; i < draws; ++i)
    unset += randomPoint(s, rng)[0] == kUnset;
  return double(unset) / draws;
}
} // namespace

TEST(Domain, KnockoutProbIsTheChanceOfLeavingTheControlOut) {
  TempProject p;
  for (double prob : {0.0, 0.2, 0.9, 1.0}) {
    SearchSpace s = oneControl(p, "      ptxas: \"--disable-optimizer-constants\"\n      literal: on\n"
                                  "      knockout_prob: " + std::to_string(prob) + "\n");
    EXPECT_NEAR(unsetFraction(s, 4000), prob, 0.03) << "knockout_prob " << prob;
  }
}

TEST(Domain, WithoutKnockoutUnsetIsAsLikelyAsEachValue) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: T\n      choice: [1, 2, 3]\n");
  EXPECT_NEAR(unsetFraction(s, 8000), 0.25, 0.03);
}

TEST(Domain, RequiredControlIsNeverUnset) {
  TempProject p;
  SearchSpace s = oneControl(p, "      define: T\n      choice: [1, 2, 3]\n      required: true\n");
  EXPECT_FALSE(s.controls[0].canUnset);
  EXPECT_EQ(s.states(0), 3);
  EXPECT_EQ(unsetFraction(s, 2000), 0.0);
}

TEST(Domain, AcfFilesFromAGlobAreHashed) {
  TempProject p;
  p.write("acfs/a.acf", "AAAA");
  p.write("acfs/b.acf", "BBBB");
  SearchSpace s = oneControl(p, "      acf: {files: [\"acfs/*.acf\"], include_none: false, stage: nvcc}\n");
  const Control &c = s.controls[0];
  EXPECT_EQ(c.render, RenderKind::Acf);
  EXPECT_EQ(c.acfStage, "nvcc");
  EXPECT_FALSE(c.canUnset);
  EXPECT_THAT(c.values, ElementsAre(p.dir() + "/acfs/a.acf", p.dir() + "/acfs/b.acf"));
  // SHA-256("AAAA")
  EXPECT_EQ(c.acfSha256[0], "63c1dd951ffedf6f7fd968ad4efa39b8ed584f162f46e715114ee184f8de9201");
}

// --- rendering --------------------------------------------------------------

namespace {
const char *kMixed = "target: app\n"
                     "space:\n"
                     "  controls:\n"
                     "    - name: opt\n"
                     "      ptxas: \"--opt-level={}\"\n"
                     "      choice: [1, 2]\n"
                     "    - name: vec\n"
                     "      nvcc: \"--extra-device-vectorization\"\n"
                     "      literal: on\n"
                     "    - name: tile\n"
                     "      define: TILE\n"
                     "      choice: [8, 16]\n"
                     "    - name: acf\n"
                     "      acf: {files: [one.acf, two.acf]}\n";

// kMixed loaded in `p`, with the bytes of its two ACF files.
SearchSpace mixedSpace(TempProject &p, const std::string &one = "1", const std::string &two = "2") {
  p.write("one.acf", one);
  p.write("two.acf", two);
  return p.loadOk(kMixed).space;
}
} // namespace

TEST(Render, BaselineRendersNothing) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  Rendered r = render(s, s.baseline());
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.summary(), "(default compile)");
  EXPECT_TRUE(r.controls.empty());
}

TEST(Render, EachKindReachesItsPlace) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  Rendered r = render(s, at(s, {1, 0, 1, 0}));
  EXPECT_THAT(r.ptxas, ElementsAre("--opt-level=2"));
  EXPECT_THAT(r.nvcc, ElementsAre("--extra-device-vectorization"));
  EXPECT_THAT(r.defines, ElementsAre("TILE=16"));
  ASSERT_EQ(r.acfs.size(), 1u);
  EXPECT_EQ(r.acfs[0].stage, "ptxas");
  EXPECT_EQ(r.acfs[0].path, p.dir() + "/one.acf");
  EXPECT_EQ(r.summary(), "-Xptxas --opt-level=2 --extra-device-vectorization -DTILE=16 --apply-controls(ptxas) " +
                             p.dir() + "/one.acf");
  EXPECT_EQ(r.controls["opt"], "2");
  EXPECT_EQ(r.controls["tile"], "16");
}

TEST(Render, UnsetControlsAreLeftOut) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  Rendered r = render(s, at(s, {kUnset, kUnset, 0, kUnset}));
  EXPECT_TRUE(r.ptxas.empty());
  EXPECT_TRUE(r.nvcc.empty());
  EXPECT_TRUE(r.acfs.empty());
  EXPECT_THAT(r.defines, ElementsAre("TILE=8"));
  EXPECT_EQ(r.controls.size(), 1u);
}

// --- candidate hash ---------------------------------------------------------

TEST(CandidateHash, SamePointSameHash) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  EXPECT_EQ(render(s, at(s, {0, 0, 1, 1})).hash(), render(s, at(s, {0, 0, 1, 1})).hash());
}

TEST(CandidateHash, EveryDifferenceChangesIt) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  std::string base = render(s, at(s, {0, 0, 0, 0})).hash();
  EXPECT_NE(base, render(s, at(s, {1, 0, 0, 0})).hash());        // ptxas value
  EXPECT_NE(base, render(s, at(s, {0, kUnset, 0, 0})).hash());   // nvcc flag left out
  EXPECT_NE(base, render(s, at(s, {0, 0, 1, 0})).hash());        // define value
  EXPECT_NE(base, render(s, at(s, {0, 0, 0, 1})).hash());        // ACF bytes
  EXPECT_NE(base, render(s, s.baseline()).hash());
}

TEST(CandidateHash, AcfsCountByTheirBytesNotTheirPath) {
  TempProject p;
  SearchSpace s = mixedSpace(p, "same bytes", "same bytes");
  EXPECT_EQ(render(s, at(s, {0, 0, 0, 0})).hash(), render(s, at(s, {0, 0, 0, 1})).hash());
}

TEST(CandidateHash, DifferentPointsRenderingAlikeHashAlike) {
  // Two spellings of the same ptxas argument (in two spaces: one space
  // refuses two controls of one option): the compiler sees the same thing.
  TempProject p;
  SearchSpace a = p.loadOk("target: app\nspace:\n  controls:\n"
                           "    - name: fmad-off\n      ptxas: \"--fmad=false\"\n      literal: on\n")
                      .space;
  SearchSpace b = p.loadOk("target: app\nspace:\n  controls:\n"
                           "    - name: fmad\n      ptxas: \"--fmad={}\"\n      choice: [\"false\", \"true\"]\n")
                      .space;
  EXPECT_EQ(render(a, at(a, {0})).hash(), render(b, at(b, {0})).hash());
  EXPECT_NE(render(a, at(a, {0})).hash(), render(b, at(b, {1})).hash());
}

// --- size and identity ------------------------------------------------------

TEST(SpaceSize, ProductOfStatesWithUnset) {
  TempProject p;
  SearchSpace s = mixedSpace(p);
  // opt 2+1, vec 1+1, tile 2+1, acf 2+1 (include_none defaults to true)
  EXPECT_EQ(s.size(), 3.0 * 2 * 3 * 3);
}

TEST(SpaceSize, RequiredControlsHaveNoUnsetState) {
  TempProject p;
  SearchSpace s = p.loadOk("target: app\nspace:\n  controls:\n"
                           "    - name: a\n      define: A\n      choice: [1, 2, 3]\n      required: true\n"
                           "    - name: b\n      define: B\n      range: {start: 0, end: 4}\n")
                      .space;
  EXPECT_EQ(s.size(), 3.0 * 6);
}

TEST(SpaceSize, CuratedPtxasSpace) {
  TempProject p;
  SearchSpace s = p.loadOk("target: app\n").space;
  double expect = 1;
  for (size_t i = 0; i < s.controls.size(); ++i)
    expect *= s.controls[i].values.size() + 1;
  EXPECT_EQ(s.size(), expect);
  EXPECT_GT(s.size(), 10000);
}

TEST(SpaceIdentity, ChangesWithTheDomainNotWithHelp) {
  TempProject p;
  std::string a = p.loadOk("target: app\nspace:\n  controls:\n    - name: t\n      define: T\n      choice: [1, 2]\n"
                           "      help: one\n").space.identity();
  std::string b = p.loadOk("target: app\nspace:\n  controls:\n    - name: t\n      define: T\n      choice: [1, 2]\n"
                           "      help: two\n").space.identity();
  std::string c = p.loadOk("target: app\nspace:\n  controls:\n    - name: t\n      define: T\n      choice: [1, 3]\n")
                      .space.identity();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}
