#include "engine/run/ResultsCsv.h"
#include "engine/run/KernelTimesCsv.h"

#include <llvm/Support/Path.h>

#include "common/FileIO.h"
#include "engine/record/RunSchema.h"

#include <cstdio>
#include <iterator>
#include <sstream>

namespace ciq {
std::vector<std::string> resultsCsvHeader(const TuneConfig &cfg) {
  std::vector<std::string> h = resultsCsvFixedColumns();
  for (const auto &o : cfg.objectives)
    h.push_back(o.metric);
  // benchmark.cases: each case's figures after the objectives (none without
  // cases, so such a file is as before), "case:<name>:<figure>".
  for (const auto &c : cfg.benchmark.cases)
    for (const char *f : kCaseFigures)
      h.push_back("case:" + c.name + ":" + f);
  return h;
}

// One case's cells in kCaseFigures' order; empty when not measured.
static void caseCells(const Evaluation &e, const std::string &name, std::vector<std::string> &row) {
  for (const auto &c : e.cases)
    if (c.name == name) {
      row.push_back(resultsCsvNumber(c.median));
      row.push_back(std::to_string(c.runs.size()));
      row.push_back(c.noisePercent >= 0 ? resultsCsvNumber(c.noisePercent) : "");
      row.push_back(c.ratio > 0 ? resultsCsvNumber(c.ratio) : "");
      row.push_back(c.pValue >= 0 ? resultsCsvNumber(c.pValue) : "");
      return;
    }
  row.insert(row.end(), std::size(kCaseFigures), "");
}

// The cells before the objective columns, as docs/results-csv.md describes them.
static ResultsCsvCells fixedCells(const Evaluation &e, const TuneConfig &cfg) {
  const std::string &primary = cfg.objectives.front().metric;
  ResultsCsvCells c;
  c[CsvCol::CandidateId] = e.candidateId;
  c[CsvCol::Generation] = std::to_string(e.generation);
  c[CsvCol::Status] = e.ok ? "OK" : "INVALID";
  c[CsvCol::Reason] = e.reason;
  c[CsvCol::Baseline] = e.generation == 0 ? "1" : "0";
  c[CsvCol::Pareto] = e.pareto ? "1" : "0";
  c[CsvCol::DuplicateOf] = e.duplicateOf;
  c[CsvCol::DuplicateKind] = e.duplicateKind;
  c[CsvCol::Score] = e.ok && e.scores.count(primary) ? resultsCsvNumber(e.scores.at(primary)) : "";
  c[CsvCol::ScoreUnit] = cfg.objectives.front().unit;
  c[CsvCol::CvPercent] = e.cvPercent >= 0 ? resultsCsvNumber(e.cvPercent) : "";
  c[CsvCol::CandidateHash] = e.candidateHash;
  c[CsvCol::DeviceCodeSha256] = e.deviceCodeSha256;
  c[CsvCol::Controls] = e.rendered.controls.dump();
  c[CsvCol::Rendered] = e.generation == 0 ? "" : e.rendered.summary();
  c[CsvCol::BuildMs] = resultsCsvNumber(e.buildMs);
  c[CsvCol::MeasureMs] = resultsCsvNumber(e.measureMs);
  c[CsvCol::EvaluatedAt] = e.evaluatedAt;
  c[CsvCol::Log] = e.log;
  c[CsvCol::Runs] = e.stoppedBy.empty() ? "" : std::to_string(e.runs.size());
  c[CsvCol::NoisePercent] = e.noisePercent >= 0 ? resultsCsvNumber(e.noisePercent) : "";
  c[CsvCol::StoppedBy] = e.stoppedBy;
  c[CsvCol::RunsSaved] = std::to_string(e.runsSaved);
  return c;
}

bool writeResultsCsv(const std::string &path, const TuneConfig &cfg, const std::vector<Evaluation> &evals,
                     std::string &error, int *errNo) {
  std::ostringstream out;
  auto header = resultsCsvHeader(cfg);
  out << resultsCsvRow(header);
  for (const auto &e : evals) {
    std::vector<std::string> row = fixedCells(e, cfg).cells();
    for (const auto &o : cfg.objectives)
      row.push_back(e.ok && e.scores.count(o.metric) ? resultsCsvNumber(e.scores.at(o.metric)) : "");
    for (const auto &c : cfg.benchmark.cases)
      caseCells(e, c.name, row);
    out << resultsCsvRow(row);
  }
  std::string why;
  if (!writeFileAtomically(path, out.str(), why, /*durable=*/false, errNo)) {
    error = why; // names the file beside `path` that could not be written, and the errno
    return false;
  }
  return writeKernelTimesCsv(llvm::sys::path::parent_path(path).str(), evals, error);
}

} // namespace ciq
