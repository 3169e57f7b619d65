// PTX reuse in tuning runs (docs/wrapper.md, "PTX reuse"). A candidate whose
// controls reach only ptxas (ptxas options, a ptxas ACF) leaves nvcc's front
// end (preprocessor, cudafe++, cicc) and the host compile unchanged. The first
// full compile of a translation unit keeps what nvcc produced (--keep); later
// ptxas-only candidates run ptxas on the kept PTX for each architecture, rebuild
// the fatbin with fatbinary and put it into a copy of the kept host object
// (objcopy --update-section), exactly the commands nvcc itself would run
// (read from `nvcc --dryrun` of the candidate's full command).
//
// Equivalence is checked, not assumed: the candidate's own dry run must list
// the same front-end and host steps as the compile that was kept, every
// source and header of the kept depfile must be unchanged, and the object's
// device code must hash like the fatbin ptxas and fatbinary just produced
// while everything else in it (host code, symbols) hashes like the kept one.
// Anything else is a full compile, with one line in the candidate's log that
// says why. CIQ_PTX_REUSE=0 turns reuse off.
#pragma once
#include "common/CommandLine.h"
#include "wrapper/CompilerCrash.h"
#include "wrapper/PtxDirectives.h"
#include "common/DeviceCode.h"
#include "common/Protocol.h"
#include "wrapper/PtxReuseStore.h"
#include "wrapper/UserKeep.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct ReuseContext {
  std::string nvccPath;               // the real nvcc (not a launcher)
  std::string cwd;
  std::string runDir;                 // CIQ_RUN_DIR: the entries live in <runDir>/ptx-reuse
  std::string output;                 // absolute path of the object
  std::vector<std::string> userArgs;  // the user's arguments, without ciq's controls
  const NvccCommand *cmd = nullptr;   // userArgs parsed
  double timeoutSeconds = 0;          // per tool run, 0: none
  // A private run directory (made for this compile alone): any candidate
  // may keep and reuse its own front end there, not only ptxas-only ones.
  // How per-kernel controls reach ptxas when the candidate (or a lock) also
  // changes the front end.
  bool privateEntry = false;
  // A lock of sections applied to a fat compile (LockMode.h): each ptxas
  // run gets its architecture family's entry ("sm_90": ptxas options, ptxas
  // ACFs, per-kernel directives), none when absent; null: the candidate's.
  const std::map<std::string, CandidateMessage> *perArch = nullptr;
};

struct ReuseResult {
  bool reused = false;
  std::string note;                   // why a full compile is needed ("" when no reason to say)
  int exitCode = 0;
  bool timedOut = false;
  CompilerCrash crash;                // a ptxas killed by a signal (not at the timeout)
  double wallMs = 0;
  std::string err;                    // what ptxas and fatbinary wrote on stderr
  std::vector<std::string> finalArgv; // the ptxas commands run, ";"-separated
  std::string deviceCodeSha256;
  long deviceCodeBytes = 0;
  std::vector<PtxEntry> entries;              // the entries of the PTX ptxas compiled
  std::vector<DirectiveOutcome> directives;   // the candidate's per-kernel controls, per architecture
  std::vector<std::string> editedArchs;       // the architecture of each PTX they were written into
};

// Is this candidate's set of controls one that reaches ptxas alone?
bool ptxasOnly(const CandidateMessage &c);

class PtxReuse {
public:
  explicit PtxReuse(ReuseContext ctx);
  // Removes what a keeping compile that failed left in the run directory.
  ~PtxReuse();
  PtxReuse(const PtxReuse &) = delete;
  PtxReuse &operator=(const PtxReuse &) = delete;

  // "" when the command is one reuse supports (a compile of one source to
  // an object), else why not.
  const std::string &unsupported() const { return unsupported_; }

  // Runs the reuse path for a candidate whose full compile would be
  // `nvcc candArgs`. With needObject false (compile-only objectives) the
  // output object is the kept one: statistics and device-code hash are the
  // candidate's, no host object is assembled.
  ReuseResult tryReuse(const CandidateMessage &c, const std::vector<std::string> &candArgs, bool needObject);

  // The arguments of a full compile of `candArgs` that keeps its front end
  // (the user's own keep options replaced by ciq's; UserKeep.h), empty when
  // nothing is to be kept.
  std::vector<std::string> keepingArgs(const CandidateMessage &c, const std::vector<std::string> &candArgs);

  // After that full compile succeeded: files its output as the entry.
  // "" on success, else why nothing was kept.
  std::string keep(const std::vector<std::string> &candArgs);

  // The folder this translation unit's kept files go to ("" when reuse is
  // unsupported): where a full or read-only run directory shows.
  const std::string &folder() const { return dir_; }

  // The entries of the kept PTX (after keep(), or of an entry kept earlier).
  std::vector<PtxEntry> keptEntries();

private:
  ReuseContext ctx_;
  std::string unsupported_;
  std::string key_, dir_, tmpDir_, userDepfile_;
  UserKeep userKeep_;   // the intermediates the user's -keep or -save-temps asks for
  std::optional<KeptEntry> entry_;
  bool loaded_ = false;
  std::string stale_;   // a dependency that changed since the entry was kept
  bool keeping_ = false;

  const std::optional<KeptEntry> &entry();
  bool mayKeep(const CandidateMessage &c) const { return unsupported_.empty() && (ctx_.privateEntry || ptxasOnly(c)); }
  const CandidateMessage &stepCandidate(std::vector<std::string> &ptxasArgv, const CandidateMessage &c) const;
  std::string ptxasStep(std::vector<std::string> &ptxasArgv, const std::string &bin, const CandidateMessage &c,
                        const std::string &work, size_t index, ReuseResult &res,
                        std::vector<std::pair<std::string, std::string>> &moved);
  std::string editPtx(std::vector<std::string> &ptxasArgv, const CandidateMessage &c, const std::string &work,
                      size_t index, ReuseResult &res, std::vector<std::pair<std::string, std::string>> &moved);
  // Copies what nvcc kept in keepDir, `built` replacing kept files, to the
  // user's keep folder; "" or why it could not.
  std::string keepForUser(const std::string &keepDir,
                          const std::vector<std::pair<std::string, std::string>> &built) const;
  std::vector<std::string> dryRunArgs(const std::vector<std::string> &candArgs, const std::string &keepDir) const;
  // The kept object with `fatbinFile` as its fatbin section, written to
  // `object` by the first objcopy whose result carries that device code and
  // is the kept object's everywhere else; "" or why none could.
  // The candidate's object at ctx_.output (and the user's depfile): the kept
  // one, or the kept one with `fatbinFile` when needObject. "" or why not.
  std::string writeObject(const std::string &fatbinFile, const DeviceCode &fatbin, const std::string &object,
                          bool needObject) const;
  std::string assembleObject(const std::string &fatbinFile, const DeviceCode &fatbin, const std::string &object) const;
};

} // namespace ciq::wrapper
