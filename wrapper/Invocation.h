// What one ciq-ptxas process was asked to do, read from its argv and its
// name: the launcher chain, the compiler behind it, the user's arguments
// (Driver.h gives the forms), and the small process helpers every mode uses.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct Invocation {
  std::string mode;                  // "launcher", "ptxas-standin", "nvcc-standin"
  std::string kind;                  // "nvcc", "ptxas", or "" (a compiler ciq does not know)
  std::vector<std::string> prefix;   // launchers and the compiler, as they will run
  std::string compilerPath;          // the real compiler, resolved
  std::vector<std::string> args;     // the user's arguments after the compiler
  std::string lockPath;
  std::string lockPolicy = "error";
  // Lock mode in a rehearsal: the lock whose arguments ciq_apply_lock() may
  // have put on this compile line (removed before lockPath's are added).
  std::string replacesLock;
};

// One line on stderr ("ciq-ptxas: error: ..."); fail returns `status`.
int fail(const std::string &msg, int status = 1);
void warn(const std::string &msg);
void note(const std::string &msg);

std::string baseName(const std::string &p);
std::string getEnv(const char *name);
std::string currentDir();
std::string absolute(const std::string &p, const std::string &cwd);
void writeAll(int fd, const std::string &s);

// Stand-ins: the real compiler from CIQ_REAL_<TOOL> or PATH minus this file.
std::optional<std::string> findReal(const std::string &tool, std::string &error);
// Marks the environment so a stand-in that reaches itself again stops.
bool enterStandin(const std::string &tool, std::string &error);
// Launcher argv: [ciq options] [launchers...] compiler args...
bool parseLauncher(int argc, char **argv, Invocation &inv, std::string &error);
// A compiler cache that runs ciq-ptxas as its compiler: why that is refused, or "".
std::string cacheParentProblem();
// Replaces this process with argv; returns only on failure (127).
int execArgv(const std::vector<std::string> &argv);

} // namespace ciq::wrapper
