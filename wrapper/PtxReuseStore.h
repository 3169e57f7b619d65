// The kept front end of one translation unit (docs/wrapper.md, "PTX reuse"):
// what a full nvcc compile left in its --keep-dir (the PTX per architecture,
// the host object, the fatbin), filed under the run directory by a key over
// everything that can change that output:
//   - the user's compile command without ciq's controls, the working
//     directory, NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS/NVCC_CCBIN and PATH
//     (which host compiler runs);
//   - the identity (path, size, modification time) of nvcc, cicc and cudafe++.
// The contents of the source and of every header in the compile's depfile are
// not in the key (the depfile is known only after the compile) but in the
// entry: each use re-hashes them, and any change discards the entry.
//
// Layout: <run dir>/ptx-reuse/<key>/{manifest.json, object.o, deps.d, keep/}.
// An entry is written under a temporary name and renamed into place, so a
// reader never sees half of one.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

struct KeyInputs {
  std::string nvccPath;               // the real nvcc
  std::string cwd;
  std::vector<std::string> userArgs;  // the user's arguments, ciq's controls not added
};

// The path with links resolved (the path itself when it cannot be).
std::string resolvedPath(const std::string &p);

// The SHA-256 key of one translation unit's front end.
std::string frontEndKey(const KeyInputs &in);

// A kept front end, as read back from its manifest.
struct KeptEntry {
  std::string dir;                      // <run dir>/ptx-reuse/<key>
  std::string keepDir() const { return dir + "/keep"; }
  std::string objectPath() const { return dir + "/object.o"; }
  std::string depfilePath() const { return dir + "/deps.d"; }
  std::vector<std::string> frontEndSteps;  // nvcc's steps other than ptxas/fatbinary, keep dir as <KEEP>
  std::string fatbinSection;            // ".nv_fatbin" or "__nv_relfatbin"
  struct Dep {
    std::string path;
    std::string sha256;
  };
  std::vector<Dep> deps;                // the source and every header of the depfile
};

std::string entryDir(const std::string &runDir, const std::string &key);

// Reads the entry in dir; nullopt when there is none. A dependency that
// changed (or vanished) since the entry was kept is named in `stale`.
std::optional<KeptEntry> loadEntry(const std::string &dir, std::string &stale);

// The files a Make-syntax depfile (nvcc -MD -MF) names as prerequisites.
std::vector<std::string> depfilePrerequisites(const std::string &text);

// Files the entry kept in tmpDir (keep/ already filled by nvcc) and moves it
// to finalDir, replacing an older entry there. The preprocessed sources go
// unless keepPreprocessed (the user's -keep copies them from the entry).
// "" on success, else why not.
std::string commitEntry(const std::string &tmpDir, const std::string &finalDir, KeptEntry entry,
                        const std::string &object, const std::string &depfile, const std::string &cwd,
                        bool keepPreprocessed);

} // namespace ciq::wrapper
