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

// The same search on another search path (a child's PATH value): ""
// entries are the current folder, as for execvp.
std::optional<std::string> findExecutableOn(const std::string &name, const std::string &searchPathValue);

// True for ciq-ptxas or its driver under any name (a link's target, or the
// file's own name): what a stand-in must never take for the real compiler.
bool isCiqPtxas(const std::string &path);

// True for a compiler cache (ccache, sccache, buildcache) under any name: a
// link named nvcc to ccache runs the next nvcc on PATH (which may be a ciq
// stand-in), so it is never the real compiler (issue 41 item 4).
bool isCompilerCache(const std::string &path);

// The real compiler `name` on PATH: the first executable that is neither
// `skip` nor ciq-ptxas nor a compiler cache under that name.
std::optional<std::string> findRealCompiler(const std::string &name, const std::string &skip = "");

} // namespace ciq
