// A candidate's per-translation-unit options (UnitOptions.h) for one
// compile: both sides fold them in, ciq-ptxas before it injects and the lock
// rule (LockMode) before it splits a lock by architecture.
#pragma once
#include "common/Protocol.h"

#include <string>

namespace ciq {

// Folds the options for `source` (the compile's own source, made absolute)
// into the candidate's options, so that PTX reuse, the injection and the
// receipt see them like any other.
void foldUnitOptions(CandidateMessage &c, const std::string &source);

} // namespace ciq
