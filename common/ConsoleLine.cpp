#include "common/ConsoleLine.h"

#include <cctype>

namespace ciq {

namespace {

bool identChar(char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '$'; }

// The index just past the group opening at `open` ('<' or '('), counting
// both kinds of bracket; npos when the line ends first.
size_t groupEnd(const std::string &s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(')
      ++depth;
    else if ((c == '>' && !(i > 0 && s[i - 1] == '-')) || c == ')')
      if (--depth == 0)
        return i + 1;
    if (c == '\n')
      break;
  }
  return std::string::npos;
}

// The end of the name starting at `i` (an identifier character).
size_t nameEnd(const std::string &s, size_t i) {
  while (i < s.size()) {
    if (identChar(s[i])) {
      ++i;
    } else if (s[i] == ':' && i + 2 < s.size() && s[i + 1] == ':' && identChar(s[i + 2])) {
      i += 2;
    } else if (s[i] == '<' || s[i] == '(') {
      size_t end = groupEnd(s, i);
      if (end == std::string::npos)
        return i;
      i = end;
    } else {
      break;
    }
  }
  return i;
}

} // namespace

std::string elideName(const std::string &name, size_t max) {
  if (name.size() <= max || max < 8)
    return name;
  size_t tail = max / 4, head = max - tail - 3;
  return name.substr(0, head) + "..." + name.substr(name.size() - tail);
}

std::string consoleLine(const std::string &line, size_t maxName, size_t maxLine) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    if (identChar(line[i]) && (i == 0 || !identChar(line[i - 1]))) {
      size_t end = nameEnd(line, i);
      out += elideName(line.substr(i, end - i), maxName);
      i = end;
    } else {
      out += line[i++];
    }
  }
  if (out.size() <= maxLine)
    return out;
  size_t tail = maxLine / 4, head = maxLine - tail;
  std::string gap = " [... " + std::to_string(out.size() - head - tail) + " characters left out ...] ";
  return out.substr(0, head) + gap + out.substr(out.size() - tail);
}

std::string consoleText(const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      nl = text.size();
    out += consoleLine(text.substr(start, nl - start));
    if (nl < text.size())
      out += '\n';
    start = nl + 1;
  }
  return out;
}

} // namespace ciq
