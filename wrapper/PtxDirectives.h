// Per-kernel controls in the PTX (common/KernelDirective.h): reading each
// entry's own directives and writing a candidate's into the entries it names.
//
// An entry's header in the PTX nvcc's front end writes:
//   .visible .entry _Z6kernelPf(
//       .param .u64 _Z6kernelPf_param_0
//   )
//   .maxntid 256, 1, 1
//   .minnctapersm 3
//   {
// The performance directives stand between the parameter list's ')' and the
// body's '{'. Writing one replaces the entry's own directive of that name
// (the candidate wins, as with command-line options) and leaves every other
// directive as it was; .maxntid, .reqntid and cluster directives are never
// written. The edit is checked after ptxas ran (checkDirectives): a register
// count above the cap a directive implies means ptxas did not take it.
#pragma once
#include "common/KernelDirective.h"
#include "common/Protocol.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

struct PtxEntry {
  std::string name;        // mangled, as in the PTX
  int maxThreads = 0;      // x*y*z of .maxntid or .reqntid, 0: neither
  int minBlocks = 0;       // .minnctapersm, 0: none
  int maxnreg = 0;         // .maxnreg, 0: none
  bool setmaxnreg = false;     // its body reconfigures registers (setmaxnreg.inc/dec, warp specialization)
  bool dynamicShared = false;  // its body uses the module's dynamic shared memory (.extern .shared x[])
};

// The entries of a PTX text, in order. A header that does not parse as
// above (no ')' or '{' where one belongs) sets `error` to what and where.
std::vector<PtxEntry> readPtxEntries(const std::string &ptx, std::string &error);

struct PtxEdit {
  std::string ptx;                         // the edited text
  std::vector<DirectiveOutcome> outcomes;  // one per directive whose kernel is in this PTX ("arch" unset)
  std::string error;                       // the PTX does not parse: nothing edited
};

// Writes each directive of `ds` whose kernel (kernelKey) is an entry of `ptx`.
PtxEdit applyDirectives(const std::string &ptx, const std::vector<KernelDirective> &ds);

// The register ceiling ptxas must keep for a directive on an entry of
// `maxThreads` threads per block: .maxnreg N gives N, .minnctapersm M gives
// what M blocks of that size leave of the SM's 64K registers (in ptxas's
// allocation unit of 8, at most 255); 0: nothing to check.
int registerCeiling(const KernelDirective &d, int maxThreads);

// Marks each "applied" outcome "ignored" where ptxas's report for that entry
// (and the outcome's architecture, when it names one) shows more registers
// than the directive allows; an outcome whose entry ptxas did not report
// stays as it is.
void checkDirectives(std::vector<DirectiveOutcome> &outcomes, const std::vector<KernelStats> &kernels,
                     const std::vector<PtxEntry> &entries);

// Writes `ds` into the PTX file `input` as `output` (for ptxas to compile
// instead); the entries read and the outcomes (arch set to `arch`) are
// added to the vectors. "" on success, else why nothing was written.
std::string editPtxFile(const std::string &input, const std::string &output, const std::vector<KernelDirective> &ds,
                        const std::string &arch, std::vector<PtxEntry> &entries,
                        std::vector<DirectiveOutcome> &outcomes);

// The entries of a PTX file (none, and `error` set, when it cannot be read or parsed).
std::vector<PtxEntry> readPtxFile(const std::string &path, std::string &error);

// Sets KernelStats::ptx* of the kernels named in `entries`.
void notePtxEntries(std::vector<KernelStats> &kernels, const std::vector<PtxEntry> &entries);

} // namespace ciq::wrapper
