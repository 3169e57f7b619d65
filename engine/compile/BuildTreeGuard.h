// The user's build tree never keeps a candidate's objects once ciq is gone.
// While a search builds in it, <build>/CMakeFiles/ciq-candidate-objects.txt
// lists the objects ciq rebuilds; a normal end and SIGINT/SIGTERM/SIGHUP
// remove them (the next plain build recompiles them with the user's flags),
// and after a kill -9 the next ciq command or the next configure of the
// project (CompileIQ.cmake) removes what the list names, saying so. Until
// then the objects' 1970 dates make a plain build recompile them
// (CandidateBuilder: after each build, and under Ninja and make as each
// receipt arrives).
#pragma once
#include <string>
#include <vector>

namespace ciq {

std::string candidateObjectsList(const std::string &buildDir);

// Writes the list and arms the signal-time removal of the objects and of the
// engine's socket file.
void guardBuildTree(const std::string &buildDir, const std::string &runDir, const std::vector<std::string> &objects,
                    const std::string &socketPath);
// After the objects were removed on a normal end: the list goes too.
void releaseBuildTree(const std::string &buildDir);

// The dates ciq gives files of the user's tree while it builds candidates,
// older than any source: each tuned object (after its build, and as its
// receipt arrives where the build tool allows it) and, under make, the files
// linked from those objects, one second older still (engine/compile/MakeRules.h).
constexpr long kCandidateObjectDate = 1; // seconds since 1970
constexpr long kLinkedFromObjectsDate = 0;
void setFileDate(const std::string &path, long secondsSince1970);

// A list left by a killed search: removes the objects it names and the list;
// note is the one line to print (empty when there was nothing to repair).
// The compiles that search left running (runDir/procs) are ended first, so
// that none writes an object after the repair.
void repairBuildTree(const std::string &buildDir, const std::string &runDir, std::string &note);

} // namespace ciq
