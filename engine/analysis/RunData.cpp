#include "engine/analysis/RunData.h"
#include "common/JournalLines.h"
#include "common/JsonRead.h"
#include "common/Protocol.h"

#include "engine/measure/CsvTable.h"
#include "common/FileIO.h"
#include "engine/record/RunSchema.h"

#include <cmath>
#include <cstdlib>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <algorithm>
#include <sstream>

namespace ciq {

const RecordedEval *RunData::baseline() const {
  for (const auto &e : evals)
    if (e.baseline)
      return &e;
  for (const auto &e : evals)
    if (e.id == "c0000")
      return &e;
  return nullptr;
}

const RecordedEval *RunData::find(const std::string &key) const {
  for (const auto &e : evals)
    if (e.id == key)
      return &e;
  for (const auto &e : builds)
    if (e.id == key)
      return &e;
  const RecordedEval *hit = nullptr;
  for (const auto &e : evals)
    if (key.size() >= 6 && llvm::StringRef(e.candidateHash).startswith(key)) {
      if (hit && hit->candidateHash != e.candidateHash)
        return nullptr;   // ambiguous prefix
      hit = hit ? hit : &e;
    }
  return hit;
}

int RunData::pareto() const {
  if (start.is_object() && start.contains("objectives") && start["objectives"].is_array()) {
    bool pareto = start["objectives"].size() > 1;
    JsonFields(start, "").opt("pareto", pareto);
    return pareto ? 1 : 0;
  }
  return objectiveNames.size() > 1 ? 1 : 0;
}

namespace {

// Empty cell: nullopt. A cell that is not a number: error naming the place.
bool parseOptionalNumber(const std::string &cell, std::optional<double> &out, std::string &error,
                         const std::string &where) {
  llvm::StringRef s = llvm::StringRef(cell).trim();
  out.reset();
  if (s.empty())
    return true;
  std::string buf = s.str();
  char *end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end == buf.c_str() || *end != '\0') {
    error = where + ": '" + cell + "' is not a number; is this a results.csv written by ciq?";
    return false;
  }
  out = v;
  return true;
}

// The members the analysis commands read later, typed once here, so that none
// of them meets a wrong type: "" or "<where>: "<key>": expected ...".
std::string checkLineTypes(const nlohmann::json &j, const std::string &where) {
  std::vector<nlohmann::json> objectives, objects;
  std::string s;
  bool b = false;
  int n = 0;
  std::vector<KernelStats> kernels;
  JsonFields f(j, where);
  f.opt("objectives", objectives).opt("pareto", b).opt("objects", objects).opt("generation", n).opt("replay", s)
      .opt("kernels", kernels);
  for (size_t i = 0; i < objectives.size() && f.ok(); ++i) {
    JsonFields o(objectives[i], where + ": \"objectives\"[" + std::to_string(i) + "]");
    if (!o.opt("metric", s).opt("direction", s).ok())
      return o.error();
  }
  for (size_t i = 0; i < objects.size() && f.ok(); ++i) {
    long bytes = 0;
    JsonFields o(objects[i], where + ": \"objects\"[" + std::to_string(i) + "]");
    if (!o.opt("device_code_bytes", bytes).opt("output", s).opt("source", s).ok())
      return o.error();
  }
  return f.error();
}

RecordedEval fromJournal(const nlohmann::json &j, const nlohmann::json &start);

bool loadJournal(const std::string &path, RunData &run, std::map<std::string, nlohmann::json> &byId,
                 std::vector<std::string> &order, std::string &error) {
  std::vector<JournalLine> lines;
  std::vector<std::string> damaged;
  if (!readJournalLines(path, lines, damaged, error))
    return false;
  if (!damaged.empty()) {
    error = damaged.front() + "; the journal is damaged (only its last line may be cut off by a killed engine)";
    return false;
  }
  for (auto &l : lines) {
    std::string where = path + ":" + std::to_string(l.number);
    if (std::string why = checkLineTypes(l.object, where); !why.empty())
      return error = why + "; the journal is damaged", false;
    if (l.op == "start") {
      run.start = l.object;
    } else if (l.op == "evaluation") {
      std::string id;
      JsonFields f(l.object, path + ":" + std::to_string(l.number));
      if (!f.need("candidate_id", id).ok())
        return error = f.error(), false;
      if (!byId.count(id))
        order.push_back(id);
      byId[id] = l.object;
    } else if (l.op == "generation") {
      run.generations.push_back(l.object);
    } else if (l.op == "attribution") {
      run.attribution = l.object.value("rows", nlohmann::json::array());
    } else if (l.op == "minimize") {
      run.minimization = l.object;
    } else if (l.op == "build") {
      run.builds.push_back(fromJournal(l.object, run.start));
      run.builds.back().baseline = false;   // built after the search, whatever its generation
    }
  }
  return true;
}

// The primary objective of the journal's start line: its metric and unit
// ("" when the start line is missing or names none).
std::pair<std::string, std::string> primaryObjective(const nlohmann::json &start) {
  std::string metric, unit;
  if (start.is_object() && start.contains("objectives") && start["objectives"].is_array() &&
      !start["objectives"].empty())
    JsonFields(start["objectives"][0], "").opt("metric", metric).opt("unit", unit);
  return {metric, unit};
}

// An evaluation line as results.csv has it: the same cells the engine's
// results.csv writer derives from the same evaluation (ResultsCsv.cpp),
// objectives from the start line. Every field typed: a wrong one leaves its
// default (the analysis commands report what they can; ciq resume is where
// damage stops the work).
RecordedEval fromJournal(const nlohmann::json &j, const nlohmann::json &start) {
  RecordedEval e;
  std::string status;
  double cv = -1, noise = -1;
  std::vector<double> runs;
  auto field = [&](const char *key, auto &out) { JsonFields(j, "").opt(key, out); };
  field("candidate_id", e.id);
  field("generation", e.generation);
  e.baseline = e.generation == 0;
  field("status", status);
  e.ok = status == "OK";
  field("reason", e.reason);
  field("duplicate_of", e.duplicateOf);
  field("duplicate_kind", e.duplicateKind);
  if (j.contains("scores") && j["scores"].is_object())
    for (auto it = j["scores"].begin(); it != j["scores"].end(); ++it)
      if (it->is_number() && e.ok)
        e.objectives[it.key()] = it->get<double>();
  auto [metric, unit] = primaryObjective(start);
  if (auto it = e.objectives.find(metric); it != e.objectives.end())
    e.score = it->second;
  e.unit = unit;
  field("cv_percent", cv);
  if (cv >= 0)
    e.cvPercent = cv;
  field("candidate_hash", e.candidateHash);
  field("device_code_sha256", e.deviceCodeSha256);
  if (j.contains("controls"))
    e.controls = j["controls"].dump();
  if (e.generation != 0 && j.contains("rendered"))
    e.rendered = renderedSummary(j["rendered"]);
  field("build_ms", e.buildMs);
  field("measure_ms", e.measureMs);
  field("log", e.log);
  field("stopped_by", e.stoppedBy);
  field("runs", runs);
  if (!e.stoppedBy.empty())
    e.runs = double(runs.size());
  field("noise_percent", noise);
  if (noise >= 0)
    e.noisePercent = noise;
  field("runs_saved", e.runsSaved);
  e.journal = j;
  return e;
}

bool loadResults(const std::string &path, RunData &run, std::string &error) {
  auto text = readWholeFile(path, &error);
  if (!text)
    return false;
  std::string csvError;
  auto table = parseCsv(*text, csvError);
  if (!table) {
    error = path + ": " + csvError;
    return false;
  }
  for (const char *required : {"candidate_id", "generation", "status", "score"})
    if (table->column(required) < 0) {
      error = path + ": no column '" + required +
              "' in the header; this is not a results.csv of ciq (docs/results-csv.md)";
      return false;
    }
  // Objective columns follow the last fixed column (older files end at "log").
  int logCol = -1;
  for (const auto &fixed : resultsCsvFixedColumns())
    logCol = std::max(logCol, table->column(fixed));
  if (logCol >= 0)
    for (size_t c = size_t(logCol) + 1; c < table->header.size(); ++c)
      run.objectiveNames.push_back(table->header[c]);
  for (size_t r = 0; r < table->rows.size(); ++r) {
    std::string where = path + ":" + std::to_string(r + 2);
    auto cell = [&](const char *name) -> const std::string & { return table->cell(r, name); };
    RecordedEval e;
    e.id = cell("candidate_id");
    std::optional<double> gen, build, measure, saved;
    if (!parseOptionalNumber(cell("generation"), gen, error, where + ": generation") ||
        !parseOptionalNumber(cell("score"), e.score, error, where + ": score") ||
        !parseOptionalNumber(cell("cv_percent"), e.cvPercent, error, where + ": cv_percent") ||
        !parseOptionalNumber(cell("build_ms"), build, error, where + ": build_ms") ||
        !parseOptionalNumber(cell("measure_ms"), measure, error, where + ": measure_ms") ||
        !parseOptionalNumber(cell("runs"), e.runs, error, where + ": runs") ||
        !parseOptionalNumber(cell("noise_percent"), e.noisePercent, error, where + ": noise_percent") ||
        !parseOptionalNumber(cell("runs_saved"), saved, error, where + ": runs_saved"))
      return false;
    e.generation = int(gen.value_or(0));
    e.buildMs = build.value_or(0);
    e.measureMs = measure.value_or(0);
    e.ok = cell("status") == "OK";
    e.reason = cell("reason");
    e.baseline = cell("baseline") == "1";
    e.pareto = cell("pareto") == "1";
    e.duplicateOf = cell("duplicate_of");
    e.duplicateKind = cell("duplicate_kind");
    e.unit = cell("score_unit");
    e.candidateHash = cell("candidate_hash");
    e.deviceCodeSha256 = cell("device_code_sha256");
    e.controls = cell("controls");
    e.rendered = cell("rendered");
    e.log = cell("log");
    e.stoppedBy = cell("stopped_by");
    e.runsSaved = saved.value_or(0);
    for (const auto &name : run.objectiveNames) {
      std::optional<double> v;
      if (!parseOptionalNumber(table->cell(r, name), v, error, where + ": " + name))
        return false;
      if (v)
        e.objectives[name] = *v;
    }
    run.evals.push_back(std::move(e));
  }
  return true;
}

} // namespace

std::optional<RunData> loadRun(const std::string &path, std::string &error) {
  RunData run;
  llvm::SmallString<256> dir(path);
  if (llvm::sys::fs::is_directory(path)) {
    run.dir = path;
  } else if (llvm::sys::fs::exists(path)) {
    llvm::sys::path::remove_filename(dir);
    run.dir = dir.empty() ? "." : std::string(dir);
    (llvm::StringRef(path).endswith(".jsonl") ? run.journalPath : run.resultsPath) = path;
  } else {
    error = path + ": no such file or directory; give a run directory (<build>/ciq/<target>) or "
                   "its results.csv";
    return std::nullopt;
  }
  auto sibling = [&](const char *name) {
    llvm::SmallString<256> p(run.dir);
    llvm::sys::path::append(p, name);
    return llvm::sys::fs::exists(p) ? std::string(p) : std::string();
  };
  if (run.resultsPath.empty())
    run.resultsPath = sibling("results.csv");
  if (run.journalPath.empty())
    run.journalPath = sibling("journal.jsonl");
  if (run.resultsPath.empty() && run.journalPath.empty()) {
    error = run.dir + ": no results.csv or journal.jsonl here; point at the run directory "
                      "(<build>/ciq/<target>) of a search";
    return std::nullopt;
  }
  std::map<std::string, nlohmann::json> byId;
  std::vector<std::string> order;
  if (!run.journalPath.empty() && !loadJournal(run.journalPath, run, byId, order, error))
    return std::nullopt;
  if (!run.resultsPath.empty()) {
    if (!loadResults(run.resultsPath, run, error))
      return std::nullopt;
    for (auto &e : run.evals)
      if (auto it = byId.find(e.id); it != byId.end())
        e.journal = it->second;
  } else {
    for (const auto &id : order)
      run.evals.push_back(fromJournal(byId[id], run.start));
  }
  if (run.start.is_object() && run.start.contains("objectives") &&
      run.start["objectives"].is_array() && !run.start["objectives"].empty()) {
    // Types checked by checkLineTypes; null members read as absent.
    JsonFields(run.start["objectives"][0], "").opt("direction", run.direction);
    run.directionKnown = true;
    if (run.objectiveNames.empty())
      for (const auto &o : run.start["objectives"]) {
        std::string metric;
        JsonFields(o, "").opt("metric", metric);
        run.objectiveNames.push_back(metric);
      }
  }
  return run;
}

} // namespace ciq
