// A compiler killed by a signal (SIGSEGV, SIGKILL from the OOM killer) is a
// compiler fault, not a rejected control value: the receipt says
// compiler_crash with the signal, so the engine retries once and diagnose
// points at the compiler, not at the candidate's controls.
#pragma once
#include "common/Subprocess.h"

#include <string>

namespace ciq::wrapper {

struct CompilerCrash {
  int signal = 0;       // 0: no crash
  std::string tool;     // "ptxas", "cicc", ... (the compiler itself when it died);
                        // empty when nvcc's shell did not name the tool
};

// The direct child died of a signal (not at the compile timeout), or nvcc
// reports that a tool it ran did: nvcc's own "nvcc error   : 'ptxas' died
// due to signal 9 (Kill signal)", or the report of the shell nvcc runs each
// tool through ("Killed", with nvcc's exit status 128+9).
CompilerCrash detectCompilerCrash(const SubprocessResult &r, const std::string &compilerName);

} // namespace ciq::wrapper
