#include "engine/run/TuneRun.h"
#include "engine/measure/KernelTrace.h"
#include "engine/winner/CaseVariants.h"

namespace ciq {

const Evaluation *TuneRun::knownBuild(const std::string &candidateHash) const {
  auto it = byHash_.find(candidateHash);
  return it == byHash_.end() || !evals_[it->second].ok ? nullptr : &evals_[it->second];
}

// The minimization's measured comparison (runtime objective): is the winner
// with the control significantly better than without it? With cases, kept
// when any case is significantly worse without it.
std::optional<bool> TuneRun::measuredWorse(const Rendered &cur, const Rendered &red, const std::string &tag,
                                           std::string &detail, std::string &error) {
  const Objective &o = cfg_.objectives.front();
  std::vector<std::string> problems;
  if (!cfg_.benchmark.cases.empty()) {
    auto cases = measureVariantsPerCase(builder(), *bench(), cfg_, {{"without", red}, {"with", cur}}, rounds(), tag,
                                        error, measureOptions(&problems));
    notePhaseProblems(problems);
    if (!cases)
      return std::nullopt;
    std::string each;
    bool worse = betterInAnyCase(*cases, 1, o.unit, each);
    detail = "with it, against without it: " + each;
    return worse;
  }
  auto rows = measureVariants(builder(), bench(), cfg_, {{"without", red}, {"with", cur}}, rounds(), tag, error,
                              measureOptions(&problems));
  notePhaseProblems(problems);
  if (!rows)
    return std::nullopt;
  // The reference is the reduced build: is the current winner significantly better?
  const VariantResult &r = (*rows)[1];
  detail = "without it " + fmt::value((*rows)[0].median) + " " + o.unit + ", with it " + fmt::value(r.median) +
           " " + o.unit + ": " + speedupText(r, o.unit) + ", " + fmt::pValue(r.pValue);
  return r.significant;
}

// The minimization's exact comparison (compile-only objectives): the two
// builds' objectives, each build made once (`built`, or the search's own).
std::optional<bool> TuneRun::scoredWorse(const Rendered &cur, const Rendered &red, const std::string &tag,
                                         std::map<std::string, Evaluation> &built, std::string &detail,
                                         std::string &error) {
  std::string diskFault;   // a build the disk refused: no verdict
  auto score = [&](const Rendered &rd) -> std::optional<std::vector<double>> {
    Evaluation e;
    e.candidateHash = rd.hash();
    if (const Evaluation *k = knownBuild(e.candidateHash))
      return normalizedObjectives(cfg_, *k);
    if (auto it = built.find(e.candidateHash); it != built.end())
      return normalizedObjectives(cfg_, it->second);
    e.candidateId = tag;
    e.rendered = rd;
    builder().build(e, logPath(tag));
    if (e.reason == reason::DiskFault || e.reason == reason::SocketReplaced) // no verdict: the minimization stops
      return diskFault = e.message, std::nullopt;
    if (e.ok)
      scoreCompileMetrics(cfg_, e);
    built[e.candidateHash] = e;
    if (!e.ok)
      return std::nullopt;
    return normalizedObjectives(cfg_, e);
  };
  auto c = score(cur), r = score(red);
  if (!diskFault.empty())
    return error = diskFault, std::nullopt;
  if (!c)
    return error = "the winner no longer builds", std::nullopt;
  detail = r ? "exact comparison of the objectives" : "without it the build is INVALID";
  return !r || *c < *r;
}

// Removes every control of the winner whose removal is not worse
// (Minimize.h): what the lock ships earns its place.
bool TuneRun::minimize(WinnerChoice &w) {
  if (!w.improved || w.index <= 0)
    return true;
  const Evaluation &win = evals_[w.index];
  // Under a time budget the minimization runs only when one comparison
  // and the rehearsal fit in what is left: else the winner is locked with
  // every control the finalists measured it with. It then runs until its
  // share ends: each comparison that does not fit is not made.
  if (clock_.timed() && clock_.left() < plan(1).need[2] + minimizeTrialSeconds()) {
    timeCut("minimization skipped: one comparison and the rehearsal need about " +
            durationText(plan(1).need[2] + minimizeTrialSeconds()) + ", " +
            durationText(std::max(0.0, clock_.left())) + " was left; " + win.candidateId +
            " keeps every control it was measured with");
    return true;
  }
  int untried = 0;   // comparisons the time budget left unmade (their controls kept)
  int trial = 0;
  std::map<std::string, Evaluation> built;   // candidate hash -> its build (compile-only scores)
  // Each comparison is journaled as it is made; a resumed search reads the
  // ones it made before instead of measuring them again.
  WorseThan worse = [&](const Point &current, const Point &reduced, std::string &detail,
                        std::string &error) -> std::optional<bool> {
    for (const auto &t : priorTrials_)
      if (t.from == win.candidateId && t.current == current && t.reduced == reduced) {
        detail = t.detail;
        return t.worse;
      }
    // A comparison of two binaries the finalists measured costs nothing; any
    // other is made only while it fits before the rehearsal and attribution.
    bool reusable = runtimeObjective() && measuredRuns(render(cfg_.space, current).hash(), 0) &&
                measuredRuns(render(cfg_.space, reduced).hash(), 0);
    if (clock_.timed() && !reusable && runtimeObjective()) {
      if (clock_.left() < plan(2).need[2] + minimizeTrialSeconds()) {
        ++untried;
        detail = "not tried: the time budget ran out (kept)";
        return true;
      }
    }
    Rendered cur = render(cfg_.space, current), red = render(cfg_.space, reduced);
    std::string tag = win.candidateId + "-min" + std::to_string(++trial);
    auto r = runtimeObjective() ? measuredWorse(cur, red, tag, detail, error)
                                : scoredWorse(cur, red, tag, built, detail, error);
    if (r && !journal(minimizeTrialToJson({win.candidateId, current, reduced, *r, detail})))
      return error = outcome_.error, std::nullopt;
    return r;
  };
  std::string err;
  auto m = minimizeWinner(cfg_.space, win.point, worse, err);
  if (!m)
    return stopRequested() ? stoppedIn("minimization")
                           : fail("minimizing " + win.candidateId + ": " + err + "; no lock is written; " + resumeHint());
  for (const auto &st : m->steps)
    verdicts_.minimization.push_back((st.dropped ? "dropped " : "kept ") + st.removed + " (" + st.detail + ")");
  if (untried > 0)
    timeCut("minimization: " + std::to_string(untried) + " comparison(s) not made, their controls kept");
  lockExtra_["minimization"] = {{"from", win.candidateId}, {"steps", minimizeToJson(*m)}};
  if (!journal({{"op", "minimize"}, {"candidate_id", win.candidateId}, {"steps", minimizeToJson(*m)}}))
    return false;
  if (m->point == win.point)
    return true;
  return buildMinimized(win, m->point);
}

// The minimized winner: a point evaluated in the search, or built here.
bool TuneRun::buildMinimized(const Evaluation &win, const Point &point) {
  minimized_ = Evaluation{};
  minimized_.point = point;
  minimized_.rendered = render(cfg_.space, point);
  minimized_.candidateHash = minimized_.rendered.hash();
  minimized_.candidateId = win.candidateId + "-min";
  // A point the search evaluated: its build is known, not made again.
  if (const Evaluation *k = knownBuild(minimized_.candidateHash)) {
    std::string id = minimized_.candidateId;
    minimized_ = *k;
    minimized_.candidateId = id;
    // Its build, not its runs: those are k's (the summary counts them once);
    // its kernel times come from a traced run of its own (traceMinimized).
    minimized_.runs.clear();
    minimized_.kernelTimes.clear();
    minimized_.kernelTimesFrom.clear();
    minimized_.cases.clear();
    minimized_.measureMs = 0;
    minimized_.stoppedBy.clear();
    progress_.note("minimization: " + id + " is " + k->candidateId + "'s configuration: its build is not made again");
    return journal(buildToJson(minimized_));
  }
  builder().build(minimized_, logPath(minimized_.candidateId));
  if (minimized_.reason == reason::DiskFault || minimized_.reason == reason::SocketReplaced)
    return fail("minimization: " + minimized_.message + "; no lock is written; " + resumeHint());
  if (!minimized_.ok)
    return fail("the minimized winner " + minimized_.rendered.summary() + " does not build: " + minimized_.message);
  scoreCompileMetrics(cfg_, minimized_);
  return journal(buildToJson(minimized_));   // `ciq explain <id>-min`
}

// One measurement of the attribution variants (the runtime rows interleaved).
std::optional<std::vector<VariantResult>> TuneRun::attributionRows(const Evaluation &win, std::string &err) {
  std::vector<std::string> problems;
  auto rows = measureVariants(builder(), runtimeObjective() ? bench() : nullptr, cfg_,
                              attributionVariants(win.rendered), rounds(), "attribution", err,
                              measureOptions(&problems));
  notePhaseProblems(problems);
  if (rows)
    for (const auto &r : *rows)
      verdicts_.attribution.push_back(formatVariant(r, cfg_.objectives.front().unit));
  return rows;
}

// benchmark.cases: each case's rows, then the rows over all cases (the
// geometric mean of the case ratios, judged as `ciq validate` judges them),
// which are the ones journaled and locked.
std::optional<std::vector<VariantResult>> TuneRun::attributionRowsByCase(Evaluation &win, std::string &err) {
  std::vector<std::string> problems;
  auto perCase = measureVariantsPerCase(builder(), *bench(), cfg_, attributionVariants(win.rendered), rounds(),
                                        "attribution", err, measureOptions(&problems));
  notePhaseProblems(problems);
  if (!perCase)
    return std::nullopt;
  const std::string &unit = cfg_.objectives.front().unit;
  for (const auto &c : *perCase) {
    verdicts_.attribution.push_back("  case " + c.name + ":");
    for (const auto &r : c.rows)
      verdicts_.attribution.push_back("  " + formatVariant(r, unit));
  }
  // The lock's per-case figures are this measurement's, the baseline's
  // and the winner's interleaved (a minimized winner has no others).
  std::vector<CaseResult> base, mine;
  for (const auto &c : *perCase) {
    base.push_back(caseResultOf(c.name, c.rows.front()));
    mine.push_back(caseResultOf(c.name, c.rows.back()));
  }
  std::string why;
  if (compareCases(mine, base, why) > 0) {
    evals_[0].cases = base;
    win.cases = mine;
  }
  auto rows = aggregateCaseRows(*perCase, cfg_);
  verdicts_.attribution.push_back("  all cases (geometric mean of the ratios to the baseline, per case):");
  for (const auto &r : rows)
    verdicts_.attribution.push_back("  " + formatVariant(r, "x"));
  return rows;
}

// The minimized winner is built after the search and measured untraced
// (attribution); unless it borrowed an evaluation's kernel times (the same
// objects), one traced run of its benchmark copy (each case's, with cases)
// gives its per-kernel figures, as a warm-up run gives every evaluation's.
void TuneRun::traceMinimized() {
  if (minimized_.candidateId.empty() || !minimized_.kernelTimes.empty() || !bench() || !bench()->tracesWarmup() ||
      compilesAtRunTime())
    return;
  auto it = snapshots_.find(minimized_.rendered.hash());
  if (it == snapshots_.end())
    return;
  MeasureOutcome m;
  std::string log = logPath(minimized_.candidateId + "-trace");
  std::vector<const BenchmarkCase *> cases;
  for (const auto &c : cfg_.benchmark.cases)
    cases.push_back(&c);
  if (cases.empty())
    cases.push_back(nullptr);
  for (const BenchmarkCase *c : cases) {
    bench()->selectCase(c);
    RunOutcome r = bench()->tracedWarmupRun(log, it->second);
    if (r.ok)
      mergeKernelTimes(m.kernels, r.kernels);
    if (!r.kernelsWhy.empty() && minimized_.kernelTimesWhy.empty())
      minimized_.kernelTimesWhy = r.kernelsWhy;
  }
  bench()->selectCase(nullptr);
  if (!m.kernels.empty()) {
    minimized_.kernelTimes = std::move(m.kernels);
    minimized_.kernelTimesFrom = "traced_run_after_search";
  }
}

// The winner's gain split into application parameters and compiler controls
// (Attribution.h); for a runtime objective its "both" row, measured last, is
// the verdict the lock is written on.
bool TuneRun::attribute(WinnerChoice &w) {
  if (!w.improved || w.index <= 0)
    return true;
  Evaluation &win = minimized_.candidateId.empty() ? evals_[w.index] : minimized_;
  bool runtime = runtimeObjective();
  bool cases = runtime && !cfg_.benchmark.cases.empty();
  // Under a time budget: rows whose every build the finalists measured cost
  // nothing; others run only while they fit. Skipped, the verdict is the
  // finalists' (the winner as they measured it: a minimized winner that
  // changed the build is always measured, it has no verdict of its own).
  if (clock_.timed() && runtime && minimized_.candidateId.empty()) {
    bool reusable = true;
    for (const auto &v : attributionVariants(win.rendered))
      reusable = reusable && measuredRuns(v.rendered.hash(), 0);
    double need = plan(3).need[3];
    // A rehearsed program that differs from the copy the finalists ran has
    // no verdict of its own yet: the lock is never written on a program
    // nobody measured, so that attribution runs past the budget, said so.
    bool mustMeasure = remeasure_.count(win.rendered.hash()) > 0;
    if (!reusable && clock_.left() < need && mustMeasure)
      timeCut("attribution runs past the budget (it needs about " + durationText(need) + ", " +
              durationText(std::max(0.0, clock_.left())) + " was left): the rehearsed program differs from the copy "
              "the finalists measured, and the verdict is taken on what the lock builds");
    else if (!reusable && clock_.left() < need) {
      timeCut("attribution skipped: it needs about " + durationText(need) + ", " +
              durationText(std::max(0.0, clock_.left())) + " was left; the verdict is the finalists'");
      return true;
    }
  }
  std::string err;
  auto rows = cases ? attributionRowsByCase(win, err) : attributionRows(win, err);
  if (!rows)
    return stopRequested() ? stoppedIn("attribution") : fail("attribution: " + err + "; no lock is written; " + resumeHint());
  lockExtra_["attribution"] = variantsToJson(*rows);
  if (!journal({{"op", "attribution"}, {"rows", variantsToJson(*rows)}}))
    return false;
  if (runtime) {
    const VariantResult &both = rows->back();
    const std::string &metric = cfg_.objectives.front().metric;
    evals_[0].scores[metric] = rows->front().median;   // with cases: the baseline's ratio, 1
    win.scores[metric] = both.median;
    if (!cases)
      win.cvPercent = both.cvPercent;
    verdicts_.speedup = both.speedup.value_or(0); // 0: not printed
    verdicts_.pValue = both.pValue;
    if (!both.significant) {
      w.improved = false;
      w.why = "measured again after minimization, not significantly better: " + both.verdict;
    }
  }
  return true;
}

} // namespace ciq
