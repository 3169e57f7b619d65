// A program copy's command.json (engine/run/ProgramCopies.cpp): the
// command that runs the copy, with the folders its paths were written under,
// so that a resumed tune whose run dir or build tree has moved since (a CI
// cache restored elsewhere, a renamed checkout) rewrites them to where they
// are now instead of running, or refusing, paths that no longer exist.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// command.json's text: {"command": [...], "copy_dir": dir, "build_dir": build}.
std::string programCopyJson(const std::vector<std::string> &cmd, const std::string &copyDir,
                            const std::string &buildDir);

// `s` with a path under `from` (at its start, or after '=' as in
// CIQ_BUILD_ARTIFACTS=<path>) moved under `to`; unchanged otherwise.
std::string movedPath(const std::string &s, const std::string &from, const std::string &to);

// The command of the copy in `copyDir`, its paths under the recorded copy
// folder and build tree moved to `copyDir` and `buildDir` (and so the
// artifact manifest's entries, rewritten in place together with
// command.json). A command.json of an earlier release (a bare array) is read
// as it is. nullopt with `error` when it cannot be read or rewritten.
std::optional<std::vector<std::string>> readProgramCopy(const std::string &copyDir, const std::string &buildDir,
                                                        std::string &error);

} // namespace ciq
