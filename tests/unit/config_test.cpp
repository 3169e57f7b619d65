// ciq.yaml errors: each names the file, the line and the key, and says what
// was expected (docs/config.md). Every case loads a real file through
// loadConfig; the option check asks the real `ptxas --help`.
#include "common/UnitOptions.h"
#include "tests/unit/engine_test_util.h"

#include <gmock/gmock.h>

using namespace ciq;
using ciq::test::TempProject;
using ::testing::HasSubstr;

namespace {

// "<dir>/ciq.yaml:<line>: <key>" — the location every error starts with.
std::string at(const TempProject &p, int line, const std::string &key) {
  return p.dir() + "/ciq.yaml:" + std::to_string(line) + ": " + key;
}

const char *kSpace = "space:\n"
                     "  controls:\n"
                     "    - name: opt-level\n"
                     "      ptxas: \"--opt-level={}\"\n"
                     "      choice: [1, 2, 3]\n";

// The usual shape of an error: one file, the line and key it names, and what
// it says was expected.
struct ErrorCase {
  const char *name;
  std::string yaml;
  int line;        // 0: the message names the key, the line is not checked
  const char *key;
  const char *message;
  const char *also = nullptr; // a further part of the message (a suggestion)
};

const ErrorCase kErrorCases[] = {
    {"UnknownTopLevelKey",
     "target: app\nserach:\n  seed: 2\n",
     2, "serach",
     "unknown key; expected one of: target, build_dir"},
    {"UnknownNestedKey",
     "target: app\nsearch:\n  seed: 2\n  mutation_rate: 0.3\n",
     4, "search.mutation_rate",
     "mutate_rate"},
    {"BadIntegerType",
     "target: app\nsearch:\n  pool_size: many\n",
     3, "search.pool_size",
     "expected an integer, got 'many'"},
    {"NumberOutOfRange",
     "target: app\nsearch:\n  mutate_rate: 1.5\n",
     3, "search.mutate_rate",
     "expected a number from 0 to 1, got 1.5"},
    {"BadBoolean",
     "target: app\nsearch:\n  exit_on_failure: maybe\n",
     3, "search.exit_on_failure",
     "expected true or false"},
    {"UnknownStrategy",
     "target: app\nsearch:\n  strategy: annealing\n",
     3, "search.strategy",
     "expected tpe, genetic, random or exhaustive, got 'annealing'"},
    {"CullNotSmallerThanPoolIsAnError",
     "target: app\nsearch:\n  pool_size: 4\n  cull_size: 4\n",
     4, "search.cull_size",
     "must be smaller than pool_size (4)"},
    {"BadDirection",
     "target: app\nobjectives:\n  - metric: registers\n    direction: lower\n",
     4, "objectives[0].direction",
     "expected minimize or maximize"},
    {"BuildDirWithoutCache",
     "target: app\nbuild_dir: nowhere\n",
     2, "build_dir",
     "not a configured CMake build tree"},
    {"UnknownControlInExclude",
     "target: app\nspace:\n  include: [ptxas-13.0-default]\n  exclude: [fmadd]\n",
     4, "space.exclude",
     "unknown control 'fmadd'; known controls: opt-level"},
    {"MisspeltPtxasOptionCaughtFromPtxasHelp",
     "target: app\nspace:\n  controls:\n    - name: ol\n"
     "      ptxas: \"--opt-levle={}\"\n      choice: [1, 2]\n",
     5, "space.controls[0](ol).ptxas",
     "'--opt-levle' is not an option of ptxas (not in `ptxas --help`)"},
    {"MisspeltNvccOptionCaughtFromNvccHelp",
     "target: app\nspace:\n  controls:\n    - name: v\n"
     "      nvcc: \"--extra-device-vectorisation\"\n      literal: on\n",
     5, "space.controls[0](v).nvcc",
     "is not an option of nvcc"},
    {"ControlNeedsOneRendering",
     "target: app\nspace:\n  controls:\n    - name: x\n      choice: [1]\n",
     4, "space.controls[0](x)",
     "needs exactly one of ptxas, nvcc, define, acf"},
    {"RangeEndBeforeStart",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      range: {start: 8, end: 4, step: 1}\n",
     6, "space.controls[0](t).range",
     "end is smaller than start"},
    {"LogSamplingNeedsTwoPoints",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      log_sampling: {start: 1, end: 64, points: 1}\n",
     6, "space.controls[0](t).log_sampling.points",
     "expected an integer from 2"},
    {"KnockoutProbIsAProbability",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      literal: 1\n      knockout_prob: 2\n",
     7, "space.controls[0](t).knockout_prob",
     "expected a number from 0 to 1"},
    {"DefineNameWithoutEquals",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T=1\n"
     "      choice: [1]\n",
     5, "space.controls[0](t).define",
     "expected a macro name without spaces or '='"},
    {"ControlsMustBeAList",
     "target: app\nspace:\n  controls:\n    name: x\n",
     4, "space.controls",
     "expected a list of controls"},
    {"ControlNeedsOneDomain",
     "target: app\nspace:\n  controls:\n    - name: x\n      define: X\n",
     0, "space.controls[0](x)",
     "needs exactly one domain: choice, range, literal or log_sampling"},
    {"RangeStepMustBePositive",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      range: {start: 1, end: 4, step: 0}\n",
     0, "space.controls[0](t).range.step",
     "expected a number from"},
    {"RangeMissingEnd",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      range: {start: 1}\n",
     0, "space.controls[0](t).range",
     "missing 'end'"},
    {"AcfWithoutMatchingFile",
     "target: app\nspace:\n  controls:\n    - name: a\n"
     "      acf: {files: [\"acfs/*.acf\"]}\n",
     0, "space.controls[0](a).acf.files",
     "acfs/*.acf"},
    {"UnknownMetric",
     "target: app\nobjectives:\n  - metric: spil_bytes\n",
     3, "objectives[0]",
     "unknown metric 'spil_bytes'; expected one of",
     "spill_bytes"},
    {"BuildCommandEmpty",
     "build:\n  command: []\n",
     2, "build.command",
     "the command is empty; give the build's argv"},
    {"BuildWithoutCommand",
     "build:\n  clean: [make, clean]\n",
     2, "build",
     "missing 'command'"},
    {"BuildUnknownKey",
     "build:\n  command: [make]\n  cleanup: [make, clean]\n",
     3, "build.cleanup",
     "unknown key"},
    {"BuildNotAMapping",
     "build: make\n",
     1, "build",
     "expected a mapping {command: [...], clean: [...], env: {...}} or 'none'"},
    {"BuildEnvNotAMapping",
     "build:\n  command: [make]\n  env: [A=1]\n",
     3, "build.env",
     "expected a mapping"},
    {"BuildNoneNeedsABenchmark",
     "build: none\n",
     1, "build",
     "'none' needs a benchmark:"},
    {"TuneTargetsNeedCMake",
     "build: {command: [make]}\ntune_targets: [lib]\n",
     2, "tune_targets",
     "applies to CMake targets only"},
    {"NoTargetNoBuildNoBenchmark",
     "search:\n  seed: 2\n",
     1, "target",
     "missing; name the CMake target to tune, a build: command, or a benchmark:"},
    // nvcc passes -D values and options through a shell: "$(...)" would run.
    {"DefineValueWithShellSubstitution",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n"
     "      choice: [\"$(touch /tmp/PWNED)\"]\n",
     6, "space.controls[0](t)",
     "control 't': '$(touch /tmp/PWNED)' contains '$', which the shell nvcc runs through would interpret"},
    {"PtxasValueWithSemicolon",
     "target: app\nspace:\n  controls:\n    - name: m\n      ptxas: \"--maxrregcount={}\"\n"
     "      choice: [\"32;id\"]\n",
     6, "space.controls[0](m)",
     "control 'm': '32;id' contains ';'"},
    {"NvccOptionWithBacktick",
     "target: app\nspace:\n  controls:\n    - name: f\n      nvcc: \"--ftz=`id`{}\"\n"
     "      choice: [\"true\"]\n",
     5, "space.controls[0](f)",
     "control 'f': '--ftz=`id`{}' contains '`'"},
    {"TwoControlsOfOneName",
     "target: app\nspace:\n  controls:\n    - name: t\n      define: T\n      choice: [1]\n"
     "    - name: t\n      define: U\n      choice: [2]\n",
     7, "space.controls[1]",
     "control 't' is defined twice (first at ", "ciq.yaml:4: space.controls[0](t)); rename or remove one"},
    {"UnitLeavesTheProject",
     "target: app\nspace:\n  controls:\n    - name: m\n      ptxas: \"--maxrregcount={}\"\n"
     "      choice: [32]\n      unit: src/../../a.cu\n",
     7, "space.controls[0](m).unit",
     "expected a CUDA source as the build names it, relative to the project (src/a.cu) or a file name (a.cu), "
     "got 'src/../../a.cu'"},
    {"KernelFilterNotARegex",
     "target: app\nkernel_controls:\n  kernels: \"sgemm((\"\n",
     3, "kernel_controls.kernels",
     "'sgemm((' is not a regular expression ("},
    {"KernelStageBudgetUnderTwo",
     "target: app\nkernel_controls:\n  budget: 1\n",
     3, "kernel_controls.budget", ""},
    // Both set, one compile would get the option twice.
    {"TwoControlsOfOneOption",
     "target: app\nspace:\n  controls:\n    - name: regs\n      ptxas: \"--maxrregcount={}\"\n"
     "      choice: [32]\n      required: true\n    - name: regs2\n      ptxas: \"--maxrregcount={}\"\n"
     "      choice: [64]\n      required: true\n",
     3, "space",
     "controls 'regs' (", "both render ptxas --maxrregcount, which would reach one compile twice; keep one control "
                          "with all the values"},
    {"UnknownBuiltinSpace",
     "target: app\nspace:\n  include: [ptxas-13.0-defualt]\n",
     3, "space.include[0]",
     "unknown built-in space 'ptxas-13.0-defualt'; built-in spaces:",
     "ptxas-13.0-default"},
};

// Named by its case in test listings, not as bytes.
void PrintTo(const ErrorCase &c, std::ostream *os) { *os << c.name; }

class ConfigError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigError, NamesLineKeyAndWhatWasExpected) {
  const ErrorCase &c = GetParam();
  TempProject p;
  std::string e = p.loadError(c.yaml);
  EXPECT_THAT(e, HasSubstr(c.line ? at(p, c.line, c.key) : std::string(c.key)));
  EXPECT_THAT(e, HasSubstr(c.message));
  if (c.also) {
    EXPECT_THAT(e, HasSubstr(c.also));
  }
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Config, ConfigError, ::testing::ValuesIn(kErrorCases),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(Config, OneOptionForTwoUnitsIsTwoControls) {
  TempProject p;
  TuneConfig c = p.loadOk("target: app\nspace:\n  controls:\n"
                          "    - {name: ra, ptxas: \"--maxrregcount={}\", choice: [32], unit: a.cu}\n"
                          "    - {name: rb, ptxas: \"--maxrregcount={}\", choice: [64], unit: b.cu}\n");
  EXPECT_EQ(c.space.controls.size(), 2u);
}

TEST(Config, MinimalFileGetsDefaults) {
  TempProject p;
  TuneConfig c = p.loadOk("target: app\n");
  EXPECT_EQ(c.target, "app");
  EXPECT_EQ(c.buildDir, p.dir());
  EXPECT_EQ(c.lockfile, p.dir() + "/app.ciq.lock"); // named by the target: two targets never share one
  EXPECT_EQ(c.runDir, p.dir() + "/ciq/app");
  ASSERT_EQ(c.objectives.size(), 2u);
  EXPECT_EQ(c.objectives[0].metric, "spill_bytes");
  EXPECT_EQ(c.objectives[1].metric, "registers");
  EXPECT_EQ(c.search.strategy, "tpe");   // the first line of engine/config/Strategies.def
  EXPECT_TRUE(c.search.poolFollowsWorkers());   // no pool_size: one proposal per worker
  // No space: the curated ptxas 13.0 space.
  EXPECT_GE(c.space.find("opt-level"), 0);
  EXPECT_GE(c.space.find("register-usage-level"), 0);
  ASSERT_EQ(c.space.sources.size(), 1u);
  EXPECT_EQ(c.space.sources[0].name, "ptxas-13.0-default");
}

// A Makefile project: no CMake tree needed, a name for the run, the lock
// beside ciq.yaml.
TEST(Config, BuildCommandNeedsNoCMakeTree) {
  TempProject p;
  TuneConfig c = p.loadOk("build:\n  command: [make, -j, bench]\n  clean: [make, clean]\n  env: {CUDA_ARCH: sm_90}\n");
  EXPECT_EQ(c.build.kind, "command");
  EXPECT_EQ(c.build.command, (std::vector<std::string>{"make", "-j", "bench"}));
  EXPECT_EQ(c.build.clean, (std::vector<std::string>{"make", "clean"}));
  EXPECT_EQ(c.build.env.at("CUDA_ARCH"), "sm_90");
  EXPECT_EQ(c.target, "workload");
  EXPECT_EQ(c.lockfile, p.dir() + "/ciq.lock");
  EXPECT_EQ(c.runDir, p.dir() + "/ciq/workload");
}

// No target and no build: the benchmark compiles its kernels at run time.
TEST(Config, BenchmarkAloneCompilesAtRunTime) {
  TempProject p;
  TuneConfig c = p.loadOk("benchmark:\n  command: [python3, bench.py]\n");
  EXPECT_EQ(c.build.kind, "none");
  EXPECT_EQ(c.benchmark.command[0], "python3");
  EXPECT_EQ(c.benchmark.commandLoc.line, 2);
  TuneConfig n = p.loadOk("target: softmax\nbuild: none\nbenchmark:\n  command: [python3, bench.py]\n");
  EXPECT_EQ(n.build.kind, "none");
  EXPECT_EQ(n.target, "softmax");
  // target: names the run, and its lock (as a CMake target's): <target>.ciq.lock.
  EXPECT_EQ(n.lockfile, p.dir() + "/softmax.ciq.lock");
}

TEST(Config, BrokenYamlNamesLineAndColumn) {
  TempProject p;
  std::string e = p.loadError("target: app\nsearch:\n  pool_size: [1, 2\n  seed: 3\n");
  EXPECT_THAT(e, HasSubstr(p.dir() + "/ciq.yaml:"));
  EXPECT_THAT(e, HasSubstr("YAML syntax error"));
  EXPECT_THAT(e, HasSubstr("fix the indentation or quoting"));
}

TEST(Config, MissingFileSaysSo) {
  std::string err;
  EXPECT_FALSE(loadConfig("/nonexistent/ciq.yaml", err));
  EXPECT_THAT(err, HasSubstr("/nonexistent/ciq.yaml: cannot read the file"));
}

TEST(Config, MissingTargetNamesTheKey) {
  TempProject p;
  std::string e = p.loadError("search:\n  seed: 2\n");
  EXPECT_THAT(e, HasSubstr(p.dir() + "/ciq.yaml:1: target"));
  EXPECT_THAT(e, HasSubstr("missing"));
}

TEST(Config, TopLevelMustBeAMapping) {
  TempProject p;
  std::string e = p.loadError("- target: app\n");
  EXPECT_THAT(e, HasSubstr(p.dir() + "/ciq.yaml:1:"));
  EXPECT_THAT(e, HasSubstr("expected a mapping"));
}

TEST(Config, SmallPoolClampsTheDefaultCull) {
  // cull_size defaults to 2: a pool of 2 must not be an error the user never wrote.
  TempProject p;
  TuneConfig c = p.loadOk("target: app\nsearch:\n  pool_size: 2\n");
  EXPECT_EQ(c.search.poolSize, 2);
  EXPECT_LT(c.search.cullSize, 2);
  EXPECT_FALSE(c.search.poolFollowsWorkers());   // given: kept, whatever the workers
}

TEST(Config, OnlyTpeWithoutPoolSizeFollowsTheWorkers) {
  TempProject p;
  TuneConfig g = p.loadOk("target: app\nsearch:\n  strategy: genetic\n");
  EXPECT_FALSE(g.search.poolFollowsWorkers());   // a genetic generation is a population
  EXPECT_EQ(g.search.poolSize, 8);
  TuneConfig t = p.loadOk("target: app\nsearch:\n  strategy: tpe\n");
  EXPECT_TRUE(t.search.poolFollowsWorkers());
}

TEST(Config, RuntimeMetricNeedsABenchmark) {
  TempProject p;
  std::string e = p.loadError("target: app\nobjectives: [time_ms]\n");
  EXPECT_THAT(e, HasSubstr("objectives[0]"));
  EXPECT_THAT(e, HasSubstr("metric 'time_ms' needs a benchmark"));
  // With one it is fine.
  TuneConfig c = p.loadOk("target: app\nbenchmark:\n  command: [./app]\nobjectives: [time_ms]\n");
  EXPECT_EQ(c.objectives.at(0).metric, "time_ms");
  EXPECT_EQ(c.objectives.at(0).unit, "ms");
}

TEST(Config, ExcludeRemovesAnIncludedControl) {
  TempProject p;
  TuneConfig c = p.loadOk("target: app\nspace:\n  include: [ptxas-13.0-default]\n  exclude: [fmad]\n");
  EXPECT_LT(c.space.find("fmad"), 0);
  EXPECT_GE(c.space.find("opt-level"), 0);
}

// One unit whichever way it is spelled: the lock and the wrapper compare
// the normal form.
TEST(Config, UnitPathsAreNormalized) {
  TempProject p;
  TuneConfig c = p.loadOk("target: app\nspace:\n  controls:\n    - name: m\n      ptxas: \"--maxrregcount={}\"\n"
                          "      choice: [32]\n      unit: ./src//x/../a.cu\n");
  ASSERT_GE(c.space.find("m"), 0);
  EXPECT_EQ(c.space.controls[c.space.find("m")].unit, "src/a.cu");
  EXPECT_TRUE(unitMatches("src/a.cu", "/home/me/proj/./src/a.cu"));
  EXPECT_TRUE(unitMatches("./a.cu", "src//a.cu"));
  EXPECT_FALSE(unitMatches("a.cu", "src/ba.cu"));
}

TEST(Config, ShortOptionNamesAreKnown) {
  TempProject p;
  TuneConfig c = p.loadOk("target: app\nspace:\n  controls:\n    - name: o\n      ptxas: \"-O{}\"\n"
                          "      choice: [1, 2]\n");
  EXPECT_EQ(c.space.controls.size(), 1u);
}

TEST(Config, OptionWithoutPlaceholderNeedsLiteral) {
  TempProject p;
  std::string e = p.loadError("target: app\nspace:\n  controls:\n    - name: x\n"
                              "      ptxas: \"--opt-level\"\n      choice: [1, 2]\n");
  EXPECT_THAT(e, HasSubstr("has no '{}' for the value; use literal"));
}

TEST(Config, EmptySpaceIsAnError) {
  TempProject p;
  std::string e = p.loadError(std::string("target: app\nspace:\n  include: [ptxas-13.0-override-directives]\n") +
                              "  exclude: [override-directive-values]\n");
  // The line of the `space:` mapping's first key.
  EXPECT_THAT(e, HasSubstr(at(p, 3, "space")));
  EXPECT_THAT(e, HasSubstr("no controls"));
}

TEST(Config, UserControlReplacesIncludedOne) {
  TempProject p;
  TuneConfig c = p.loadOk(std::string("target: app\nspace:\n  include: [ptxas-13.0-default]\n") +
                          "  controls:\n    - name: opt-level\n      ptxas: \"--opt-level={}\"\n      choice: [2]\n");
  int i = c.space.find("opt-level");
  ASSERT_GE(i, 0);
  EXPECT_EQ(c.space.controls[i].values, std::vector<std::string>{"2"});
  // Replaced in place, not added twice.
  int n = 0;
  for (const auto &ctl : c.space.controls)
    n += ctl.name == "opt-level";
  EXPECT_EQ(n, 1);
}

TEST(Config, ListOfSpacesMixesBuiltinAndUserControls) {
  TempProject p;
  TuneConfig c = p.loadOk(std::string("target: app\nspace:\n  - ptxas-13.0-default\n") +
                          "  - controls:\n      - name: tile\n        define: TILE\n        choice: [8, 16]\n");
  EXPECT_GE(c.space.find("opt-level"), 0);
  EXPECT_GE(c.space.find("tile"), 0);
}

TEST(Config, SearchSettingsAreRead) {
  TempProject p;
  TuneConfig c = p.loadOk(std::string("target: app\nsearch:\n  strategy: random\n  pool_size: 5\n"
                                      "  generations: 3\n  mutate_rate: 0.5\n  cull_size: 1\n  elitism: 2\n"
                                      "  seed: 42\n  exit_on_failure: false\n  exhaustive_limit: 99\n") +
                          kSpace);
  EXPECT_EQ(c.search.strategy, "random");
  EXPECT_EQ(c.search.poolSize, 5);
  EXPECT_EQ(c.search.generations, 3);
  EXPECT_DOUBLE_EQ(c.search.mutateRate, 0.5);
  EXPECT_EQ(c.search.cullSize, 1);
  EXPECT_EQ(c.search.elitism, 2);
  EXPECT_EQ(c.search.seed, 42u);
  EXPECT_FALSE(c.search.exitOnFailure);
  EXPECT_EQ(c.search.exhaustiveLimit, 99);
}

TEST(Config, ExhaustiveOverTheLimitIsRefusedWithTheSize) {
  TempProject p;
  std::string e = p.loadError("target: app\nsearch:\n  strategy: exhaustive\n  exhaustive_limit: 3\n" +
                              std::string(kSpace));
  EXPECT_THAT(e, HasSubstr(at(p, 3, "search.strategy")));
  EXPECT_THAT(e, HasSubstr("exhaustive search over a space of 4 points, over search.exhaustive_limit 3"));
  TuneConfig c = p.loadOk("target: app\nsearch:\n  strategy: exhaustive\n  exhaustive_limit: 4\n" + std::string(kSpace));
  EXPECT_EQ(c.search.strategy, "exhaustive");
}

// Two included spaces defining one control name: the error names the
// include and both definitions instead of dropping one of them.
TEST(Config, ControlNamesAreUniqueAcrossIncludedSpaces) {
  TempProject p;
  p.write("mine.yaml", "name: mine\ncontrols:\n  - name: opt-level\n    ptxas: \"--opt-level={}\"\n    choice: [1]\n");
  std::string e = p.loadError("target: app\nspace:\n  include: [ptxas-13.0-default, mine.yaml]\n");
  EXPECT_THAT(e, HasSubstr(p.dir() + "/ciq.yaml:3: space.include[1]: control 'opt-level' (" + p.dir() +
                           "/mine.yaml:4: controls[0](opt-level).ptxas) is already defined by "));
  EXPECT_THAT(e, HasSubstr("ptxas-13.0-default.yaml"));
  EXPECT_THAT(e, HasSubstr("exclude: it in an entry before this include"));
  // Excluding it first is the way to take one's own.
  p.loadOk("target: app\nspace:\n  - ptxas-13.0-default\n  - exclude: [opt-level]\n  - mine.yaml\n");
  // A control of one's own still replaces an included one of its name (docs/search-space.md).
  p.loadOk("target: app\nspace:\n  include: [ptxas-13.0-default]\n  controls:\n    - name: opt-level\n"
           "      ptxas: \"--opt-level={}\"\n      choice: [1]\n");
}

// Issue 21: repeats: adaptive and its budget keys.
TEST(Config, AdaptiveRepeatsAndRacing) {
  TempProject p;
  TuneConfig fixed = p.loadOk("target: app\nbenchmark: {command: [./b], repeats: 7}\n");
  EXPECT_FALSE(fixed.benchmark.adaptive);
  EXPECT_FALSE(fixed.benchmark.racing);
  EXPECT_EQ(fixed.benchmark.repeats, 7);
  TuneConfig a = p.loadOk("target: app\nbenchmark: {command: [./b], repeats: adaptive, "
                          "target_noise_percent: 0.5, max_repeats: 2, max_measure_s: 9}\n");
  EXPECT_TRUE(a.benchmark.adaptive);
  EXPECT_TRUE(a.benchmark.racing);
  EXPECT_DOUBLE_EQ(a.benchmark.targetNoisePercent, 0.5);
  EXPECT_EQ(a.benchmark.maxRepeats, 2);
  EXPECT_EQ(a.benchmark.minRepeats, 2);   // the default 3 shrinks to the maximum
  EXPECT_DOUBLE_EQ(a.benchmark.maxMeasureSeconds, 9);
  // Issue 32 item 7: without repeats, a runtime objective is measured
  // adaptively with racing; a compile objective's benchmark (a correctness
  // gate) keeps the fixed count.
  TuneConfig dflt = p.loadOk("target: app\nbenchmark: {command: [./b]}\n");
  EXPECT_TRUE(dflt.benchmark.adaptive);
  EXPECT_TRUE(dflt.benchmark.racing);
  EXPECT_EQ(dflt.benchmark.maxRepeats, 200);
  TuneConfig gate = p.loadOk("target: app\nobjectives: [registers]\nbenchmark: {command: [./b]}\n");
  EXPECT_FALSE(gate.benchmark.adaptive);
  EXPECT_FALSE(gate.benchmark.racing);
  EXPECT_EQ(gate.benchmark.repeats, 5);
  std::string err = p.loadError("target: app\nbenchmark: {command: [./b], repeats: 5, max_repeats: 3}\n");
  EXPECT_NE(err.find("benchmark.max_repeats: applies to adaptive repeats only"), std::string::npos) << err;
  err = p.loadError("target: app\nbenchmark: {command: [./b], repeats: adaptive, min_repeats: 8, max_repeats: 4}\n");
  EXPECT_NE(err.find("must be at least min_repeats (8)"), std::string::npos) << err;
  err = p.loadError("target: app\nbenchmark: {command: [./b], repeats: often}\n");
  EXPECT_NE(err.find("benchmark.repeats: expected a number of runs or adaptive, got 'often'"), std::string::npos) << err;
  // race_alpha where racing is off would be silently unused: refused.
  err = p.loadError("target: app\nbenchmark: {command: [./b], repeats: 3, race_alpha: 0.05}\n");
  EXPECT_NE(err.find("benchmark.race_alpha: applies to racing only, which is off with a fixed repeats count; set "
                     "racing: true (or repeats: adaptive), or remove race_alpha"),
            std::string::npos)
      << err;
  err = p.loadError("target: app\nbenchmark: {command: [./b], repeats: adaptive, racing: false, race_alpha: 0.05}\n");
  EXPECT_NE(err.find("benchmark.race_alpha: applies to racing only, which is off (racing: false)"), std::string::npos)
      << err;
  // Racing with a fixed count is allowed, and so is its level.
  TuneConfig raced = p.loadOk("target: app\nbenchmark: {command: [./b], repeats: 9, racing: true, race_alpha: 0.05}\n");
  EXPECT_TRUE(raced.benchmark.racing);
  EXPECT_DOUBLE_EQ(raced.benchmark.raceAlpha, 0.05);
  // Garbage in the adaptive keys: one line naming the key.
  for (const char *bad : {"target_noise_percent: 0", "target_noise_percent: -1", "target_noise_percent: 1e9",
                          "target_noise_percent: abc", "race_alpha: 0", "race_alpha: 1", "max_measure_s: 0",
                          "racing: maybe", "min_repeats: 1", "max_repeats: 1"}) {
    std::string key = std::string(bad).substr(0, std::string(bad).find(':'));
    err = p.loadError(std::string("target: app\nbenchmark: {command: [./b], repeats: adaptive, ") + bad + "}\n");
    EXPECT_NE(err.find("benchmark." + key + ": expected"), std::string::npos) << bad << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << bad << ": " << err; // one line
  }
}

// Issue 31 item 8: a benchmark that prints seconds. Without a unit the number
// is labelled by its metric's name, never "ms" and never with an empty unit;
// with one (ciq_tune's UNIT) the objective and benchmark.metric carry it.
TEST(Config, BenchmarkUnitIsGivenOrTheMetricsName) {
  TempProject p;
  const std::string base = "benchmark:\n  command: [sh, -c, 'echo time_s=0.5']\n  metric:\n    regex: 'time_s=([0-9.]+)'\n";
  TuneConfig bare = p.loadOk(base + "objectives: [time_s]\n");
  EXPECT_EQ(bare.objectives.front().unit, "time_s");
  EXPECT_EQ(bare.benchmark.metric.unit, "time_s");
  TuneConfig given = p.loadOk(base + "    unit: s\nobjectives: [time_s]\n");
  EXPECT_EQ(given.objectives.front().unit, "s");
  EXPECT_EQ(given.benchmark.metric.unit, "s");
  TuneConfig own = p.loadOk(base + "objectives:\n  - {metric: gflops, direction: maximize, unit: GFLOP/s}\n");
  EXPECT_EQ(own.benchmark.metric.unit, "GFLOP/s");
  // time_ms keeps its default.
  TuneConfig ms = p.loadOk(base);
  EXPECT_EQ(ms.objectives.front().unit, "ms");
  EXPECT_EQ(ms.benchmark.metric.unit, "ms");
}

// search.max_minutes takes what --time and ciq_tune(... TIME) take (1s to
// 1000h), or 0 for none: 0.001 (0.06 s) gave "time budget 0s ... 11902%
// used", and 1e6 minutes passed --time's 1000h. ciq_tune's TIME 1s writes
// 0.016667.
TEST(Config, MaxMinutesHasTheBoundsOfTime) {
  TempProject p;
  EXPECT_EQ(p.loadOk("target: app\nsearch:\n  max_minutes: 0\n").search.maxMinutes, 0);
  EXPECT_DOUBLE_EQ(p.loadOk("target: app\nsearch:\n  max_minutes: 0.016667\n").search.maxMinutes, 0.016667);
  EXPECT_DOUBLE_EQ(p.loadOk("target: app\nsearch:\n  max_minutes: 60000\n").search.maxMinutes, 60000);
  std::string small = p.loadError("target: app\nsearch:\n  max_minutes: 0.001\n");
  EXPECT_NE(small.find("search.max_minutes: expected 0 (no time budget) or at least 0.016667 (1s, the least a tune "
                       "can use), got 0.001"),
            std::string::npos)
      << small;
  std::string large = p.loadError("target: app\nsearch:\n  max_minutes: 1e6\n");
  EXPECT_NE(large.find("search.max_minutes: expected a number from 0 to 60000, got 1e6"), std::string::npos) << large;
  EXPECT_EQ(small.find('\n'), std::string::npos);
}
