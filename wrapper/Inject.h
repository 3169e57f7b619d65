// Renders a candidate onto the user's command: the exact command the wrapper
// runs. The same function serves tuning runs and lock mode, so a locked build
// runs the command line the tune measured, less the -v a tuning run adds for
// statistics. That -v changes only ptxas's record of its own command line
// (the cubin's .note.nv.tkinfo, the options nvcc stores beside the PTX in the
// fatbin), never the SASS that the device-code SHA-256 covers.
//
// Rule for an option the user already passes that the candidate also sets:
// the candidate wins. The user's occurrence is removed from argv (or from the
// options file, which is then expanded in place) and named in the receipt's
// overridden_user_options; a tuning run must change what it says it changes.
// An occurrence in NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, which ciq never
// rewrites, is an error.
#pragma once
#include "common/CommandLine.h"
#include "common/Protocol.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

struct Injection {
  std::vector<std::string> argv;        // the complete command to run
  std::vector<std::string> overridden;  // user options removed, as written ("-Xptxas -O3")
  std::vector<std::string> skipped;     // controls that do not reach this compiler
  bool addedVerbose = false;            // the wrapper added ptxas -v (its output is filtered)
  std::string error;                    // a conflict ciq may not resolve; nothing to run
};

// prefix: everything before the user's arguments (launchers, the compiler).
// addVerbose: add ptxas -v when the user did not ask for it (statistics).
Injection injectNvcc(NvccCommand &cmd, const CandidateMessage &c,
                     const std::vector<std::string> &prefix, bool addVerbose);
Injection injectPtxas(PtxasCommand &cmd, const CandidateMessage &c,
                      const std::vector<std::string> &prefix, bool addVerbose);

} // namespace ciq::wrapper
