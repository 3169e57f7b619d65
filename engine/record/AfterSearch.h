// What the journal (and the lockfile) record about the winner after the
// search: the attribution rows (the winner's parts measured against the
// baseline, engine/winner/Attribution.h) and the minimization steps (which controls
// earned their place, engine/winner/Minimize.h). Their one writer and one reader;
// `ciq report` reads them through readJournal (Journal.h).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// One build of the attribution. The first row is the reference (the
// baseline) and has no comparison: speedup, pValue, significant and verdict
// are written for the others only.
struct AttributionRow {
  std::string name, controls;       // controls: the rendered command-line summary
  double median = 0, cvPercent = 0;
  long runs = 0;
  std::optional<double> speedup;    // nullopt: undefined (a median of 0 to divide by)
  std::optional<double> pValue;     // nullopt: an exact comparison (compile-only)
  bool significant = false;
  std::string verdict;
};

nlohmann::json attributionToJson(const std::vector<AttributionRow> &rows);
// False with error "<where>[i]: "<key>": expected ..., found ...".
bool attributionFromJson(const nlohmann::json &rows, std::vector<AttributionRow> &out, std::string &error,
                         const std::string &where);

struct MinimizeStep {
  std::string removed;   // "group ptxas controls" or "control maxrreg"
  bool dropped = false;  // the removal was not worse: the control(s) left the winner
  std::string detail;    // the comparison, one line ("p = 0.41: may be noise")
};

nlohmann::json minimizeStepsToJson(const std::vector<MinimizeStep> &steps);
bool minimizeStepsFromJson(const nlohmann::json &steps, std::vector<MinimizeStep> &out, std::string &error,
                           const std::string &where);

// One comparison of the minimization, journaled as soon as it is made
// ("op": "minimize_trial"), so that a search stopped or killed during its
// minimization does not measure it again on `ciq resume` (each can take
// minutes of benchmark runs).
struct MinimizeTrial {
  std::string from;                   // the winner's candidate id
  std::vector<int> current, reduced;  // the points compared (Rendered.h: Point)
  bool worse = false;                 // reduced is worse: the control(s) stay
  std::string detail;                 // the comparison, one line
};

nlohmann::json minimizeTrialToJson(const MinimizeTrial &t);
bool minimizeTrialFromJson(const nlohmann::json &j, MinimizeTrial &t, std::string &error, const std::string &where);

// The rehearsal of a winner before its lock is written
// (engine/winner/Rehearsal.h), journaled as it ends ("op": "rehearsal"): a
// resumed search rehearses no candidate twice, and never locks one whose
// rehearsal failed.
struct RehearsalRecord {
  std::string candidateId, candidateHash;
  bool ok = false;
  std::string reason, message;         // why it failed (rehearsal_failed), one line
  double buildMs = 0;                  // the lock route's build
  std::vector<std::string> snapshot;   // the rehearsed benchmark program (runtime objectives)
  // The rehearsed build's device-code sections per translation unit (lock
  // relative source -> DeviceCode::sections): the lock keeps them, so a
  // verify that differs names the section (device_code_sections).
  nlohmann::json sections;
};

nlohmann::json rehearsalToJson(const RehearsalRecord &r);
bool rehearsalFromJson(const nlohmann::json &j, RehearsalRecord &r, std::string &error, const std::string &where);

} // namespace ciq
