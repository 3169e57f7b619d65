// compile/BuildNumerics: what a build's own compile lines set of nvcc's
// numerics options, and what that does to the space (issue 32 item 10).
#include "engine/compile/BuildNumerics.h"
#include "engine_test_util.h"

#include <gtest/gtest.h>

namespace ciq {
namespace {

CompileLine line(std::vector<std::string> argv) { return {"k.cu", std::move(argv)}; }

TEST(BuildNumerics, FastMathImpliesTheFourValues) {
  auto b = readBuildNumerics({line({"nvcc", "-O3", "-use_fast_math", "-c", "k.cu"})});
  EXPECT_EQ(b.fixed.at("use-fast-math"), "on");
  EXPECT_EQ(b.fixed.at("ftz"), "true");
  EXPECT_EQ(b.fixed.at("prec-div"), "false");
  EXPECT_EQ(b.fixed.at("prec-sqrt"), "false");
  EXPECT_EQ(b.fixed.at("fmad"), "true");
  EXPECT_TRUE(b.mixed.empty());
  EXPECT_EQ(b.written, std::vector<std::string>{"-use_fast_math"});
}

TEST(BuildNumerics, LaterExplicitOptionWinsAndSpellingsAgree) {
  // nvcc: -use_fast_math --ftz=false compiles div.approx without .ftz.
  auto b = readBuildNumerics({line({"nvcc", "--use_fast_math", "--ftz=false", "-c", "k.cu"}),
                              line({"nvcc", "-use_fast_math", "-ftz", "false", "-c", "j.cu"})});
  EXPECT_EQ(b.fixed.at("ftz"), "false");
  EXPECT_EQ(b.fixed.at("prec-div"), "false");
  EXPECT_TRUE(b.mixed.empty());
}

TEST(BuildNumerics, SetByOnlySomeLinesIsMixed) {
  auto b = readBuildNumerics({line({"nvcc", "-use_fast_math", "-c", "k.cu"}), line({"nvcc", "-c", "j.cu"})});
  EXPECT_TRUE(b.fixed.empty());
  EXPECT_EQ(b.mixed.count("use-fast-math"), 1u);
  // Options that only look alike are not read: -ftz-something, -Xptxas values.
  auto none = readBuildNumerics({line({"nvcc", "-ftzx=1", "-Xptxas", "-O3", "-c", "k.cu"})});
  EXPECT_FALSE(none.any());
}

Control numerics(const std::string &name, std::string dflt) {
  Control c;
  c.name = name;
  c.render = RenderKind::Nvcc;
  c.option = "--" + name + "={}";
  c.values = {"true", "false"};
  c.changesResults = true;
  c.compilerDefault = std::move(dflt);
  return c;
}

TEST(BuildNumerics, DefaultSpaceDropsWhatTheBuildFixes) {
  TuneConfig cfg;
  cfg.spaceIsDefault = true;
  Control opt;
  opt.name = "opt-level";
  opt.values = {"1", "2"};
  cfg.space.controls = {opt, numerics("ftz", "false"), numerics("prec-div", "true")};
  auto b = readBuildNumerics({line({"nvcc", "-use_fast_math", "-c", "k.cu"})});
  std::string note = applyBuildNumerics(cfg, b);
  ASSERT_EQ(cfg.space.controls.size(), 1u);
  EXPECT_EQ(cfg.space.controls[0].name, "opt-level");
  EXPECT_TRUE(cfg.buildHasFastMath);
  EXPECT_NE(note.find("the build compiles with -use_fast_math"), std::string::npos) << note;
  EXPECT_NE(note.find("ftz, prec-div are left out"), std::string::npos) << note;
}

TEST(BuildNumerics, WrittenSpaceKeepsControlsWithTheBuildsDefault) {
  TuneConfig cfg;
  cfg.space.controls = {numerics("ftz", "false")};
  std::string note = applyBuildNumerics(cfg, readBuildNumerics({line({"nvcc", "--ftz=true", "-c", "k.cu"})}));
  ASSERT_EQ(cfg.space.controls.size(), 1u);
  EXPECT_EQ(cfg.space.controls[0].compilerDefault, "true");
  EXPECT_FALSE(cfg.buildHasFastMath);
  EXPECT_NE(note.find("unset, ftz=true (the build's values"), std::string::npos) << note;
}

TEST(BuildNumerics, NothingSetNothingSaid) {
  TuneConfig cfg;
  cfg.space.controls = {numerics("ftz", "false")};
  EXPECT_EQ(applyBuildNumerics(cfg, readBuildNumerics({line({"nvcc", "-O3", "-c", "k.cu"})})), "");
  EXPECT_EQ(cfg.space.controls[0].compilerDefault, "false");
}

} // namespace
} // namespace ciq
