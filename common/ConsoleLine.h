// Console lines of a bounded length (issue 50 item 5): a template kernel name
// runs to over 1,000 characters and a line listing per-kernel controls ran to
// 2,816. What ciq prints on a terminal elides the middle of each long name
// and of an overlong line; results.csv, the journal, the lock and `ciq
// report` keep every name whole.
#pragma once
#include <cstdio>
#include <string>

namespace ciq {

inline constexpr size_t kConsoleNameMax = 160;   // characters of one name on a console line
inline constexpr size_t kConsoleLineMax = 2000;  // characters of one console line

// One name (a demangled kernel with its template arguments and parameters,
// a mangled name): whole up to `max` characters, else its head and tail
// around "...".
std::string elideName(const std::string &name, size_t max = kConsoleNameMax);

// A line of text with every name in it longer than `maxName` elided, then
// the line itself, when still longer than `maxLine`, cut in its middle with
// "[... N characters left out ...]". A name is a run of identifier
// characters and "::" with the <...> and (...) groups attached to it.
std::string consoleLine(const std::string &line, size_t maxName = kConsoleNameMax,
                        size_t maxLine = kConsoleLineMax);

// consoleLine() of every line of `text` (newlines kept).
std::string consoleText(const std::string &text);

} // namespace ciq
