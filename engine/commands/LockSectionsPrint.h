// What `ciq lock show` and `ciq lock verify` print of a lock of sections
// (common/LockSections.h): one line per architecture.
#pragma once
#include "common/LockSections.h"

#include <string>
#include <vector>

namespace ciq {

// "sections:" and one line per architecture: winner, how it was measured, score.
void printSectionSummary(const LockSet &set);

// Each section against the build's SASS of its architecture: one line per
// architecture; an error line names each architecture that differs. The
// number of sections that differ, or 1 with the error when an object cannot
// be read.
int verifySections(const LockSet &set, const std::string &lockPath, const std::vector<std::string> &objects,
                   const std::string &what);

} // namespace ciq
