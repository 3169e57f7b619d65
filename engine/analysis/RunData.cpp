#include "RunData.h"

#include "CsvTable.h"

#include <cmath>
#include <csv.h>
#include <cstdlib>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <sstream>

namespace ciq {

const std::vector<std::string> &resultsCsvFixedColumns() {
  static const std::vector<std::string> cols = {
      "candidate_id", "generation", "status", "reason", "baseline", "pareto", "duplicate_of",
      "duplicate_kind", "score", "score_unit", "cv_percent", "candidate_hash",
      "device_code_sha256", "controls", "rendered", "build_ms", "measure_ms", "evaluated_at", "log"};
  return cols;
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
  if (start.is_object() && start.contains("objectives") && start["objectives"].is_array())
    return start.value("pareto", start["objectives"].size() > 1) ? 1 : 0;
  return objectiveNames.size() > 1 ? 1 : 0;
}

namespace {

std::optional<std::string> readFile(const std::string &path, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    error = path + ": cannot be read (" + buf.getError().message() + ")";
    return std::nullopt;
  }
  return (*buf)->getBuffer().str();
}

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

bool loadJournal(const std::string &path, RunData &run, std::map<std::string, nlohmann::json> &byId,
                 std::vector<std::string> &order, std::string &error) {
  auto text = readFile(path, error);
  if (!text)
    return false;
  std::istringstream in(*text);
  std::string line;
  int lineNo = 0;
  bool pendingBad = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (llvm::StringRef(line).trim().empty())
      continue;
    if (pendingBad) {
      error = path + ":" + std::to_string(lineNo - 1) +
              ": not a JSON object; the journal is damaged (only its last line may be cut off "
              "by a killed engine)";
      return false;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      pendingBad = true;   // tolerated only as the last line (a write cut short)
      continue;
    }
    std::string op = j.value("op", "");
    if (op == "start") {
      run.start = j;
    } else if (op == "evaluation") {
      std::string id = j.value("candidate_id", "");
      if (!byId.count(id))
        order.push_back(id);
      byId[id] = j;
    } else if (op == "generation") {
      run.generations.push_back(j);
    }
  }
  return true;
}

std::optional<double> jsonOptNumber(const nlohmann::json &j, const char *key) {
  if (j.contains(key) && j[key].is_number())
    return j[key].get<double>();
  return std::nullopt;
}

RecordedEval fromJournal(const nlohmann::json &j) {
  RecordedEval e;
  e.id = j.value("candidate_id", "");
  e.generation = j.value("generation", 0);
  e.ok = j.value("status", "") == "OK";
  e.reason = j.value("reason", "");
  e.baseline = j.value("baseline", e.id == "c0000");
  e.duplicateOf = j.value("duplicate_of", "");
  e.duplicateKind = j.value("duplicate_kind", "");
  e.score = jsonOptNumber(j, "score");
  e.unit = j.value("unit", "");
  e.cvPercent = jsonOptNumber(j, "cv_percent");
  e.candidateHash = j.value("candidate_hash", "");
  e.deviceCodeSha256 = j.value("device_code_sha256", "");
  if (j.contains("controls"))
    e.controls = j["controls"].dump();
  if (j.contains("rendered") && j["rendered"].is_string())
    e.rendered = j["rendered"].get<std::string>();
  e.buildMs = j.value("build_ms", 0.0);
  e.measureMs = j.value("measure_ms", 0.0);
  e.log = j.value("log", "");
  if (j.contains("scores") && j["scores"].is_object())
    for (auto it = j["scores"].begin(); it != j["scores"].end(); ++it)
      if (it->is_number())
        e.objectives[it.key()] = it->get<double>();
  e.journal = j;
  return e;
}

bool loadResults(const std::string &path, RunData &run, std::string &error) {
  auto text = readFile(path, error);
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
  int logCol = table->column("log");
  if (logCol >= 0)
    for (size_t c = size_t(logCol) + 1; c < table->header.size(); ++c)
      run.objectiveNames.push_back(table->header[c]);
  for (size_t r = 0; r < table->rows.size(); ++r) {
    std::string where = path + ":" + std::to_string(r + 2);
    auto cell = [&](const char *name) -> const std::string & { return table->cell(r, name); };
    RecordedEval e;
    e.id = cell("candidate_id");
    std::optional<double> gen, build, measure;
    if (!parseOptionalNumber(cell("generation"), gen, error, where + ": generation") ||
        !parseOptionalNumber(cell("score"), e.score, error, where + ": score") ||
        !parseOptionalNumber(cell("cv_percent"), e.cvPercent, error, where + ": cv_percent") ||
        !parseOptionalNumber(cell("build_ms"), build, error, where + ": build_ms") ||
        !parseOptionalNumber(cell("measure_ms"), measure, error, where + ": measure_ms"))
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
      run.evals.push_back(fromJournal(byId[id]));
  }
  if (run.start.is_object() && run.start.contains("objectives") &&
      run.start["objectives"].is_array() && !run.start["objectives"].empty()) {
    run.direction = run.start["objectives"][0].value("direction", "minimize");
    run.directionKnown = true;
    if (run.objectiveNames.empty())
      for (const auto &o : run.start["objectives"])
        run.objectiveNames.push_back(o.value("metric", ""));
  }
  return run;
}

namespace {
std::string quoteField(const std::string &s) {
  std::string out(s.size() * 2 + 2, '\0');
  size_t n = csv_write(&out[0], out.size(), s.data(), s.size());
  out.resize(n);
  return out;
}
std::string num(const std::optional<double> &v) {
  if (!v)
    return "";
  std::ostringstream o;
  o.precision(10);
  o << *v;
  return o.str();
}
} // namespace

std::string writeResultsCsv(const RunData &run) {
  std::string out;
  std::vector<std::string> header = resultsCsvFixedColumns();
  header.insert(header.end(), run.objectiveNames.begin(), run.objectiveNames.end());
  for (size_t i = 0; i < header.size(); ++i)
    out += (i ? "," : "") + quoteField(header[i]);
  out += "\r\n";
  for (const auto &e : run.evals) {
    std::vector<std::string> row = {
        e.id, std::to_string(e.generation), e.ok ? "OK" : "INVALID", e.reason,
        e.baseline ? "1" : "0", e.pareto ? "1" : "0", e.duplicateOf, e.duplicateKind,
        num(e.score), e.unit, num(e.cvPercent), e.candidateHash, e.deviceCodeSha256, e.controls,
        e.rendered, num(e.buildMs), num(e.measureMs), "", e.log};
    for (const auto &name : run.objectiveNames) {
      auto it = e.objectives.find(name);
      row.push_back(it == e.objectives.end() ? "" : num(it->second));
    }
    for (size_t i = 0; i < row.size(); ++i)
      out += (i ? "," : "") + quoteField(row[i]);
    out += "\r\n";
  }
  return out;
}

} // namespace ciq
