// A lock of schema 2 holds a section per SASS architecture (docs/lockfile.md,
// "Sections"): a fat build applies each architecture's winner to that
// architecture's ptxas call, and an architecture without a section gets the
// default compile. A lock of schema 1 reads as one winner for every
// architecture (the rule it was written under).
#pragma once
#include "common/Lockfile.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct LockSet {
  int schemaVersion = kLockSchemaVersion;
  std::string target;
  std::string engineVersion, createdAt;   // of the last write
  // Sorted by architecture. A schema-1 lock: one, whose `section` is "".
  std::vector<Lockfile> sections;
  nlohmann::json extra = nlohmann::json::object(); // top-level keys a reader does not know, kept
  bool sealed = true;

  // A schema-1 lock: its one winner applies to every architecture.
  bool oneWinner() const { return sections.size() == 1 && sections[0].section.empty(); }
  // The section that applies to `arch` (sm_90a counts as sm_90; a schema-1
  // lock's one winner for any), or null: the default compile.
  const Lockfile *sectionFor(const std::string &arch) const;
  std::vector<std::string> names() const;   // "sm_80", "sm_90"
};

// "sm_" and a number, optionally followed by 'a' or 'f' (sm_90a, sm_100f).
bool isArchitectureName(const std::string &arch);
// sm_90a and sm_100f are the GPUs of sm_90 and sm_100: one section each.
std::string archFamilyOf(const std::string &arch);

// Reads a lock of either schema. One error line on failure: the file, the
// section and key, what to do. Sections whose -D parameters differ are
// refused (one build preprocesses each source once for all architectures).
std::optional<LockSet> readLockSet(const std::string &path, std::string &error, bool checkIntegrity = true);
nlohmann::json lockSetToJson(const LockSet &set);   // with lock_sha256
bool writeLockSet(const std::string &path, const LockSet &set, std::string &error, int *errNo = nullptr);

// A winner as sections: l.section's alone, else one per architecture of
// l.architectures (a tune compiled for several at once measured them together).
LockSet lockSetOf(const Lockfile &l);

// "" or why these sections cannot be one lock: their -D parameters differ.
std::string definesConflict(const std::vector<Lockfile> &sections, const std::string &where);

// What adding `added` to `into` did: the sections now, those replaced.
struct SectionMerge {
  std::vector<std::string> replaced;     // architectures whose earlier winner went
  bool replacedOneWinner = false;        // `into` was a schema-1 lock, replaced whole
};
// Writes or replaces `added`'s sections and keeps the others; false with one
// line when the -D parameters would differ between sections, or when `into`
// holds another target's lock (a tune never discards another target's winners).
bool mergeSections(LockSet &into, const LockSet &added, SectionMerge &merge, std::string &error);

// The section of `path` for `arch` (a schema-1 lock's one winner; "" : the
// lock's only section), or one line that names the sections it has.
std::optional<Lockfile> readLockSection(const std::string &path, const std::string &arch, std::string &error);
// Writes `section` (read by readLockSection, then changed) in its place; the
// other sections stay as they are.
bool writeLockSection(const std::string &path, const Lockfile &section, std::string &error);

// Every compile argument any section's lockCompileArgs() renders: what a tune
// strips from a build that applied an earlier lock.
std::vector<std::string> lockSetCompileArgs(const LockSet &set, const std::string &lockPath);

} // namespace ciq
