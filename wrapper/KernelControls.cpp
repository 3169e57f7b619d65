#include "wrapper/KernelControls.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cstdlib>

namespace ciq::wrapper {

PtxInputEdit::~PtxInputEdit() {
  if (!copy_.empty())
    llvm::sys::fs::remove(copy_);
}

std::string PtxInputEdit::apply(const std::string &input, const std::string &inputToken, const std::string &arch,
                                const std::vector<KernelDirective> &ds, std::vector<std::string> &argv) {
  std::string err;
  // Only a regular file is read: a FIFO or device input is ptxas's to read
  // (reading it first would take its bytes, or wait for a writer forever).
  if (!llvm::sys::fs::is_regular_file(input))
    return ds.empty() ? "" : "the PTX input " + input + " is not a regular file";
  if (ds.empty()) {
    entries_ = readPtxFile(input, err);
    return "";
  }
  llvm::SmallString<256> tmp;
  if (llvm::sys::fs::createTemporaryFile("ciq-kernel-controls", "ptx", tmp))
    return "cannot create a temporary file for the edited PTX of " + input;
  copy_ = tmp.str().str();
  if (std::string bad = editPtxFile(input, copy_, ds, arch, entries_, outcomes_); !bad.empty())
    return bad;
  bool pointed = false;
  for (auto &a : argv)
    if (a == inputToken) {
      a = copy_;
      pointed = true;
    }
  return pointed ? "" : "the ptxas command does not name its input " + inputToken + " as one argument";
}

PrivateRunDir::PrivateRunDir() {
  llvm::SmallString<256> dir;
  if (!llvm::sys::fs::createUniqueDirectory("ciq-kernel-controls", dir))
    path_ = dir.str().str();
}

PrivateRunDir::~PrivateRunDir() {
  if (!path_.empty())
    llvm::sys::fs::remove_directories(path_);
}

std::vector<DirectiveOutcome> unappliedDirectives(const std::vector<KernelDirective> &ds, const std::string &why) {
  std::vector<DirectiveOutcome> out;
  for (const auto &d : ds)
    out.push_back({d.kernel, "", d.directive, d.value, "not_applicable", why});
  return out;
}

void recordDirectives(Receipt &rc, const std::vector<PtxEntry> &entries, std::vector<DirectiveOutcome> outcomes) {
  notePtxEntries(rc.kernels, entries);
  checkDirectives(outcomes, rc.kernels, entries);
  for (auto &o : outcomes)
    rc.directives.push_back(std::move(o));
}

} // namespace ciq::wrapper
