// ptxas statistics: parsing the `ptxas -v` (= nvcc --resource-usage) report
// into per-kernel, per-architecture KernelStats, and removing that report from
// what the user sees when only the wrapper asked for it.
//
// Lines read (ptxas 13.0):
//   ptxas info    : Compiling entry function '_Z3addPfPKf' for 'sm_90'
//   ptxas info    : Function properties for _Z3addPfPKf
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 14 registers, used 1 barriers, 128 bytes smem, 368 bytes cmem[0]
//   ptxas info    : Compile time = 15.827 ms
#pragma once
#include "common/Protocol.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

// Every entry function of every architecture in the order ptxas reported
// them, and every device function whose properties ptxas printed (entry =
// false, the architecture of the entry compiled before it). A statistic
// whose line is missing stays unknown (frameKnown / usageKnown false), never 0.
std::vector<KernelStats> parsePtxasVerbose(const std::string &text);

// Whether ptxas printed any `-v` report, i.e. ran in this invocation (with
// -dlto, -ptx or a host-only step it does not).
bool ptxasReported(const std::string &text);

// The text without the lines `ptxas -v` added (info lines and the indented
// "bytes stack frame" lines after "Function properties"). Warnings and errors stay.
std::string stripPtxasVerbose(const std::string &text);

// LLVM's Itanium demangler; "" when the name is not mangled.
std::string demangle(const std::string &name);

} // namespace ciq::wrapper
