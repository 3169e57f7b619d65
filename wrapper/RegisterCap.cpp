#include "wrapper/RegisterCap.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <set>

namespace ciq::wrapper {
namespace {

using llvm::StringRef;

const StringRef kInfo = "ptxas info    : ";

// The lines of one architecture: its cap lines, then its entries.
struct Batch {
  std::vector<std::string> overrides; // reasons of "Overriding global maxrregcount" lines, in order
  std::set<std::string> capped;       // entries the cap was applied to
  std::vector<KernelStats *> entries; // in the order ptxas compiled them
};

// Attributes one batch's overrides; returns how many stayed unattributed.
int attribute(Batch &b) {
  for (KernelStats *k : b.entries)
    k->capApplied = b.capped.count(k->name) > 0;
  std::vector<KernelStats *> free;
  for (KernelStats *k : b.entries)
    if (!k->capApplied)
      free.push_back(k);
  if (free.size() != b.overrides.size())
    return (int)b.overrides.size();
  for (size_t i = 0; i < free.size(); ++i)
    free[i]->capOverride = b.overrides[i];
  return 0;
}

} // namespace

int markRegisterCapOverrides(const std::string &ptxasText, std::vector<KernelStats> &kernels) {
  llvm::SmallVector<StringRef, 32> lines;
  StringRef(ptxasText).split(lines, '\n');
  int unattributed = 0;
  size_t next = 0; // the next kernel of `kernels`, which are in report order
  Batch b;
  bool inEntries = false;
  // A cap line after entries starts the next architecture.
  auto newArchitecture = [&] {
    if (inEntries) {
      unattributed += attribute(b);
      b = Batch();
      inEntries = false;
    }
  };
  for (StringRef l : lines) {
    StringRef body = l.rtrim("\r");
    if (!body.consume_front(kInfo))
      continue;
    if (body.consume_front("Overriding global maxrregcount ")) {
      newArchitecture();
      auto with = body.find(" with ");
      b.overrides.push_back(with == StringRef::npos ? body.str() : body.substr(with + 6).str());
    } else if (body.consume_front("Overriding maximum register limit ")) {
      newArchitecture();
      auto [before, rest] = body.split(" for '");
      auto [name, after] = rest.split("'");
      if (!after.empty())
        b.capped.insert(name.str());
    } else if (body.startswith("Compiling entry function '")) {
      // Device functions (entry == false) have no such line: skip them.
      while (next < kernels.size() && !kernels[next].entry)
        ++next;
      if (next < kernels.size()) {
        inEntries = true;
        b.entries.push_back(&kernels[next++]);
      }
    }
  }
  unattributed += attribute(b);
  return unattributed;
}

} // namespace ciq::wrapper
