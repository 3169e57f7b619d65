// journal.jsonl: append-only, fsync'd, one JSON object per line
// (docs/journal.md), each with a checksum. A line cut short by a kill is
// ignored on reading; a damaged line is reported.
#pragma once
#include "engine/Evaluation.h"
#include "common/JournalLines.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

class Journal {
public:
  ~Journal();
  bool open(const std::string &path, std::string &error);
  // Appends one line and fsyncs it: once this returns, the line survives kill -9.
  bool append(const nlohmann::json &line);
  const std::string &path() const { return path_; }

private:
  void dropTornTail();
  int fd_ = -1;
  std::string path_;
};

struct JournalContents {
  nlohmann::json start;                  // the "start" line, or null
  nlohmann::json inputs;                 // the "inputs" line (InputIdentity.h), or null
  std::vector<Evaluation> evaluations;   // in order
  std::vector<Evaluation> builds;        // "build" lines: made after the search (<id>-min), never resumed
  std::vector<int> completedGenerations;
  bool done = false;
  nlohmann::json winner;                 // the "winner" line, or null
  nlohmann::json canary;                 // the last "canary" line, or null
  // "<file>:<line>: what is wrong" for every line that failed its checksum,
  // is not JSON or has a field of the wrong type (the rest is kept).
  std::vector<std::string> damaged;
  int nextId = 0;                        // the first candidate number never used
};

JournalContents readJournal(const std::string &path);
// "c0042" -> 42; -1 for anything else.
int candidateNumber(const std::string &id);

} // namespace ciq
