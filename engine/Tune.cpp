#include "Tune.h"
#include "Benchmark.h"
#include "BenchmarkProgram.h"
#include "CandidateBuild.h"
#include "Command.h"
#include "Interleave.h"
#include "Journal.h"
#include "LockWriter.h"
#include "Objectives.h"
#include "Paths.h"
#include "Progress.h"
#include "ResultsCsv.h"
#include "Search.h"
#include "Sha256.h"
#include "Stats.h"
#include "Summary.h"
#include "Version.h"
#include "Workers.h"

#include <algorithm>
#include <functional>
#include <cstdio>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <map>
#include <set>
#include <thread>

namespace ciq {
namespace {

std::string candidateName(size_t index) {
  char buf[16];
  snprintf(buf, sizeof buf, "c%04zu", index);
  return buf;
}

nlohmann::json startLine(const TuneConfig &cfg) {
  nlohmann::json objectives = nlohmann::json::array();
  for (const auto &o : cfg.objectives)
    objectives.push_back({{"metric", o.metric}, {"direction", o.direction}, {"unit", o.unit}});
  return {{"op", "start"}, {"version", 1}, {"engine_version", CIQ_VERSION}, {"config_path", cfg.path},
          {"space_identity", cfg.space.identity()}, {"space_size", cfg.space.size()}, {"seed", cfg.search.seed},
          {"strategy", cfg.search.strategy},
          {"search", {{"strategy", cfg.search.strategy}, {"pool_size", cfg.search.poolSize},
                      {"generations", cfg.search.generations}, {"mutate_rate", cfg.search.mutateRate},
                      {"cull_size", cfg.search.cullSize}, {"elitism", cfg.search.elitism}, {"seed", cfg.search.seed}}},
          {"target", cfg.target}, {"objectives", objectives}, {"started_at", nowIso8601()}};
}

class TuneRun {
public:
  TuneRun(TuneConfig cfg, TuneOptions opts) : cfg_(std::move(cfg)), opts_(opts) {}
  int run();

private:
  bool prepare();
  bool openJournal();
  bool evaluateBaseline();
  int searchGenerations();
  bool startWorkers();
  Evaluation evaluate(const Point &p, int generation, const std::string &id, Worker &w);
  void evaluateBatch(const std::vector<Point> &points, int generation);
  void measure(Evaluation &e, Worker &w);
  void record(Evaluation &e);
  bool runCanary();
  int runFinalists(WinnerChoice &w);
  int finish();
  int failFirstGeneration();
  void keepArtifacts(const Evaluation &e);
  bool budgetLeft() const { return (int)evals_.size() < budget_; }
  bool checkBenchmarkProgram(Evaluation &e);
  std::string workloadSummary() const {
    if (cfg_.build.kind == "none")
      return "kernels compiled at run time";
    if (cfg_.build.kind == "command")
      return "build: " + shellJoin(cfg_.build.command);
    return std::to_string(workers_[0]->builder->driver().objects().size()) + " CUDA object(s)";
  }
  void expectLikeBaseline();
  // Kernels compiled while the benchmark runs (Triton) are part of the device code.
  bool compilesAtRunTime() const {
    return cfg_.build.kind == "none" || (!evals_.empty() && !evals_.front().runtimeKernels.empty());
  }
  std::vector<ScoredPoint> history(int beforeGeneration) const;
  std::string logPath(const std::string &id) const { return cfg_.runDir + "/logs/" + id + ".log"; }

  TuneConfig cfg_;
  TuneOptions opts_;
  std::vector<std::unique_ptr<Worker>> workers_;   // [0] builds in the user's own build tree
  CandidateBuilder &builder() { return *workers_[0]->builder; }
  BenchmarkRunner *bench() { return workers_[0]->bench.get(); }
  Journal journal_;
  Progress progress_;
  std::unique_ptr<Strategy> strategy_;
  std::vector<Evaluation> evals_;
  std::map<std::string, size_t> byHash_, byDevice_;
  int budget_ = 0;
  bool programChecked_ = false;
};

bool TuneRun::openJournal() {
  std::string jpath = cfg_.runDir + "/journal.jsonl";
  JournalContents prior = readJournal(jpath);
  bool unfinished = !prior.evaluations.empty() && !prior.done;
  if (opts_.resume) {
    if (prior.start.is_null()) {
      reportError("nothing to resume in " + cfg_.runDir + " (no journal.jsonl); start with `ciq tune`");
      return false;
    }
    if (prior.start.value("space_identity", "") != cfg_.space.identity() ||
        prior.start.value("seed", 0ull) != cfg_.search.seed || prior.start.value("strategy", "") != cfg_.search.strategy) {
      reportError(jpath + ": the search space, seed or strategy changed since this search started; "
                          "resume needs the same ciq.yaml (or start over with `ciq tune --fresh`)");
      return false;
    }
    evals_ = prior.evaluations;
  } else if (!prior.start.is_null() && prior.start.value("config_path", "") != cfg_.path && !opts_.fresh &&
             !opts_.canaryOnly) {
    reportError(cfg_.runDir + " holds the search of " + prior.start.value("config_path", "?") + "; give " + cfg_.path +
                " its own run_dir:, or pass --fresh to replace that search (its journal is kept as journal.jsonl.previous)");
    return false;
  } else if (unfinished && !opts_.fresh && !opts_.canaryOnly) {
    reportError(cfg_.runDir + " holds an unfinished search (" + std::to_string(prior.evaluations.size()) +
                " evaluations); continue it with `ciq resume --config " + cfg_.path +
                "`, or start over with `ciq tune --fresh`");
    return false;
  } else if (llvm::sys::fs::exists(jpath)) {
    // A finished or discarded search is kept beside, never overwritten.
    llvm::sys::fs::rename(jpath, jpath + ".previous");
    if (!opts_.canaryOnly)
      progress_.note("the earlier search's journal is kept as " + jpath + ".previous");
  }
  std::string err;
  if (!journal_.open(jpath, err))
    return reportError(err), false;
  if (!opts_.resume)
    journal_.append(startLine(cfg_));
  for (size_t i = 0; i < evals_.size(); ++i) {
    byHash_.emplace(evals_[i].candidateHash, i);
    if (evals_[i].ok && !evals_[i].deviceCodeSha256.empty())
      byDevice_.emplace(evals_[i].deviceCodeSha256, i);
  }
  return true;
}

bool TuneRun::prepare() {
  if (opts_.canaryOnly)
    cfg_.runDir += "/canary";
  if (cfg_.benchmark.enabled) {
    // A program the build does not make is checked now; one it makes, once
    // the baseline is built (before it is measured).
    std::string err;
    auto program = resolveBenchmarkProgram(cfg_, err);
    if (!program && !benchmarkProgramIsBuilt(cfg_, absolutePath(cfg_.benchmark.command[0], benchmarkWorkDir(cfg_))))
      return reportError(err), false;
    programChecked_ = program.has_value();
  }
  llvm::sys::fs::create_directories(cfg_.runDir + "/logs");
  if (!openJournal())
    return false;
  budget_ = opts_.maxEvaluations > 0        ? opts_.maxEvaluations
            : cfg_.search.maxEvaluations > 0 ? cfg_.search.maxEvaluations
                                             : 1 + cfg_.search.poolSize * cfg_.search.generations;
  try {
    strategy_ = makeStrategy(cfg_.search, cfg_.space, cfg_.pareto);
  } catch (const std::exception &e) {
    return reportError(cfg_.path + ": search.strategy: " + e.what()), false;
  }
  if (!startWorkers())
    return false;
  expectLikeBaseline();
  progress_.begin(budget_, !opts_.quiet);
  return true;
}

// Worker 0 builds in the user's build tree; with several GPUs (runtime
// objectives), each further worker gets a twin build tree and one GPU.
bool TuneRun::startWorkers() {
  int n = opts_.canaryOnly ? 1 : workerCount(cfg_);
  std::vector<std::string> gpus;
  if (const char *v = getenv("CUDA_VISIBLE_DEVICES"); v && n > 1) {
    std::string s = v;
    for (size_t pos = 0; pos <= s.size();) {
      size_t end = s.find(',', pos);
      gpus.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
      pos = end == std::string::npos ? s.size() + 1 : end + 1;
    }
  }
  for (int k = 0; k < n; ++k) {
    auto w = std::make_unique<Worker>();
    w->index = k;
    std::string err;
    if (k == 0)
      w->cfg = cfg_;
    else if (!prepareWorkerConfig(cfg_, k, w->cfg, err))
      return reportError(err), false;
    w->builder = std::make_unique<CandidateBuilder>(w->cfg);
    if (!w->builder->start(socketPathFor(w->cfg.runDir), err))
      return reportError(err), false;
    if (cfg_.benchmark.enabled) {
      std::map<std::string, std::string> env;
      if (n > 1)
        env["CUDA_VISIBLE_DEVICES"] = k < (int)gpus.size() ? gpus[k] : std::to_string(k);
      w->bench = std::make_unique<BenchmarkRunner>(w->cfg, env);
    }
    workers_.push_back(std::move(w));
  }
  if (n > 1)
    progress_.note("evaluating " + std::to_string(n) + " candidates at once, one per GPU, worker build trees under " +
                   cfg_.runDir + "/worker-*");
  return true;
}

// Once, before the first measurement: the benchmark's program exists.
bool TuneRun::checkBenchmarkProgram(Evaluation &e) {
  if (programChecked_)
    return true;
  std::string err;
  if (!resolveBenchmarkProgram(cfg_, err)) {
    e.ok = false;
    e.reason = reason::RunCrash;
    e.message = err;
    return false;
  }
  programChecked_ = true;
  return true;
}

// What the baseline tells every worker to expect from later builds and runs.
void TuneRun::expectLikeBaseline() {
  if (evals_.empty() || !evals_.front().ok)
    return;
  for (auto &w : workers_)
    w->builder->expectLike(evals_.front());
}

void TuneRun::measure(Evaluation &e, Worker &w) {
  if (!w.bench || !checkBenchmarkProgram(e))
    return;
  // Compiles made while the benchmark runs get this candidate, in a
  // framework cache of its own, and send receipts like the build's.
  w.bench->setEnv(w.builder->runtimeEnv(e, /*freshCache=*/true));
  w.builder->beginRuntime(e);
  auto m = w.bench->measure(e.log);
  w.builder->endRuntime(e);
  e.measureMs = m.wallMs;
  if (!m.ok) {
    e.ok = false;
    e.reason = m.reason;
    e.message = m.message + "; log: " + e.log;
    return;
  }
  if (!e.ok) {   // a stale run-time compile: never a score
    e.message += "; log: " + e.log;
    return;
  }
  scoreCompileMetrics(cfg_, e);
  e.runs = m.values;
  e.cvPercent = m.cvPercent;
  for (const auto &o : cfg_.objectives)
    if (!isCompileMetric(o.metric))
      e.scores[o.metric] = m.median;
}

Evaluation TuneRun::evaluate(const Point &p, int generation, const std::string &id, Worker &w) {
  bool parallel = workers_.size() > 1;
  Evaluation e;
  e.candidateId = id;
  e.generation = generation;
  e.point = p;
  e.rendered = render(cfg_.space, p);
  e.candidateHash = e.rendered.hash();
  // Same command lines and ACF bytes as an earlier candidate: not rebuilt.
  if (auto it = byHash_.find(e.candidateHash); it != byHash_.end()) {
    Evaluation copy = evals_[it->second];
    // The twin with these command lines (the built one if the twin was itself a
    // configuration duplicate), not whatever that twin shared its device code with.
    copy.duplicateOf = copy.duplicateKind == "config" ? copy.duplicateOf : copy.candidateId;
    copy.duplicateKind = "config";
    copy.candidateId = e.candidateId;
    copy.generation = generation;
    copy.point = p;
    copy.rendered = e.rendered;
    copy.buildMs = copy.measureMs = 0;
    copy.evaluatedAt = nowIso8601();
    return copy;
  }
  if (!parallel)
    progress_.building(e.candidateId);
  w.builder->build(e, logPath(e.candidateId));
  if (e.ok) {
    scoreCompileMetrics(cfg_, e);
    // Same device code as an earlier candidate: built, but not re-measured.
    auto it = compilesAtRunTime() ? byDevice_.end() : byDevice_.find(e.deviceCodeSha256);
    if (it != byDevice_.end()) {
      const Evaluation &d = evals_[it->second];
      e.duplicateOf = d.duplicateOf.empty() ? d.candidateId : d.duplicateOf;
      e.duplicateKind = "device_code";
      if (w.bench) {
        e.ok = d.ok;
        e.reason = d.reason;
        e.scores = d.scores;
        e.runs = d.runs;
        e.cvPercent = d.cvPercent;
      }
    } else {
      if (!parallel)
        progress_.measuring(e.candidateId);
      measure(e, w);
    }
  }
  e.evaluatedAt = nowIso8601();
  if (!e.ok && (opts_.keepInvalid || cfg_.keepInvalid))
    keepArtifacts(e);
  return e;
}

// INVALID candidates keep what `ciq replay` and a human need: objects and the
// benchmark executable, beside the log.
void TuneRun::keepArtifacts(const Evaluation &e) {
  std::string dir = cfg_.runDir + "/invalid/" + e.candidateId;
  llvm::sys::fs::create_directories(dir);
  for (const auto &o : builder().driver().objects())
    if (llvm::sys::fs::exists(o.object))
      llvm::sys::fs::copy_file(o.object, dir + "/" + llvm::sys::path::filename(o.object).str());
  if (cfg_.benchmark.enabled) {
    std::string err;
    snapshotBenchmark(cfg_, dir, err);
  }
}

void TuneRun::record(Evaluation &e) {
  journal_.append(evaluationToJson(e));
  evals_.push_back(e);
  size_t i = evals_.size() - 1;
  byHash_.emplace(e.candidateHash, i);
  if (e.ok && !e.deviceCodeSha256.empty())
    byDevice_.emplace(e.deviceCodeSha256, i);
  markFront(cfg_, evals_);
  std::string err;
  if (!writeResultsCsv(cfg_.runDir + "/results.csv", cfg_, evals_, err))
    reportWarning(err);
  WinnerChoice w = chooseWinner(cfg_, evals_);
  progress_.evaluated(cfg_, e, evals_, w.index >= 0 ? &evals_[w.index] : nullptr);
  builder().daemon().setStatus(progress_.status(cfg_, evals_));
}

std::vector<ScoredPoint> TuneRun::history(int beforeGeneration) const {
  std::vector<ScoredPoint> h;
  for (const auto &e : evals_)
    if (e.generation < beforeGeneration)
      h.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  return h;
}

bool TuneRun::evaluateBaseline() {
  if (!evals_.empty())
    return true; // resumed: the baseline is the journal's first evaluation
  Evaluation b = evaluate(cfg_.space.baseline(), 0, candidateName(0), *workers_[0]);
  record(b);
  expectLikeBaseline();
  if (!b.ok) {
    reportError("the baseline (your build with no control applied) is INVALID: " + b.reason + ": " + b.message +
                "; fix the build or benchmark first (" + b.replay + ")");
    return false;
  }
  return true;
}

// The proof that controls reach the compiler: a deliberately degrading
// configuration must change the device code (and, with a benchmark, should
// regress the score).
bool TuneRun::runCanary() {
  if (!opts_.canaryOnly && (!opts_.canary || !cfg_.search.canary || opts_.resume))
    return true;
  Evaluation c;
  c.candidateId = "canary";
  if (opts_.canaryAcf.empty())
    c.rendered.ptxas = {"--opt-level=0"};
  else {
    auto h = sha256File(opts_.canaryAcf);
    if (!h)
      return reportError("canary: cannot read ACF " + opts_.canaryAcf), false;
    c.rendered.acfs.push_back({opts_.canaryAcfStage, opts_.canaryAcf, *h});
  }
  c.candidateHash = c.rendered.hash();
  std::string what = c.rendered.summary();
  progress_.building("canary");
  builder().build(c, logPath("canary"));
  const Evaluation &b = evals_.front();
  // Kernels compiled at run time exist only once the benchmark ran.
  bool measured = c.ok && compilesAtRunTime() && bench();
  if (measured) {
    scoreCompileMetrics(cfg_, c);
    measure(c, *workers_[0]);
  }
  bool changed = c.ok && c.deviceCodeSha256 != b.deviceCodeSha256;
  if (changed && bench() && opts_.canaryOnly) {
    if (!measured) {
      scoreCompileMetrics(cfg_, c);
      measure(c, *workers_[0]);
    }
    std::string metric = cfg_.objectives.front().metric;
    if (c.ok && c.scores.count(metric) && b.scores.count(metric) &&
        normalizedObjectives(cfg_, c) <= normalizedObjectives(cfg_, b))
      reportWarning("canary: " + what + " changed the device code but did not regress " + metric + " (" +
                    std::to_string(b.scores.at(metric)) + " -> " + std::to_string(c.scores.at(metric)) +
                    "): does the benchmark time the tuned kernels? is the measurement noisy (CV%)?");
  }
  journal_.append({{"op", "canary"}, {"ok", changed}, {"device_code_sha256", c.deviceCodeSha256},
                   {"baseline_device_code_sha256", b.deviceCodeSha256}, {"reason", c.reason}});
  if (changed) {
    progress_.note("canary: " + what + " changed the device code (" + b.deviceCodeSha256.substr(0, 12) + " -> " +
                   c.deviceCodeSha256.substr(0, 12) + "): controls reach the compiler");
    return true;
  }
  if (!c.ok && c.reason != reason::StaleBuild) {
    reportWarning("canary: the degrading build failed (" + c.reason + ": " + c.message + "), so it proves nothing");
    return !opts_.canaryOnly;
  }
  reportError("canary: " +
              (c.ok ? what + " produced the same device code (" + b.deviceCodeSha256.substr(0, 12) +
                          ") as the default compile"
                    : c.message) +
              "; the configuration did not reach the compiler: a compiler cache, stale objects or a missing "
              "launcher hide it (docs/troubleshooting.md); search.canary: false skips this check");
  return false;
}

void TuneRun::evaluateBatch(const std::vector<Point> &points, int generation) {
  if (points.size() == 1) {
    Evaluation e = evaluate(points[0], generation, candidateName(evals_.size()), *workers_[0]);
    record(e);
    return;
  }
  std::vector<Evaluation> results(points.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < points.size(); ++k)
    threads.emplace_back([&, k] {
      results[k] = evaluate(points[k], generation, candidateName(evals_.size() + k), *workers_[k]);
    });
  for (auto &t : threads)
    t.join();
  for (auto &e : results) {
    // A configuration twin inside the same batch was not known when it started.
    if (auto it = byHash_.find(e.candidateHash); it != byHash_.end() && e.duplicateKind.empty()) {
      e.duplicateOf = evals_[it->second].candidateId;
      e.duplicateKind = "config";
    }
    record(e);
  }
}

int TuneRun::failFirstGeneration() {
  std::map<std::string, int> reasons;
  const Evaluation *example = nullptr;
  for (const auto &e : evals_)
    if (e.generation == 1 && !e.ok) {
      ++reasons[e.reason];
      if (!example)
        example = &e;
    }
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[r, n] : reasons)
    top.push_back({n, r});
  std::sort(top.rbegin(), top.rend());
  std::string list;
  for (const auto &[n, r] : top)
    list += (list.empty() ? "" : ", ") + r + " x" + std::to_string(n);
  return reportError("every candidate of generation 1 is INVALID (" + list + "); e.g. " + example->candidateId +
                     " (" + example->rendered.summary() + "): " + example->message + "; replay it with `" +
                     example->replay + "` (search.exit_on_failure: false searches on)");
}

int TuneRun::searchGenerations() {
  JournalContents j = readJournal(journal_.path());
  for (int g = 1; g <= cfg_.search.generations && budgetLeft(); ++g) {
    std::vector<Point> pool = strategy_->pool(g, history(g));
    if (pool.empty())
      break;
    progress_.generation(g, cfg_.search.generations);
    std::vector<Point> todo;
    for (const auto &p : pool) {
      bool done = std::any_of(evals_.begin(), evals_.end(),
                              [&](const Evaluation &e) { return e.generation == g && e.point == p; });
      if (!done) // else evaluated before the engine was killed
        todo.push_back(p);
    }
    // One batch per worker count: every worker builds and measures its own
    // candidate; results are recorded in pool order, so the journal (and a
    // resume) does not depend on which worker finished first.
    for (size_t i = 0; i < todo.size() && budgetLeft();) {
      size_t n = std::min({workers_.size(), todo.size() - i, (size_t)(budget_ - (int)evals_.size())});
      std::vector<Point> batch(todo.begin() + i, todo.begin() + i + n);
      i += n;
      size_t before = evals_.size();
      evaluateBatch(batch, g);
      for (size_t k = before; k < evals_.size(); ++k)
        if (evals_[k].reason == reason::StaleBuild)
          return reportError(evals_[k].message);
      if (builder().daemon().stopRequested()) {
        progress_.note("stopped after " + evals_.back().candidateId + "; continue with `ciq resume --config " +
                       cfg_.path + "`");
        return 3;
      }
    }
    if (std::find(j.completedGenerations.begin(), j.completedGenerations.end(), g) == j.completedGenerations.end())
      journal_.append({{"op", "generation"}, {"generation", g}});
    bool anyOk = std::any_of(evals_.begin(), evals_.end(), [&](const Evaluation &e) { return e.generation == 1 && e.ok; });
    bool anyGen1 = std::any_of(evals_.begin(), evals_.end(), [&](const Evaluation &e) { return e.generation == 1; });
    if (g == 1 && anyGen1 && !anyOk && cfg_.search.exitOnFailure)
      return failFirstGeneration();
  }
  return 0;
}

// Before a runtime winner is declared, the best few candidates are measured
// again interleaved with the baseline, so that one lucky sample cannot win.
int TuneRun::runFinalists(WinnerChoice &w) {
  if (!bench() || cfg_.benchmark.finalists <= 0 || w.index < 0)
    return 0;
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals_)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  std::vector<size_t> finalists;
  std::set<std::string> devices = {evals_[0].deviceCodeSha256};
  for (size_t i : rankOrder(pts, false)) {
    if ((int)finalists.size() >= cfg_.benchmark.finalists || !evals_[i].ok)
      break;
    if (devices.insert(evals_[i].deviceCodeSha256).second)
      finalists.push_back(i);
  }
  if (finalists.empty())
    return 0;
  progress_.note("re-measuring " + std::to_string(finalists.size()) + " finalists interleaved with the baseline");
  std::vector<std::vector<std::string>> commands;
  std::vector<size_t> order = {0};
  order.insert(order.end(), finalists.begin(), finalists.end());
  std::string err;
  for (size_t i : order) {
    Evaluation e = evals_[i];
    e.kernels.clear();
    e.objects.clear();
    e.ok = false;
    builder().build(e, logPath(evals_[i].candidateId + ".final"));
    if (!e.ok)
      return reportError("finalist " + evals_[i].candidateId + " no longer builds: " + e.message);
    auto cmd = snapshotBenchmark(cfg_, cfg_.runDir + "/finalists/" + evals_[i].candidateId, err);
    if (!cmd)
      return reportError(err);
    commands.push_back(*cmd);
  }
  // Programs that compile at run time: each run gets its build's candidate
  // and the framework cache its evaluation filled.
  std::function<void(size_t)> serve;
  if (compilesAtRunTime())
    serve = [&](size_t k) {
      bench()->setEnv(builder().runtimeEnv(evals_[order[k]], /*freshCache=*/false));
      builder().beginRuntime(evals_[order[k]]);
    };
  auto res = runInterleaved(*bench(), commands, std::max(cfg_.benchmark.repeats, 5), logPath("finalists"), serve);
  if (serve)
    builder().daemon().clearCandidate();
  if (!res.ok)
    return reportError("finalists: " + res.reason + ": " + res.message);
  const Objective &o = cfg_.objectives.front();
  bool minimize = o.direction == "minimize";
  nlohmann::json rows = nlohmann::json::array();
  size_t best = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    Summary s = summarize(res.values[k]);
    rows.push_back({{"candidate_id", evals_[order[k]].candidateId}, {"median", s.median}, {"cv_percent", s.cvPercent},
                    {"values", res.values[k]}});
    double bestMedian = median(res.values[best]);
    if (k > 0 && (best == 0 || (minimize ? s.median < bestMedian : s.median > bestMedian)))
      best = k;
  }
  journal_.append({{"op", "finalists"}, {"rows", rows}});
  Verdict v = judge(res.values[0], res.values[best], minimize);
  progress_.note("finalists: best " + evals_[order[best]].candidateId + " median " + std::to_string(v.winner.median) +
                 " vs baseline " + std::to_string(v.baseline.median) + " " + o.unit +
                 (v.significant ? "" : " (not significant: " + v.reason + ")"));
  w.index = (int)order[best];
  w.improved = v.significant;
  Evaluation &win = evals_[w.index];
  win.scores[o.metric] = v.winner.median;
  win.cvPercent = v.winner.cvPercent;
  evals_[0].scores[o.metric] = v.baseline.median;
  return 0;
}

int TuneRun::finish() {
  WinnerChoice w = chooseWinner(cfg_, evals_);
  if (int rc = runFinalists(w))
    return rc;
  progress_.end();
  printSummary(cfg_, evals_, w, stdout);
  journal_.append({{"op", "winner"}, {"candidate_id", w.index >= 0 ? evals_[w.index].candidateId : ""},
                   {"improved", w.improved}});
  if (w.index >= 0 && w.improved && opts_.writeLock) {
    std::string err;
    if (!writeLock(cfg_, evals_.front(), evals_[w.index], err))
      return reportError(err);
    printf("lockfile: %s\n", cfg_.lockfile.c_str());
  } else if (!w.improved) {
    printf("no candidate beat the default compile; %s left unchanged\n", cfg_.lockfile.c_str());
  }
  journal_.append({{"op", "done"}});
  return 0;
}

int TuneRun::run() {
  if (!prepare())
    return 1;
  if (opts_.canaryOnly)
    progress_.note("ciq: canary for " + cfg_.target + ": the default compile, then a deliberately degrading one");
  else
    progress_.note("ciq: tuning " + cfg_.target + " (" + workloadSummary() + "), space of " + std::to_string((long long)cfg_.space.size()) + " points, " +
                 strategy_->name() + " search, budget " + std::to_string(budget_) + " evaluations");
  if (!evaluateBaseline())
    return 1;
  if (!runCanary())
    return 1;
  if (opts_.canaryOnly) {
    journal_.append({{"op", "done"}});
    return 0;
  }
  if (int rc = searchGenerations())
    return rc;
  return finish();
}

} // namespace

int runTune(TuneConfig cfg, const TuneOptions &opts) {
  TuneRun run(std::move(cfg), opts);
  return run.run();
}

std::vector<Evaluation> loadEvaluations(const TuneConfig &cfg) {
  return readJournal(cfg.runDir + "/journal.jsonl").evaluations;
}

int replayCandidate(TuneConfig cfg, const std::string &candidateId) {
  auto evals = loadEvaluations(cfg);
  auto it = std::find_if(evals.begin(), evals.end(), [&](const Evaluation &e) { return e.candidateId == candidateId; });
  if (it == evals.end())
    return reportError("no candidate '" + candidateId + "' in " + cfg.runDir + "/journal.jsonl; see results.csv for the ids");
  Evaluation e = *it;
  e.kernels.clear();
  e.objects.clear();
  e.ok = false;
  e.reason.clear();
  CandidateBuilder builder(cfg);
  std::string err;
  if (!builder.start(cfg.runDir + "/replay.sock", err))
    return reportError(err);
  builder.expectLike(evals.front());
  printf("replaying %s: %s\n", e.candidateId.c_str(), e.generation == 0 ? "(default compile)" : e.rendered.summary().c_str());
  CandidateMessage m = builder.messageFor(e);
  printf("environment: CIQ_SOCKET=%s (serves the candidate to ciq-ptxas)\ncommand: %s\n", builder.daemon().socketPath().c_str(),
         shellJoin(builder.driver().buildCommand()).c_str());
  std::string log = cfg.runDir + "/logs/" + e.candidateId + ".replay.log";
  builder.build(e, log);
  auto out = runSubprocess({"cat", log});
  fputs(out.out.c_str(), stdout);
  if (!e.ok)
    return reportError(e.candidateId + ": " + e.reason + ": " + e.message);
  printf("device code: %s (journal: %s)\n", e.deviceCodeSha256.c_str(), it->deviceCodeSha256.c_str());
  if (cfg.benchmark.enabled) {
    BenchmarkRunner bench(cfg);
    bench.setEnv(builder.runtimeEnv(e, /*freshCache=*/true));
    builder.beginRuntime(e);
    auto m2 = bench.measure(log);
    builder.endRuntime(e);
    if (!m2.ok)
      return reportError(e.candidateId + ": " + m2.reason + ": " + m2.message);
    printf("benchmark: median %g %s, CV %.1f%% over %zu runs\n", m2.median, cfg.benchmark.metric.unit.c_str(),
           m2.cvPercent, m2.values.size());
  }
  return 0;
}

} // namespace ciq
