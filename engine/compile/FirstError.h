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

// The same of the log at `path`; "" when it cannot be read.
std::string firstErrorLineOfFile(const std::string &path);

} // namespace ciq
