#include "engine/run/TuneRun.h"
#include "common/JsonRead.h"

namespace ciq {

// Before a runtime winner is declared, the best few candidates are measured
// again interleaved with the baseline, so that one lucky sample cannot win.
// However many finalists are configured (even 0), the winner must be
// significantly better than the baseline in this measurement (the test of
// `ciq validate`), or no lock is written.
bool TuneRun::runFinalists(WinnerChoice &w) {
  if (!runtimeObjective() || w.index < 0)
    return true;
  if (w.index == 0) {
    w.improved = false;
    w.why = "no candidate scored better than the baseline";
    return true;
  }
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals_)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  std::vector<size_t> finalists = {(size_t)w.index};
  std::set<std::string> builds = {reuseKey(evals_[0]), reuseKey(evals_[w.index])};
  for (size_t i : rankOrder(pts, false)) {
    if ((int)finalists.size() >= std::max(1, cfg_.benchmark.finalists) || !evals_[i].ok)
      break;
    if (i != 0 && builds.insert(reuseKey(evals_[i])).second)
      finalists.push_back(i);
  }
  progress_.note("re-measuring " + std::to_string(finalists.size()) + " finalist(s) interleaved with the baseline" +
                 (cfg_.benchmark.finalists <= 0 ? " (benchmark.finalists: 0 still tests the winner: no lock without "
                                                  "a significant gain)"
                                                : ""));
  std::vector<size_t> order = {0};
  order.insert(order.end(), finalists.begin(), finalists.end());
  // A finalist without a copy is built and copied again: the other copies
  // go first (before they are offered to the phases after this one).
  if (programs_.kept() && std::any_of(order.begin(), order.end(), [&](size_t i) { return !programs_.find(evals_, i); }))
    programs_.keepOnlyCopiesOf(evals_, order, snapshots_);
  programs_.offer(evals_, snapshots_);
  std::vector<std::vector<double>> values;
  nlohmann::json where;   // Slurm: the node, job and GPU state of the measurement (journaled)
  if (!(slurm_ ? measureFinalistsOnNode(w, order, values, where) : measureFinalistsHere(order, values)))
    return false;
  keepFinalistRuns(order, values);
  if (!values.empty() && !cfg_.benchmark.cases.empty())
    judgeFinalistCases(w, order, values);
  else if (!values.empty()) // empty: the Slurm job failed, no lock (w.why says why)
    judgeFinalists(w, order, values, where);
  return !recordingFailed_;
}

// What racing saved in the finalists' re-measurement. With cases, a case
// whose every verdict against the baseline was made stops for all builds,
// the best among them: that is no build found worse.
std::string TuneRun::racedNote(const InterleavedResult &res, const std::vector<size_t> &order, size_t nc) const {
  bool cases = !cfg_.benchmark.cases.empty();
  std::string ids, decided;
  for (size_t c = 0; c < nc; ++c) {
    bool all = cases;
    for (size_t b = 0; b < order.size() && all; ++b)
      all = std::find(res.raced.begin(), res.raced.end(), b * nc + c) != res.raced.end();
    if (all)
      decided += (decided.empty() ? "" : ", ") + cfg_.benchmark.cases[c].name;
    for (size_t k : res.raced)
      if (k % nc == c && !all)
        ids += (ids.empty() ? "" : ", ") + evals_[order[k / nc]].candidateId +
               (cases ? " (case " + cfg_.benchmark.cases[c].name + ")" : "");
  }
  std::string note = "finalists: racing";
  if (!decided.empty())
    note += " ended case(s) " + decided + " early: every finalist's verdict against the baseline there was made";
  if (!ids.empty())
    note += std::string(decided.empty() ? "" : ";") + " stopped " + ids +
            " early as significantly worse than the best finalist";
  return note + ", " + std::to_string(res.runsSaved) + " run(s) saved";
}

// The finalists' benchmark commands, one per finalist and case: the copy of
// its program the search kept, else rebuilt in the main build tree and copied.
bool TuneRun::finalistCommands(const std::vector<size_t> &order, std::vector<std::vector<std::string>> &commands) {
  std::string err, copied;
  for (size_t i : order) {
    // The copy the search made of this binary's program: not built again.
    if (auto cmd = programs_.find(evals_, i)) {
      for (size_t k = 0; k < finalistCases(); ++k)
        commands.push_back(*cmd);
      snapshots_[evals_[i].rendered.hash()] = *cmd;
      copied += (copied.empty() ? "" : ", ") + evals_[i].candidateId;
      continue;
    }
    Evaluation e = evals_[i];
    e.kernels.clear();
    e.objects.clear();
    e.ok = false;
    builder().build(e, logPath(evals_[i].candidateId + ".final"));
    if (e.reason == reason::DiskFault || e.reason == reason::SocketReplaced)
      return fail("finalists: " + e.message + "; no lock is written; " + resumeHint());
    if (!e.ok)
      return fail("finalist " + evals_[i].candidateId + " no longer builds: " + e.message);
    auto cmd = snapshotBenchmark(cfg_, cfg_.runDir + "/finalists/" + evals_[i].candidateId, err, compilesAtRunTime());
    if (!cmd)
      return fail(err);
    // benchmark.cases: build i's command once per case k, at i x cases + k
    // (the runner appends the case's args, selected before each run).
    for (size_t k = 0; k < finalistCases(); ++k)
      commands.push_back(*cmd);
    snapshots_[evals_[i].rendered.hash()] = *cmd;
  }
  if (!copied.empty())
    progress_.note("finalists: " + copied + " run the program the search measured (its copy in " + cfg_.runDir +
                   "/programs), not built again");
  return true;
}

// The finalists measured interleaved on this host's GPU.
bool TuneRun::measureFinalistsHere(const std::vector<size_t> &order, std::vector<std::vector<double>> &values) {
  std::vector<std::vector<std::string>> commands;
  if (!finalistCommands(order, commands))
    return false;
  if (!beginPhase(*workers_[0]))
    return false;
  // Programs that compile at run time: each run gets its build's candidate
  // and the framework cache its evaluation filled. Adaptive repeats: up to
  // max_repeats rounds until the winner's verdict is made; a finalist
  // significantly worse than the best one stops early (racing).
  BeforeRun serve;
  const size_t nc = finalistCases();
  bool cases = !cfg_.benchmark.cases.empty();
  if (compilesAtRunTime() || cases)
    serve = [&](size_t k) {
      if (cases) // the case's args and env
        bench()->selectCase(&cfg_.benchmark.cases[k % nc]);
      if (compilesAtRunTime())
        serveRuntime(evals_[order[k / nc]]);
    };
  // Each round is journaled as it ends: a resumed tune takes them up
  // where the kill stopped them (issue 49 item 3).
  std::string key = "finalists";
  for (size_t i : order)
    key += ":" + evals_[i].candidateId;
  RoundsRecord record;
  if (const auto *prior = priorRounds(key))
    record.prior = *prior;
  record.onRun = [&](int round, size_t build, double v) { journalRun(key, round, build, v); };
  auto res = runInterleaved(*bench(), commands, rounds(), logPath("finalists"), cfg_.benchmark.warmup, serve,
                            timed(cases ? caseEnoughRounds() : enoughRounds(Judged::BestAgainstFirst), 0),
                            [this] { return stopRequested(); }, &record);
  bench()->selectCase(nullptr);
  if (compilesAtRunTime())
    builder().daemon().clearCandidate();
  endPhase(*workers_[0]);
  if (res.stopped)
    return stoppedIn("finalists");
  if (!res.ok) // a run that failed here (intermittently: it passed in the search) is no result
    return fail("finalists: " + res.reason + ": " +
                (res.failedBuild >= 0 ? evals_[order[res.failedBuild / nc]].candidateId +
                                            (res.failedBuild / nc == 0 ? " (the baseline)" : "") +
                                            (cases ? ", case '" + cfg_.benchmark.cases[res.failedBuild % nc].name + "'"
                                                   : "") + ", " + res.failedRun
                                      : res.message) +
                "; no lock is written; the search is kept: fix the benchmark, then measure the "
                "finalists again with `ciq resume --config " + shellQuote(cfg_.path) + "`");
  if (!res.raced.empty())
    progress_.note(racedNote(res, order, nc));
  values = res.values;
  return true;
}

// executor: slurm: one job measures the finalists on one node
// (SlurmFinalists.h). A job that fails, after the executor's one requeue
// on a node fault, writes no lock and says why (values stay empty); `ciq
// stop` cancels it (false, stopped, as during the search: `ciq resume`
// measures the finalists again).
bool TuneRun::measureFinalistsOnNode(WinnerChoice &w, const std::vector<size_t> &order,
                                    std::vector<std::vector<double>> &values, nlohmann::json &where) {
  std::vector<const Evaluation *> evals;
  for (size_t i : order)
    evals.push_back(&evals_[i]);
  NodeFinalists m = measureFinalistsOnSlurm(cfg_, *slurm_, evals);
  where = m.where;
  if (m.stopped) {
    progress_.note("stopped while the finalists were measured; continue with `ciq resume --config " +
                   shellQuote(cfg_.path) + "`");
    outcome_.status = TuneOutcome::Status::Stopped;
    return false;
  }
  if (!m.ok) {
    w.improved = false;
    w.why = "the finalists' Slurm job failed (" + m.reason + ": " + m.message + "), so no lock is written";
    progress_.note("finalists: " + w.why);
    nlohmann::json line = {{"op", "finalists"}, {"rows", nlohmann::json::array()}, {"reason", m.reason},
                           {"message", m.message}};
    line.update(where);
    return journal(line);
  }
  values = m.values;
  progress_.note("finalists measured interleaved on " + stringAt(m.where, "node", "?") + " by one Slurm job");
  // The node's GPU state while measuring goes into the lock, and a GPU that
  // throttled or was shared there withholds it (finish()).
  lockExtra_["finalists_measurement"] = m.measurement;
  verdicts_.gpuProblems.insert(verdicts_.gpuProblems.end(), m.gpuProblems.begin(), m.gpuProblems.end());
  return true;
}

// The verdict on the finalists' interleaved values, wherever they were
// measured: the journal's finalists row, the best against the baseline, the
// winner only if significantly better.
void TuneRun::judgeFinalists(WinnerChoice &w, const std::vector<size_t> &order,
                             const std::vector<std::vector<double>> &values, const nlohmann::json &where) {
  const Objective &o = cfg_.objectives.front();
  bool minimize = o.direction == "minimize";
  nlohmann::json rows = nlohmann::json::array();
  size_t best = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    Summary s = summarize(values[k]);
    rows.push_back({{"candidate_id", evals_[order[k]].candidateId}, {"median", s.median}, {"cv_percent", s.cvPercent},
                    {"noise_percent", medianCiHalfWidthPercent(values[k])},
                    {"values", values[k]}});
    double bestMedian = median(values[best]);
    if (k > 0 && (best == 0 || (minimize ? s.median < bestMedian : s.median > bestMedian)))
      best = k;
  }
  nlohmann::json line = {{"op", "finalists"}, {"rows", rows}};
  if (where.is_object())
    line.update(where);
  journal(line); // runFinalists stops on a failure
  Verdict v = judge(values[0], values[best], minimize, maxCvPercent());
  // One format for every figure (NumberFormat.h), and the p-value whether or
  // not the result is significant.
  progress_.note("finalists: best " + evals_[order[best]].candidateId + " median " + fmt::value(v.winner.median) +
                 " vs baseline " + fmt::value(v.baseline.median) + " " + o.unit + " (" +
                 (v.significant ? fmt::ratio(v.speedup) + ", " + fmt::pValue(v.welch.pValue)
                                : "not significant: " + v.reason) + ")");
  w.index = (int)order[best];
  w.improved = v.significant;
  w.why = v.significant ? "" : "not significantly better than the baseline: " + v.reason;
  verdicts_.speedup = v.speedup;
  verdicts_.pValue = v.welch.pValue;
  Evaluation &win = evals_[w.index];
  win.scores[o.metric] = v.winner.median;
  win.cvPercent = v.winner.cvPercent;
  evals_[0].scores[o.metric] = v.baseline.median;
}

} // namespace ciq
