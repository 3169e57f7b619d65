#include "engine/analysis/RunData.h"
#include "common/FileIO.h"
#include "engine/measure/CsvTable.h"
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

std::string stoppedBeforeVerdict(const RunData &run) {
  if (run.searchEnded || run.journalPath.empty())
    return "";
  size_t n = run.evals.size();
  return "the search stopped before its verdict: " + run.journalPath + " ends after " + std::to_string(n) +
         " evaluation" + (n == 1 ? "" : "s") + " without the search's end (killed, interrupted or still running), "
         "so its best candidate is provisional; `ciq resume` finishes it";
}

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

const std::vector<RecordedObjective> &RunData::objectives() const {
  static const std::vector<RecordedObjective> none;
  return started ? started->objectives : none;
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

// An evaluation as results.csv has it: the same cells the engine's
// results.csv writer derives from the same evaluation (ResultsCsv.cpp), the
// primary objective and its unit from the start line.
RecordedEval fromJournal(Evaluation j, const std::vector<RecordedObjective> &objectives) {
  RecordedEval e;
  e.id = j.candidateId;
  e.generation = j.generation;
  e.baseline = e.generation == 0;
  e.ok = j.ok;
  e.reason = j.reason;
  e.duplicateOf = j.duplicateOf;
  e.duplicateKind = j.duplicateKind;
  if (e.ok)
    e.objectives = j.scores;
  std::string metric = objectives.empty() ? "" : objectives.front().metric;
  if (auto it = e.objectives.find(metric); it != e.objectives.end())
    e.score = it->second;
  e.unit = objectives.empty() ? "" : objectives.front().unit;
  if (j.cvPercent >= 0)
    e.cvPercent = j.cvPercent;
  e.candidateHash = j.candidateHash;
  e.deviceCodeSha256 = j.deviceCodeSha256;
  e.controls = j.rendered.controls.dump();
  if (e.generation != 0)
    e.rendered = j.rendered.summary();
  e.buildMs = j.buildMs;
  e.measureMs = j.measureMs;
  e.log = j.log;
  e.stoppedBy = j.stoppedBy;
  if (!e.stoppedBy.empty())
    e.runs = double(j.runs.size());
  if (j.noisePercent >= 0)
    e.noisePercent = j.noisePercent;
  e.runsSaved = j.runsSaved;
  e.journal = std::move(j);
  return e;
}

// The journal through its one reader (readJournal): evaluations by id (a
// candidate journaled twice keeps its last line, in the order of its first),
// the start line, its objectives and the lines about the winner.
bool loadJournal(const std::string &path, RunData &run, std::map<std::string, Evaluation> &byId,
                 std::vector<std::string> &order, std::string &error) {
  if (llvm::sys::fs::is_directory(path))
    return error = path + ": is a directory, not a journal", false;
  JournalContents c = readJournal(path);
  if (!c.damaged.empty()) {
    error = c.damaged.front() + "; the journal is damaged (only its last line may be cut off by a killed engine)";
    return false;
  }
  run.started = std::move(c.started);
  run.searchEnded = c.done;
  run.attribution = std::move(c.attribution);
  run.minimization = std::move(c.minimization);
  for (auto &e : c.evaluations) {
    std::string id = e.candidateId;
    if (!byId.count(id))
      order.push_back(id);
    byId[id] = std::move(e);
  }
  for (auto &b : c.builds) {
    run.builds.push_back(fromJournal(std::move(b), run.objectives()));
    run.builds.back().baseline = false;   // built after the search, whatever its generation
    // Its options, whatever its generation (fromJournal leaves a generation
    // 0 line's empty: the baseline's): the report showed the minimized
    // winner's controls as raw JSON (issue 50 item 4).
    run.builds.back().rendered = run.builds.back().journal->rendered.summary();
  }
  return true;
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
  for (CsvCol required : {CsvCol::CandidateId, CsvCol::Generation, CsvCol::Status, CsvCol::Score})
    if (table->column(resultsCsvColumn(required)) < 0) {
      error = path + ": no column '" + resultsCsvColumn(required) +
              "' in the header; this is not a results.csv of ciq (docs/results-csv.md)";
      return false;
    }
  // Objective columns follow the last fixed column (older files end at "log").
  int logCol = -1;
  for (const auto &fixed : resultsCsvFixedColumns())
    logCol = std::max(logCol, table->column(fixed));
  if (logCol >= 0)
    for (size_t c = size_t(logCol) + 1; c < table->header.size(); ++c)
      if (table->header[c].rfind("case:", 0) != 0) // benchmark.cases' figures (the journal has them)
        run.objectiveNames.push_back(table->header[c]);
  for (size_t r = 0; r < table->rows.size(); ++r) {
    std::string where = path + ":" + std::to_string(r + 2);
    auto cell = [&](CsvCol c) -> const std::string & { return table->cell(r, resultsCsvColumn(c)); };
    // A number cell; empty is nullopt, anything else not a number an error naming the column.
    auto number = [&](CsvCol c, std::optional<double> &out) {
      return parseOptionalNumber(cell(c), out, error, where + ": " + resultsCsvColumn(c));
    };
    RecordedEval e;
    e.id = cell(CsvCol::CandidateId);
    std::optional<double> gen, build, measure, saved;
    if (!number(CsvCol::Generation, gen) || !number(CsvCol::Score, e.score) ||
        !number(CsvCol::CvPercent, e.cvPercent) || !number(CsvCol::BuildMs, build) ||
        !number(CsvCol::MeasureMs, measure) || !number(CsvCol::Runs, e.runs) ||
        !number(CsvCol::NoisePercent, e.noisePercent) || !number(CsvCol::RunsSaved, saved))
      return false;
    e.generation = int(gen.value_or(0));
    e.buildMs = build.value_or(0);
    e.measureMs = measure.value_or(0);
    e.ok = cell(CsvCol::Status) == "OK";
    e.reason = cell(CsvCol::Reason);
    e.baseline = cell(CsvCol::Baseline) == "1";
    e.pareto = cell(CsvCol::Pareto) == "1";
    e.duplicateOf = cell(CsvCol::DuplicateOf);
    e.duplicateKind = cell(CsvCol::DuplicateKind);
    e.unit = cell(CsvCol::ScoreUnit);
    e.candidateHash = cell(CsvCol::CandidateHash);
    e.deviceCodeSha256 = cell(CsvCol::DeviceCodeSha256);
    e.controls = cell(CsvCol::Controls);
    e.rendered = cell(CsvCol::Rendered);
    e.log = cell(CsvCol::Log);
    e.stoppedBy = cell(CsvCol::StoppedBy);
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
  std::map<std::string, Evaluation> byId;
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
      run.evals.push_back(fromJournal(std::move(byId[id]), run.objectives()));
  }
  if (!run.objectives().empty()) {
    run.direction = run.objectives().front().direction;
    run.directionKnown = true;
    if (run.objectiveNames.empty())
      for (const auto &o : run.objectives())
        run.objectiveNames.push_back(o.metric);
  }
  return run;
}

} // namespace ciq
