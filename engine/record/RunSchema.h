// The schema of a recorded run, in one place: results.csv's columns, quoting
// and number format (docs/results-csv.md), and the one-line form of a
// candidate's rendered controls that results.csv's `rendered` column holds
// and the journal's `rendered` object is read back as (docs/journal.md).
// The engine writes through it (ResultsCsv.cpp, Rendered::summary); the
// analysis commands read through it (RunData.cpp).
#pragma once
#include "common/UnitOptions.h"
#include "common/KernelDirective.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ciq {

// The columns results.csv has before the objective columns, in file order:
// the writer (ResultsCsv.cpp) fills a row by these names and the reader
// (RunData.cpp) asks for cells by them, so a renamed or moved column is a
// change here alone. kCount is no column.
enum class CsvCol {
  CandidateId, Generation, Status, Reason, Baseline, Pareto, DuplicateOf, DuplicateKind, Score, ScoreUnit,
  CvPercent, CandidateHash, DeviceCodeSha256, Controls, Rendered, BuildMs, MeasureMs, EvaluatedAt, Log, Runs,
  NoisePercent, StoppedBy, RunsSaved, kCount
};

// A column's header name ("candidate_id").
const std::string &resultsCsvColumn(CsvCol c);
// All of them, in order.
const std::vector<std::string> &resultsCsvFixedColumns();

// The fixed cells of one row, filled by column; cells() in file order.
class ResultsCsvCells {
public:
  std::string &operator[](CsvCol c) { return cells_[size_t(c)]; }
  const std::vector<std::string> &cells() const { return cells_; }

private:
  std::vector<std::string> cells_ = std::vector<std::string>(size_t(CsvCol::kCount));
};

// One results.csv line: RFC 4180 quoting (a cell with a comma, quote or line
// break is quoted, quotes doubled), "\n" at the end.
std::string resultsCsvRow(const std::vector<std::string> &cells);

// A number as results.csv writes it ("%.10g").
std::string resultsCsvNumber(double v);

// "-Xptxas --opt-level=2 -DTILE=16 --apply-controls(ptxas) f.acf", or
// "(default compile)" when nothing is added. acfs: (stage, path).
// Per-kernel controls read "kernel sgemm_blocked: .minnctapersm 2".
std::string renderedSummary(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfs,
                            const std::vector<KernelDirective> &kernels,
                            const std::vector<UnitOptions> &units = {});

// The same from a journal evaluation line's "rendered" object; a member of
// the wrong type reads as absent ("" when the object is not one).
std::string renderedSummary(const nlohmann::json &rendered);

} // namespace ciq
