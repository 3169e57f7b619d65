// What ptxas -v says about the global register cap (-maxrregcount), per
// kernel. A kernel with __launch_bounds__ or __maxnreg__ may keep its own
// limit instead (ptxas 13.0):
//   ptxas info    : Overriding global maxrregcount 32 with entry-specific value 255 computed using thread count
//   ptxas info    : Overriding maximum register limit 256 for '_Z5plainPf' with  32 of maxrregcount option
// The first kind names no kernel. ptxas prints these lines for one
// architecture before its "Compiling entry function" lines, in the order it
// then compiles the entries, and prints nothing for an entry whose own limit
// is already below the cap. So an override is attributed to a kernel only when
// that is unambiguous: every entry of the architecture that the cap did not
// name has exactly one override line. Otherwise the overrides are counted, not
// attributed (never guessed).
#pragma once
#include "common/Protocol.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

// Sets KernelStats::capOverride (ptxas's reason, e.g. "entry-specific value
// 255 computed using thread count") and capApplied of `kernels`, parsed from
// the same text by parsePtxasVerbose. Returns the number of override lines
// that could not be attributed to a kernel.
int markRegisterCapOverrides(const std::string &ptxasText, std::vector<KernelStats> &kernels);

} // namespace ciq::wrapper
