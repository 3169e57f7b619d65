// `ciq validate`: is the frozen winner really faster than the default compile,
// and which of its controls make it so? Baseline, the winner's application
// parameters alone, its compiler controls alone, and the winner are built
// once each, their benchmark executables copied aside, then run interleaved
// in balanced order (A B B A ...) after a visible warm-up, at least 10 runs
// each, holding the GPU alone and checking its state before and after.
#include "engine/winner/Attribution.h"
#include "common/FileIO.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/commands/Command.h"
#include "common/LockSections.h"
#include "engine/compile/Architectures.h"
#include "engine/config/Config.h"
#include "common/EnvNames.h"
#include "engine/measure/Interleave.h"
#include "engine/compile/RuntimeCompiles.h"
#include "engine/compile/TorchRoute.h"
#include "engine/run/Tune.h"
#include "common/Lockfile.h"
#include "common/NumberFormat.h"
#include "engine/measure/MeasuredPhase.h"
#include "engine/measure/Stats.h"
#include "engine/winner/CaseScore.h"
#include "engine/winner/Rehearsal.h"
#include "engine/record/Journal.h"

#include <llvm/Support/FileSystem.h>

using namespace llvm;

namespace {

cl::SubCommand ValidateCmd("validate", "Measure baseline and winner interleaved, attribute the gain to parameters and "
                                       "compiler controls; Welch's t-test, CV%; figures go into ciq.lock");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(ValidateCmd));
cl::opt<int> Runs("runs", cl::desc("Measured runs of each build (at least 10)"), cl::init(10), cl::sub(ValidateCmd));
cl::opt<int> Warmup("warmup", cl::desc("Warm-up runs of each build before the measured runs, not counted"), cl::init(1),
                    cl::sub(ValidateCmd));
cl::opt<double> MaxCv("max-cv", cl::desc("Largest CV% that still allows a verdict"), cl::init(10.0), cl::sub(ValidateCmd));
cl::opt<double> Alpha("alpha", cl::desc("Significance level of the t-test"), cl::init(0.01), cl::sub(ValidateCmd));

ciq::Rendered lockRendering(const ciq::Lockfile &lock, const std::string &path) {
  ciq::Rendered r;
  r.ptxas = lock.ptxasOptions;
  r.nvcc = lock.nvccOptions;
  r.defines = lock.defines;
  r.kernels = lock.kernelDirectives;   // per-kernel controls: the wrapper writes them as the lock does
  for (const auto &a : ciq::lockToCandidate(lock, path).acfs)
    r.acfs.push_back({a.stage, a.path, a.sha256});
  return r;
}

bool compilesAtRunTime(const ciq::TuneConfig &cfg) {
  if (cfg.build.kind == "none")
    return true;
  auto evals = ciq::loadEvaluations(cfg);
  return !evals.empty() && !evals.front().runtimeKernels.empty();
}

// Kernels compiled while the benchmark runs (Triton's ptxas, PyTorch's
// load(), a benchmark that runs nvcc), before each run: the baseline's by
// the real compilers, the winner's by the stand-ins with the lock (what a
// user runs after `eval "$(ciq lock env)"`: the stand-ins' folder first on
// PATH, PyTorch's nvcc the stand-in), each side with fresh caches of its own
// (Triton's, PyTorch's extensions: a build cached by the other side would
// hide this side's compiler); a partial variant (parameters or compiler
// controls only) gets its candidate from the engine, as in a tune.
ciq::MeasureOptions::ServeRuntime runtimeSides(const ciq::TuneConfig &cfg, const ciq::Lockfile &lock,
                                               const std::string &winnerHash, ciq::CandidateBuilder &builder,
                                               ciq::BenchmarkRunner &runner) {
  std::string dir = cfg.runDir + "/validate", standin = cfg.runDir + "/standin";
  std::string real = lock.ptxasPath.empty() ? ciq::realPtxasFor(cfg) : lock.ptxasPath;
  for (const char *side : {"baseline-cache", "winner-cache"}) {
    ciq::removeTree(dir + "/" + side);
    sys::fs::create_directories(dir + "/" + side);
  }
  const char *path = getenv("PATH");
  std::string note;
  auto torch = ciq::torchEnv(cfg.runDir, standin, lock.nvccPath, note);
  auto side = [&cfg, dir, standin, real, torch, path = std::string(path ? path : "")](const std::string &name,
                                                                                      bool locked) {
    std::string ptxas = locked ? standin + "/ptxas" : real;
    std::map<std::string, std::string> env = {{"TRITON_CACHE_DIR", dir + "/" + name + "-cache"},
                                              {"TORCH_EXTENSIONS_DIR", dir + "/" + name + "-cache/torch-extensions"},
                                              {"TRITON_PTXAS_PATH", ptxas},
                                              {"TRITON_PTXAS_BLACKWELL_PATH", ptxas},
                                              {"PATH", locked ? standin + (path.empty() ? "" : ":" + path) : path},
                                              {ciq::env::Socket, ""},
                                              {ciq::env::Lock, locked ? cfg.lockfile : ""},
                                              {ciq::env::RealPtxas, real}};
    if (locked)
      for (const auto &kv : torch)
        if (!cfg.benchmark.env.count(kv.first))
          env[kv.first] = kv.second;
    return env;
  };
  auto baseline = side("baseline", false), winner = side("winner", true);
  return [&builder, &runner, winnerHash, baseline, winner](const ciq::Evaluation &e) {
    if (e.rendered.empty())
      runner.setEnv(baseline);
    else if (e.candidateHash == winnerHash)
      runner.setEnv(winner);
    else {
      runner.setEnv(builder.runtimeEnv(e, /*freshCache=*/false));
      builder.beginRuntime(e);
    }
  };
}

// One case's runs of one build, summarized (median, CV %, noise %).
ciq::CaseResult caseRuns(const std::string &name, const std::vector<double> &runs) {
  ciq::CaseResult c;
  c.name = name;
  c.runs = runs;
  c.median = ciq::median(runs);
  c.cvPercent = ciq::summarize(runs).cvPercent;
  c.noisePercent = ciq::medianCiHalfWidthPercent(runs);
  return c;
}

// benchmark.cases: every case tested on its own (its variants interleaved,
// its args and env selected), then the aggregate: the geometric mean of the
// winner's per-case ratios, within max_regression_percent in every case.
// Significant: no case over the limit, the mean better than 1, and at least
// one case significantly better (Welch, --alpha).

// A build: command names its CUDA objects only in the receipts of a build
// (CommandBuild.cpp): the rehearsal reads them back from the objects on disk,
// so it needs them first: the tune's baseline from the journal, else one
// default build now.
bool learnCommandObjects(const ciq::TuneConfig &cfg, ciq::CandidateBuilder &builder, std::string &err) {
  if (!builder.driver().learnsObjects() || !builder.driver().objects().empty())
    return true;
  ciq::JournalContents j = ciq::readJournal(cfg.runDir + "/journal.jsonl");
  if (!j.evaluations.empty() && j.evaluations.front().ok && !j.evaluations.front().objects.empty()) {
    builder.expectLike(j.evaluations.front());
    return true;
  }
  ciq::Evaluation base;
  base.candidateId = "c0000-validate";
  builder.build(base, cfg.runDir + "/logs/c0000-validate.log");
  if (!base.ok)
    err = "the default build, which names the CUDA objects the lock's build must make, failed: " + base.message;
  return base.ok;
}

int validateCases(const ciq::TuneConfig &cfg, ciq::Lockfile &lock, const std::vector<ciq::Variant> &variants,
                  ciq::CandidateBuilder &builder, ciq::BenchmarkRunner &runner, ciq::MeasuredPhase &phase,
                  ciq::MeasureOptions mo) {
  std::string err;
  std::map<std::string, std::vector<std::string>> local;   // each variant built once, for every case
  if (!mo.snapshots)
    mo.snapshots = &local;
  bool minimize = cfg.objectives.front().direction == "minimize";
  const std::string unit = cfg.benchmark.metric.unit;
  std::vector<ciq::CaseResult> base, win;
  nlohmann::json cases = nlohmann::json::array();
  printf("validate %s: %zu case(s), each %d warm-up and %d measured runs of each build, interleaved in balanced order "
         "(A B B A ...)\n", cfg.target.c_str(), cfg.benchmark.cases.size(), (int)Warmup, (int)Runs);
  for (const auto &c : cfg.benchmark.cases) {
    runner.selectCase(&c);
    auto rows = ciq::measureVariants(builder, &runner, cfg, variants, Runs, "validate-" + c.name, err, mo);
    runner.selectCase(nullptr);
    if (!rows) {
      builder.restore();
      return ciq::reportError("validate: case '" + c.name + "': " + err + " (logs: " + cfg.runDir + "/logs/)");
    }
    const auto &b = rows->front().values, &w = rows->back().values;
    base.push_back(caseRuns(c.name, b));
    win.push_back(caseRuns(c.name, w));
    for (const auto &r : *rows)
      printf("  case %s: %s\n", c.name.c_str(), ciq::formatVariant(r, unit).c_str());
  }
  builder.restore();
  std::string why;
  double mean = ciq::compareCases(win, base, why);
  std::string regression = mean > 0 ? ciq::caseRegression(win, minimize, cfg.benchmark.maxRegressionPercent) : why;
  double bestP = -1;
  for (size_t k = 0; k < win.size(); ++k) {
    const auto &w = win[k];
    printf("  case %-12s baseline median %s %s, winner median %s %s, runs %zu/%zu, noise %s/%s, ratio %s, %s\n",
           w.name.c_str(), ciq::fmt::value(base[k].median).c_str(), unit.c_str(), ciq::fmt::value(w.median).c_str(),
           unit.c_str(), base[k].runs.size(), w.runs.size(),
           ciq::fmt::percent(base[k].noisePercent, base[k].runs.size()).c_str(),
           ciq::fmt::percent(w.noisePercent, w.runs.size()).c_str(), ciq::fmt::ratio(w.ratio).c_str(),
           ciq::fmt::pValue(w.pValue).c_str());
    if ((minimize ? w.ratio < 1 : w.ratio > 1) && (bestP < 0 || w.pValue < bestP))
      bestP = w.pValue;
    cases.push_back({{"name", w.name}, {"baseline_median", base[k].median}, {"winner_median", w.median},
                     {"baseline_runs", base[k].runs.size()}, {"winner_runs", w.runs.size()},
                     {"baseline_noise_percent", base[k].noisePercent}, {"winner_noise_percent", w.noisePercent},
                     {"ratio", w.ratio}, {"p_value", w.pValue}});
  }
  std::vector<std::string> problems = mo.problems ? *mo.problems : std::vector<std::string>{};
  bool better = mean > 0 && (minimize ? mean < 1 : mean > 1);
  bool significant = regression.empty() && better && bestP >= 0 && bestP < Alpha && problems.empty();
  std::string verdict = significant        ? "significant"
                        : !problems.empty() ? problems.front() + " during the runs: run again on an idle, cool GPU"
                        : !regression.empty() ? regression
                        : !better ? "the geometric mean of the case ratios is not better than the baseline's"
                                  : "no case is significantly faster (" + ciq::fmt::pValue(bestP) + ")";
  double speedup = mean > 0 ? (minimize ? 1 / mean : mean) : 0;
  printf("  aggregate: geometric mean of the case ratios %s (speedup %s), limit per case %s%%\n",
         ciq::fmt::value(mean).c_str(), ciq::fmt::ratio(speedup).c_str(),
         ciq::fmt::value(cfg.benchmark.maxRegressionPercent).c_str());
  for (const auto &p : problems)
    printf("  GPU: %s\n", p.c_str());
  printf("  verdict: %s\n", significant ? "the winner is significantly faster" : ("no winner called: " + verdict).c_str());
  nlohmann::json measurement = phase.record();
  lock.score["validation"] = {{"runs", (int)Runs},
                              {"warmup_runs", (int)Warmup},
                              {"order", "balanced (A B B A ...), case by case"},
                              {"unit", unit},
                              {"aggregate", mean},
                              {"speedup", speedup > 0 ? nlohmann::json(speedup) : nlohmann::json()},
                              {"p_value", bestP},
                              {"cases", cases},
                              {"significant", significant},
                              {"verdict", verdict},
                              {"measurement", measurement},
                              {"validated_at", ciq::nowIso8601()}};
  lock.score["speedup"] = speedup > 0 ? nlohmann::json(speedup) : nlohmann::json();
  lock.score["p_value"] = bestP;
  lock.gpu = measurement["gpu_before"];
  if (!ciq::writeLockSection(cfg.lockfile, lock, err))
    return ciq::reportError(err);
  printf("  recorded in %s\n", cfg.lockfile.c_str());
  return significant ? 0 : 2;
}

// The verdict of the measured rows (the winner against the baseline, with
// --max-cv and --alpha), printed, and recorded in the lock's section.
int judgeAndRecord(const ciq::TuneConfig &cfg, ciq::Lockfile &lock, const std::vector<ciq::VariantResult> &rows,
                   const std::vector<std::string> &problems, ciq::MeasuredPhase &phase) {
  bool minimize = cfg.objectives.front().direction == "minimize";
  // The verdict: the winner ("both") against the baseline, with the given thresholds.
  const ciq::VariantResult &base = rows.front(), &win = rows.back();
  ciq::Verdict v = ciq::judge(base.values, win.values, minimize, MaxCv, Alpha);
  std::string noVerdict;
  if (!problems.empty())
    noVerdict = problems.front() + " during the runs: measurements on a throttled or shared GPU are not comparable; "
                                   "run again on an idle, cool GPU";
  const std::string unit = cfg.benchmark.metric.unit;
  printf("validate %s: %d warm-up and %d measured runs of each build, interleaved in balanced order (A B B A ...)\n",
         cfg.target.c_str(), (int)Warmup, (int)Runs);
  for (const auto &r : rows)
    if (!r.warmup.empty()) {
      std::string w;
      for (double x : r.warmup)
        w += (w.empty() ? "" : ", ") + ciq::fmt::value(x);
      printf("  warm-up %-24s %s %s (not counted)\n", r.name.c_str(), w.c_str(), unit.c_str());
    }
  printf("  baseline (default compile): median %s %s  CV %s\n", ciq::fmt::value(v.baseline.median).c_str(),
         unit.c_str(), ciq::fmt::percent(v.baseline.cvPercent, base.values.size()).c_str());
  printf("  winner %-19s median %s %s  CV %s\n", (lock.candidateId + ":").c_str(), ciq::fmt::value(v.winner.median).c_str(),
         unit.c_str(), ciq::fmt::percent(v.winner.cvPercent, win.values.size()).c_str());
  // 0: undefined (a median of 0 to divide by), shown as n/a and stored as null.
  std::string speedupText = v.speedup > 0 ? ciq::fmt::ratio(v.speedup)
                                          : "n/a (" + ciq::fmt::value(v.baseline.median) + " -> " +
                                                ciq::fmt::value(v.winner.median) + " " + unit + ")";
  nlohmann::json speedup = v.speedup > 0 ? nlohmann::json(v.speedup) : nlohmann::json();
  printf("  speedup %s  Welch t = %.3f, df = %.1f, %s\n", speedupText.c_str(), v.welch.t, v.welch.df,
         ciq::fmt::pValue(v.welch.pValue).c_str());
  printf("  attribution (each against the baseline):\n");
  for (const auto &r : rows)
    printf("  %s\n", ciq::formatVariant(r, unit).c_str());
  for (const auto &p : problems)
    printf("  GPU: %s\n", p.c_str());
  bool significant = v.significant && noVerdict.empty();
  printf("  verdict: %s\n", significant         ? "the winner is significantly faster"
                            : !noVerdict.empty() ? ("no verdict: " + noVerdict).c_str()
                                                 : ("no winner called: " + v.reason).c_str());

  // The figures travel with the lock (rewritten atomically, keys in order).
  nlohmann::json measurement = phase.record();
  lock.score["validation"] = {{"runs", (int)Runs},
                               {"warmup_runs", (int)Warmup},
                               {"order", "balanced (A B B A ...)"},
                               {"baseline_median", v.baseline.median},
                               {"winner_median", v.winner.median},
                               {"unit", unit},
                               {"speedup", speedup},
                               {"baseline_cv_percent", v.baseline.cvPercent},
                               {"winner_cv_percent", v.winner.cvPercent},
                               {"t", v.welch.t},
                               {"df", v.welch.df},
                               {"p_value", v.welch.pValue},
                               {"significant", significant},
                               {"verdict", significant ? "significant" : noVerdict.empty() ? v.reason : noVerdict},
                               {"attribution", ciq::variantsToJson(rows)},
                               {"measurement", measurement},
                               {"gpu_before", measurement["gpu_before"]},
                               {"gpu_after", measurement["gpu_after"]},
                               {"validated_at", ciq::nowIso8601()}};
  lock.score["speedup"] = speedup;
  lock.score["p_value"] = v.welch.pValue;
  lock.score["cv_percent"] = v.winner.cvPercent;
  lock.gpu = measurement["gpu_before"];
  std::string err;
  if (!ciq::writeLockSection(cfg.lockfile, lock, err))
    return ciq::reportError(err);
  printf("  recorded in %s\n", cfg.lockfile.c_str());
  return significant ? 0 : 2;
}

int run() {
  std::string err;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  if (!cfg->benchmark.enabled)
    return ciq::reportError(cfg->path + ": validate needs a benchmark: section (compile-only objectives are exact, "
                                        "there is nothing to test statistically)");
  if (Runs < 10)
    return ciq::reportError("--runs " + std::to_string(Runs) + ": validation takes at least 10 runs of each build");
  // The section of the GPU this runs on (tune_architectures, or the GPU's).
  auto lock = ciq::readLockSection(cfg->lockfile, ciq::measuredArchitecture(*cfg).arch, err);
  if (!lock)
    return ciq::reportError(err);
  if (!lock->sealed)
    ciq::reportWarning(ciq::unsealedLockWarning(cfg->lockfile));
  std::vector<ciq::Variant> variants = ciq::attributionVariants(lockRendering(*lock, cfg->lockfile));

  ciq::CandidateBuilder builder(*cfg, {ciq::reportWarning, ciq::reportNote});
  if (!builder.start(cfg->runDir + "/validate.sock", err))
    return ciq::reportError(err);
  ciq::BenchmarkRunner runner(cfg->benchmark, ciq::benchmarkWorkDir(*cfg));
  ciq::MeasuredPhase phase("", "ciq validate " + cfg->target + " (" + cfg->path + ")",
                           [](const std::string &l) { fprintf(stderr, "ciq: %s\n", l.c_str()); });
  // The GPU is held for the runs only, not while building.
  std::vector<std::string> problems;
  ciq::MeasureOptions mo;
  mo.warmupRounds = Warmup;
  mo.phase = &phase;
  mo.problems = &problems;
  if (compilesAtRunTime(*cfg))
    mo.serveRuntime = runtimeSides(*cfg, *lock, variants.back().rendered.hash(), builder, runner);
  // The winner is measured as the lock builds it (Rehearsal.h): ciq-ptxas
  // --lock with this lock, nothing shortened, and its device code the lock's.
  std::map<std::string, std::vector<std::string>> snapshots;
  if (cfg->build.kind != "none" && !learnCommandObjects(*cfg, builder, err)) {
    builder.restore();
    return ciq::reportError("validate: " + err);
  }
  if (cfg->build.kind != "none") {
    ciq::Rehearsal r = ciq::rehearseLock(builder, *cfg, *lock, cfg->lockfile, true);
    if (!r.ok) {
      builder.restore();
      return ciq::reportError("validate: " + r.message + "; the lock does not reproduce its winner here: tune again");
    }
    printf("validate %s: the winner built as its lock builds it (ciq-ptxas --lock) in %s s: device code matches the "
           "lock\n", cfg->target.c_str(), ciq::fmt::value(r.buildMs / 1000).c_str());
    snapshots[variants.back().rendered.hash()] = *r.snapshot;
    mo.snapshots = &snapshots;
  }
  if (!cfg->benchmark.cases.empty())
    return validateCases(*cfg, *lock, variants, builder, runner, phase, mo);
  auto rows = ciq::measureVariants(builder, &runner, *cfg, variants, Runs, "validate", err, mo);
  builder.restore();
  if (!rows)
    return ciq::reportError("validate: " + err + " (logs: " + cfg->runDir + "/logs/)");
  return judgeAndRecord(*cfg, *lock, *rows, problems, phase);
}

ciq::RegisterCommand reg(ValidateCmd, run);

} // namespace
