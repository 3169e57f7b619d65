// `ciq init` (issue 50 item 3): a starting point for a project. For a build
// command (a Makefile, a script) the text of a commented ciq.yaml that tunes
// as written; for a CMake build tree the three lines to paste into its
// CMakeLists.txt. The metric is inferred: without a benchmark a compile-only
// objective (spill bytes, then registers), with one the GPU time of the
// kernels it launches (kernel_time_ms, measured by ciq's CUPTI library; the
// program's wall time where this ciq was built without it).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct InitRequest {
  std::string build;      // --build "<command>": a build command
  std::string run;        // --run "<command>": the benchmark, "" for compile-only
  std::string buildDir;   // --build-dir: a configured CMake build tree
  std::string target;     // --target: a target of that tree
  bool kernelTrace = true;   // this ciq can measure kernel times (kernelTraceLibrary)
  std::string traceWhy;      // why not, for the file's comment
  std::string packageDir;    // <prefix>/lib/cmake/CompileIQ of this ciq
  // A make build: the makefile it reads (its path and text, read by the
  // command; "" when none was found), searched for nvcc called by its path.
  std::string makefilePath, makefileText;
};

// Where a makefile calls nvcc by a path (/usr/local/cuda/bin/nvcc,
// $(CUDA_HOME)/bin/nvcc), which ciq's nvcc stand-in on PATH never sees.
struct NvccByPath {
  std::vector<std::string> variables;   // NVCC := <path>/nvcc: make NVCC=nvcc overrides it
  std::vector<int> recipeLines;         // 1-based lines of recipes that run <path>/nvcc themselves
};
NvccByPath findNvccByPath(const std::string &makefileText);

// The makefile `make` reads for these arguments (-f FILE, -C DIR), relative to
// the current folder: GNUmakefile, makefile or Makefile, whichever `exists`.
std::string makefileOf(const std::vector<std::string> &makeArgs, const std::function<bool(const std::string &)> &exists);

struct InitResult {
  std::string yaml;              // build-command mode: the file's text
  std::vector<std::string> lines; // CMake mode: the lines to print
};

// One shell-like command line split into words (quotes and backslashes as a
// POSIX shell reads them); nullopt with `error` for an empty or unbalanced one.
std::optional<std::vector<std::string>> splitCommand(const std::string &text, const std::string &what,
                                                     std::string &error);

// The yaml of --build [--run]; nullopt with one line for bad input. `notes`
// (when given) gets a line for each thing the command should say: a
// makefile variable overridden so that nvcc is called by name, recipes that
// call it by path.
std::optional<std::string> initYaml(const InitRequest &r, std::string &error,
                                    std::vector<std::string> *notes = nullptr);

// The CMake lines of --build-dir/--target. `exists`: the tree can build the
// target (`cmake --build <dir> --target <t> -- -n` succeeded); `targets`:
// some of its targets, named when it cannot. nullopt with one line for bad
// input.
std::optional<std::vector<std::string>> initCMakeLines(const InitRequest &r, bool exists,
                                                       const std::vector<std::string> &targets, std::string &error);

// The target names of `cmake --build <dir> --target help` output (Ninja's
// "name: phony" lines, make's "... name" lines).
std::vector<std::string> parseTargetHelp(const std::string &text);

} // namespace ciq
