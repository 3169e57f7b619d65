// Per-kernel controls (docs/search-space.md, "Per-kernel controls"): PTX
// directives the wrapper writes into one entry's header between nvcc's front
// end and ptxas, so that each kernel of a compile gets its own register and
// occupancy budget. Shared by the engine (which renders them), the wrapper
// (which writes them and checks ptxas's report) and the lockfile.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

// The directives ciq writes, as PTX spells them:
//   maxnreg        `.maxnreg N`       a register ceiling (any entry)
//   minnctapersm   `.minnctapersm N`  blocks per SM the entry asks for; only
//                                     where the entry has .maxntid/.reqntid
//                                     (__launch_bounds__), since ptxas needs
//                                     the block size to turn it into a cap
//   smem_spilling  `.pragma "enable_smem_spilling";`  spill to shared memory
// Never .maxntid, .reqntid or cluster directives: a launch larger than they
// say fails, so changing them changes what the program may do.
inline const char *kDirectiveMaxnreg = "maxnreg";
inline const char *kDirectiveMinBlocks = "minnctapersm";
inline const char *kDirectiveSmemSpilling = "smem_spilling";

struct KernelDirective {
  std::string kernel;     // kernelKey() of the entry's mangled name
  std::string directive;  // one of the kDirective* names
  int value = 0;          // registers (maxnreg), blocks per SM (minnctapersm), 1 (smem_spilling)
  std::string label;      // the kernel's short demangled name, for messages only (not hashed)
};

// What the wrapper did with one directive in one PTX (one architecture).
struct DirectiveOutcome {
  std::string kernel;     // kernelKey
  std::string arch;       // the SASS architecture ptxas compiled it for ("sm_90"), "" if unknown
  std::string directive;
  int value = 0;
  // "applied": written, and ptxas's report agrees (registers within the cap);
  // "ignored": written, but ptxas's report shows it had no effect it must have;
  // "not_applicable": not written (minnctapersm on an entry without __launch_bounds__).
  std::string status;
  std::string note;       // why, in words, for ignored / not_applicable
};

// A kernel's name as the lock and the space key it: the mangled name with
// what nvcc derives from the source path or the process masked, so that the
// same kernel in another checkout (or another nvcc run) has the same key.
// An anonymous namespace is mangled _GLOBAL__N__<8 hex of the path>_<file>_<hash>,
// and nvcc's internal-linkage prefix is _INTERNAL_<hash>_<n>_: the hex parts
// are replaced by 'x', lengths kept, so the key is still a valid mangling.
std::string kernelKey(const std::string &mangled);

// The directive as it is written into PTX ("" for an unknown directive).
std::string directivePtx(const KernelDirective &d);

// True for the three names above.
bool knownDirective(const std::string &name);

void to_json(nlohmann::json &j, const KernelDirective &v);
void to_json(nlohmann::json &j, const DirectiveOutcome &v);
bool readJson(const nlohmann::json &j, KernelDirective &v, std::string &why);
bool readJson(const nlohmann::json &j, DirectiveOutcome &v, std::string &why);

} // namespace ciq
