// journal.jsonl: append-only, fsync'd, one JSON object per line
// (docs/journal.md), each with a checksum. A line cut short by a kill is
// ignored on reading; a damaged line is reported. The schema of its lines
// lives here alone: the writers (startToJson, evaluationToJson, buildToJson)
// and the one reader (readJournal) that the engine and the analysis
// commands both use.
#pragma once
#include "engine/record/AfterSearch.h"
#include "engine/record/Evaluation.h"
#include "common/JournalLines.h"

#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

class Journal {
public:
  ~Journal();
  bool open(const std::string &path, std::string &error);
  // Appends one line and fsyncs it: once this returns true, the line
  // survives kill -9. False when the write or the fsync failed (a full,
  // read-only or failing disk, an immutable file): the part written is cut
  // off again, error() says what, where and the errno, and every later
  // append is refused, so the journal never has a line missing before others.
  bool append(const nlohmann::json &line);
  // "" until an append failed: "cannot append to the journal <path>: No
  // space left on device (ENOSPC)".
  const std::string &error() const { return error_; }
  // The errno behind error() or open()'s error, 0 before a failure.
  int errorNumber() const { return errno_; }
  const std::string &path() const { return path_; }

private:
  void dropTornTail();
  bool refuse(const char *what, int err, long long sizeBefore);
  int fd_ = -1;
  std::string path_;
  std::string error_;
  int errno_ = 0;
};

// One objective of the start line, as the search's ciq.yaml had it.
struct RecordedObjective {
  std::string metric, direction = "minimize", unit;
};

// The start line: what the search was (docs/journal.md). A resume checks the
// space identity, seed and strategy against ciq.yaml; the analysis commands
// read the objectives and the search's shape.
struct RecordedStart {
  int version = 1;
  std::string engineVersion, configPath, spaceIdentity, strategy, target, startedAt;
  double spaceSize = 0;
  unsigned long long seed = 0;
  struct Search {
    std::string strategy;
    int poolSize = 0, generations = 0, cullSize = 0, elitism = 0;
    double mutateRate = 0;
    unsigned long long seed = 0;
    int proposeAhead = 0;   // search.propose_ahead as resolved (0 in journals from before it)
  } search;
  std::vector<RecordedObjective> objectives;   // the first is the primary
  bool pareto = false;   // ranked by non-dominated sorting (pareto: true), else lexicographic
  // How candidates are measured (null without a benchmark): the engine's
  // measurementLine (Tune.cpp); of its members the readers use one.
  nlohmann::json measurement;
  double targetNoisePercent = -1;   // measurement.target_noise_percent; <0: absent
};

nlohmann::json startToJson(const RecordedStart &s);
// Reads the start line, checking every type; false with error
// "<where>: "<key>": expected ..., found ...".
bool startFromJson(const nlohmann::json &j, RecordedStart &s, std::string &error, const std::string &where);

// Everything the engine (resume, replay) and the analysis commands (diagnose,
// explain, report) read from a journal: this is its one reader.
struct JournalContents {
  nlohmann::json start;                  // the "start" line, or null
  std::optional<RecordedStart> started;  // the same, typed; nullopt without one or when it is damaged
  nlohmann::json inputs;                 // the "inputs" line (InputIdentity.h), or null
  std::vector<Evaluation> evaluations;   // in order
  std::vector<Evaluation> builds;        // "build" lines: made after the search (<id>-min), never resumed
  std::vector<int> completedGenerations;
  bool done = false;
  // The budget of the last "done" line: a finished search resumes only with
  // a larger one (0: a journal from before it, or a canary's).
  int doneBudget = 0;
  nlohmann::json winner;                 // the "winner" line, or null
  // The "warm" line (issue 49 item 5): a re-tune after an edit of the
  // program started from an earlier search's winner and evaluations; null: cold.
  nlohmann::json warm;
  // The last "canary" line says the canary passed ("ok": true) or was
  // skipped by --no-canary ("skipped": true): a resume need not run it.
  bool canaryDone = false;
  std::vector<AttributionRow> attribution;   // the rows of the last "attribution" line (AfterSearch.h)
  std::vector<MinimizeStep> minimization;    // the steps of the last "minimize" line
  std::vector<MinimizeTrial> minimizeTrials;  // every "minimize_trial" line, in order
  std::vector<RehearsalRecord> rehearsals;    // every "rehearsal" line, in order
  // Every "run" line (issue 49 item 3): the runs of an interleaved
  // re-measurement after the search (finalists, minimization, attribution),
  // by its key, round-major, NaN where a build did not run (raced, or the
  // kill came first). A run already taken begins the key's rounds again
  // (the same measurement made anew).
  std::map<std::string, std::vector<std::vector<double>>> rounds;
  // "<file>:<line>: what is wrong" for every line that failed its checksum,
  // is not JSON or has a field of the wrong type (the rest is kept; a start
  // line with a wrong type is kept as `start`, without `started`).
  // Lines of an op this reader does not know are skipped, not damaged.
  std::vector<std::string> damaged;
  int nextId = 0;                        // the first candidate number never used
};

// Reads every intact line (common/JournalLines.h); a last line cut short by
// a kill is no record. A path that cannot be a journal (a directory) is one
// entry of `damaged`.
JournalContents readJournal(const std::string &path);
// One "run" line: build `build`'s run in round `round` of the measurement `key`.
nlohmann::json runToJson(const std::string &key, int round, size_t build, double value);
// "c0042" -> 42; -1 for anything else.
int candidateNumber(const std::string &id);

} // namespace ciq
