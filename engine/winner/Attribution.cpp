#include "engine/winner/Attribution.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/measure/Interleave.h"
#include "engine/winner/Objectives.h"
#include "engine/record/AfterSearch.h"
#include "common/NumberFormat.h"

#include <cctype>
#include <cstdio>
#include <map>

namespace ciq {

Rendered parametersOnly(const Rendered &r) {
  Rendered p;
  p.defines = r.defines;
  return p;
}

Rendered compilerControlsOnly(const Rendered &r) {
  Rendered c = r;
  c.defines.clear();
  c.kernels.clear();
  return c;
}

Rendered kernelControlsOnly(const Rendered &r) {
  Rendered k;
  k.kernels = r.kernels;
  return k;
}

std::vector<Variant> attributionVariants(const Rendered &winner) {
  std::vector<Variant> v = {{"baseline", Rendered{}}};
  std::vector<std::pair<std::string, Rendered>> groups;
  for (auto &[name, part] : std::vector<std::pair<std::string, Rendered>>{
           {"parameters", parametersOnly(winner)},
           {"compiler controls", compilerControlsOnly(winner)},
           {"per-kernel controls", kernelControlsOnly(winner)}})
    if (!part.empty())
      groups.push_back({name, part});
  if (groups.size() > 1)
    for (const auto &[name, part] : groups)
      v.push_back({name + " only", part});
  // The winner's row is named by what it holds: "both" only where it has
  // parameters and compiler controls (issue 32 item 3).
  std::string label = groups.empty() ? "winner" : groups[0].first;
  if (groups.size() == 2 && winner.kernels.empty())
    label = "both";
  else
    for (size_t i = 1; i < groups.size(); ++i)
      label += " + " + groups[i].first;
  v.push_back({label, winner});
  return v;
}

namespace {

std::string slug(const std::string &name) {
  std::string s;
  for (char c : name)
    s += isalnum((unsigned char)c) ? c : '-';
  return s;
}

std::string number(double v) { return fmt::value(v); }

} // namespace

void breakTieByLaterObjectives(VariantResult &row, const std::map<std::string, double> &mine,
                               const std::map<std::string, double> &ref, const std::vector<Objective> &objectives,
                               bool pareto) {
  if (row.verdict != "equal")
    return;
  std::string better, worse;
  for (size_t i = 1; i < objectives.size(); ++i) {
    const Objective &o = objectives[i];
    // Only exact (compile) metrics: a runtime value in a row's scores is one
    // median of the search, with no noise test against the reference.
    if (!isCompileMetric(o.metric))
      continue;
    auto a = mine.find(o.metric), b = ref.find(o.metric);
    if (a == mine.end() || b == ref.end() || a->second == b->second)
      continue;
    bool up = o.direction == "minimize" ? a->second < b->second : a->second > b->second;
    std::string what = o.metric + " " + number(b->second) + " -> " + number(a->second) +
                       (o.unit.empty() ? "" : " " + o.unit);
    (up ? better : worse) += (up ? better : worse).empty() ? what : ", " + what;
    if (!pareto)   // lexicographic: the first objective that differs decides
      break;
  }
  if (!better.empty() && worse.empty()) {
    row.significant = true;
    row.verdict = "better in " + better;
  } else if (!worse.empty() && better.empty()) {
    row.verdict = "worse in " + worse;
  } else if (!better.empty()) {
    row.verdict = "a trade-off: better in " + better + ", worse in " + worse;
  }
}

void judgeAgainst(VariantResult &row, const VariantResult &ref, bool minimize, bool exact, double maxCvPercent) {
  row.reference = ref.median;
  if (exact) {
    double b = ref.median, x = row.median;
    if (minimize ? x != 0 : b != 0)
      row.speedup = minimize ? b / x : x / b;
    row.significant = minimize ? x < b : x > b;
    row.verdict = row.significant ? "better" : x == b ? "equal" : "worse";
    return;
  }
  Verdict v = judge(ref.values, row.values, minimize, maxCvPercent);
  if (v.speedup > 0) // 0: a median of 0 to divide by
    row.speedup = v.speedup;
  row.pValue = v.welch.pValue;
  row.significant = v.significant;
  row.verdict = v.significant ? "significantly better" : v.reason;
}

std::optional<std::vector<VariantResult>> rowsFromMeasuredRuns(const TuneConfig &cfg,
                                                               const std::vector<Variant> &variants,
                                                               const MeasureOptions &opts) {
  if (!opts.measuredRuns || variants.empty())
    return std::nullopt;
  std::vector<VariantResult> rows(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::vector<double> *runs = opts.measuredRuns(variants[i].rendered.hash(), opts.caseIndex);
    if (!runs || runs->size() < 2)
      return std::nullopt;
    rows[i].name = variants[i].name;
    rows[i].controls = variants[i].rendered.empty() ? "(none: the default compile)" : variants[i].rendered.summary();
    rows[i].values = *runs;
    rows[i].reused = true;
    Summary s = summarize(rows[i].values);
    rows[i].median = s.median;
    rows[i].cvPercent = s.cvPercent;
  }
  bool minimize = cfg.objectives.front().direction == "minimize";
  for (size_t i = 1; i < rows.size(); ++i)
    judgeAgainst(rows[i], rows[0], minimize, false, opts.maxCvPercent);
  return rows;
}

namespace {

// What the variants of one measureVariants call are measured as: runtime
// variants as benchmark commands (one per distinct binary), compile-only ones
// as exact scores (one per distinct build).
struct VariantBuilds {
  std::vector<size_t> buildOf;                            // variant -> index into commands/exactValues
  std::map<std::string, size_t> byHash;                   // rendered hash -> that index
  std::map<std::string, size_t> byBinary;                 // reuse key -> command: twin rows run once
  std::vector<std::string> hashOf;   // per command: the rendered hash it was built from (the rounds' key)
  std::vector<std::vector<std::string>> commands;
  std::vector<Evaluation> served;    // per command: the candidate its run-time compiles get
  std::vector<double> exactValues;
  std::vector<std::map<std::string, double>> exactScores;   // every compile objective, per exact value
};

// Builds variant i (a new rendered hash) and adds its command or its exact
// score to `b`; a twin of an earlier binary (opts.reuseKey) shares its command.
bool buildVariant(CandidateBuilder &builder, const TuneConfig &cfg, const std::vector<Variant> &variants, size_t i,
                  const std::string &tag, const MeasureOptions &opts, bool runtime, std::vector<VariantResult> &rows,
                  VariantBuilds &b, std::string &error) {
  const Objective &o = cfg.objectives.front();
  std::string hash = variants[i].rendered.hash();
  Evaluation e;
  e.candidateId = tag + "-" + slug(variants[i].name);
  e.rendered = variants[i].rendered;
  e.candidateHash = hash;
  builder.build(e, cfg.runDir + "/logs/" + e.candidateId + ".log");
  if (e.ok && !runtime)
    scoreCompileMetrics(cfg, e);
  if (!e.ok) {
    error = variants[i].name + " (" + rows[i].controls + "): " + e.reason + ": " + e.message;
    return false;
  }
  if (runtime && opts.reuseKey)
    if (std::string key = opts.reuseKey(e); !key.empty()) {
      // The same binary as a variant built before: one build measured for both.
      if (auto it = b.byBinary.find(key); it != b.byBinary.end()) {
        b.buildOf[i] = b.byHash[hash] = it->second;
        for (size_t j = 0; j < i; ++j)
          if (b.buildOf[j] == it->second) {
            rows[i].twinOf = rows[j].name;
            break;
          }
        return true;
      }
      b.byBinary[key] = b.commands.size();
    }
  b.buildOf[i] = b.byHash[hash] = runtime ? b.commands.size() : b.exactValues.size();
  if (!runtime) {
    b.exactValues.push_back(e.scores.count(o.metric) ? e.scores.at(o.metric) : 0);
    b.exactScores.push_back(e.scores);
    return true;
  }
  b.hashOf.push_back(hash);
  auto cmd = snapshotBenchmark(cfg, cfg.runDir + "/" + tag + "/" + slug(variants[i].name), error,
                               (bool)opts.serveRuntime);
  if (!cmd)
    return false;
  b.commands.push_back(*cmd);
  b.served.push_back(e);
  if (opts.snapshots)
    (*opts.snapshots)[hash] = *cmd;
  return true;
}

// Names every row and finds what each variant is measured as: a variant
// already seen, a benchmark snapshot of an earlier call, a build the search
// scored, or a build made here.
bool prepareVariants(CandidateBuilder &builder, const TuneConfig &cfg, const std::vector<Variant> &variants,
                     const std::string &tag, const MeasureOptions &opts, bool runtime,
                     std::vector<VariantResult> &rows, VariantBuilds &b, std::string &error) {
  const Objective &o = cfg.objectives.front();
  b.buildOf.resize(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    rows[i].name = variants[i].name;
    rows[i].controls = variants[i].rendered.empty() ? "(none: the default compile)" : variants[i].rendered.summary();
    std::string hash = variants[i].rendered.hash();
    if (auto it = b.byHash.find(hash); it != b.byHash.end()) {
      b.buildOf[i] = it->second;
      continue;
    }
    if (runtime && opts.snapshots && opts.snapshots->count(hash)) {
      b.buildOf[i] = b.byHash[hash] = b.commands.size();
      b.commands.push_back(opts.snapshots->at(hash));
      b.hashOf.push_back(hash);
      Evaluation e;
      e.candidateId = tag + "-" + slug(variants[i].name);
      e.rendered = variants[i].rendered;
      e.candidateHash = hash;
      b.served.push_back(e);
      continue;
    }
    if (const Evaluation *k = !runtime && opts.known ? opts.known(hash) : nullptr; k && k->scores.count(o.metric)) {
      b.buildOf[i] = b.byHash[hash] = b.exactValues.size();
      b.exactValues.push_back(k->scores.at(o.metric));
      b.exactScores.push_back(k->scores);
      continue;
    }
    if (!buildVariant(builder, cfg, variants, i, tag, opts, runtime, rows, b, error))
      return false;
  }
  return true;
}

// Runs the variants' benchmark commands interleaved (Interleave.h), inside
// the measuring phase, with the rounds an earlier call recorded under the
// same key counted first.
std::optional<InterleavedResult> runVariants(CandidateBuilder &builder, BenchmarkRunner &bench,
                                             const TuneConfig &cfg, int rounds, const std::string &tag,
                                             const MeasureOptions &opts, const VariantBuilds &b,
                                             std::string &error) {
  if (opts.phase && !opts.phase->begin(error))
    return std::nullopt;
  BeforeRun serve;
  if (opts.serveRuntime)
    serve = [&](size_t k) { opts.serveRuntime(b.served[k]); };
  RoundsRecord record;
  std::string key;
  if (!opts.roundsKey.empty()) {
    key = opts.roundsKey;
    for (const auto &h : b.hashOf)
      key += ":" + h.substr(0, 16);
    if (opts.priorRounds)
      if (const auto *prior = opts.priorRounds(key))
        record.prior = *prior;
    if (opts.onRun)
      record.onRun = [&](int round, size_t build, double v) { opts.onRun(key, round, build, v); };
  }
  auto res = runInterleaved(bench, b.commands, rounds, cfg.runDir + "/logs/" + tag + ".log", opts.warmupRounds,
                            serve, opts.enough, opts.stop, key.empty() ? nullptr : &record);
  if (serve)
    builder.daemon().clearCandidate();
  if (opts.phase) {
    auto found = opts.phase->end();
    if (opts.problems)
      opts.problems->insert(opts.problems->end(), found.begin(), found.end());
  }
  if (!res.ok) {
    error = res.reason + ": " + res.message;
    return std::nullopt;
  }
  return res;
}

} // namespace

std::optional<std::vector<VariantResult>> measureVariants(CandidateBuilder &builder, BenchmarkRunner *bench,
                                                          const TuneConfig &cfg, const std::vector<Variant> &variants,
                                                          int rounds, const std::string &tag, std::string &error,
                                                          const MeasureOptions &opts) {
  const Objective &o = cfg.objectives.front();
  bool runtime = bench && !isCompileMetric(o.metric);
  bool minimize = o.direction == "minimize";
  if (runtime)
    if (auto reused = rowsFromMeasuredRuns(cfg, variants, opts))
      return reused;
  std::vector<VariantResult> rows(variants.size());
  VariantBuilds b;
  if (!prepareVariants(builder, cfg, variants, tag, opts, runtime, rows, b, error))
    return std::nullopt;
  std::vector<std::vector<double>> values, warmup(b.exactValues.size());
  if (runtime) {
    auto res = runVariants(builder, *bench, cfg, rounds, tag, opts, b, error);
    if (!res)
      return std::nullopt;
    values = res->values;
    warmup = res->warmup;
  } else
    for (double v : b.exactValues)
      values.push_back({v});
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].values = values[b.buildOf[i]];
    rows[i].warmup = warmup[b.buildOf[i]];
    Summary s = summarize(rows[i].values);
    rows[i].median = s.median;
    rows[i].cvPercent = s.cvPercent;
  }
  for (size_t i = 1; i < rows.size(); ++i) {
    judgeAgainst(rows[i], rows[0], minimize, !runtime, opts.maxCvPercent);
    if (!runtime)
      breakTieByLaterObjectives(rows[i], b.exactScores[b.buildOf[i]], b.exactScores[b.buildOf[0]], cfg.objectives, cfg.pareto);
  }
  return rows;
}

nlohmann::json variantsToJson(const std::vector<VariantResult> &rows) {
  std::vector<AttributionRow> recorded;
  for (const auto &r : rows) {
    AttributionRow a;
    a.name = r.name;
    a.controls = r.controls;
    a.median = r.median;
    a.cvPercent = r.cvPercent;
    a.runs = long(r.values.size());
    a.speedup = r.speedup;
    if (r.pValue >= 0)
      a.pValue = r.pValue;
    a.significant = r.significant;
    a.verdict = r.verdict;
    recorded.push_back(a);
  }
  return attributionToJson(recorded);
}

std::string speedupText(const VariantResult &r, const std::string &unit) {
  if (r.speedup)
    return fmt::ratio(*r.speedup);
  return "n/a (" + fmt::value(r.reference) + " -> " + fmt::value(r.median) + " " + unit + ")";
}

std::string formatVariant(const VariantResult &r, const std::string &unit) {
  char buf[512];
  std::string v = fmt::value(r.median);
  if (r.verdict.empty()) // the reference row
    // "median" only for a measured runtime row: a compile metric is exact.
    snprintf(buf, sizeof buf, "  %-24s %s%s %s  (reference)  %s", r.name.c_str(),
             r.values.size() > 1 ? "median " : "", v.c_str(), unit.c_str(), r.controls.c_str());
  else if (r.pValue < 0)
    snprintf(buf, sizeof buf, "  %-24s %s %s  %s  %s  %s", r.name.c_str(), v.c_str(), unit.c_str(),
             speedupText(r, unit).c_str(), r.verdict.c_str(), r.controls.c_str());
  else
    snprintf(buf, sizeof buf, "  %-24s median %s %s  %s  %s  %s  %s", r.name.c_str(), v.c_str(), unit.c_str(),
             speedupText(r, unit).c_str(), fmt::pValue(r.pValue).c_str(), r.verdict.c_str(), r.controls.c_str());
  std::string line = buf;
  // Runs not made for this row: said beside it, so its run count is not read as new evidence.
  if (!r.twinOf.empty())
    line += "  (same binary as " + r.twinOf + ": measured once)";
  else if (r.reused)
    line += "  (the finalists' " + std::to_string(r.values.size()) + " runs: same binary, not run again)";
  return line;
}

} // namespace ciq
