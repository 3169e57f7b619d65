// What a CMake "Unix Makefiles" build remakes from the tuned objects: the
// files whose rules in the targets' build.make name one of them as a
// prerequisite (the executable or library, the device link object of
// separable compilation).
//
// Why ciq needs them: GNU make re-reads an object's date after its recipe
// ran, so an object that ciq dates 1970 as its receipt arrives (so that a
// kill -9 mid-build leaves nothing a plain build would link) is older than
// the executable it feeds, and make would skip the candidate's link. Dating
// these outputs 1970 too, one second earlier than the objects
// (CMakeBuild::clean), keeps every link of the candidate build.
#pragma once
#include <string>
#include <vector>

namespace ciq {

// The build.make of each target, found in <buildDir>/CMakeFiles/Makefile2
// (absolute paths; none where the tree is not a Makefile one).
std::vector<std::string> makeTargetRuleFiles(const std::string &buildDir, const std::vector<std::string> &targets);

// The outputs of rules in ruleFiles with one of objects (absolute, physical
// paths) as a prerequisite, the objects themselves left out. CMake writes a
// rule per prerequisite, `out: prereq`, paths relative to the top of the
// build tree with spaces and '#' escaped by a backslash and '$' doubled.
// unconsumed (when given) gets the objects no rule read consumes.
std::vector<std::string> makeDependants(const std::string &buildDir, const std::vector<std::string> &ruleFiles,
                                        const std::vector<std::string> &objects,
                                        std::vector<std::string> *unconsumed = nullptr);

} // namespace ciq
