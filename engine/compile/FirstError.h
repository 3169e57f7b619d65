// The first error line a failed build printed (issue 41 item 8): the summary,
// the progress line and `ciq diagnose` name the compiler's own message of a
// candidate that failed to compile, not only the path of its log.
#pragma once
#include <string>

namespace ciq {

// The first line of `text` that reads as a compiler's or tool's error
// ("kern.cu(7): error: ...", "gcc: error: ...", "nvcc fatal   : ...",
// "ptxas error   : ...", "ciq-ptxas: error: ..."), trimmed and cut to a
// few hundred bytes; "" when none does.
std::string firstErrorLine(const std::string &text);

// Whether a failed build's log shows a compile step failing: ninja's
// "FAILED: <object>" or make's "*** [<object>] Error" naming an object file
// (.o, .obj), or a compiler diagnostic on a source line ("kern.cu(7): error",
// "a.cpp:3:1: error"). A build can fail in a compile that sent no receipt (a
// host source, a compile outside ciq-ptxas): that is compile_error too, not
// link_error (issue 50 item 5).
bool logShowsCompileFailure(const std::string &text);
bool logFileShowsCompileFailure(const std::string &path);

// The same of the log at `path`; "" when it cannot be read.
std::string firstErrorLineOfFile(const std::string &path);

} // namespace ciq
