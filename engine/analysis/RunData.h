// One search as the analysis commands see it: the rows of results.csv
// (docs/results-csv.md), joined by candidate id with the evaluation lines of
// journal.jsonl (docs/journal.md) when the journal is there. Both are read
// through the run's model (engine/record/): the journal by readJournal, as
// typed Evaluations, results.csv by its column table (RunSchema.h).
#pragma once
#include "engine/record/Evaluation.h"
#include "engine/record/Journal.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct RecordedEval {
  std::string id;                 // candidate_id; "c0000" is the baseline
  int generation = 0;
  bool ok = false;                // status == OK
  std::string reason;             // INVALID reason (compile_error, run_timeout, ...)
  bool baseline = false;
  bool pareto = false;
  std::string duplicateOf, duplicateKind;   // config | device_code
  std::optional<double> score;    // primary objective, in `unit`
  std::string unit;
  std::optional<double> cvPercent;
  std::string candidateHash, deviceCodeSha256;
  std::string controls;           // JSON object text: control -> value
  std::string rendered;           // command-line additions
  double buildMs = 0, measureMs = 0;
  std::string log;
  std::optional<double> runs, noisePercent;   // measured runs, achieved noise (%)
  std::string stoppedBy;          // why measuring stopped (docs/results-csv.md)
  double runsSaved = 0;           // by racing
  std::map<std::string, double> objectives;   // objective metric -> value
  std::optional<Evaluation> journal;   // the journal's evaluation line, typed; nullopt without one
};

struct RunData {
  std::string dir;                // the run directory
  std::string resultsPath, journalPath;   // "" when absent
  std::vector<RecordedEval> evals;  // in evaluation order
  std::vector<RecordedEval> builds; // journal "build" lines: made after the search (<id>-min), not evaluations
  std::vector<std::string> objectiveNames;  // objective columns, ciq.yaml order
  std::string direction = "minimize";       // of the primary objective
  bool directionKnown = false;    // from the journal's start line
  std::optional<RecordedStart> started;   // the journal's start line, typed; nullopt without one
  std::vector<AttributionRow> attribution;   // the journal's last "attribution" rows (engine/record/AfterSearch.h)
  std::vector<MinimizeStep> minimization;    // the journal's last "minimize" steps
  // false: the journal was read and has no "done" line after its last
  // evaluation (a killed or interrupted search, or one still running).
  bool searchEnded = true;

  const RecordedEval *baseline() const;
  const RecordedEval *find(const std::string &idOrHashPrefix) const;   // evals, then builds
  bool better(double a, double b) const { return direction == "maximize" ? a > b : a < b; }
  // The start line's objectives (empty without one); the first is the primary.
  const std::vector<RecordedObjective> &objectives() const;
};

// "" for an ended search (or one without a journal), else the one sentence
// `ciq report` and `ciq diagnose` show: the search stopped before its
// verdict, so its best candidate is provisional.
std::string stoppedBeforeVerdict(const RunData &run);

// Loads a run from a run directory, a results.csv or a journal.jsonl path.
// nullopt with a one-line error (which file, which line, what to do).
std::optional<RunData> loadRun(const std::string &path, std::string &error);


} // namespace ciq
