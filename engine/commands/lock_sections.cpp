// `ciq lock show|verify` of a lock of sections: a line per architecture.
#include "engine/commands/LockSectionsPrint.h"

#include "engine/commands/Command.h"
#include "engine/winner/LockSectionCheck.h"
#include "common/JsonRead.h"
#include "common/NumberFormat.h"

#include <cstdio>

namespace ciq {

namespace {

// "spill_bytes 64 -> 0 bytes" from a section's score.
std::string scoreLine(const nlohmann::json &s) {
  if (!s.is_object() || s.empty())
    return "no score recorded";
  auto num = [&](const char *k) {
    auto v = numberAt(s, k);
    return v ? fmt::value(*v) : std::string("?");
  };
  std::string unit = stringAt(s, "unit");
  return stringAt(s, "objective", "score") + " " + num("baseline") + " -> " + num("winner") +
         (unit.empty() ? "" : " " + unit);
}

std::string measuredText(const Lockfile &l) {
  if (l.measured == "gpu")
    return "measured on the GPU";
  if (l.measured == "compile-only")
    return "compile-only";
  return "measured how: not recorded";
}

} // namespace

void printSectionSummary(const LockSet &set) {
  if (set.oneWinner()) {
    printf("sections:      one winner for every architecture (a schema-1 lock)\n");
    return;
  }
  printf("sections:      %zu, a winner per architecture (an architecture without one builds with the compiler "
         "defaults)\n",
         set.sections.size());
  for (const auto &s : set.sections)
    printf("  %-7s %s: %s  [%s]\n", s.section.c_str(), s.candidateId.c_str(), scoreLine(s.score).c_str(),
           measuredText(s).c_str());
}

int verifySections(const LockSet &set, const std::string &lockPath, const std::vector<std::string> &objects,
                   const std::string &what) {
  std::string err;
  auto checks = checkSections(set, objects, err);
  if (!checks)
    return reportError(err);
  int bad = 0;
  for (const auto &c : *checks) {
    switch (c.state) {
    case ArchCheck::State::Matches:
      printf("%s: device code matches section %s (%s) of %s\n", c.arch.c_str(), c.arch.c_str(), c.candidateId.c_str(),
             lockPath.c_str());
      break;
    case ArchCheck::State::Differs:
      ++bad;
      reportError(c.arch + ": device code of " + what + " is not section " + c.arch + "'s winner (" + c.candidateId +
                  "): " + c.detail + "; rebuild with the lock applied (ciq_apply_lock, or ciq-ptxas --lock), or tune " +
                  c.arch + " again");
      break;
    case ArchCheck::State::Unchecked:
      reportWarning(c.arch + ": not checked: " + c.detail);
      break;
    }
  }
  return bad;
}

} // namespace ciq
