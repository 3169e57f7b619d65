#include "wrapper/CompilerCrash.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Regex.h>

#include <cstring>

namespace ciq::wrapper {

namespace {

// nvcc's own report of a tool it ran directly: "nvcc error   : 'ptxas'
// died due to signal 9 (Kill signal)".
CompilerCrash fromNvccReport(llvm::StringRef err) {
  CompilerCrash c;
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

// nvcc runs each tool through /bin/sh -c, and the shell reports the tool's
// death itself, then exits 128+N, which nvcc passes on. dash (Debian's sh)
// prints strsignal(N) alone ("Killed", "Segmentation fault (core dumped)"),
// naming no tool; bash names it: "sh: line 1: 4242 Killed   "$CICC_PATH/cicc" ...".
CompilerCrash fromShellReport(const SubprocessResult &r) {
  CompilerCrash c;
  int sig = r.exitCode - 128;
  if (sig <= 0 || sig >= 65)
    return c;
  std::string what = llvm::Regex::escape(strsignal(sig));
  llvm::Regex dash("^" + what + "( \\(core dumped\\))?$");
  llvm::Regex bash(": line [0-9]+: +[0-9]+ " + what + "( \\(core dumped\\))? +\"?([^\" ]+)");
  llvm::SmallVector<llvm::StringRef, 4> lines, m;
  llvm::StringRef(r.err).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.rtrim();
    if (dash.match(line)) {
      c.signal = sig;
      return c;
    }
    if (bash.match(line, &m)) {
      c.signal = sig;
      c.tool = llvm::sys::path::filename(m[2]).str();
      return c;
    }
  }
  return c;
}

} // namespace

CompilerCrash detectCompilerCrash(const SubprocessResult &r, const std::string &compilerName) {
  CompilerCrash c;
  if (r.timedOut)
    return c;
  if (r.termSignal) {
    c.signal = r.termSignal;
    c.tool = compilerName;
    return c;
  }
  c = fromNvccReport(r.err);
  return c.signal ? c : fromShellReport(r);
}

} // namespace ciq::wrapper
