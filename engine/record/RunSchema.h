// The schema of a recorded run, in one place: results.csv's columns, quoting
// and number format (docs/results-csv.md), and the one-line form of a
// candidate's rendered controls that results.csv's `rendered` column holds
// and the journal's `rendered` object is read back as (docs/journal.md).
// The engine writes through it (ResultsCsv.cpp, Rendered::summary); the
// analysis commands read through it (RunData.cpp).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ciq {

// The columns results.csv has before the objective columns, in order.
const std::vector<std::string> &resultsCsvFixedColumns();

// One results.csv line: RFC 4180 quoting (a cell with a comma, quote or line
// break is quoted, quotes doubled), "\n" at the end.
std::string resultsCsvRow(const std::vector<std::string> &cells);

// A number as results.csv writes it ("%.10g").
std::string resultsCsvNumber(double v);

// "-Xptxas --opt-level=2 -DTILE=16 --apply-controls(ptxas) f.acf", or
// "(default compile)" when nothing is added. acfs: (stage, path).
std::string renderedSummary(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfs);

// The same from a journal evaluation line's "rendered" object; a member of
// the wrong type reads as absent ("" when the object is not one).
std::string renderedSummary(const nlohmann::json &rendered);

} // namespace ciq
