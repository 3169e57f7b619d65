// `ciq validate`: is the frozen winner really faster than the default compile?
// Baseline and winner are built once each, their benchmark executables
// copied aside, then run interleaved (A B A B ...), at least 10 runs each.
#include "CandidateBuild.h"
#include "Command.h"
#include "Config.h"
#include "GpuState.h"
#include "Interleave.h"
#include "RuntimeCompiles.h"
#include "Tune.h"
#include "Lockfile.h"
#include "Stats.h"

#include <llvm/Support/FileSystem.h>

using namespace llvm;

namespace {

cl::SubCommand ValidateCmd("validate", "Measure baseline and winner interleaved; Welch's t-test, CV%; figures go into ciq.lock");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(ValidateCmd));
cl::opt<int> Runs("runs", cl::desc("Measured runs of each build (at least 10)"), cl::init(10), cl::sub(ValidateCmd));
cl::opt<double> MaxCv("max-cv", cl::desc("Largest CV% that still allows a verdict"), cl::init(10.0), cl::sub(ValidateCmd));
cl::opt<double> Alpha("alpha", cl::desc("Significance level of the t-test"), cl::init(0.01), cl::sub(ValidateCmd));

// Builds one side through the daemon and copies its benchmark aside.
std::optional<std::vector<std::string>> buildSide(ciq::CandidateBuilder &b, const ciq::TuneConfig &cfg,
                                                  ciq::Evaluation e, const std::string &name, std::string &err) {
  b.build(e, cfg.runDir + "/logs/validate-" + name + ".log");
  if (!e.ok) {
    err = name + " build: " + e.reason + ": " + e.message;
    return std::nullopt;
  }
  return ciq::snapshotBenchmark(cfg, cfg.runDir + "/validate/" + name, err);
}

bool compilesAtRunTime(const ciq::TuneConfig &cfg) {
  if (cfg.build.kind == "none")
    return true;
  auto evals = ciq::loadEvaluations(cfg);
  return !evals.empty() && !evals.front().runtimeKernels.empty();
}

// Kernels compiled while the benchmark runs (Triton): the baseline's by the
// real ptxas, the winner's by the ptxas stand-in with the lock (what a user
// runs after `eval "$(ciq lock env)"`), each side with a fresh cache of its own.
void sidesCompileAtRunTime(const ciq::TuneConfig &cfg, const ciq::Lockfile &lock, std::vector<std::string> &base,
                           std::vector<std::string> &win) {
  std::string dir = cfg.runDir + "/validate";
  std::string real = lock.ptxasPath.empty() ? ciq::realPtxasFor(cfg) : lock.ptxasPath;
  auto side = [&](std::vector<std::string> &cmd, const std::string &name, const std::string &ptxas,
                  std::vector<std::string> extra) {
    std::string cache = dir + "/" + name + "-cache";
    sys::fs::remove_directories(cache);
    sys::fs::create_directories(cache);
    std::vector<std::string> env = {"env", "TRITON_CACHE_DIR=" + cache, "TRITON_PTXAS_PATH=" + ptxas,
                                    "TRITON_PTXAS_BLACKWELL_PATH=" + ptxas};
    env.insert(env.end(), extra.begin(), extra.end());
    cmd.insert(cmd.begin(), env.begin(), env.end());
  };
  side(base, "baseline", real, {});
  side(win, "winner", cfg.runDir + "/standin/ptxas", {"CIQ_LOCK=" + cfg.lockfile, "CIQ_REAL_PTXAS=" + real});
}

int run() {
  std::string err;
  auto cfg = ciq::loadConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  if (!cfg->benchmark.enabled)
    return ciq::reportError(cfg->path + ": validate needs a benchmark: section (compile-only objectives are exact, "
                                        "there is nothing to test statistically)");
  if (Runs < 10)
    return ciq::reportError("--runs " + std::to_string(Runs) + ": validation takes at least 10 runs of each build");
  auto lock = ciq::readLockfile(cfg->lockfile, err);
  if (!lock)
    return ciq::reportError(err);
  ciq::Evaluation base, win;
  base.candidateId = "baseline";
  win.candidateId = lock->candidateId;
  win.rendered.ptxas = lock->ptxasOptions;
  win.rendered.nvcc = lock->nvccOptions;
  win.rendered.defines = lock->defines;
  for (const auto &a : ciq::lockToCandidate(*lock, cfg->lockfile).acfs)
    win.rendered.acfs.push_back({a.stage, a.path, a.sha256});
  base.candidateHash = base.rendered.hash();
  win.candidateHash = win.rendered.hash();

  ciq::CandidateBuilder builder(*cfg);
  if (!builder.start(cfg->runDir + "/validate.sock", err))
    return ciq::reportError(err);
  auto a = buildSide(builder, *cfg, base, "baseline", err);
  auto b = a ? buildSide(builder, *cfg, win, "winner", err) : std::nullopt;
  if (!a || !b)
    return ciq::reportError(err);
  builder.restore();
  if (compilesAtRunTime(*cfg))
    sidesCompileAtRunTime(*cfg, *lock, *a, *b);

  nlohmann::json before = ciq::queryGpuState();
  ciq::BenchmarkRunner runner(*cfg);
  for (auto *cmd : {&*a, &*b}) // one warm-up of each, not counted
    runner.runOnce(cfg->runDir + "/logs/validate.log", *cmd);
  auto res = ciq::runInterleaved(runner, {*a, *b}, Runs, cfg->runDir + "/logs/validate.log");
  nlohmann::json after = ciq::queryGpuState();
  if (!res.ok)
    return ciq::reportError("validate: " + res.reason + ": " + res.message + " (log: " + cfg->runDir + "/logs/validate.log)");
  bool minimize = cfg->objectives.front().direction == "minimize";
  ciq::Verdict v = ciq::judge(res.values[0], res.values[1], minimize, MaxCv, Alpha);
  const std::string unit = cfg->benchmark.metric.unit;
  printf("validate %s: %d interleaved runs each\n", cfg->target.c_str(), (int)Runs);
  printf("  baseline (default compile): median %.6g %s  CV %.2f%%\n", v.baseline.median, unit.c_str(), v.baseline.cvPercent);
  printf("  winner %-19s median %.6g %s  CV %.2f%%\n", (lock->candidateId + ":").c_str(), v.winner.median, unit.c_str(),
         v.winner.cvPercent);
  printf("  speedup %.4fx  Welch t = %.3f, df = %.1f, p = %.3g\n", v.speedup, v.welch.t, v.welch.df, v.welch.pValue);
  printf("  verdict: %s\n", v.significant ? "the winner is significantly faster" : ("no winner called: " + v.reason).c_str());

  // The figures travel with the lock (rewritten atomically, keys in order).
  lock->score["validation"] = {{"runs", (int)Runs},
                               {"baseline_median", v.baseline.median},
                               {"winner_median", v.winner.median},
                               {"unit", unit},
                               {"speedup", v.speedup},
                               {"baseline_cv_percent", v.baseline.cvPercent},
                               {"winner_cv_percent", v.winner.cvPercent},
                               {"t", v.welch.t},
                               {"df", v.welch.df},
                               {"p_value", v.welch.pValue},
                               {"significant", v.significant},
                               {"verdict", v.significant ? "significant" : v.reason},
                               {"gpu_before", before},
                               {"gpu_after", after},
                               {"validated_at", ciq::nowIso8601()}};
  lock->score["speedup"] = v.speedup;
  lock->score["p_value"] = v.welch.pValue;
  lock->score["cv_percent"] = v.winner.cvPercent;
  lock->gpu = before;
  if (!ciq::writeLockfile(cfg->lockfile, *lock, err))
    return ciq::reportError(err);
  printf("  recorded in %s\n", cfg->lockfile.c_str());
  return v.significant ? 0 : 2;
}

ciq::RegisterCommand reg(ValidateCmd, run);

} // namespace
