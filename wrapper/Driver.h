// ciq-ptxas: entry modes and the run of one compiler invocation.
//
//   ciq-ptxas [--lock FILE] [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args...
//   ptxas args...   (a link or copy named ptxas: stand-in, real one from CIQ_REAL_PTXAS or PATH)
//   nvcc args...    (a link or copy named nvcc: stand-in, real one from CIQ_REAL_NVCC or PATH)
//
// Environment: CIQ_SOCKET (tuning run, set by `ciq tune`), CIQ_SOCKET_TIMEOUT
// (s, default 20), CIQ_COMPILE_TIMEOUT (s), CIQ_LOCK, CIQ_LOCK_POLICY.
#pragma once

namespace ciq::wrapper {

// Everything but the plain launcher pass-through (which main.cpp, the front,
// handles with one exec); returns the exit status (the compiler's, unchanged).
int runWrapper(int argc, char **argv);

} // namespace ciq::wrapper
