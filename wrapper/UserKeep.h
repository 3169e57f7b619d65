// The intermediates a user asked nvcc to keep (-keep, -save-temps, with or
// without -keep-dir), in a compile that ciq splits for PTX reuse or
// per-kernel controls (docs/wrapper.md, "PTX reuse").
//
// A split compile runs nvcc with ciq's own --keep-dir, then ptxas and
// fatbinary again on the kept (and maybe edited) PTX. Two --keep-dir options
// make nvcc warn and take the last, so the user's keep options leave the
// command ciq runs, and the files land where nvcc would have put them
// afterwards: the user's -keep-dir, else the compile's working directory.
// The PTX, cubins and fatbin copied there are the ones the object was built
// from, with ciq's per-kernel directives in the PTX; the other intermediates
// (preprocessed sources, cudafe output, .fatbin.c, .module_id) are nvcc's, as
// ciq never changes the front end of a split compile.
#pragma once
#include "common/CommandLine.h"

#include <string>
#include <utility>
#include <vector>

namespace ciq::wrapper {

struct UserKeep {
  std::string dir;      // where nvcc would keep the files ("" when the user keeps nothing)
  std::string problem;  // why ciq cannot move them there ("" when it can)
};

// What the command asks to keep. -keep-dir from NVCC_PREPEND_FLAGS,
// NVCC_APPEND_FLAGS or an options file cannot be taken off the command line
// ciq runs: a problem.
UserKeep userKeepOf(NvccCommand &cmd, const std::string &cwd);

// The arguments without -keep, --keep, -save-temps, --save-temps and
// -keep-dir (in any of its spellings): ciq keeps the files itself.
std::vector<std::string> withoutKeepOptions(const std::vector<std::string> &args);

// Copies every file nvcc kept in keepDir into userDir (which must exist),
// except those in `skip` (ciq's own depfile); then each `built` pair
// (kept path, path of the file the object was built from instead) replaces
// the kept file of that name. "" on success, else what could not be copied.
std::string copyKeptFiles(const std::string &keepDir, const std::string &userDir,
                          const std::vector<std::string> &skip,
                          const std::vector<std::pair<std::string, std::string>> &built);

} // namespace ciq::wrapper
