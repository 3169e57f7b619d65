#include "Tune.h"
#include "Benchmark.h"
#include "BuildDriver.h"
#include "Command.h"
#include "Daemon.h"
#include "DeviceCode.h"
#include "Journal.h"
#include "LockWriter.h"
#include "Objectives.h"
#include "Paths.h"
#include "ResultsCsv.h"
#include "Search.h"
#include "Sha256.h"
#include "Summary.h"
#include "Version.h"

#include <algorithm>
#include <cstdio>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <map>
#include <unistd.h>

namespace ciq {
namespace {

std::string candidateName(size_t index) {
  char buf[16];
  snprintf(buf, sizeof buf, "c%04zu", index);
  return buf;
}

class TuneRun {
public:
  TuneRun(TuneConfig cfg, TuneOptions opts) : cfg_(std::move(cfg)), opts_(opts), driver_(cfg_) {}
  ~TuneRun() { restoreBuildTree(); }
  int run();

private:
  bool prepare();
  bool copyAcfs();
  bool evaluateBaseline();
  int searchGenerations();
  Evaluation evaluate(const Point &p, int generation);
  void buildAndCheck(Evaluation &e);
  void measure(Evaluation &e);
  void record(Evaluation &e);
  bool runCanary();
  int finish();
  bool budgetLeft() const { return (int)evals_.size() < budget_; }
  std::vector<ScoredPoint> history(int beforeGeneration) const;
  CandidateMessage messageFor(const Evaluation &e) const;
  std::string logPath(const std::string &id) const { return cfg_.runDir + "/logs/" + id + ".log"; }
  void restoreBuildTree();
  void printLine(const Evaluation &e) const;
  int failFirstGeneration();

  TuneConfig cfg_;
  TuneOptions opts_;
  BuildDriver driver_;
  Daemon daemon_;
  Journal journal_;
  std::unique_ptr<Strategy> strategy_;
  std::unique_ptr<BenchmarkRunner> bench_;
  std::vector<Evaluation> evals_;
  std::map<std::string, size_t> byHash_, byDevice_;
  std::map<std::string, std::string> acfCopy_;   // sha256 -> path under run/acf
  int budget_ = 0;
  bool fatal_ = false;
  std::string fatalMessage_;
};

bool TuneRun::prepare() {
  for (const char *sub : {"", "/logs", "/acf"})
    llvm::sys::fs::create_directories(cfg_.runDir + sub);
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
  } else if (unfinished && !opts_.fresh) {
    reportError(cfg_.runDir + " holds an unfinished search (" + std::to_string(prior.evaluations.size()) +
                " evaluations); continue it with `ciq resume --config " + cfg_.path +
                "` or start over with `ciq tune --fresh`");
    return false;
  } else if (llvm::sys::fs::exists(jpath)) {
    // A finished (or discarded) search is kept beside, never overwritten.
    std::string old = jpath + ".previous";
    llvm::sys::fs::rename(jpath, old);
  }
  std::string err;
  if (!journal_.open(jpath, err))
    return reportError(err), false;
  if (!opts_.resume)
    journal_.append({{"op", "start"}, {"version", 1}, {"engine_version", CIQ_VERSION},
                     {"config_path", cfg_.path}, {"space_identity", cfg_.space.identity()},
                     {"space_size", cfg_.space.size()}, {"seed", cfg_.search.seed},
                     {"strategy", cfg_.search.strategy}, {"pool_size", cfg_.search.poolSize},
                     {"generations", cfg_.search.generations}, {"target", cfg_.target},
                     {"objectives", [&] {
                        nlohmann::json a = nlohmann::json::array();
                        for (const auto &o : cfg_.objectives)
                          a.push_back({{"metric", o.metric}, {"direction", o.direction}, {"unit", o.unit}});
                        return a;
                      }()},
                     {"started_at", nowIso8601()}});
  for (size_t i = 0; i < evals_.size(); ++i) {
    byHash_.emplace(evals_[i].candidateHash, i);
    if (evals_[i].ok && !evals_[i].deviceCodeSha256.empty())
      byDevice_.emplace(evals_[i].deviceCodeSha256, i);
  }
  budget_ = opts_.maxEvaluations > 0        ? opts_.maxEvaluations
            : cfg_.search.maxEvaluations > 0 ? cfg_.search.maxEvaluations
                                             : 1 + cfg_.search.poolSize * cfg_.search.generations;
  try {
    strategy_ = makeStrategy(cfg_.search, cfg_.space, cfg_.pareto);
  } catch (const std::exception &e) {
    return reportError(cfg_.path + ": search.strategy: " + e.what()), false;
  }
  if (!copyAcfs() || !driver_.discover(err))
    return reportError(err.empty() ? "cannot copy ACF files into " + cfg_.runDir + "/acf" : err), false;
  if (!daemon_.start(socketPathFor(cfg_.runDir), err))
    return reportError(err), false;
  if (cfg_.benchmark.enabled)
    bench_ = std::make_unique<BenchmarkRunner>(cfg_);
  return true;
}

// ACFs travel under their content hash: a path with no comma (nvcc splits
// -Xptxas values on commas) that also keys compiler caches on the bytes.
bool TuneRun::copyAcfs() {
  for (const auto &c : cfg_.space.controls) {
    if (c.render != RenderKind::Acf)
      continue;
    for (size_t i = 0; i < c.values.size(); ++i) {
      std::string dst = cfg_.runDir + "/acf/" + c.acfSha256[i] + ".acf";
      if (!llvm::sys::fs::exists(dst) && llvm::sys::fs::copy_file(c.values[i], dst))
        return false;
      acfCopy_[c.acfSha256[i]] = dst;
    }
  }
  return true;
}

CandidateMessage TuneRun::messageFor(const Evaluation &e) const {
  CandidateMessage m;
  m.candidateId = e.candidateId;
  m.candidateHash = e.candidateHash;
  m.ptxasOptions = e.rendered.ptxas;
  m.nvccOptions = e.rendered.nvcc;
  m.defines = e.rendered.defines;
  for (const auto &a : e.rendered.acfs) {
    auto it = acfCopy_.find(a.sha256);
    m.acfs.push_back({a.stage, it == acfCopy_.end() ? a.path : it->second, a.sha256});
  }
  m.compileTimeoutSeconds = cfg_.timeouts.compileSeconds;
  return m;
}

// Rebuilds the target with the candidate and checks every CUDA translation
// unit reported back for it.
void TuneRun::buildAndCheck(Evaluation &e) {
  daemon_.setCandidate(messageFor(e));
  driver_.clean();
  e.log = logPath(e.candidateId);
  std::map<std::string, std::string> env = {{"CIQ_SOCKET", daemon_.socketPath()},
                                            {"CIQ_RUN_DIR", cfg_.runDir},
                                            {"CIQ_SOCKET_TIMEOUT", std::to_string((int)cfg_.timeouts.socketSeconds)}};
  e.replay = "CIQ_LOCK= " + shellJoin(driver_.buildCommand()) + "  # with the candidate: ciq replay " + e.candidateId;
  auto r = driver_.build(env, e.log);
  e.buildMs = r.wallMs;
  auto receipts = daemon_.receipts();
  daemon_.clearCandidate();
  std::map<std::string, const Receipt *> byOutput;
  for (const auto &rc : receipts) {
    byOutput[rc.output] = &rc;
    for (const auto &k : rc.kernels)
      e.kernels.push_back(k);
  }
  bool compileFailed = false, timedOut = false;
  for (const auto &rc : receipts) {
    compileFailed = compileFailed || rc.status == "compile_error";
    timedOut = timedOut || rc.status == "compile_timeout";
  }
  if (r.timedOut || timedOut) {
    e.reason = reason::CompileTimeout;
    e.message = timedOut ? "a compile ran past timeouts.compile_s; log: " + e.log
                         : "the build ran past timeouts.build_s; log: " + e.log;
    return;
  }
  if (r.exitCode != 0 || r.spawnFailed) {
    bool allCompiled = true;
    for (const auto &o : driver_.objects())
      allCompiled = allCompiled && byOutput.count(o.object) && byOutput[o.object]->exitStatus == 0;
    e.reason = (compileFailed || !allCompiled) ? reason::CompileError : reason::LinkError;
    e.message = std::string(e.reason == reason::CompileError ? "the compile failed" : "the link failed") +
                " (cmake --build exit " + std::to_string(r.exitCode) + "); log: " + e.log;
    return;
  }
  std::vector<std::string> missing, hashes;
  for (const auto &o : driver_.objects()) {
    auto it = byOutput.find(o.object);
    if (it == byOutput.end()) {
      missing.push_back(o.source);
      continue;
    }
    const Receipt &rc = *it->second;
    e.objects.push_back({o.source, o.object, rc.deviceCodeSha256, rc.status, rc.deviceCodeBytes, rc.wallMs});
    hashes.push_back(rc.deviceCodeSha256);
  }
  if (!missing.empty()) {
    std::string files;
    for (const auto &m : missing)
      files += (files.empty() ? "" : ", ") + m;
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the compiler: no receipt from ciq-ptxas for " + files +
                " (is the target's CUDA_COMPILER_LAUNCHER ciq-ptxas? see `ciq canary`); log: " + e.log;
    fatal_ = true;
    fatalMessage_ = e.message;
    return;
  }
  e.deviceCodeSha256 = combineDeviceCodeHashes(hashes);
  e.ok = true;
}

void TuneRun::measure(Evaluation &e) {
  if (!bench_)
    return;
  auto m = bench_->measure(e.log);
  e.measureMs = m.wallMs;
  if (!m.ok) {
    e.ok = false;
    e.reason = m.reason;
    e.message = m.message + "; log: " + e.log;
    return;
  }
  e.runs = m.values;
  e.cvPercent = m.cvPercent;
  e.scores["time_ms"] = m.median;
  for (const auto &o : cfg_.objectives)
    if (!isCompileMetric(o.metric))
      e.scores[o.metric] = m.median;
}

Evaluation TuneRun::evaluate(const Point &p, int generation) {
  Evaluation e;
  e.candidateId = candidateName(evals_.size());
  e.generation = generation;
  e.point = p;
  e.rendered = render(cfg_.space, p);
  e.candidateHash = e.rendered.hash();
  // Same command lines and ACF bytes as an earlier candidate: not rebuilt.
  if (auto it = byHash_.find(e.candidateHash); it != byHash_.end()) {
    const Evaluation &d = evals_[it->second];
    Evaluation copy = d;
    copy.candidateId = e.candidateId;
    copy.generation = generation;
    copy.point = p;
    copy.rendered = e.rendered;
    copy.duplicateOf = d.duplicateOf.empty() ? d.candidateId : d.duplicateOf;
    copy.duplicateKind = "config";
    copy.buildMs = copy.measureMs = 0;
    copy.evaluatedAt = nowIso8601();
    return copy;
  }
  buildAndCheck(e);
  if (e.ok) {
    scoreCompileMetrics(cfg_, e);
    // Same device code as an earlier candidate: built, but not re-measured.
    auto it = byDevice_.find(e.deviceCodeSha256);
    if (it != byDevice_.end() && bench_) {
      const Evaluation &d = evals_[it->second];
      e.duplicateOf = d.duplicateOf.empty() ? d.candidateId : d.duplicateOf;
      e.duplicateKind = "device_code";
      e.ok = d.ok;
      e.reason = d.reason;
      e.scores = d.scores;
      e.runs = d.runs;
      e.cvPercent = d.cvPercent;
    } else {
      if (it != byDevice_.end()) {
        e.duplicateOf = evals_[it->second].candidateId;
        e.duplicateKind = "device_code";
      }
      measure(e);
    }
  }
  e.evaluatedAt = nowIso8601();
  return e;
}

void TuneRun::printLine(const Evaluation &e) const {
  if (opts_.quiet)
    return;
  std::string scores;
  for (const auto &o : cfg_.objectives)
    if (e.scores.count(o.metric)) {
      char buf[96];
      snprintf(buf, sizeof buf, "%s%s=%g %s", scores.empty() ? "" : " ", o.metric.c_str(), e.scores.at(o.metric),
               o.unit.c_str());
      scores += buf;
    }
  if (e.cvPercent >= 0) {
    char buf[32];
    snprintf(buf, sizeof buf, " cv=%.1f%%", e.cvPercent);
    scores += buf;
  }
  std::string dup = e.duplicateOf.empty() ? "" : " (same " + std::string(e.duplicateKind == "config" ? "configuration" : "device code") + " as " + e.duplicateOf + ")";
  printf("[%d/%d] gen %d %s %s %s%s  %s\n", (int)evals_.size() + 1, budget_, e.generation, e.candidateId.c_str(),
         e.ok ? "OK     " : "INVALID", e.ok ? scores.c_str() : (e.reason + ": " + e.message).c_str(), dup.c_str(),
         e.generation == 0 ? "(default compile)" : e.rendered.summary().c_str());
  fflush(stdout);
}

void TuneRun::record(Evaluation &e) {
  printLine(e);
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
  daemon_.setStatus({{"evaluations", evals_.size()}, {"budget", budget_}, {"generation", e.generation},
                     {"last", e.candidateId}, {"run_dir", cfg_.runDir}});
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
  Evaluation b = evaluate(cfg_.space.baseline(), 0);
  record(b);
  if (fatal_)
    return false;
  if (!b.ok) {
    reportError("the baseline (your build with no control applied) is INVALID: " + b.reason + ": " + b.message +
                "; fix the build or benchmark first (replay: " + b.replay + ")");
    return false;
  }
  return true;
}

// The proof that controls reach the compiler: a deliberately degrading
// configuration must change the device code or the score.
bool TuneRun::runCanary() {
  if (!opts_.canary || !cfg_.search.canary || opts_.resume)
    return true;
  Evaluation c;
  c.candidateId = "canary";
  c.rendered.ptxas = {"--opt-level=0"};
  c.candidateHash = c.rendered.hash();
  buildAndCheck(c);
  const Evaluation &b = evals_.front();
  if (c.ok && c.deviceCodeSha256 != b.deviceCodeSha256) {
    journal_.append({{"op", "canary"}, {"ok", true}, {"device_code_sha256", c.deviceCodeSha256}});
    if (!opts_.quiet)
      printf("canary: -Xptxas --opt-level=0 changed the device code (%s -> %s): controls reach the compiler\n",
             b.deviceCodeSha256.substr(0, 12).c_str(), c.deviceCodeSha256.substr(0, 12).c_str());
    return true;
  }
  if (!c.ok && c.reason != reason::StaleBuild) {
    reportWarning("canary: the degrading build failed (" + c.reason + "), so it proves nothing; continuing");
    return true;
  }
  reportError("canary: " + (c.ok ? "-Xptxas --opt-level=0 produced the same device code (" +
                                       b.deviceCodeSha256.substr(0, 12) + ") as the default compile"
                                 : c.message) +
              "; the configuration did not reach the compiler: a compiler cache or stale objects hide it "
              "(see docs/troubleshooting.md); search.canary: false skips this check");
  fatal_ = true;
  return false;
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
                     " (" + example->rendered.summary() + "): " + example->message +
                     "; replay it with `ciq replay " + example->candidateId + " --config " + cfg_.path +
                     "` (search.exit_on_failure: false searches on)");
}

int TuneRun::searchGenerations() {
  JournalContents j = readJournal(journal_.path());
  for (int g = 1; g <= cfg_.search.generations && budgetLeft(); ++g) {
    std::vector<Point> pool = strategy_->pool(g, history(g));
    if (pool.empty())
      break;
    for (const auto &p : pool) {
      if (!budgetLeft())
        break;
      bool done = std::any_of(evals_.begin(), evals_.end(),
                              [&](const Evaluation &e) { return e.generation == g && e.point == p; });
      if (done)
        continue; // evaluated before the engine was killed
      Evaluation e = evaluate(p, g);
      record(e);
      if (fatal_)
        return reportError(fatalMessage_);
      if (daemon_.stopRequested()) {
        printf("stopped after %s; continue with `ciq resume --config %s`\n", e.candidateId.c_str(), cfg_.path.c_str());
        return 3;
      }
    }
    if (std::find(j.completedGenerations.begin(), j.completedGenerations.end(), g) == j.completedGenerations.end())
      journal_.append({{"op", "generation"}, {"generation", g}});
    bool anyOk = std::any_of(evals_.begin(), evals_.end(), [&](const Evaluation &e) { return e.generation == 1 && e.ok; });
    if (g == 1 && !anyOk && cfg_.search.exitOnFailure)
      return failFirstGeneration();
  }
  return 0;
}

int TuneRun::finish() {
  std::string err;
  WinnerChoice w = chooseWinner(cfg_, evals_);
  const Evaluation &base = evals_.front();
  printSummary(cfg_, evals_, w, stdout);
  journal_.append({{"op", "winner"}, {"candidate_id", w.index >= 0 ? evals_[w.index].candidateId : ""},
                   {"improved", w.improved}});
  if (w.index >= 0 && w.improved && opts_.writeLock) {
    if (!writeLock(cfg_, base, evals_[w.index], err))
      return reportError(err);
    printf("lockfile: %s\n", cfg_.lockfile.c_str());
  } else if (!w.improved) {
    printf("no candidate beat the default compile; %s left unchanged\n", cfg_.lockfile.c_str());
  }
  journal_.append({{"op", "done"}});
  return 0;
}

void TuneRun::restoreBuildTree() {
  // The last candidate's objects must not survive into the user's next plain
  // build (the build system would think them up to date): remove them.
  daemon_.stop();
  driver_.clean();
}

int TuneRun::run() {
  if (!prepare())
    return 1;
  if (!opts_.quiet)
    printf("ciq: tuning %s (%zu CUDA object%s), space of %.0f points, %s search, budget %d evaluations\n",
           cfg_.target.c_str(), driver_.objects().size(), driver_.objects().size() == 1 ? "" : "s",
           cfg_.space.size(), strategy_->name().c_str(), budget_);
  if (!evaluateBaseline())
    return 1;
  if (!runCanary())
    return 1;
  int rc = searchGenerations();
  if (rc != 0)
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

} // namespace ciq
