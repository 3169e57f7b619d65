#include "wrapper/CompilerCrash.h"

#include <llvm/ADT/StringRef.h>

namespace ciq::wrapper {

CompilerCrash detectCompilerCrash(const SubprocessResult &r, const std::string &compilerName) {
  CompilerCrash c;
  if (r.timedOut)
    return c;
  if (r.termSignal) {
    c.signal = r.termSignal;
    c.tool = compilerName;
    return c;
  }
  llvm::StringRef err(r.err);
  const llvm::StringRef marker = "' died due to signal ";
  size_t at = err.find(marker);
  if (at == llvm::StringRef::npos)
    return c;
  size_t open = err.rfind('\'', at);
  unsigned n = 0;
  if (open == llvm::StringRef::npos || err.substr(at + marker.size()).consumeInteger(10, n) || n == 0)
    return c;
  c.signal = (int)n;
  c.tool = err.slice(open + 1, at).str();
  return c;
}

} // namespace ciq::wrapper
