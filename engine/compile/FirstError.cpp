#include "engine/compile/FirstError.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/MemoryBuffer.h>

#include <regex>

namespace ciq {

std::string firstErrorLine(const std::string &text) {
  // "error:" or "fatal :" after a separator: a diagnostic's severity, not a
  // word of a file name or of an echoed command line (ninja's FAILED: line).
  // GNU ld names an unresolved symbol without a severity ("...: undefined
  // reference to `f'"), before collect2's "error: ld returned 1 exit status".
  static const std::regex severity(R"((^|[\s:)])(error|fatal( error)?)\s*:|: undefined reference to )",
                                   std::regex::icase);
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    llvm::StringRef t = line.trim();
    if (t.startswith("FAILED:") || !std::regex_search(t.begin(), t.end(), severity))
      continue;
    const size_t kMax = 300; // one line of a summary, not a compiler's page
    return t.size() > kMax ? t.substr(0, kMax).str() + "..." : t.str();
  }
  return "";
}

bool logShowsCompileFailure(const std::string &text) {
  static const std::regex failedObject(R"(^FAILED: .*\.(o|obj)\b|\*\*\* \[[^\]]*\.(o|obj)\] Error)");
  static const std::regex sourceDiagnostic(
      R"(\.(cu|cuh|cpp|cc|cxx|c|h|hpp|hh)(\(\d+\)|:\d+(:\d+)?):\s*(fatal )?error\b)", std::regex::icase);
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    std::string t = line.trim().str();
    // CMake's device link writes an object too (cmake_device_link.o): a link.
    bool deviceLink = t.find("device_link") != std::string::npos || t.find("dlink") != std::string::npos;
    if ((std::regex_search(t, failedObject) && !deviceLink) || std::regex_search(t, sourceDiagnostic))
      return true;
  }
  return false;
}

bool logFileShowsCompileFailure(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return buf && logShowsCompileFailure((*buf)->getBuffer().str());
}

std::string firstErrorLineOfFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return "";
  return firstErrorLine((*buf)->getBuffer().str());
}

} // namespace ciq
