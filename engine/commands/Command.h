// Subcommands of `ciq`: each lives in engine/commands/<name>.cpp, declares an
// llvm::cl::SubCommand with its own options, and registers its entry point
// here. main.cpp parses the command line once and runs the chosen one.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <llvm/Support/CommandLine.h>
#include <vector>

namespace ciq {

struct CommandEntry {
  llvm::cl::SubCommand *sub;
  std::function<int()> run;   // exit status
};

std::vector<CommandEntry> &commandRegistry();

struct RegisterCommand {
  RegisterCommand(llvm::cl::SubCommand &sub, std::function<int()> run) {
    commandRegistry().push_back({&sub, std::move(run)});
  }
};

// The one line an error gets: "ciq: error: <what> (<where>); <what to do>".
// Prints to stderr, returns the exit status to use (1).
int reportError(const std::string &message);
void reportWarning(const std::string &message);
void reportNote(const std::string &message);

// ciq.yaml (loadConfig), after putting back the build tree a killed search
// left with candidate objects (BuildTreeGuard.h): every command that reads a
// config does this first, and says so in a note.
struct TuneConfig;
std::optional<TuneConfig> openConfig(const std::string &path, std::string &error);

// What `ciq tune`, `resume` and `canary` print after the search loop
// (Tune.h), and their exit status (commands/tune.cpp).
struct TuneOutcome;
int showTuneOutcome(const TuneOutcome &outcome);

} // namespace ciq
