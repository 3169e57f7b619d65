// Per-kernel controls (common/KernelDirective.h) on the two routes a compile
// takes through the wrapper. ptxas called directly (a stand-in, Triton, a
// launcher before ptxas): its PTX input is edited into a temporary copy that
// ptxas compiles instead. nvcc: the PTX exists only inside nvcc's own steps,
// so the compile is split as PTX reuse splits it (PtxReuse.h): nvcc keeps its
// front end, ptxas runs again on the edited PTX, fatbinary and objcopy put
// the result into the object. A candidate that also changes the front end
// (-D parameters, nvcc options) keeps it in a private folder of its own.
#pragma once
#include "common/Protocol.h"
#include "wrapper/PtxDirectives.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

// The edited copy of a ptxas command's PTX input, removed with this object.
class PtxInputEdit {
public:
  PtxInputEdit() = default;
  ~PtxInputEdit();
  PtxInputEdit(const PtxInputEdit &) = delete;
  PtxInputEdit &operator=(const PtxInputEdit &) = delete;

  // Reads `input`'s entries and, when `ds` is not empty, writes the edited
  // copy and points `argv`'s token `inputToken` at it. "" or why not.
  std::string apply(const std::string &input, const std::string &inputToken, const std::string &arch,
                    const std::vector<KernelDirective> &ds, std::vector<std::string> &argv);

  const std::vector<PtxEntry> &entries() const { return entries_; }
  std::vector<DirectiveOutcome> &outcomes() { return outcomes_; }

private:
  std::string copy_;
  std::vector<PtxEntry> entries_;
  std::vector<DirectiveOutcome> outcomes_;
};

// A private run directory for one compile (PtxReuse's privateEntry), removed
// with this object; path() is "" when none could be made.
class PrivateRunDir {
public:
  PrivateRunDir();
  ~PrivateRunDir();
  PrivateRunDir(const PrivateRunDir &) = delete;
  PrivateRunDir &operator=(const PrivateRunDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

// Directives that never reached ptxas: one "not_applicable" outcome each, with `why`.
std::vector<DirectiveOutcome> unappliedDirectives(const std::vector<KernelDirective> &ds, const std::string &why);

// Fills the receipt's ptx* kernel fields and checks the outcomes against
// ptxas's report (checkDirectives).
void recordDirectives(Receipt &rc, const std::vector<PtxEntry> &entries, std::vector<DirectiveOutcome> outcomes);

} // namespace ciq::wrapper
