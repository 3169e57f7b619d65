#include "common/JsonRead.h"
#include "engine/analysis/Diagnose.h"
#include "common/InvalidReason.h"
#include "engine/measure/NoiseSource.h"

#include "engine/measure/Stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace ciq {

namespace {

std::string pct(double fraction) {
  std::ostringstream o;
  o.precision(3);
  o << fraction * 100 << "%";
  return o.str();
}
std::string fmt(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

// Candidates of the search proper: not the baseline, not a re-used result.
std::vector<const RecordedEval *> searched(const RunData &run) {
  std::vector<const RecordedEval *> out;
  for (const auto &e : run.evals)
    if (!e.baseline && e.duplicateKind != "config")
      out.push_back(&e);
  return out;
}

std::map<int, std::vector<const RecordedEval *>> byGeneration(const RunData &run) {
  std::map<int, std::vector<const RecordedEval *>> g;
  for (const auto &e : run.evals)
    if (!e.baseline)
      g[e.generation].push_back(&e);
  return g;
}

// pool_size / generations: from the journal's start line when it has them,
// else what the results show.
struct SearchShape {
  double spaceSize = 0;   // 0: unknown
  int poolSize = 0, generations = 0;
};
SearchShape searchShape(const RunData &run) {
  SearchShape s;
  if (run.started) {
    s.spaceSize = run.started->spaceSize;
    s.poolSize = run.started->search.poolSize;
    s.generations = run.started->search.generations;
  }
  auto gens = byGeneration(run);
  if (!s.poolSize && !gens.empty()) {
    std::vector<double> sizes;
    for (const auto &[g, v] : gens)
      sizes.push_back(double(v.size()));
    s.poolSize = int(median(sizes));
  }
  if (!s.generations && !gens.empty())
    s.generations = gens.rbegin()->first;
  return s;
}

// The first evaluation that reached a minimized primary score of 0 when no
// score is below 0 (spill bytes, stack frame: counts): nothing can beat it,
// so an unchanging best is the optimum, not a stalled search.
const RecordedEval *reachedZeroFloor(const RunData &run) {
  if (run.direction != "minimize")
    return nullptr;
  const RecordedEval *first = nullptr;
  for (const auto &e : run.evals) {
    if (!e.ok || !e.score)
      continue;
    if (*e.score < 0)
      return nullptr;
    if (*e.score == 0 && !first)
      first = &e;
  }
  return first;
}

// The journal's baseline compiled CUDA objects but ptxas reported no kernel
// or device function, and nothing was compiled at run time: an empty target.
bool hasNoDeviceCode(const RecordedEval *base) {
  if (!base || !base->ok || !base->journal)
    return false;
  const Evaluation &j = *base->journal;
  return !j.objects.empty() && j.kernels.empty() && j.runtimeKernels.empty();
}

std::optional<Finding> checkIdentical(const RunData &run, const DiagnoseThresholds &t) {
  std::map<std::string, const RecordedEval *> distinct;   // by candidate hash
  for (const auto *e : searched(run))
    distinct.emplace(e->candidateHash.empty() ? e->id : e->candidateHash, e);
  if (distinct.size() < size_t(t.identicalMinCandidates))
    return std::nullopt;
  // Device code: the same SHA-256 for every distinct configuration (and the
  // baseline) means the controls never reached the compiler.
  std::set<std::string> codes;
  size_t withCode = 0;
  for (const auto &[h, e] : distinct)
    if (!e->deviceCodeSha256.empty())
      codes.insert(e->deviceCodeSha256), ++withCode;
  const RecordedEval *base = run.baseline();
  if (base && !base->deviceCodeSha256.empty())
    codes.insert(base->deviceCodeSha256);
  if (withCode >= size_t(t.identicalMinCandidates) && codes.size() == 1) {
    Finding f;
    f.kind = "identical_device_code";
    f.title = std::to_string(withCode) + " distinct configurations all produced the same device "
              "code (SHA-256 " + codes.begin()->substr(0, 12) + "...)";
    f.threshold = "one device-code SHA-256 over >= " + std::to_string(t.identicalMinCandidates) +
                  " distinct candidates";
    if (hasNoDeviceCode(base)) {
      f.cause = "the target has no device code for ptxas to tune: the baseline's CUDA objects define no "
                "__global__ kernel or __device__ function ptxas compiled, so every control gives the same "
                "(empty) device code";
      f.next = "tune a target whose .cu files define kernels (ciq_tune(), or target: in ciq.yaml)";
      return f;
    }
    f.cause = "the candidate's controls did not reach ptxas/nvcc: a compiler cache (ccache, "
              "sccache, a framework's own cache), stale objects, or a launcher chain that drops "
              "the wrapper";
    f.next = "run `ciq canary` (a deliberately bad configuration must change the device code); "
             "then check CMAKE_CUDA_COMPILER_LAUNCHER and disable the cache for the tuned target";
    return f;
  }
  std::vector<double> scores;
  for (const auto &[h, e] : distinct)
    if (e->ok && e->score)
      scores.push_back(*e->score);
  if (scores.size() < size_t(t.identicalMinCandidates))
    return std::nullopt;
  auto [mn, mx] = std::minmax_element(scores.begin(), scores.end());
  double scale = std::max(std::fabs(*mn), std::fabs(*mx));
  if (*mx - *mn > t.identicalRelTolerance * std::max(scale, 1e-300) || reachedZeroFloor(run))
    return std::nullopt;
  Finding f;
  f.kind = "identical_scores";
  f.title = "every one of " + std::to_string(scores.size()) +
            " scored candidates has the same score " + fmt(*mn);
  f.threshold = "relative spread <= " + fmt(t.identicalRelTolerance) + " over >= " +
                std::to_string(t.identicalMinCandidates) + " distinct candidates";
  if (codes.size() > 1) {
    f.cause = "the device code does change (" + std::to_string(codes.size()) +
              " distinct SHA-256), so the objective does not respond to these controls";
    f.next = "pick an objective that moves (time_ms from a benchmark, registers, spill_bytes of "
             "the kernel that spills) or widen the search space";
  } else {
    f.cause = "the configuration may not reach the compiler (a cache or stale objects), or the "
              "objective does not respond to the controls";
    f.next = "run `ciq canary` to prove the controls reach the compiler";
  }
  return f;
}

std::map<std::string, int> reasonCounts(const std::vector<const RecordedEval *> &evals) {
  std::map<std::string, int> c;
  for (const auto *e : evals)
    if (!e->ok)
      ++c[e->reason.empty() ? "unknown" : e->reason];
  return c;
}

std::string commandOf(const RecordedEval &e) {
  if (e.journal)
    return e.journal->replay;
  return e.rendered.empty() ? "(no rendered controls)" : e.rendered;
}

// A compiler killed by a signal is a compiler fault before it is anything
// about the candidate: reported first, with the command that reproduces it.
std::optional<Finding> checkCompilerCrash(const RunData &run) {
  std::vector<const RecordedEval *> crashed;
  for (const auto &e : run.evals)
    if (!e.ok && e.reason == reason::CompilerCrash)
      crashed.push_back(&e);
  if (crashed.empty())
    return std::nullopt;
  const InvalidReason *r = findInvalidReason(reason::CompilerCrash);
  Finding f;
  f.kind = reason::CompilerCrash;
  f.title = std::to_string(crashed.size()) + " candidate(s) INVALID because the compiler was killed by a signal";
  f.threshold = "any INVALID compiler_crash";
  f.cause = std::string("a compiler fault (or the machine: out of memory), not the control values: ") + r->cause;
  f.next = r->next;
  for (const auto *e : crashed) {
    std::string msg = e->journal ? e->journal->message : "";
    f.details.push_back(e->id + ": " + (msg.empty() ? "(no message)" : msg));
    if (size_t at = msg.find("reproduce: "); at != std::string::npos)
      f.details.push_back("  reproducer: " + msg.substr(at + 11, msg.find("; log:", at) - at - 11));
  }
  return f;
}

std::optional<Finding> checkAllInvalid(const RunData &run) {
  auto cands = searched(run);
  if (cands.empty() || std::any_of(cands.begin(), cands.end(), [](auto *e) { return e->ok; }))
    return std::nullopt;
  Finding f;
  f.kind = "all_invalid";
  const RecordedEval *base = run.baseline();
  bool baseBad = base && !base->ok;
  f.title = "all " + std::to_string(cands.size()) + " candidates are INVALID" +
            (baseBad ? ", and so is the baseline" : "");
  f.threshold = "invalid rate = 100% of the searched candidates";
  auto counts = reasonCounts(cands);
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[r, n] : counts)
    top.emplace_back(n, r);
  std::sort(top.rbegin(), top.rend());
  for (size_t i = 0; i < top.size() && i < 3; ++i)
    f.details.push_back("reason " + top[i].second + ": " + std::to_string(top[i].first) +
                        " candidates");
  for (const auto *e : cands)
    if (e->reason == top.front().second) {
      std::string msg = e->journal ? e->journal->message : "";
      f.details.push_back("e.g. " + e->id + (msg.empty() ? "" : ": " + msg));
      f.details.push_back("  command: " + commandOf(*e));
      if (!e->log.empty())
        f.details.push_back("  log: " + e->log);
      break;
    }
  if (baseBad) {
    f.cause = "the baseline (no control applied) already fails with " +
              (base->reason.empty() ? std::string("an unknown reason") : base->reason) +
              ": the build, benchmark or correctness command is broken, not the controls";
    f.next = "fix the build/benchmark until the baseline is OK (see its log" +
             (base->log.empty() ? std::string() : " " + base->log) + "), then `ciq tune` again";
  } else if (const InvalidReason *r = findInvalidReason(top.front().second)) {
    // The reason's own row (common/InvalidReason.h): a compiler killed by a
    // signal is a compiler fault first, not a control value to remove.
    f.cause = std::string(r->description) + ": " + r->cause;
    f.next = r->next;
    if (size_t at = f.next.find(" ID"); at != std::string::npos)
      f.next.replace(at + 1, 2, cands.front()->id);
  } else {
    f.cause = "every configuration fails (" + top.front().second + ") while the baseline works";
    f.next = "replay one candidate (`ciq replay " + cands.front()->id + "`) and read its log";
  }
  return f;
}

// Fraction of INVALID among evaluations of a set of generations.
double invalidRate(const std::vector<std::vector<const RecordedEval *>> &gens) {
  int n = 0, bad = 0;
  for (const auto &g : gens)
    for (const auto *e : g)
      ++n, bad += !e->ok;
  return n ? double(bad) / n : 0;
}

// The control values most common among INVALID candidates.
std::vector<std::string> suspectControls(const RunData &run) {
  std::map<std::string, std::pair<int, int>> seen;   // "name=value" -> (invalid, total)
  for (const auto *e : searched(run)) {
    auto c = nlohmann::json::parse(e->controls.empty() ? "{}" : e->controls, nullptr, false);
    if (!c.is_object())
      continue;
    for (auto it = c.begin(); it != c.end(); ++it) {
      auto &p = seen[it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump())];
      p.first += !e->ok;
      ++p.second;
    }
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto &[cv, p] : seen)
    if (p.second >= 3 && double(p.first) / p.second >= 0.8)
      ranked.emplace_back(double(p.first) / p.second, cv + " (" + std::to_string(p.first) + "/" +
                                                          std::to_string(p.second) + " INVALID)");
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && i < 3; ++i)
    out.push_back(ranked[i].second);
  return out;
}

// Early and late thirds of the generations (at least one each).
std::pair<std::vector<std::vector<const RecordedEval *>>, std::vector<std::vector<const RecordedEval *>>>
thirds(const std::map<int, std::vector<const RecordedEval *>> &gens) {
  std::vector<std::vector<const RecordedEval *>> all;
  for (const auto &[g, v] : gens)
    all.push_back(v);
  size_t k = std::max<size_t>(1, all.size() / 3);
  return {{all.begin(), all.begin() + long(k)}, {all.end() - long(k), all.end()}};
}

std::optional<Finding> checkRisingInvalid(const RunData &run, const DiagnoseThresholds &t) {
  auto gens = byGeneration(run);
  if (gens.size() < size_t(t.minGenerations))
    return std::nullopt;
  auto [early, late] = thirds(gens);
  double a = invalidRate(early), b = invalidRate(late);
  if (b - a < t.risingInvalidDelta || b < t.risingInvalidLate)
    return std::nullopt;
  Finding f;
  f.kind = "rising_invalid";
  f.title = "the invalid rate rose from " + pct(a) + " (first generations) to " + pct(b) +
            " (last generations)";
  f.threshold = "late - early >= " + pct(t.risingInvalidDelta) + " and late >= " +
                pct(t.risingInvalidLate) + ", over >= " + std::to_string(t.minGenerations) +
                " generations";
  std::string perGen;
  for (const auto &[g, v] : gens)
    perGen += (perGen.empty() ? "" : " ") + std::to_string(g) + ":" + pct(invalidRate({v}));
  f.details.push_back("invalid rate per generation: " + perGen);
  auto suspects = suspectControls(run);
  for (const auto &s : suspects)
    f.details.push_back("suspect control value: " + s);
  f.cause = "the search is drifting into a region of the space that breaks the compile or the "
            "run (selection keeps parents whose children fail)";
  f.next = suspects.empty()
               ? "look at `ciq diagnose` details and the logs of the late INVALID candidates; "
                 "remove the failing values from the space"
               : "remove or restrict the suspect control value(s) in the space, then `ciq tune`";
  return f;
}

// The steps a stall is counted in: the genetic strategy's generations
// (populations), else each evaluation in the order it was recorded, numbered
// as results.csv's rows (the baseline is 0). tpe's and random's generation
// numbers count the strategy's proposals, most of which a twin prediction
// never builds: "277 evaluations since" on a run of 33 (issue 50 item 4).
std::map<int, std::vector<const RecordedEval *>> stallSteps(const RunData &run, bool genetic) {
  if (genetic)
    return byGeneration(run);
  std::map<int, std::vector<const RecordedEval *>> steps;
  for (size_t i = 0; i < run.evals.size(); ++i)
    if (!run.evals[i].baseline)
      steps[int(i)].push_back(&run.evals[i]);
  return steps;
}

// Why a stalled search stalled and what to do: the cause and next step of `f`,
// from how much of its space the search saw.
void explainStall(Finding &f, const RunData &run, const std::string &strategy, bool genetic) {
  SearchShape shape = searchShape(run);
  double evaluated = double(searched(run).size());
  if (!genetic) {
    f.details.push_back(strategy + " search: " + fmt(evaluated) + " candidates evaluated" +
                        (shape.spaceSize > 0 ? " of a space of " + fmt(shape.spaceSize) + " points" : ""));
    f.cause = "the " + strategy + " search found no better point in the second half of its budget";
    f.next = shape.spaceSize > 0 && evaluated / shape.spaceSize >= 0.5
                 ? "widen the space (more controls, an ACF booster pack: `ciq boost list`) or accept the winner"
                 : "raise search.max_evaluations (e.g. double it) or try another search.seed";
    return;
  }
  if (shape.spaceSize > 0) {
    double budget = double(shape.poolSize) * shape.generations;
    f.details.push_back("space size " + fmt(shape.spaceSize) + " points against pool_size " +
                        std::to_string(shape.poolSize) + " x generations " +
                        std::to_string(shape.generations) + " = " + fmt(budget) +
                        " evaluations (" + pct(evaluated / shape.spaceSize) + " of the space seen)");
    if (evaluated / shape.spaceSize >= 0.5) {
      f.cause = "the search has seen most of the space: there is little left to find";
      f.next = "widen the space (more controls, an ACF booster pack: `ciq boost list`) or accept "
               "the winner";
      return;
    }
  } else {
    f.details.push_back("space size unknown (no journal start line); " + fmt(evaluated) +
                        " candidates evaluated");
  }
  f.cause = "the population converged early (too little exploration for the size of the space)";
  f.next = "raise search.generations and search.pool_size (e.g. double them), raise "
           "search.mutate_rate (0.3-0.5), or try another search.seed";
}

std::optional<Finding> checkStalled(const RunData &run, const DiagnoseThresholds &t) {
  std::string strategy = run.started ? run.started->search.strategy : "";
  if (strategy.empty() && run.started)
    strategy = run.started->strategy;
  // Only the genetic strategy has populations; tpe and random propose one
  // point at a time, so their steps are evaluations.
  bool genetic = strategy.empty() || strategy == "genetic";
  auto gens = stallSteps(run, genetic);
  if (gens.size() < size_t(t.minGenerations))
    return std::nullopt;
  std::optional<double> best;
  int lastImprovement = -1, lastGen = gens.rbegin()->first;
  for (const auto &[g, v] : gens)
    for (const auto *e : v) {
      if (!e->ok || !e->score)
        continue;
      double s = *e->score;
      bool gain = !best || (run.better(s, *best) &&
                            std::fabs(s - *best) > t.stalledRelImprovement * std::fabs(*best));
      if (gain)
        best = s, lastImprovement = g;
    }
  if (!best || reachedZeroFloor(run))
    return std::nullopt;
  int window = std::max(2, int(std::ceil(gens.size() / 2.0)));
  int since = lastGen - lastImprovement;
  if (since < window)
    return std::nullopt;
  // Evidence first (issue 32 item 11): a landscape of at most two scores
  // (every binary one of two values) has no better point left to find, so
  // a search that found the better one has not stalled.
  std::set<double> scores;
  for (const auto &[g, v] : gens)
    for (const auto *e : v)
      if (e->ok && e->score)
        scores.insert(*e->score);
  if (scores.size() <= 2)
    return std::nullopt;
  std::string step = genetic ? "generation" : "evaluation";
  Finding f;
  f.kind = "stalled_best";
  f.title = "the best score " + fmt(*best) + " was last improved in " + step + " " +
            std::to_string(lastImprovement) + "; " + std::to_string(since) + " " + step +
            "s since without a gain";
  f.threshold = "no gain > " + pct(t.stalledRelImprovement) + " in the last " +
                std::to_string(window) + " " + step + "s (half the search, at least 2)";
  const RecordedEval *base = run.baseline();
  if (base && base->ok && base->score && !run.better(*best, *base->score))
    f.details.push_back("no candidate beats the baseline (" + fmt(*base->score) + ")");
  explainStall(f, run, strategy, genetic);
  return f;
}

std::optional<Finding> checkHighCv(const RunData &run, const DiagnoseThresholds &t) {
  std::vector<double> cvs;
  for (const auto &e : run.evals)
    if (e.ok && e.cvPercent)
      cvs.push_back(*e.cvPercent);
  if (cvs.size() < 3)
    return std::nullopt;
  double med = median(cvs);
  if (med <= t.highCvPercent)
    return std::nullopt;
  Finding f;
  f.kind = "high_cv";
  f.title = "median CV of the benchmark runs is " + fmt(med) + "% over " +
            std::to_string(cvs.size()) + " scored evaluations";
  f.threshold = "median CV% > " + fmt(t.highCvPercent) + "%";
  const RecordedEval *base = run.baseline();
  std::optional<double> best;
  for (const auto &e : run.evals)
    if (e.ok && e.score && !e.baseline && (!best || run.better(*e.score, *best)))
      best = *e.score;
  if (base && base->ok && base->score && best && *base->score != 0) {
    double gain = std::fabs(*best - *base->score) / std::fabs(*base->score) * 100;
    f.details.push_back("best vs baseline differs by " + fmt(gain) + "%" +
                        (gain < med ? ": within the noise" : ""));
  }
  f.cause = "the measurements are noisy: a busy or throttling GPU, varying clocks, too few "
            "repeats, or a benchmark too short for its timer";
  f.next = "raise benchmark.repeats (and warmup), run on an idle GPU (`nvidia-smi` shows other "
           "processes), check the clock state with `ciq doctor`; ciq never changes clocks, an "
           "administrator may lock them (nvidia-smi --lock-gpu-clocks)";
  return f;
}

// Mean pairwise normalised Hamming distance of the journal's points.
std::optional<double> pointDistance(const std::vector<const RecordedEval *> &evals) {
  std::vector<std::vector<int>> pts;
  for (const auto *e : evals)
    if (e->journal)
      pts.push_back(e->journal->point);
  if (pts.size() < 2)
    return std::nullopt;
  double sum = 0;
  int pairs = 0;
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = i + 1; j < pts.size(); ++j) {
      size_t n = std::max(pts[i].size(), pts[j].size()), diff = 0;
      for (size_t k = 0; k < n; ++k)
        diff += (k < pts[i].size() ? pts[i][k] : -2) != (k < pts[j].size() ? pts[j][k] : -2);
      sum += n ? double(diff) / n : 0;
      ++pairs;
    }
  return sum / pairs;
}

std::optional<Finding> checkLowDiversity(const RunData &run, const DiagnoseThresholds &t) {
  auto gens = byGeneration(run);
  if (gens.size() < size_t(t.minGenerations))
    return std::nullopt;
  auto late = thirds(gens).second;
  std::vector<const RecordedEval *> evals;
  for (const auto &g : late)
    evals.insert(evals.end(), g.begin(), g.end());
  if (evals.size() < 4)
    return std::nullopt;
  std::set<std::string> distinct;
  for (const auto *e : evals)
    distinct.insert(e->candidateHash.empty() ? e->id : e->candidateHash);
  double unique = double(distinct.size()) / evals.size();
  auto dist = pointDistance(evals);
  bool low = unique < t.lowDiversityUnique || (dist && *dist < t.lowDiversityDistance);
  if (!low)
    return std::nullopt;
  Finding f;
  f.kind = "low_diversity";
  f.title = "the last generations hold " + std::to_string(distinct.size()) + " distinct of " +
            std::to_string(evals.size()) + " candidates (" + pct(unique) + ")" +
            (dist ? ", mean distance " + fmt(*dist) : "");
  f.threshold = "distinct/evaluated < " + pct(t.lowDiversityUnique) +
                " or mean normalised Hamming distance of points < " + fmt(t.lowDiversityDistance) +
                " in the last third of the generations";
  f.cause = "the population collapsed onto a few candidates (strong elitism, small pool, low "
            "mutation), so later generations re-evaluate the same points";
  f.next = "raise search.mutate_rate and search.pool_size, lower search.elitism / "
           "search.cull_size, or restart with another search.seed";
  return f;
}

// Adaptive repeats that spent their budget above the noise target (issue
// 21): the likely source per candidate, read off its runs in the journal.
std::optional<Finding> checkNoiseSource(const RunData &run) {
  double target = run.started && run.started->targetNoisePercent >= 0 ? run.started->targetNoisePercent : 1.0;
  std::map<std::string, std::vector<std::string>> byKind;   // source -> "c0003 (noise 2.1%): evidence"
  std::map<std::string, NoiseSource> example;
  for (const auto &e : run.evals) {
    if (!e.duplicateKind.empty() || !e.journal ||
        (e.journal->stoppedBy != "max_repeats" && e.journal->stoppedBy != "max_measure_s"))
      continue;
    const Evaluation &j = *e.journal;
    auto src = noiseSource(j.runs, target, j.gpuProblems, j.smClockMhz);
    if (!src)
      continue;
    byKind[src->kind].push_back(e.id + " (noise " + (e.noisePercent ? fmt(*e.noisePercent) : "?") + "%): " +
                                src->evidence);
    example.emplace(src->kind, *src);
  }
  if (byKind.empty())
    return std::nullopt;
  // The source most candidates share leads; the others are listed.
  auto top = std::max_element(byKind.begin(), byKind.end(),
                              [](const auto &a, const auto &b) { return a.second.size() < b.second.size(); });
  Finding f;
  f.kind = "noise_source";
  size_t total = 0;
  for (const auto &[k, v] : byKind)
    total += v.size();
  f.title = std::to_string(total) + " candidate(s) spent their adaptive budget above the " + fmt(target) +
            "% noise target; most look like " + top->first;
  f.threshold = "stopped_by max_repeats or max_measure_s; sources checked in order gpu_state, clock_change, first_run_outlier, bimodal, "
                "drift, random (docs/config.md, \"Adaptive repeats and racing\")";
  for (const auto &[k, v] : byKind)
    for (const auto &d : v)
      f.details.push_back(k + ": " + d);
  f.cause = example[top->first].evidence;
  f.next = example[top->first].next;
  return f;
}

} // namespace

// The search stops when the baseline itself fails: nothing else ran.
std::optional<Finding> checkBaselineInvalid(const RunData &run) {
  const RecordedEval *base = run.baseline();
  if (!base || base->ok || !searched(run).empty())
    return std::nullopt;
  Finding f;
  f.kind = "baseline_invalid";
  f.title = "the baseline (no control applied) is INVALID: " +
            (base->reason.empty() ? std::string("unknown reason") : base->reason) + "; no candidate was searched";
  f.threshold = "the baseline must be OK before any candidate is built";
  std::string msg = base->journal ? base->journal->message : "";
  if (!msg.empty())
    f.details.push_back(msg);
  f.cause = "the build, benchmark or correctness command fails on your own build, before ciq changes anything";
  f.next = "fix it until the plain build and benchmark work (`" + commandOf(*base) + "`" +
           (base->log.empty() ? std::string() : ", log " + base->log) + "), then `ciq tune` again";
  return f;
}

std::vector<Finding> diagnose(const RunData &run, const DiagnoseThresholds &t) {
  std::vector<Finding> out;
  auto add = [&](std::optional<Finding> f) {
    if (f)
      out.push_back(std::move(*f));
  };
  if (auto b = checkBaselineInvalid(run)) {
    out.push_back(std::move(*b));
    return out;
  }
  add(checkCompilerCrash(run));
  auto allInvalid = checkAllInvalid(run);
  bool everyInvalid = allInvalid.has_value();
  add(std::move(allInvalid));
  if (!everyInvalid) {
    add(checkIdentical(run, t));
    add(checkRisingInvalid(run, t));
    add(checkStalled(run, t));
    add(checkHighCv(run, t));
    add(checkNoiseSource(run));
    add(checkLowDiversity(run, t));
  }
  return out;
}

void printFindings(const RunData &run, const std::vector<Finding> &findings,
                   llvm::raw_ostream &os) {
  size_t invalid = 0;
  for (const auto &e : run.evals)
    invalid += !e.ok;
  os << "run: " << run.dir << " (" << run.evals.size() << " evaluations, " << invalid
     << " INVALID; " << (run.journalPath.empty() ? "no journal" : "journal read") << ")\n";
  if (!run.directionKnown)
    os << "note: no journal start line: assuming the primary objective is minimized\n";
  if (const RecordedEval *e = reachedZeroFloor(run))
    os << "note: already optimal: " << (run.objectiveNames.empty() ? "the primary objective" : run.objectiveNames[0])
       << " is 0 from " << e->id << (e->baseline ? " (the baseline)" : "")
       << " on, the least it can be; an unchanging best is not a stalled search (checks of a stalled best and "
          "identical scores skipped)\n";
  std::string stopped = stoppedBeforeVerdict(run);
  if (!stopped.empty())
    os << "note: " << stopped << "\n";
  if (findings.empty()) {
    os << "no pathology found" << (stopped.empty() ? "" : " so far")
       << " (checked: all INVALID, identical scores/device code, rising "
          "invalid rate, stalled best, high CV%, noise source, low diversity)\n";
    return;
  }
  for (const auto &f : findings) {
    os << "finding " << f.kind << ": " << f.title << "\n";
    os << "  threshold: " << f.threshold << "\n";
    for (const auto &d : f.details)
      os << "  " << d << "\n";
    os << "  cause: " << f.cause << "\n";
    os << "  next: " << f.next << "\n";
  }
}

} // namespace ciq
