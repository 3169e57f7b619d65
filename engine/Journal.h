// journal.jsonl: append-only, fsync'd, one JSON object per line
// (docs/journal.md). A line cut short by a kill is ignored on reading.
#pragma once
#include "Evaluation.h"

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
  std::vector<Evaluation> evaluations;   // in order
  std::vector<int> completedGenerations;
  bool done = false;
  nlohmann::json winner;                 // the "winner" line, or null
};

JournalContents readJournal(const std::string &path);

} // namespace ciq
