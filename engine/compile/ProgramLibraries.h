// The shared libraries a built program loads from the project's build tree
// (issue 56 item 8): a benchmark linked to a SHARED library of the project
// finds it there at run time (CMake's build RPATH, a Makefile's -rpath), so a
// copy of the program alone would load whichever build of the library the
// tree holds when it runs: the last candidate's.
#pragma once
#include <string>
#include <vector>

namespace ciq {

// The files under `root` that `program` (a 64-bit little-endian ELF) names in
// DT_NEEDED and finds in its DT_RUNPATH or DT_RPATH folders ($ORIGIN: the
// folder of `origin`, where the program was built), its direct dependencies
// only, physical paths. Empty for a program that is not such an ELF (a
// script) or that loads nothing from there.
std::vector<std::string> buildTreeLibraries(const std::string &program, const std::string &origin,
                                            const std::string &root);

} // namespace ciq
