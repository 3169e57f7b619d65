// The lines of journal.jsonl, checked: every line carries a checksum of its
// own text, so a line damaged anywhere (NULs, a flipped byte, a cut) is found
// and reported instead of read as something else. Shared by the engine
// (tune, resume) and the analysis commands (diagnose, explain, report).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

// The text of one journal line (without its newline) for a JSON object:
// {"line_sha256":"<16 hex>",<the object's members>}.
std::string journalLineText(const nlohmann::json &object);

// One intact line: its checksum held and it is a JSON object with a string "op".
struct JournalLine {
  int number;
  std::string op;
  nlohmann::json object;
};

// Intact lines in order; "<file>:<line>: what is wrong" in damaged for the
// others. A last line without its newline (a write cut short by kill -9,
// never fsync'd) is no record. False only when path cannot be a journal.
bool readJournalLines(const std::string &path, std::vector<JournalLine> &lines, std::vector<std::string> &damaged,
                      std::string &error);

} // namespace ciq
