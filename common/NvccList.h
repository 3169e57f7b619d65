// nvcc splits the values of list options (-Xptxas a,b; --ptxas-options=...)
// at commas and undoes a backslash escape; this is how a value that holds a
// comma (an ACF path, say) reaches ptxas whole. Used by the wrapper's
// injection and by the lockfile's rendering of ciq_apply_lock()'s arguments.
#pragma once
#include <string>

namespace ciq {

// "a,b" -> "a\,b"; backslashes doubled.
inline std::string escapeNvccListItem(const std::string &item) {
  std::string s;
  for (char c : item) {
    if (c == ',' || c == '\\')
      s += '\\';
    s += c;
  }
  return s;
}

} // namespace ciq
