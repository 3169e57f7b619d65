// Constraints between controls (issue 33): muparser expressions over control
// names, what an unset control means, the feasible count, the load-time
// errors with file:line, and that every strategy proposes feasible points only.
#include "engine/search/Search.h"
#include "tests/unit/engine_test_util.h"

#include <gmock/gmock.h>
#include <set>

using namespace ciq;
using ciq::test::TempProject;
using ciq::test::define;
using ::testing::HasSubstr;

namespace {

// TILE in {8,16,32,64}, VEC in {1,2,4,8,16}, UNROLL in {1,2,4}: 5*6*4 = 120 points.
SearchSpace tiles(std::vector<std::string> exprs) {
  SearchSpace s;
  s.controls = {define("TILE", {"8", "16", "32", "64"}), define("VEC", {"1", "2", "4", "8", "16"}),
                define("UNROLL", {"1", "2", "4"})};
  for (size_t i = 0; i < exprs.size(); ++i)
    s.constraints.push_back({exprs[i], "c.yaml:" + std::to_string(i + 1)});
  return s;
}

SearchSpace compiled(std::vector<std::string> exprs) {
  SearchSpace s = tiles(std::move(exprs));
  std::string err;
  EXPECT_TRUE(s.compileConstraints(err)) << err;
  return s;
}

// Counts by brute force what the constraint allows, as the docs define it.
double bruteForce(const SearchSpace &s) {
  double n = 0;
  for (double i = 0; i < s.size(); ++i)
    n += s.feasible(pointAt(s, i));
  return n;
}

} // namespace

TEST(Constraints, EvaluatesOverControlValues) {
  SearchSpace s = compiled({"TILE * VEC <= 128", "TILE % VEC == 0"});
  EXPECT_TRUE(s.feasible({0, 2, kUnset}));     // 8 * 4
  EXPECT_FALSE(s.feasible({3, 2, kUnset}));    // 64 * 4 = 256
  EXPECT_FALSE(s.feasible({0, 4, kUnset}));    // 8 % 16 != 0 (and 128 <= 128 holds)
  EXPECT_FALSE(s.feasible({1, 4, kUnset}));    // 16 * 16 = 256
  EXPECT_TRUE(s.feasible({3, 0, 2}));          // 64 * 1, 64 % 1
}

TEST(Constraints, UnsetWithoutDefaultDoesNotApply) {
  SearchSpace s = compiled({"TILE * VEC <= 64"});
  EXPECT_TRUE(s.feasible({kUnset, 4, kUnset}));   // TILE unset: the source decides, ciq cannot say
  EXPECT_TRUE(s.feasible(s.baseline()));
  EXPECT_FALSE(s.feasible({3, 4, kUnset}));
}

TEST(Constraints, UnsetTakesANumericCompilerDefault) {
  SearchSpace s = tiles({"TILE * VEC <= 64"});
  s.controls[0].compilerDefault = "32";
  std::string err;
  ASSERT_TRUE(s.compileConstraints(err)) << err;
  EXPECT_TRUE(s.feasible({kUnset, 1, kUnset}));   // 32 * 2
  EXPECT_FALSE(s.feasible({kUnset, 2, kUnset}));  // 32 * 4
}

TEST(Constraints, FeasibleCountIsExact) {
  SearchSpace s = compiled({"TILE * VEC <= 128", "UNROLL <= VEC"});
  FeasibleCount f = s.feasibleSize();
  EXPECT_TRUE(f.exact);
  EXPECT_EQ(f.points, bruteForce(s));
  EXPECT_LT(f.points, s.size());
  EXPECT_THAT(s.sizeSummary(), HasSubstr("120 points, " + std::to_string((long)f.points) + " within the 2 constraints"));
}

TEST(Constraints, NamesWithDashesAreWrittenWithUnderscores) {
  SearchSpace s;
  s.controls = {define("max-reg", {"32", "64", "128"}), define("BLOCK", {"64", "128", "256"})};
  s.constraints = {{"max_reg * BLOCK <= 8192", "c.yaml:1"}};
  std::string err;
  ASSERT_TRUE(s.compileConstraints(err)) << err;
  EXPECT_FALSE(s.feasible({2, 2}));
  EXPECT_TRUE(s.feasible({0, 2}));
}

TEST(Constraints, BooleanSpellingsAreNumbers) {
  SearchSpace s;
  s.controls = {define("FAST", {"false", "true"}), define("N", {"1", "2"})};
  s.constraints = {{"FAST == 0 || N == 2", "c.yaml:1"}};
  std::string err;
  ASSERT_TRUE(s.compileConstraints(err)) << err;
  EXPECT_FALSE(s.feasible({1, 0}));
  EXPECT_TRUE(s.feasible({0, 0}));
}

TEST(Constraints, LoadErrorsNameTheOrigin) {
  struct Case {
    std::vector<std::string> exprs;
    const char *message;
  } cases[] = {
      {{"TILE * VEK <= 64"}, "c.yaml:1: constraints: 'TILE * VEK <= 64': 'VEK' is not a control of the space"},
      {{"TILE >"}, "c.yaml:1: constraints: 'TILE >': Unexpected end of expression"},
      {{"TILE > 1000"}, "c.yaml:1: constraints: 'TILE > 1000': no values of its controls satisfy it"},
      {{"2 > 1"}, "names no control"},
  };
  for (const auto &c : cases) {
    SearchSpace s = tiles(c.exprs);
    std::string err;
    EXPECT_FALSE(s.compileConstraints(err)) << c.exprs[0];
    EXPECT_THAT(err, HasSubstr(c.message));
  }
}

TEST(Constraints, TogetherUnsatisfiableIsAnError) {
  SearchSpace s = tiles({"TILE >= 32", "TILE <= 16"});
  s.controls[0].canUnset = false;   // required: every point sets it
  std::string err;
  EXPECT_FALSE(s.compileConstraints(err));
  EXPECT_THAT(err, HasSubstr("c.yaml:1, c.yaml:2: constraints: together no point of the space satisfies them"));
}

TEST(Constraints, NonNumericValueIsAnError) {
  SearchSpace s = tiles({"MODE == 1"});
  s.controls.push_back(define("MODE", {"fast", "slow"}));
  std::string err;
  EXPECT_FALSE(s.compileConstraints(err));
  EXPECT_THAT(err, HasSubstr("control 'MODE' has the value 'fast', not a number"));
}

TEST(Constraints, EveryStrategyProposesOnlyFeasiblePoints) {
  SearchSpace s = compiled({"TILE * VEC <= 64", "UNROLL <= VEC"});
  for (const char *name : {"random", "genetic", "tpe", "exhaustive"}) {
    SearchConfig cfg;
    cfg.strategy = name;
    cfg.poolSize = 8;
    cfg.seed = 7;
    auto strategy = makeStrategy(cfg, s, false);
    std::vector<ScoredPoint> history = {{s.baseline(), true, {1.0}, 0}};
    std::set<Point> seen;
    for (int g = 1; g <= 12; ++g) {
      for (const Point &p : strategy->pool(g, history)) {
        EXPECT_TRUE(s.feasible(p)) << name << " proposed an infeasible point in generation " << g;
        EXPECT_TRUE(seen.insert(p).second) << name;
        // A made-up objective so the model strategies have something to learn.
        double score = 0;
        for (int v : p)
          score += v == kUnset ? 1 : v;
        history.push_back({p, true, {score}, g});
      }
    }
    if (std::string(name) == "exhaustive") {
      EXPECT_EQ((double)seen.size() + 1, *mostEvaluations(name, s)) << "exhaustive visits every feasible point";
    }
  }
}

TEST(Constraints, IdentityChangesOnlyWithConstraints) {
  SearchSpace plain = tiles({});
  SearchSpace constrained = tiles({"TILE * VEC <= 64"});
  EXPECT_NE(plain.identity(), constrained.identity());
}

TEST(Config, ConstraintsFromCiqYamlAndSpaceFiles) {
  TempProject p;
  p.write("tiles.yaml", "controls:\n"
                        "  - name: TILE\n    define: TILE\n    choice: [8, 16, 32]\n"
                        "  - name: VEC\n    define: VEC\n    choice: [1, 2, 4, 8]\n"
                        "constraints:\n  - TILE % VEC == 0\n");
  TuneConfig c = p.loadOk("target: app\nspace:\n  include: tiles.yaml\nconstraints:\n  - TILE * VEC <= 64\n");
  ASSERT_EQ(c.space.constraints.size(), 2u);
  EXPECT_EQ(c.space.constraints[0].origin, p.dir() + "/tiles.yaml:9");
  EXPECT_EQ(c.space.constraints[1].origin, p.dir() + "/ciq.yaml:5");
  EXPECT_FALSE(c.space.feasible({2, 3}));   // 32 * 8 = 256
  EXPECT_TRUE(c.space.feasible({1, 2}));
}

TEST(Config, UnknownControlInAConstraintIsOneLineWithFileAndLine) {
  TempProject p;
  std::string err;
  auto c = p.load("target: app\nspace:\n  controls:\n    - name: TILE\n      define: TILE\n      choice: [8, 16]\n"
                  "constraints:\n  - TILE <= 8\n  - TILES >= 8\n",
                  err);
  EXPECT_FALSE(c);
  EXPECT_THAT(err, HasSubstr(p.dir() + "/ciq.yaml:9: constraints: 'TILES >= 8': 'TILES' is not a control"));
  EXPECT_EQ(err.find('\n'), std::string::npos);
}
