// Issue 56 item 5: an option written in any of its spellings is one option
// (engine/config/KnownOptions.h optionIdentity), so a space with two controls
// for it is refused with one error naming both.
#include "engine/config/KnownOptions.h"
#include "engine_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ciq;
using ::testing::HasSubstr;

namespace {

Control control(RenderKind render, const std::string &option) {
  Control c;
  c.name = "c";
  c.render = render;
  c.option = option;
  return c;
}

} // namespace

TEST(OptionIdentity, EverySpellingOfMaxrregcountIsOneOption) {
  const std::string regs = "ptxas --maxrregcount";
  EXPECT_EQ(optionIdentity(control(RenderKind::Ptxas, "--maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Ptxas, "-maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Ptxas, "-maxrregcount {}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "-maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "--maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "-Xptxas --maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "-Xptxas=-maxrregcount={}")), regs);
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "--ptxas-options=--maxrregcount={}")), regs);
}

TEST(OptionIdentity, OtherOptionsStayApart) {
  // ptxas's short alias is its long option (from ptxas --help)...
  EXPECT_EQ(optionIdentity(control(RenderKind::Ptxas, "-O{}")), optionIdentity(control(RenderKind::Ptxas, "--opt-level={}")));
  EXPECT_EQ(optionIdentity(control(RenderKind::Ptxas, "-O3")), "ptxas --opt-level");
  // ...but nvcc's -O (host optimization) is not ptxas's, and two -Xptxas or
  // -Xcompiler options are two options.
  EXPECT_NE(optionIdentity(control(RenderKind::Nvcc, "-O3")), "ptxas --opt-level");
  EXPECT_NE(optionIdentity(control(RenderKind::Nvcc, "-Xptxas --opt-level={}")),
            optionIdentity(control(RenderKind::Nvcc, "-Xptxas --maxrregcount={}")));
  EXPECT_NE(optionIdentity(control(RenderKind::Nvcc, "-Xcompiler=-O{}")),
            optionIdentity(control(RenderKind::Nvcc, "-Xcompiler=-march={}")));
  EXPECT_EQ(optionIdentity(control(RenderKind::Nvcc, "-Xcompiler=-O{}")),
            optionIdentity(control(RenderKind::Nvcc, "--compiler-options -O{}")));
  EXPECT_NE(optionIdentity(control(RenderKind::Ptxas, "--maxrregcount={}")),
            optionIdentity(control(RenderKind::Ptxas, "--minnctapersm={}")));
}

TEST(OptionIdentity, TwoSpellingsInOneSpaceAreRefusedNamingBoth) {
  ciq::test::TempProject p;
  std::string e = p.loadError("target: app\nspace:\n  controls:\n"
                              "    - {name: regs, ptxas: \"-maxrregcount={}\", choice: [32]}\n"
                              "    - {name: cap, nvcc: \"-Xptxas --maxrregcount={}\", choice: [64]}\n");
  EXPECT_THAT(e, HasSubstr("controls 'regs' ("));
  EXPECT_THAT(e, HasSubstr("and 'cap' ("));
  EXPECT_THAT(e, HasSubstr("both render ptxas --maxrregcount (written '-maxrregcount={}' and '-Xptxas "
                           "--maxrregcount={}'), which would reach one compile twice"));
  EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
  e = p.loadError("target: app\nspace:\n  controls:\n"
                  "    - {name: a, nvcc: \"--maxrregcount={}\", choice: [32]}\n"
                  "    - {name: b, ptxas: \"--maxrregcount={}\", choice: [64]}\n");
  EXPECT_THAT(e, HasSubstr("both render ptxas --maxrregcount"));
  // Two different options through -Xptxas are two controls.
  TuneConfig c = p.loadOk("target: app\nspace:\n  controls:\n"
                          "    - {name: o, nvcc: \"-Xptxas=--opt-level={}\", choice: [\"1\", \"3\"]}\n"
                          "    - {name: r, nvcc: \"-Xptxas=--maxrregcount={}\", choice: [32, 64]}\n");
  EXPECT_EQ(c.space.controls.size(), 2u);
}
