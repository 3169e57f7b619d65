#include "engine/winner/Winner.h"
#include "engine/winner/KernelTable.h"
#include "engine/measure/NoiseSource.h"
#include "engine/winner/Objectives.h"
#include "engine/search/Search.h"
#include "engine/record/WinnerOrder.h"
#include "common/InvalidReason.h"
#include "common/KernelDirective.h"
#include "common/NumberFormat.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace ciq {

static std::vector<ScoredPoint> scored(const TuneConfig &cfg, const std::vector<Evaluation> &evals) {
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg, e), e.generation});
  return pts;
}

WinnerChoice chooseWinner(const TuneConfig &cfg, const std::vector<Evaluation> &evals) {
  WinnerChoice w;
  auto pts = scored(cfg, evals);
  // Ties go to the simplest configuration, then the earliest (WinnerOrder.h).
  std::vector<WinnerKey> keys;
  for (size_t i = 0; i < pts.size(); ++i)
    keys.push_back({pts[i].ok, pts[i].objectives, evals[i].rendered.controls.size(), i});
  auto best = std::min_element(keys.begin(), keys.end(), winnerBefore);
  if (best == keys.end() || !best->ok)
    return w;
  w.index = (int)best->index;
  w.improved = w.index != 0 && !evals.empty() && evals[0].ok && pts[w.index].objectives < pts[0].objectives;
  return w;
}

void markFront(const TuneConfig &cfg, std::vector<Evaluation> &evals) {
  auto pts = scored(cfg, evals);
  if (cfg.pareto) {
    auto ranks = nondominatedRanks(pts);
    for (size_t i = 0; i < evals.size(); ++i)
      evals[i].pareto = pts[i].ok && ranks[i] == 0;
    return;
  }
  WinnerChoice w = chooseWinner(cfg, evals);
  for (size_t i = 0; i < evals.size(); ++i)
    evals[i].pareto = w.index >= 0 && pts[i].ok && pts[i].objectives == pts[w.index].objectives;
}

namespace {

struct KernelKey {
  std::string name, arch;
  bool entry = true;
  bool operator<(const KernelKey &o) const { return std::tie(name, arch) < std::tie(o.name, o.arch); }
};

std::map<KernelKey, KernelStats> byKernel(const Evaluation &e) {
  std::map<KernelKey, KernelStats> m;
  for (const auto &k : e.kernels)
    m[{k.demangled.empty() ? k.name : k.demangled, k.arch, k.entry}] = k;
  return m;
}

// What racing spared, counted against what a raced candidate would have run
// had it not been stopped: the median run count of the candidates that were
// not raced (issue 32 item 1; its remaining max_repeats would overstate it,
// as the unraced ones mostly stop at the noise target long before).
std::string racingText(std::vector<size_t> raced, std::vector<size_t> full) {
  std::string text = std::to_string(raced.size()) + " candidate(s) stopped early as significantly worse than the best so far";
  if (raced.empty() || full.empty())
    return text;
  std::sort(full.begin(), full.end());
  size_t typical = full[full.size() / 2], spared = 0, spent = 0;
  for (size_t r : raced) {
    spent += r;
    spared += r < typical ? typical - r : 0;
  }
  return text + ", after " + std::to_string(spent) + " run(s) in all; the others ran a median of " +
         std::to_string(typical) + " each, so racing spared about " + std::to_string(spared) + " run(s)";
}

std::string shorten(const std::string &s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

} // namespace

// How many benchmark runs the search spent, what adaptive repeats reached,
// what racing spared, and for candidates whose noise stayed above the target,
// its likely source (NoiseSource.h) and the next step.
static void printMeasurement(const TuneConfig &cfg, const std::vector<Evaluation> &evals, FILE *out) {
  const BenchmarkConfig &b = cfg.benchmark;
  size_t runs = 0, measured = 0, reached = 0;
  std::vector<size_t> racedRuns, fullRuns;   // runs of the raced candidates, of the others
  std::map<std::string, std::pair<const Evaluation *, NoiseSource>> sources;   // kind -> first example
  std::map<std::string, int> perSource;
  for (const auto &e : evals) {
    if (e.stoppedBy.empty() || !e.duplicateKind.empty())
      continue;
    ++measured;
    runs += e.runs.size();
    for (const auto &c : e.cases)
      runs += c.runs.size();
    reached += e.stoppedBy == "target";
    (e.stoppedBy == "racing" ? racedRuns : fullRuns).push_back(e.runs.size());
    if (b.adaptive && (e.stoppedBy == "max_repeats" || e.stoppedBy == "max_measure_s"))
      if (auto src = noiseSource(e.runs, b.targetNoisePercent, e.gpuProblems, e.smClockMhz)) {
        sources.emplace(src->kind, std::make_pair(&e, *src));
        ++perSource[src->kind];
      }
  }
  if (!measured)
    return;
  fprintf(out, "benchmark runs: %zu over %zu measured candidate(s)", runs, measured);
  // The budget is per candidate, not the search's: said so, beside the total.
  if (b.adaptive)
    fprintf(out, "; adaptive repeats (per candidate up to %d runs or %s s): %zu reached the %s%% noise target, "
                 "%zu spent their budget",
            b.maxRepeats, fmt::value(b.maxMeasureSeconds).c_str(), reached, fmt::value(b.targetNoisePercent).c_str(),
            fullRuns.size() - reached);
  fprintf(out, "\n");
  if (b.racing)
    fprintf(out, "racing: %s\n", racingText(racedRuns, fullRuns).c_str());
  for (const auto &[kind, ex] : sources)
    fprintf(out, "noise: %d candidate(s) stayed above the %s%% target, looks like %s; e.g. %s (noise %s): %s; "
                 "next: %s\n",
            perSource[kind], fmt::value(b.targetNoisePercent).c_str(), kind.c_str(), ex.first->candidateId.c_str(),
            fmt::percent(ex.first->noisePercent, ex.first->runs.size()).c_str(), ex.second.evidence.c_str(),
            ex.second.next.c_str());
}

// The GPU's share of the search phase: this process's wall clock only. After
// `ciq resume` the search may have run in the killed process ("GPU busy 0% ...
// 0.0 s of 0.0 s" said nothing true), so the line says what it covers.
static void printGpuBusy(const Verdicts &v, FILE *out) {
  double share = 100 * std::min(1.0, v.gpuBusySeconds / v.searchSeconds);
  if (v.resumedEvaluations == 0)
    fprintf(out, "GPU busy %.0f%% of the search phase (benchmark runs %.1f s of %.1f s)\n", share, v.gpuBusySeconds,
            v.searchSeconds);
  else if (v.searchedHere == 0)
    fprintf(out, "GPU busy: not measured: the search phase ran before `ciq resume` (its %d evaluations are in the "
                 "journal, which keeps no wall clock)\n",
            v.resumedEvaluations);
  else
    fprintf(out, "GPU busy %.0f%% of this process's search phase (benchmark runs %.1f s of %.1f s, %d evaluations; "
                 "the %d journaled before `ciq resume` are not counted)\n",
            share, v.gpuBusySeconds, v.searchSeconds, v.searchedHere, v.resumedEvaluations);
}

// Wall time of each phase in this process, and the phases after the search
// against the search (issue 49 item 2: the goal is at most 0.3x); what a
// time budget cut; rounds a resume took from the journal.
static void printPhases(const Verdicts &v, FILE *out) {
  if (!v.phaseSeconds.empty()) {
    double search = 0, after = 0;
    std::string line;
    for (const auto &[name, s] : v.phaseSeconds) {
      char buf[32];
      snprintf(buf, sizeof buf, "%.1f s", s);
      line += (line.empty() ? "" : ", ") + name + " " + buf;
      (name == "search" || name == "per-kernel stage" ? search : after) += s;
    }
    if (search >= 0.05)
    {
      char buf[96];
      snprintf(buf, sizeof buf, "; after the search %.1f s = %.2fx the search", after, after / search);
      line += buf;
    }
    fprintf(out, "phases: %s\n", line.c_str());
  }
  for (const auto &t : v.timeBudget)
    fprintf(out, "time budget: %s\n", t.c_str());
  if (v.gpuLockWaitSeconds >= 0.5)
    fprintf(out, "GPU lock: %.1f s waiting while another process measured on the GPU (not counted in the cost of a "
                 "binary)\n", v.gpuLockWaitSeconds);
  if (v.roundsReplayed > 0)
    fprintf(out, "resumed: %d run(s) of re-measurement taken from the journal, not run again\n", v.roundsReplayed);
}

// The search's counts: configurations tried, built, distinct binaries (what
// the budget counts), how the search ended, and how busy the GPU was.
static void printCounts(const TuneConfig &cfg, const std::vector<Evaluation> &evals, const Verdicts &v,
                        const std::string &invalid, int dups, FILE *out) {
  if (!cfg.search.budgetCountsBinaries) {
    fprintf(out, "evaluations: %zu (%s, %d reused an earlier result: same configuration or build), results: %s/results.csv\n",
            evals.size(), invalid.c_str(), dups, cfg.runDir.c_str());
    return;
  }
  const BudgetCount &c = v.counts.configurations ? v.counts : countBudget(evals);
  std::string measured = cfg.benchmark.enabled ? ", " + std::to_string(c.measured) + " run by the benchmark" : "";
  std::string budget = v.budget > 0 ? " of a budget of " + std::to_string(v.budget) : "";
  // A compile-only objective's budget counts device codes (the header says so too).
  bool deviceCodes = !cfg.benchmark.enabled || isCompileMetric(cfg.objectives.front().metric);
  fprintf(out, "evaluations: %d configurations (%s), %d compiled, %s%s%s, %d reused an earlier result "
               "(same configuration or device code), results: %s/results.csv\n",
          c.configurations, invalid.c_str(), c.compiled, distinctText(c.distinct, deviceCodes).c_str(),
          budget.c_str(), measured.c_str(), dups,
          cfg.runDir.c_str());
  if (v.searchEnd)
    fprintf(out, "%s%s\n", searchEndText(*v.searchEnd, v.budget, v.configurationCap, c, deviceCodes).c_str(),
            v.predictedTwins ? ("; " + std::to_string(v.predictedTwins) +
                                " more configuration(s) predicted to repeat a binary were not compiled").c_str()
                             : "");
  if (cfg.benchmark.enabled && v.searchSeconds > 0)
    printGpuBusy(v, out);
}

// Compiles a compiler cache answered (issue 51 item 10): their wall time is
// the cache's, so compile_ms is not scored from them (Objectives.cpp); said
// once, with how many, whatever the objectives.
static void printCachedCompiles(const TuneConfig &cfg, const std::vector<Evaluation> &evals, FILE *out) {
  int cached = 0, candidates = 0;
  for (const auto &e : evals) {
    int n = 0;
    for (const auto &o : e.objects)
      n += o.cached;
    cached += n;
    candidates += n > 0;
  }
  if (cached == 0)
    return;
  bool compileMs = false;
  for (const auto &o : cfg.objectives)
    compileMs = compileMs || o.metric == "compile_ms";
  fprintf(out, "compiler cache: %d compile(s) of %d configuration(s) were answered by the compiler cache (cached in "
               "the journal's objects)%s\n",
          cached, candidates,
          compileMs ? "; compile_ms is not scored from them" : "; their wall times are not compile times");
}

// Kernels whose registers, spills or stack grew under the winner (issue 32
// item 9): the winner's options reach every kernel of the translation units
// it compiles, while the benchmark's time covers only the kernels it
// launches, so a gain on one kernel can hide a loss on another.
static void printWorseKernels(const Evaluation &base, const Evaluation &win, bool measured, FILE *out) {
  auto bk = byKernel(base), wk = byKernel(win);
  std::vector<std::string> lines, traded;
  for (const auto &[key, w] : wk) {
    auto it = bk.find(key);
    if (it == bk.end())
      continue;
    bool faster = key.entry && launchedNoSlower(base, win, w.name);
    const KernelStats &b = it->second;
    std::string what;
    auto worse = [&](const char *name, long from, long to) {
      if (to > from)
        what += (what.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(from) + " -> " + std::to_string(to);
    };
    if (b.usageKnown && w.usageKnown && key.entry)
      worse("registers", b.registers, w.registers);
    if (b.frameKnown && w.frameKnown) {
      worse("spill bytes", b.spillStores + b.spillLoads, w.spillStores + w.spillLoads);
      worse("stack bytes", b.stackFrame, w.stackFrame);
    }
    if (!what.empty() && faster)
      traded.push_back(key.name + " " + key.arch + ": " + what + launchNote(base, win, w.name));
    else if (!what.empty())
      lines.push_back(key.name + (key.entry ? "" : " (device function)") + " " + key.arch + ": " + what +
                      (key.entry ? launchNote(base, win, w.name) : ""));
  }
  if (!traded.empty())
    fprintf(out, "kernels that grew but ran no slower under the winner: %zu (launched by the benchmark, timed)\n",
            traded.size());
  for (const auto &l : traded)
    fprintf(out, "  %s\n", l.c_str());
  if (lines.empty())
    return;
  fprintf(out, "kernels worse under the winner: %zu%s\n", lines.size(),
          measured ? " (the verdict is the benchmark's time, which covers only the kernels it launches: run a case "
                     "that launches these before trusting the lock for them)"
                   : "");
  for (const auto &l : lines)
    fprintf(out, "  %s\n", l.c_str());
}

// benchmark.cases: each case's median, runs and noise, baseline and best
// side by side, with the best's ratio to the baseline and its p-value.
static void printCases(const TuneConfig &cfg, const Evaluation &b, const Evaluation *best, FILE *out) {
  if (b.cases.empty())
    return;
  const std::string &unit = cfg.objectives.front().unit;
  fprintf(out, "cases (objective: geometric mean of the ratios to the baseline; a case slower by more than %s%% is "
               "INVALID):\n", fmt::value(cfg.benchmark.maxRegressionPercent).c_str());
  fprintf(out, "  %-16s | %12s %5s %7s | %12s %5s %7s | %7s %10s\n", "case", ("median " + unit).c_str(), "runs",
          "noise", ("median " + unit).c_str(), "runs", "noise", "ratio", "p");
  for (const auto &bc : b.cases) {
    const CaseResult *w = nullptr;
    if (best)
      for (const auto &c : best->cases)
        if (c.name == bc.name)
          w = &c;
    auto med = [](const CaseResult *c) { return c ? fmt::value(c->median) : std::string("-"); };
    auto runs = [](const CaseResult *c) { return c ? std::to_string(c->runs.size()) : std::string("-"); };
    auto noise = [](const CaseResult *c) { return c ? fmt::percent(c->noisePercent, c->runs.size()) : std::string("-"); };
    fprintf(out, "  %-16s | %12s %5s %7s | %12s %5s %7s | %7s %10s\n", shorten(bc.name, 16).c_str(), med(&bc).c_str(),
            runs(&bc).c_str(), noise(&bc).c_str(), med(w).c_str(), runs(w).c_str(), noise(w).c_str(),
            w && w->ratio > 0 ? fmt::ratio(w->ratio).c_str() : "-",
            w && w->pValue >= 0 && w != &bc ? fmt::pValue(w->pValue).c_str() : "-");
  }
}

// A written space may search controls that change results (ptxas --fmad)
// with no output comparison; the default space leaves them out then. The
// summary says so whether or not the winner sets one (issue 41).
static void printUncomparedNumerics(const TuneConfig &cfg, FILE *out) {
  if (cfg.benchmark.enabled && !cfg.benchmark.compare.empty())
    return;
  std::string names;
  int n = 0;
  for (const auto &c : cfg.space.controls)
    if (c.changesResults) {
      names += (names.empty() ? "" : ", ") + c.name;
      ++n;
    }
  if (!n)
    return;
  fprintf(out,
          "space: %s can change floating-point results and %s searched without comparing the output with the "
          "baseline's; compare it (benchmark.correctness.compare, or ciq_tune(... COMPARE stdout|<file>)) or exclude "
          "%s\n",
          names.c_str(), n == 1 ? "was" : "were", n == 1 ? "it" : "them");
}

// The first candidate that failed to compile, with its message (the
// compiler's first error line and the log, CandidateBuild): the counts
// alone say only "compile_error x6" (issue 41 item 8).
static void printFirstCompileError(const std::vector<Evaluation> &evals, FILE *out) {
  for (const auto &e : evals)
    if (!e.ok && e.reason == reason::CompileError) {
      fprintf(out, "first compile_error: %s: %s\n", e.candidateId.c_str(), e.message.c_str());
      return;
    }
}

// A kernel `best` spills to shared memory (enable_smem_spilling): its spill
// bytes fall because the spills moved into shared memory, which ptxas does
// not count as spill bytes; the line beside its row says what they cost
// there (each block's shared memory, fewer blocks per SM). "" otherwise.
static std::string smemSpillingCost(const Evaluation *best, const KernelStats *b, const KernelStats *w) {
  if (!best || !w || !w->entry || !w->usageKnown)
    return "";
  bool spilling = false;
  for (const auto &d : best->rendered.kernels)
    spilling = spilling || (d.directive == kDirectiveSmemSpilling && d.kernel == kernelKey(w->name));
  if (!spilling)
    return "";
  long before = b && b->usageKnown ? b->sharedBytes : 0;
  return "  " + shorten(w->demangled.empty() ? w->name : w->demangled, 38) + " " + w->arch +
         ": enable_smem_spilling moved its spills to shared memory, which spill bytes do not count: shared memory " +
         std::to_string(before) + " -> " + std::to_string(w->sharedBytes) + " bytes per block (" +
         (w->sharedBytes >= before ? "+" : "") + std::to_string(w->sharedBytes - before) + ")";
}

// The kernel table: spill bytes and registers of each kernel, baseline
// against the best candidate (the winner when it beat the baseline).
static void printKernelTable(const Evaluation &b, const Evaluation *best, const Evaluation *win, FILE *out) {
  fprintf(out, "\n%-40s %-7s | %-24s | %-24s\n", "", "", "baseline (default compile)",
          best ? ((win ? "winner " : "best ") + best->candidateId).c_str() : "winner (none)");
  fprintf(out, "%-40s %-7s | %11s %12s | %11s %12s\n", "kernel", "arch", "spill bytes", "registers", "spill bytes",
          "registers");
  auto bk = byKernel(b);
  auto wk = best ? byKernel(*best) : std::map<KernelKey, KernelStats>{};
  std::set<KernelKey> keys;
  for (const auto &kv : bk) keys.insert(kv.first);
  for (const auto &kv : wk) keys.insert(kv.first);
  for (const auto &k : keys) {
    auto cell = [&](const std::map<KernelKey, KernelStats> &m, bool spill) -> std::string {
      auto it = m.find(k);
      if (it == m.end())
        return "-";
      const KernelStats &s = it->second;
      if (spill ? !s.frameKnown : (!s.usageKnown || !s.entry))
        return "?";
      return std::to_string(spill ? s.spillStores + s.spillLoads : s.registers);
    };
    std::string name = k.name + (k.entry ? "" : " (device function)");
    fprintf(out, "%-40s %-7s | %11s %12s | %11s %12s\n", shorten(name, 40).c_str(), k.arch.c_str(),
            cell(bk, true).c_str(), cell(bk, false).c_str(), cell(wk, true).c_str(), cell(wk, false).c_str());
    auto bi = bk.find(k), wi = wk.find(k);
    if (std::string cost = smemSpillingCost(best, bi == bk.end() ? nullptr : &bi->second,
                                            wi == wk.end() ? nullptr : &wi->second);
        !cost.empty())
      fprintf(out, "%s\n", cost.c_str());
  }
}

static void printObjectives(const TuneConfig &cfg, const Evaluation &b, const Evaluation *best, FILE *out) {
  for (const auto &o : cfg.objectives) {
    auto v = [&](const Evaluation *e) -> std::string {
      if (!e || !e->scores.count(o.metric))
        return "-";
      return fmt::value(e->scores.at(o.metric));
    };
    bool cases = !cfg.benchmark.cases.empty() && &o == &cfg.objectives.front() && !isCompileMetric(o.metric);
    std::string unit = cases ? "geomean of case ratios, " : o.unit.empty() || o.unit == o.metric ? "" : o.unit + ", ";
    fprintf(out, "%-48s | %24s | %24s\n", ("objective " + o.metric + " (" + unit + o.direction + ")").c_str(),
            v(&b).c_str(), v(best).c_str());
  }
}

// The winner's controls that can change the program's results: only a value
// other than the compiler's own default changes anything.
static void printResultNotes(const TuneConfig &cfg, const Evaluation &win, FILE *out) {
  for (const auto &c : cfg.space.controls) {
    if (!c.changesResults || !win.rendered.controls.is_object() || !win.rendered.controls.contains(c.name))
      continue;
    // a value written as a YAML number (choice: [0, 3]) is a JSON number
    const nlohmann::json &v = win.rendered.controls[c.name];
    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    if (value != c.compilerDefault)
      fprintf(out, "note: the winner sets %s=%s, which can change the program's results%s\n", c.name.c_str(),
              value.c_str(),
              cfg.benchmark.enabled ? " (its correctness check passed)"
                                    : "; this compile-only search ran no correctness check: test the locked build, "
                                      "or exclude the control");
  }
}

void printSummary(const TuneConfig &cfg, const std::vector<Evaluation> &evals, const WinnerChoice &w, FILE *out,
                  const Verdicts &verdicts) {
  if (evals.empty())
    return;
  const Evaluation &b = evals.front();
  // A best candidate that did not beat the baseline is no winner: one verdict.
  const Evaluation *win = w.index >= 0 && w.improved ? &evals[w.index] : nullptr;
  const Evaluation *best = w.index >= 0 ? &evals[w.index] : nullptr;
  std::map<std::string, int> invalid;
  int dups = 0;
  for (const auto &e : evals) {
    if (!e.ok)
      ++invalid[e.reason.empty() ? "unknown" : e.reason];
    dups += !e.duplicateOf.empty();
  }
  printKernelTable(b, best, win, out);
  printObjectives(cfg, b, best, out);
  printCases(cfg, b, best, out);
  std::string invalidLine = invalidSummary(invalid);
  printCounts(cfg, evals, verdicts, invalidLine.empty() ? "0 INVALID" : invalidLine, dups, out);
  printCachedCompiles(cfg, evals, out);
  printFirstCompileError(evals, out);
  printMeasurement(cfg, evals, out);
  printPhases(verdicts, out);
  printUncomparedNumerics(cfg, out);
  for (const auto &p : verdicts.gpuProblems)
    fprintf(out, "GPU: %s while measuring\n", p.c_str());
  for (const auto &m : verdicts.minimization)
    fprintf(out, "minimization: %s\n", m.c_str());
  for (const auto &r : verdicts.rehearsal)
    fprintf(out, "rehearsal: %s\n", r.c_str());
  if (!verdicts.attribution.empty()) {
    fprintf(out, "attribution (each against the baseline; runtime objectives measured interleaved):\n");
    for (const auto &a : verdicts.attribution)
      fprintf(out, "%s\n", a.c_str());
  }
  printKernelTimes(b, win ? win : best, out);
  if (!win) {
    fprintf(out, "verdict: no candidate beat the default compile%s\n",
            w.why.empty() ? "" : (" (" + (best && best->generation != 0 ? "best " + best->candidateId + ": " : "") + w.why + ")").c_str());
    return;
  }
  if (verdicts.speedup > 0)
    fprintf(out, "verdict: %s beats the default compile: speedup %s%s\n", win->candidateId.c_str(),
            fmt::ratio(verdicts.speedup).c_str(), verdicts.pValue >= 0 ? (", " + fmt::pValue(verdicts.pValue)).c_str() : "");
  else
    fprintf(out, "verdict: %s beats the default compile\n", win->candidateId.c_str());
  fprintf(out, "winning options: %s\n", win->rendered.summary().c_str());
  printWorseKernels(b, *win, cfg.benchmark.enabled, out);
  printResultNotes(cfg, *win, out);
}

} // namespace ciq
