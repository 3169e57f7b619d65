// Finding a program the way execvp would, for the engine and both halves of
// ciq-ptxas. Depends on libc and libstdc++ only: the ciq-ptxas front links it
// statically and must stay small.
#pragma once
#include <optional>
#include <string>

namespace ciq {

// Finds an executable on PATH (or returns it unchanged when it holds a '/').
// Paths equal to `skip` (after realpath) are passed over: a stand-in must
// never find itself.
std::optional<std::string> findExecutable(const std::string &name,
                                          const std::string &skip = "");

// True for ciq-ptxas or its driver under any name (a link's target, or the
// file's own name): what a stand-in must never take for the real compiler.
bool isCiqPtxas(const std::string &path);

} // namespace ciq
