#include "engine/config/Config.h"
#include "common/DurationBounds.h"

#include <cctype>
#include <regex>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>
#include "engine/config/CMakeCache.h"
#include "common/Lockfile.h"
#include "engine/measure/MetricSources.h"
#include "engine/config/Metrics.h"
#include "common/Paths.h"
#include "engine/config/KnownOptions.h"
#include "engine/config/SpaceLoader.h"
#include "engine/config/StrategyTable.h"
#include "engine/config/YamlUtil.h"

#include <algorithm>
#include <regex>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <set>

namespace ciq {
namespace {


// The project's source directory, from the build tree's CMakeCache.txt.
std::string sourceDirOf(const std::string &buildDir) {
  return cacheValue(readCMakeCache(buildDir), "CMAKE_HOME_DIRECTORY", buildDir);
}

// The unit of what the benchmark prints. "ms" is benchmark.metric's default
// for time_ms; a metric of another name (time_s, gflops) has the unit given
// (benchmark.metric.unit, ciq_tune's UNIT, or the objective's own unit:),
// else its own name, so that no number is labelled ms that is not, nor
// printed with an empty unit.
void benchmarkUnits(TuneConfig &c) {
  if (!c.benchmark.enabled)
    return;
  for (auto &o : c.objectives) {
    if (findMetric(o.metric) && o.metric != "time_ms")
      continue; // a compile metric, with its table unit
    if (!o.unit.empty() && !c.benchmark.metric.unitGiven) {
      c.benchmark.metric.unit = o.unit;  // the objective said it
      c.benchmark.metric.unitGiven = true;
    }
    if (!c.benchmark.metric.unitGiven && o.metric != "time_ms")
      c.benchmark.metric.unit = o.metric;
    if (o.unit.empty() || (o.metric == "time_ms" && c.benchmark.metric.unitGiven))
      o.unit = c.benchmark.metric.unit;
    break; // the benchmark prints one number
  }
}

// The objective kernel_time_ms reads benchmark.metric kernel_time (its
// default source); benchmark.kernels picks kernels of that source only, and
// CUDA_INJECTION64_PATH is ciq's own to set in a traced run.
void kernelTimeSource(TuneConfig &c, const YAML::Node &root, const YamlReader &r) {
  if (!c.benchmark.enabled)
    return;
  const YAML::Node bench = root["benchmark"];
  bool wanted = std::any_of(c.objectives.begin(), c.objectives.end(),
                            [](const Objective &o) { return o.metric == "kernel_time_ms"; });
  MetricSource &m = c.benchmark.metric;
  if (wanted && !bench["metric"])
    m.kind = "kernel_time";
  else if (wanted && m.kind != "kernel_time")
    r.fail(bench["metric"], "benchmark.metric",
           "the objective kernel_time_ms is measured by ciq (kernel_time), not read with " + m.kind +
               "; remove benchmark.metric, or name the objective after what the benchmark prints");
  if (bench["kernels"] && m.kind != "kernel_time")
    r.fail(bench["kernels"], "benchmark.kernels",
           "applies to kernel times only (objective kernel_time_ms, or benchmark.metric kernel_time: true)");
  if (m.kind == "kernel_time" && ((m.unitGiven && m.unit != "ms") || m.scale != 1.0))
    r.fail(bench["metric"], "benchmark.metric", "kernel_time is measured by ciq in ms: remove unit and scale");
  if (m.kind == "kernel_time" && c.benchmark.env.count("CUDA_INJECTION64_PATH"))
    r.fail(bench["env"], "benchmark.env", "sets CUDA_INJECTION64_PATH, which kernel times need for ciq's own "
                                          "injection library (CUDA loads one); remove it");
}

Objective parseObjective(const YAML::Node &n, const YamlReader &r, const std::string &key, bool haveBenchmark) {
  Objective o;
  if (n.IsScalar())
    o.metric = n.Scalar();
  else {
    r.onlyKeys(n, key, {"metric", "direction", "unit", "kernels", "reduce"});
    if (!n["metric"])
      r.fail(n, key, "missing 'metric'");
    o.metric = r.str(n["metric"], key + ".metric");
    if (n["direction"]) {
      o.direction = r.str(n["direction"], key + ".direction");
      if (o.direction != "minimize" && o.direction != "maximize")
        r.fail(n["direction"], key + ".direction", "expected minimize or maximize");
    }
    if (n["unit"]) o.unit = r.str(n["unit"], key + ".unit");
    if (n["kernels"]) o.kernels = r.strings(n["kernels"], key + ".kernels");
    if (n["reduce"]) {
      o.reduce = r.str(n["reduce"], key + ".reduce");
      if (o.reduce != "sum" && o.reduce != "max")
        r.fail(n["reduce"], key + ".reduce", "expected sum or max");
    }
  }
  const MetricInfo *known = findMetric(o.metric);
  if (!known && !haveBenchmark)
    r.fail(n, key, "unknown metric '" + o.metric + "'; expected one of " + metricNames() +
                       " (other names need a benchmark that prints them)");
  if (known && known->from == MetricFrom::Benchmark && !haveBenchmark)
    r.fail(n, key, "metric '" + o.metric + "' needs a benchmark: add a 'benchmark:' section");
  if (o.unit.empty())
    o.unit = known ? known->unit : "";
  o.loc = {r.file(), n.Mark().line + 1, key};
  return o;
}

MetricSource parseMetricSource(const YAML::Node &n, const YamlReader &r, const std::string &key) {
  MetricSource m;
  std::vector<std::string> keys = {"file", "unit", "scale", "column", "state"};
  for (const auto &src : kMetricSources)
    keys.push_back(src.name);
  r.onlyKeys(n, key, keys);
  int kinds = 0;
  for (const auto &src : kMetricSources) {
    const YAML::Node v = n[src.name];
    if (!v)
      continue;
    m.kind = src.name;
    ++kinds;
    if (src.value == MetricSourceValue::Pattern)
      m.pattern = r.str(v, key + "." + src.name);
    else if (src.value == MetricSourceValue::File)
      m.file = r.str(v, key + "." + src.name);
  }
  if (kinds > 1)
    r.fail(n, key, "give one of " + metricSourceNames());
  if (n["file"]) m.file = r.str(n["file"], key + ".file");
  if (n["unit"]) {
    m.unit = r.str(n["unit"], key + ".unit");
    m.unitGiven = true;
  }
  if (n["scale"]) m.scale = r.number(n["scale"], key + ".scale", -1e300, 1e300);
  if (n["column"]) m.nvbenchColumn = r.str(n["column"], key + ".column");
  if (n["state"]) m.nvbenchState = r.str(n["state"], key + ".state");
  return m;
}

// correctness: {command: [...], compare: stdout | <file>, rtol, atol}; the
// list form is the command alone.
void parseCorrectness(const YAML::Node &n, const YamlReader &r, BenchmarkConfig &b) {
  r.onlyKeys(n, "benchmark.correctness", {"command", "compare", "rtol", "atol"});
  if (n["command"]) b.correctness = r.strings(n["command"], "benchmark.correctness.command");
  if (n["compare"]) {
    b.compare = r.str(n["compare"], "benchmark.correctness.compare");
    if (b.compare.empty())
      r.fail(n["compare"], "benchmark.correctness.compare", "expected stdout or the path of a file the check writes");
  }
  if (n["rtol"]) b.rtol = r.number(n["rtol"], "benchmark.correctness.rtol", 0, 1e6);
  if (n["atol"]) b.atol = r.number(n["atol"], "benchmark.correctness.atol", 0, 1e300);
  if (b.correctness.empty() && b.compare.empty())
    r.fail(n, "benchmark.correctness", "give command (the check to run) or compare (stdout or a file)");
}

// Controls that change what the program computes, from nvcc's numerics
// options (--ftz, --prec-div, --prec-sqrt, --use_fast_math), pass only an
// output comparison against the baseline in a runtime search.
void requireComparison(const TuneConfig &c, const YAML::Node &where, const YamlReader &r) {
  if (!c.benchmark.enabled || !c.benchmark.compare.empty() || c.objectives.empty() ||
      isCompileMetric(c.objectives.front().metric))
    return;
  std::string names;
  for (const auto &ctl : c.space.controls)
    if (ctl.changesResults && ctl.render == RenderKind::Nvcc)
      names += (names.empty() ? "" : ", ") + ctl.name;
  if (!names.empty())
    r.fail(where, "space",
           "controls " + names + " change the program's results; a runtime search over them needs "
           "benchmark.correctness: {compare: stdout or <file>, rtol, atol} (every candidate's output is "
           "compared with the baseline's), or exclude them");
}

// benchmark.cases: [{name, args, env}], names unique, simple and non-empty
// (they name log files, results.csv columns and the lock's figures).
std::vector<BenchmarkCase> parseCases(const YAML::Node &n, const YamlReader &r) {
  if (!n.IsSequence() || n.size() == 0)
    r.fail(n, "benchmark.cases", "expected a non-empty list of {name, args, env}");
  std::vector<BenchmarkCase> cases;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node &c = n[i];
    std::string key = "benchmark.cases[" + std::to_string(i) + "]";
    r.needMap(c, key);
    r.onlyKeys(c, key, {"name", "args", "env"});
    if (!c["name"])
      r.fail(c, key, "missing 'name' (the case's name, e.g. small)");
    BenchmarkCase bc;
    bc.name = r.str(c["name"], key + ".name");
    bc.loc = {r.file(), c.Mark().line + 1, key};
    static const std::regex simple("[A-Za-z0-9_.+-]+");
    if (!std::regex_match(bc.name, simple))
      r.fail(c["name"], key + ".name", "expected a non-empty name of letters, digits, '_', '.', '+' or '-', got '" +
                                           bc.name + "'");
    for (const auto &o : cases)
      if (o.name == bc.name)
        r.fail(c["name"], key + ".name", "'" + bc.name + "' is the name of an earlier case; case names are unique");
    if (c["args"]) bc.args = r.strings(c["args"], key + ".args");
    if (c["env"]) {
      r.needMap(c["env"], key + ".env");
      for (const auto &kv : c["env"])
        bc.env[kv.first.as<std::string>()] = r.str(kv.second, key + ".env." + kv.first.as<std::string>());
    }
    cases.push_back(std::move(bc));
  }
  return cases;
}

BenchmarkConfig parseBenchmark(const YAML::Node &n, const YamlReader &r, const std::string &base) {
  BenchmarkConfig b;
  r.onlyKeys(n, "benchmark", {"command", "working_dir", "env", "warmup", "repeats", "timeout_s",
                              "adaptive_factor", "metric", "correctness", "finalists", "target_noise_percent",
                              "min_repeats", "max_repeats", "max_measure_s", "racing", "race_alpha", "cases", "run_timeout_floor_s",
                              "max_regression_percent", "kernels", "kernel_times", "artifacts"});
  if (!n["command"])
    r.fail(n, "benchmark", "missing 'command' (the benchmark's argv)");
  b.enabled = true;
  b.command = r.strings(n["command"], "benchmark.command");
  b.commandLoc = {r.file(), n["command"].Mark().line + 1, "benchmark.command[0]"};
  if (b.command.empty() || b.command[0].empty())
    r.fail(n["command"], "benchmark.command", "the command is empty");
  b.workingDir = n["working_dir"] ? absolutePath(r.str(n["working_dir"], "benchmark.working_dir"), base) : "";
  // Files the build makes that the benchmark imports or loads (an extension
  // module, a shared library): BuildArtifacts.h.
  if (n["artifacts"]) {
    b.artifacts = r.strings(n["artifacts"], "benchmark.artifacts");
    b.artifactsLoc = {r.file(), n["artifacts"].Mark().line + 1, "benchmark.artifacts"};
    for (const auto &a : b.artifacts)
      if (a.empty())
        r.fail(n["artifacts"], "benchmark.artifacts", "an empty file name; give the files the build makes (globs allowed)");
  }
  if (n["env"]) {
    r.needMap(n["env"], "benchmark.env");
    for (const auto &kv : n["env"])
      b.env[kv.first.as<std::string>()] = r.str(kv.second, "benchmark.env." + kv.first.as<std::string>());
  }
  if (n["warmup"]) b.warmup = (int)r.integer(n["warmup"], "benchmark.warmup", 0, 1000);
  // Without `repeats`, adaptive repeats with racing (issue 32 item 7): a fixed
  // 5 runs cannot tell a 3% gain under 10% jitter; loadConfig turns it back
  // to fixed repeats for compile objectives, which the benchmark only gates.
  b.adaptive = !n["repeats"];
  if (n["repeats"] && n["repeats"].IsScalar() && n["repeats"].Scalar() == "adaptive")
    b.adaptive = true;
  else if (n["repeats"] && n["repeats"].IsScalar() && !n["repeats"].Scalar().empty() &&
           !isdigit((unsigned char)n["repeats"].Scalar()[0]) && n["repeats"].Scalar()[0] != '-')
    r.fail(n["repeats"], "benchmark.repeats", "expected a number of runs or adaptive, got '" + n["repeats"].Scalar() + "'");
  else if (n["repeats"])
    b.repeats = (int)r.integer(n["repeats"], "benchmark.repeats", 1, 100000);
  for (const char *k : {"target_noise_percent", "min_repeats", "max_repeats", "max_measure_s"})
    if (n[k] && !b.adaptive)
      r.fail(n[k], std::string("benchmark.") + k, "applies to adaptive repeats only; set repeats: adaptive");
  if (n["target_noise_percent"])
    b.targetNoisePercent = r.number(n["target_noise_percent"], "benchmark.target_noise_percent", 0.001, 1000);
  if (n["min_repeats"]) b.minRepeats = (int)r.integer(n["min_repeats"], "benchmark.min_repeats", 2, 100000);
  if (n["max_repeats"]) b.maxRepeats = (int)r.integer(n["max_repeats"], "benchmark.max_repeats", 2, 100000);
  if (n["max_measure_s"]) b.maxMeasureSeconds = r.number(n["max_measure_s"], "benchmark.max_measure_s", 0.001, 1e7);
  if (!n["min_repeats"]) // the default minimum shrinks to a smaller explicit maximum
    b.minRepeats = std::min(b.minRepeats, b.maxRepeats);
  if (b.adaptive && b.maxRepeats < b.minRepeats)
    r.fail(n["max_repeats"] ? n["max_repeats"] : n["min_repeats"], "benchmark.max_repeats",
           "must be at least min_repeats (" + std::to_string(b.minRepeats) + ")");
  b.racing = b.adaptive;
  if (n["racing"]) b.racing = r.boolean(n["racing"], "benchmark.racing");
  if (n["race_alpha"]) b.raceAlpha = r.number(n["race_alpha"], "benchmark.race_alpha", 1e-12, 0.5);
  if (n["race_alpha"] && !b.racing) // else the level a user set is silently unused
    r.fail(n["race_alpha"], "benchmark.race_alpha",
           std::string("applies to racing only, which is off ") +
               (n["racing"] ? "(racing: false)" : "with a fixed repeats count") +
               "; set racing: true (or repeats: adaptive), or remove race_alpha");
  if (n["timeout_s"]) b.timeoutSeconds = r.number(n["timeout_s"], "benchmark.timeout_s", 0.001, 1e6);
  if (n["run_timeout_floor_s"])
    b.runTimeoutFloorSeconds = r.number(n["run_timeout_floor_s"], "benchmark.run_timeout_floor_s", 0.001, 1e6);
  if (n["adaptive_factor"]) b.adaptiveFactor = r.number(n["adaptive_factor"], "benchmark.adaptive_factor", 1.1, 1e6);
  if (n["finalists"]) b.finalists = (int)r.integer(n["finalists"], "benchmark.finalists", 0, 100);
  if (n["metric"]) b.metric = parseMetricSource(n["metric"], r, "benchmark.metric");
  if (n["kernels"]) {
    b.metric.kernels = r.str(n["kernels"], "benchmark.kernels");
    try {
      std::regex check(b.metric.kernels, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
      r.fail(n["kernels"], "benchmark.kernels", "'" + b.metric.kernels + "' is not a regular expression: " + e.what());
    }
  }
  if (n["kernel_times"]) {
    b.kernelTimes = r.str(n["kernel_times"], "benchmark.kernel_times");
    if (b.kernelTimes != "warmup" && b.kernelTimes != "off")
      r.fail(n["kernel_times"], "benchmark.kernel_times",
             "expected warmup (trace the first warm-up run of each build) or off, got '" + b.kernelTimes + "'");
  }
  if (n["correctness"] && n["correctness"].IsMap())
    parseCorrectness(n["correctness"], r, b);
  else if (n["correctness"])
    b.correctness = r.strings(n["correctness"], "benchmark.correctness");
  if (n["cases"])
    b.cases = parseCases(n["cases"], r);
  if (n["max_regression_percent"]) {
    if (!n["cases"])
      r.fail(n["max_regression_percent"], "benchmark.max_regression_percent",
             "applies to benchmark.cases only (the limit a candidate may slow one case by); add cases or remove it");
    b.maxRegressionPercent = r.number(n["max_regression_percent"], "benchmark.max_regression_percent", 0, 1e6);
  }
  return b;
}

// `build: {command: [...], clean: [...], env: {...}}` or `build: none`.
BuildConfig parseBuild(const YAML::Node &n, const YamlReader &r) {
  BuildConfig b;
  if (n.IsScalar()) {
    if (n.Scalar() != "none")
      r.fail(n, "build", "expected a mapping {command: [...], clean: [...], env: {...}} or 'none' (the "
                         "benchmark compiles at run time), got '" + n.Scalar() + "'");
    b.kind = "none";
    return b;
  }
  r.needMap(n, "build");
  r.onlyKeys(n, "build", {"command", "clean", "env"});
  if (!n["command"])
    r.fail(n, "build", "missing 'command' (the build's argv, e.g. [make, -j, bench])");
  b.kind = "command";
  b.command = r.strings(n["command"], "build.command");
  if (b.command.empty() || b.command[0].empty())
    r.fail(n["command"], "build.command", "the command is empty; give the build's argv, e.g. [make, -j, bench]");
  if (n["clean"]) {
    b.clean = r.strings(n["clean"], "build.clean");
    if (b.clean.empty() || b.clean[0].empty())
      r.fail(n["clean"], "build.clean", "the command is empty; give the argv that deletes the CUDA objects, "
                                        "e.g. [make, clean], or leave clean: out");
  }
  if (n["env"]) {
    r.needMap(n["env"], "build.env");
    for (const auto &kv : n["env"])
      b.env[kv.first.as<std::string>()] = r.str(kv.second, "build.env." + kv.first.as<std::string>());
  }
  return b;
}

// What the workload is built by: a CMake target, build:, or (with a
// benchmark and neither) nothing: its kernels compile at run time.
void parseWorkload(const YAML::Node &root, const YamlReader &r, const std::string &base, TuneConfig &c) {
  if (root["build"])
    c.build = parseBuild(root["build"], r);
  else if (!root["target"] && root["benchmark"])
    c.build.kind = "none";
  else if (!root["target"])
    r.fail(root, "target", "missing; name the CMake target to tune, a build: command, or a benchmark: whose "
                           "program compiles its kernels at run time (docs/config.md)");
  if (c.build.kind == "none" && !root["benchmark"])
    r.fail(root["build"], "build", "'none' needs a benchmark: whose program compiles its kernels at run time");
  c.target = root["target"] ? r.str(root["target"], "target") : "workload";
  std::string dir = absolutePath(root["build_dir"] ? r.str(root["build_dir"], "build_dir") : ".", base);
  c.buildDir = dir;
  if (c.build.kind != "cmake") {
    for (const char *k : {"config", "tune_targets"})
      if (root[k])
        r.fail(root[k], k, "applies to CMake targets only; with build: the build command decides what it builds");
    if (!llvm::sys::fs::is_directory(dir))
      r.fail(root["build_dir"] ? root["build_dir"] : root, "build_dir", "'" + dir + "' is not a directory");
    // One workload per ciq.yaml: ciq.lock beside it, unless target: names the
    // run (then <target>.ciq.lock, as for CMake targets).
    c.lockfile = root["target"] ? defaultLockfilePath(base, c.target) : base + "/ciq.lock";
    return;
  }
  if (!llvm::sys::fs::exists(c.buildDir + "/CMakeCache.txt"))
    r.fail(root["build_dir"] ? root["build_dir"] : root["target"], "build_dir",
           "'" + c.buildDir + "' is not a configured CMake build tree (no CMakeCache.txt); configure it first");
  c.lockfile = defaultLockfilePath(sourceDirOf(c.buildDir), c.target);
}

SearchConfig parseSearch(const YAML::Node &n, const YamlReader &r) {
  SearchConfig s;
  r.onlyKeys(n, "search", {"strategy", "pool_size", "generations", "mutate_rate", "cull_size",
                           "elitism", "seed", "max_evaluations", "max_minutes", "budget_counts", "max_configurations_per_binary",
                           "propose_ahead", "exit_on_failure", "exhaustive_limit", "canary"});
  if (n["strategy"]) {
    s.strategy = r.str(n["strategy"], "search.strategy");
    if (!isStrategy(s.strategy))
      r.fail(n["strategy"], "search.strategy", "expected " + strategyNames() + ", got '" + s.strategy + "'");
  }
  if (n["pool_size"]) {
    s.poolSize = (int)r.integer(n["pool_size"], "search.pool_size", 1, 100000);
    s.poolSizeSet = true;
  }
  if (n["generations"]) {
    s.generations = (int)r.integer(n["generations"], "search.generations", 1, 100000);
    s.generationsSet = true;
  }
  if (n["mutate_rate"]) s.mutateRate = r.number(n["mutate_rate"], "search.mutate_rate", 0, 1);
  if (n["cull_size"]) s.cullSize = (int)r.integer(n["cull_size"], "search.cull_size", 0, 100000);
  if (n["elitism"]) s.elitism = (int)r.integer(n["elitism"], "search.elitism", 0, 100000);
  if (n["seed"]) s.seed = (uint64_t)r.integer(n["seed"], "search.seed", 0, LONG_MAX);
  if (n["max_evaluations"]) s.maxEvaluations = (int)r.integer(n["max_evaluations"], "search.max_evaluations", 0, 10000000);
  if (n["max_minutes"]) {
    // 0: no time budget; else --time's bounds (a millionth of a minute of
    // slack for a 1s written in decimals, as ciq_tune(... TIME 1s) writes it).
    s.maxMinutes = r.number(n["max_minutes"], "search.max_minutes", 0, kMostDuration / 60);
    if (s.maxMinutes > 0 && s.maxMinutes < kLeastDuration / 60 - 1e-6)
      r.fail(n["max_minutes"], "search.max_minutes",
             "expected 0 (no time budget) or at least 0.016667 (1s, the least a tune can use), got " +
                 r.str(n["max_minutes"], "search.max_minutes"));
  }
  if (n["budget_counts"]) {
    std::string what = r.str(n["budget_counts"], "search.budget_counts");
    if (what != "configurations" && what != "binaries")
      r.fail(n["budget_counts"], "search.budget_counts", "expected configurations or binaries, got '" + what + "'");
    s.budgetCountsBinaries = what == "binaries";
  }
  if (n["max_configurations_per_binary"])
    s.maxConfigurationsPerBinary =
        (int)r.integer(n["max_configurations_per_binary"], "search.max_configurations_per_binary", 1, 10000);
  if (n["propose_ahead"]) s.proposeAhead = (int)r.integer(n["propose_ahead"], "search.propose_ahead", 0, 4);
  if (n["exit_on_failure"]) s.exitOnFailure = r.boolean(n["exit_on_failure"], "search.exit_on_failure");
  if (n["exhaustive_limit"]) s.exhaustiveLimit = r.integer(n["exhaustive_limit"], "search.exhaustive_limit", 1, LONG_MAX);
  if (n["canary"]) s.canary = r.boolean(n["canary"], "search.canary");
  // The default cull_size must not turn a small pool_size into an error the
  // user never wrote: it shrinks to fit; an explicit one is checked.
  if (!n["cull_size"])
    s.cullSize = std::min(s.cullSize, std::max(0, s.poolSize - 1));
  if (s.cullSize >= s.poolSize && s.poolSize > 1)
    r.fail(n["cull_size"], "search.cull_size", "must be smaller than pool_size (" + std::to_string(s.poolSize) + ")");
  if (s.elitism > s.poolSize)
    r.fail(n["elitism"], "search.elitism", "must not exceed pool_size");
  return s;
}

TimeoutConfig parseTimeouts(const YAML::Node &n, const YamlReader &r) {
  TimeoutConfig t;
  r.onlyKeys(n, "timeouts", {"compile_s", "build_s", "socket_s"});
  if (n["compile_s"]) t.compileSeconds = r.number(n["compile_s"], "timeouts.compile_s", 0.1, 1e6);
  if (n["build_s"]) t.buildSeconds = r.number(n["build_s"], "timeouts.build_s", 0.1, 1e7);
  if (n["socket_s"]) t.socketSeconds = r.number(n["socket_s"], "timeouts.socket_s", 0.1, 1e6);
  return t;
}

SlurmConfig parseSlurm(const YAML::Node &n, const YamlReader &r, const std::string &base) {
  SlurmConfig s;
  r.needMap(n, "slurm");
  r.onlyKeys(n, "slurm", {"partition", "account", "gres", "time_limit_min", "max_jobs", "sbatch_args", "workspace",
                          "scratch_dir", "poll_s"});
  if (n["partition"]) s.partition = r.str(n["partition"], "slurm.partition");
  if (n["account"]) s.account = r.str(n["account"], "slurm.account");
  if (n["gres"]) s.gres = r.str(n["gres"], "slurm.gres");
  if (n["time_limit_min"]) s.timeLimitMinutes = (int)r.integer(n["time_limit_min"], "slurm.time_limit_min", 1, 525600);
  if (n["max_jobs"]) s.maxJobs = (int)r.integer(n["max_jobs"], "slurm.max_jobs", 1, 10000);
  if (n["sbatch_args"]) s.sbatchArgs = r.strings(n["sbatch_args"], "slurm.sbatch_args");
  if (n["workspace"]) {
    s.workspace = r.str(n["workspace"], "slurm.workspace");
    if (s.workspace != "scratch" && s.workspace != "shared")
      r.fail(n["workspace"], "slurm.workspace",
             "expected scratch (build trees on each node's scratch_dir) or shared (under run_dir), got '" +
                 s.workspace + "'");
  }
  if (n["scratch_dir"]) s.scratchDir = absolutePath(r.str(n["scratch_dir"], "slurm.scratch_dir"), base);
  if (n["poll_s"]) s.pollSeconds = r.number(n["poll_s"], "slurm.poll_s", 0.01, 60);
  for (const auto &a : s.sbatchArgs)
    for (const char *owned : {"--wrap", "--output", "--parsable", "--job-name", "--no-requeue", "--requeue"})
      if (a.rfind(owned, 0) == 0)
        r.fail(n["sbatch_args"], "slurm.sbatch_args",
               std::string("'") + owned + "' is set by ciq for each evaluation; remove it (docs/cluster.md)");
  s.loc = {r.file(), n.Mark().line + 1, "slurm"};
  return s;
}

} // namespace

KernelControlsConfig parseKernelControls(const YAML::Node &n, const YamlReader &r);

namespace {

// How the tune runs: jobs, workers, overlap, the executor, the architectures.
void parseRunSettings(const YAML::Node &root, const YamlReader &r, const std::string &base, TuneConfig &c) {
  if (root["jobs"]) c.jobs = (int)r.integer(root["jobs"], "jobs", 0, 4096);
  if (root["workers"]) c.workers = (int)r.integer(root["workers"], "workers", 0, 64);
  if (root["overlap"]) {
    c.overlap = r.str(root["overlap"], "overlap");
    if (c.overlap != "low_priority" && c.overlap != "off")
      r.fail(root["overlap"], "overlap", "expected low_priority or off, got '" + c.overlap + "'");
  }
  if (root["keep_invalid"]) c.keepInvalid = r.boolean(root["keep_invalid"], "keep_invalid");
  if (root["executor"]) {
    c.executor.kind = r.str(root["executor"], "executor");
    if (c.executor.kind != "local" && c.executor.kind != "slurm")
      r.fail(root["executor"], "executor", "expected local or slurm, got '" + c.executor.kind + "'");
  }
  if (root["slurm"]) {
    if (c.executor.kind != "slurm")
      r.fail(root["slurm"], "slurm", "a slurm: section needs 'executor: slurm' (or remove the section)");
    c.executor.slurm = parseSlurm(root["slurm"], r, base);
  }
  if (root["tune_architectures"]) {
    c.tuneArchitectures = r.strings(root["tune_architectures"], "tune_architectures");
    for (const auto &a : c.tuneArchitectures)
      if (!std::regex_match(a, std::regex("sm_[0-9]+[af]?")))
        r.fail(root["tune_architectures"], "tune_architectures",
               "'" + a + "' is not an SASS architecture; write it as sm_90 (sm_90a, sm_100f)");
  }
  if (root["narrow_architectures"])
    c.narrowArchitectures = r.boolean(root["narrow_architectures"], "narrow_architectures");
  if (root["lock_every_architecture"])
    c.lockEveryArchitecture = r.boolean(root["lock_every_architecture"], "lock_every_architecture");
}

// The objectives (the default: time_ms with a benchmark, else spill bytes
// and registers), and what a compile objective means for the benchmark.
void parseObjectives(const YAML::Node &root, const YamlReader &r, const std::string &path, TuneConfig &c) {
  if (root["objectives"]) {
    YAML::Node os = root["objectives"];
    if (os.IsScalar())
      c.objectives.push_back(parseObjective(os, r, "objectives", c.benchmark.enabled));
    else if (os.IsSequence())
      for (size_t i = 0; i < os.size(); ++i)
        c.objectives.push_back(parseObjective(os[i], r, "objectives[" + std::to_string(i) + "]", c.benchmark.enabled));
    else
      r.fail(os, "objectives", "expected a list of objectives");
  }
  if (c.objectives.empty()) {
    if (c.benchmark.enabled)
      c.objectives.push_back({"time_ms", "minimize", c.benchmark.metric.unit, {}, "sum", {path, 0, "objectives"}});
    else {
      c.objectives.push_back({"spill_bytes", "minimize", "bytes", {}, "sum", {path, 0, "objectives"}});
      c.objectives.push_back({"registers", "minimize", "registers", {}, "sum", {path, 0, "objectives"}});
    }
  }
  // Adaptive repeats are the default for a runtime objective only: a compile
  // objective's benchmark is its correctness gate, run the fixed count.
  if (c.benchmark.enabled && isCompileMetric(c.objectives.front().metric)) {
    const YAML::Node bench = root["benchmark"];
    if (bench["cases"]) // the cases' ratios score a runtime objective; a compile metric has no cases
      r.fail(bench["cases"], "benchmark.cases",
             "needs a runtime objective (the first objective is the compile metric '" + c.objectives.front().metric +
                 "', which does not depend on the benchmark's input); tune time_ms or remove cases");
    bool adaptiveKeys = false;
    for (const char *k : {"repeats", "target_noise_percent", "min_repeats", "max_repeats", "max_measure_s"})
      adaptiveKeys = adaptiveKeys || bench[k];
    if (!adaptiveKeys) {
      c.benchmark.adaptive = false;
      if (!bench["racing"])
        c.benchmark.racing = false;
    }
  }
}

// The search space (the default one without `space:`), its constraints, and
// the strategy's limit on its size.
void parseSpace(const YAML::Node &root, const YamlReader &r, const std::string &base, TuneConfig &c) {
  // Without `space:`, a search whose output is compared with the
  // baseline's also tries the controls that change results (defaultSpace);
  // one rule for runtime and compile-only objectives.
  if (!root["space"]) {
    bool compared = c.benchmark.enabled && !c.benchmark.compare.empty();
    c.space = defaultSpace(compared, base);
    c.numericsLeftOut = !compared;
    c.spaceIsDefault = true;
  } else
    c.space = loadSpace(root["space"], r, base);
  if (c.space.controls.empty())
    r.fail(root["space"], "space", "the search space has no controls");
  if (root["constraints"])
    readConstraints(c.space, root["constraints"], r, "constraints");
  checkOptionsKnown(c.space);
  // After checkOptionsKnown: a constraint binds to the controls and values
  // that are left.
  if (std::string err; !c.space.compileConstraints(err))
    throw ConfigError(err);
  requireComparison(c, root["space"] ? root["space"] : root["target"], r);
  // Refused here, where the line of `strategy:` is known, rather than once
  // the search has started.
  if (c.search.strategy == strategies::exhaustive && c.space.feasibleSize().points > (double)c.search.exhaustiveLimit) {
    char size[64];
    snprintf(size, sizeof size, "%.0f", c.space.feasibleSize().points);
    r.fail(root["search"]["strategy"], "search.strategy",
           "exhaustive search over a space of " + std::string(size) + " points, over search.exhaustive_limit " +
               std::to_string(c.search.exhaustiveLimit) +
               "; use strategy " + std::string(kDefaultStrategy) + " or random, exclude controls, or raise search.exhaustive_limit");
  }
}

TuneConfig parse(const std::string &path) {
  YAML::Node root = loadYamlFile(path);
  YamlReader r(path);
  if (!root.IsMap())
    r.fail(root, "(top level)", "expected a mapping at the top (target:, space:, ...); see docs/config.md");
  r.onlyKeys(root, "", {"target", "build_dir", "build", "config", "lockfile", "run_dir", "tune_targets",
                        "objectives", "pareto", "benchmark", "search", "timeouts", "space", "jobs", "workers",
                        "overlap", "keep_invalid", "executor", "slurm", "tune_architectures", "narrow_architectures",
                        "lock_every_architecture", "constraints", "kernel_controls"});
  TuneConfig c;
  c.path = path;
  std::string base = llvm::sys::path::parent_path(path).str();
  parseWorkload(root, r, base, c);
  if (root["config"]) c.config = r.str(root["config"], "config");
  if (root["lockfile"]) c.lockfile = absolutePath(r.str(root["lockfile"], "lockfile"), base);
  c.runDir = root["run_dir"] ? absolutePath(r.str(root["run_dir"], "run_dir"), base)
                             : c.buildDir + "/ciq/" + c.target;
  if (root["tune_targets"]) c.tuneTargets = r.strings(root["tune_targets"], "tune_targets");
  parseRunSettings(root, r, base, c);
  if (root["benchmark"]) c.benchmark = parseBenchmark(root["benchmark"], r, base);
  if (root["kernel_controls"]) c.kernelControls = parseKernelControls(root["kernel_controls"], r);
  else c.kernelControls.origin = path;
  if (!c.benchmark.cases.empty() && c.executor.kind == "slurm") // its finalists job measures one command
    r.fail(root["benchmark"]["cases"], "benchmark.cases", "is not supported with executor: slurm yet; use executor: local");
  if (root["search"]) c.search = parseSearch(root["search"], r);
  if (root["timeouts"]) c.timeouts = parseTimeouts(root["timeouts"], r);
  if (root["pareto"]) c.pareto = r.boolean(root["pareto"], "pareto");
  parseObjectives(root, r, path, c);
  kernelTimeSource(c, root, r);
  benchmarkUnits(c);
  parseSpace(root, r, base, c);
  return c;
}

} // namespace

std::optional<TuneConfig> loadConfig(const std::string &path, std::string &error) {
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  if (path == "ciq.yaml" && !llvm::sys::fs::exists(abs)) {
    error = "no ciq.yaml in " + llvm::sys::path::parent_path(abs).str() +
            "; pass --config <build>/ciq/<target>/ciq.yaml (written by ciq_tune()) or write one (docs/config.md)";
    return std::nullopt;
  }
  try {
    return parse(abs.str().str());
  } catch (const ConfigError &e) {
    error = e.what();
  } catch (const YAML::Exception &e) {
    error = abs.str().str() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
  }
  return std::nullopt;
}

} // namespace ciq
