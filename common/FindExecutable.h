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

} // namespace ciq
