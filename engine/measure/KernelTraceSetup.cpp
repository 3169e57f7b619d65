#include "engine/measure/KernelTraceSetup.h"
#include "common/EnvNames.h"
#include "common/Paths.h"

#include <cstdlib>
#include <llvm/Support/FileSystem.h>

// CIQ_KERNEL_TRACE_OFF: why this build has no kernel times (CUPTI not
// found, trace/CMakeLists.txt); "" when it has them.
#include "engine/measure/KernelTraceOff.h"

namespace ciq {

std::optional<std::string> kernelTraceLibrary(std::string &why) {
  if (const char *e = std::getenv(env::KernelTraceLib); e && *e) {
    if (llvm::sys::fs::exists(e))
      return std::string(e);
    why = std::string("no kernel times: CIQ_KERNEL_TRACE_LIB names ") + e + ", which does not exist";
    return std::nullopt;
  }
  std::string off = CIQ_KERNEL_TRACE_OFF;
  if (!off.empty()) {
    why = "no kernel times: " + off;
    return std::nullopt;
  }
  std::string lib = absolutePath(binDir() + "/../lib/ciq/libciq-kernel-trace.so", binDir());
  if (!llvm::sys::fs::exists(lib)) {
    why = "no kernel times: ciq's injection library " + lib +
          " is missing (an install without lib/ciq?); reinstall ciq, or set CIQ_KERNEL_TRACE_LIB";
    return std::nullopt;
  }
  return lib;
}

std::map<std::string, std::string> kernelTraceEnv(const std::string &library, const std::string &prefix) {
  return {{"CUDA_INJECTION64_PATH", library}, {env::KernelTrace, prefix}};
}

} // namespace ciq
