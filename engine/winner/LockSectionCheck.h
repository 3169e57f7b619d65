// `ciq lock verify` of a lock of sections (common/LockSections.h): each
// section's winner against that architecture's SASS in the build, so the
// architecture that differs is named (docs/lockfile.md, "Sections").
#pragma once
#include "common/LockSections.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct ArchCheck {
  std::string arch;          // the section, "sm_90"
  std::string candidateId;   // its winner
  enum class State { Matches, Differs, Unchecked } state = State::Unchecked;
  std::string detail;        // what differs, or why it cannot be checked
};

// The recorded device-code section lines (device_code_sections) of `l`, all
// units together; `arch` non-empty: that architecture family's only.
std::vector<std::string> lockedSectionLines(const Lockfile &l, const std::string &arch = "");

// Whether `l`'s device-code identity (device_code_sha256) covers its own
// architecture alone: a schema-1 lock, a narrowed tune, or a build of that
// one architecture. Otherwise only its section lines identify it per arch.
bool identityIsOwnArchitecture(const Lockfile &l);

// Each section against `objects` (object files, cubins, fatbins, shared
// objects: what readDeviceCode reads). nullopt with one line when an object
// cannot be read.
std::optional<std::vector<ArchCheck>> checkSections(const LockSet &set, const std::vector<std::string> &objects,
                                                    std::string &error);

} // namespace ciq
