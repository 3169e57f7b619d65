// What a traced benchmark run needs (benchmark.metric kernel_time): ciq's
// injection library, and the environment that makes CUDA load it.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace ciq {

// $CIQ_KERNEL_TRACE_LIB, else <prefix>/lib/ciq/libciq-kernel-trace.so beside
// this ciq. nullopt with one line when this ciq was built without CUPTI (and
// why) or the library is not where it should be.
std::optional<std::string> kernelTraceLibrary(std::string &why);

// The variables of one traced run: CUDA_INJECTION64_PATH (the library) and
// CIQ_KERNEL_TRACE (where each process writes <prefix>.<pid>.json).
std::map<std::string, std::string> kernelTraceEnv(const std::string &library, const std::string &prefix);

} // namespace ciq
