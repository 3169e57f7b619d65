// One compiler invocation, prepared and run: the parts that differ between
// nvcc and ptxas (Prepared), the compiler run with its stderr read for
// ptxas's report (runCompiler), and the checks every mode makes before it
// (ACFs, the compile timeout).
#pragma once
#include "common/BuildMode.h"
#include "common/Protocol.h"
#include "common/Subprocess.h"
#include "common/CommandLine.h"
#include "wrapper/Inject.h"
#include "wrapper/Invocation.h"

#include <functional>
#include <string>
#include <vector>

namespace ciq {
class CompileRegistration;
}

namespace ciq::wrapper {

double compileTimeout(const CandidateMessage &c);

struct Outcome {
  SubprocessResult run;
  std::vector<KernelStats> kernels;
  int capOverridesUnattributed = 0;
  bool timedOut = false;
  bool ptxasReported = false;  // a -v report was printed: ptxas ran in this invocation
  bool cacheHit = false;       // a compiler cache in the command answered: no compiler ran
};

// Runs the final command: stdout and stdin are the user's; stderr is read so
// the ptxas -v report can be parsed and, when ciq asked for it, removed.
// engineFd: the engine's connection, watched while the compiler runs (the
// engine sends nothing while it waits for the receipt: news is its end).
Outcome runCompiler(const Injection &inj, double timeout, bool wantStats, const std::vector<std::string> &named,
                    CompileRegistration *reg = nullptr, int engineFd = -1);

std::string folderOf(const std::string &path);
int timeoutError(const std::string &source, const CandidateMessage &c, double limit);

// The parts of one invocation that differ between nvcc and ptxas.
struct Prepared {
  bool ptxasRuns = false;
  bool versionQuery = false;     // ptxas --version in a tuning run
  std::string source, output;    // absolute
  std::vector<std::string> namedOutputs; // -o and -MF as given on the command line, absolute
  std::vector<std::string> sassArchs;
  BuildMode mode;                // -G / -lineinfo of this compile
  std::string nvccPath, ptxasPath;
  std::function<Injection(const CandidateMessage &, bool)> inject;
  std::string error;
  // Where the compile writes: its outputs' folders and the temporary folder
  // (nvcc's intermediate files, ptxas's cubins), plus the kept PTX's.
  std::vector<std::string> folders(const std::string &kept) const;
};

// Keeps the parsed command alive for the injection closure.
struct Parsed {
  NvccCommand nvcc;
  PtxasCommand ptxas;
};

Prepared prepare(const Invocation &inv, Parsed &p, const std::string &cwd);

// ptxas --version with a line naming the candidate (or lock) appended.
int versionWithCandidate(const Invocation &inv, const CandidateMessage &c, const std::string &what = "candidate");

// Every ACF of `c` readable, and at a path the compiler gets whole; "" or the problem.
std::string stageAcfs(CandidateMessage &c, const std::string &whose);

} // namespace ciq::wrapper
