#include "engine/compile/MakeRules.h"
#include "common/Paths.h"

#include <fstream>
#include <set>

namespace ciq {
namespace {

// The word after "-f " of a Makefile2 recipe line: CMake quotes a path with
// spaces in double quotes there (a shell command line).
std::string fileArgument(const std::string &line) {
  size_t at = line.find(" -f ");
  if (at == std::string::npos)
    return "";
  at += 4;
  if (at < line.size() && line[at] == '"') {
    size_t end = line.find('"', at + 1);
    return end == std::string::npos ? "" : line.substr(at + 1, end - at - 1);
  }
  return line.substr(at, line.find(' ', at) - at);
}

// A path of a make rule as CMake writes it: "\ " for a space, "\#" for '#',
// "\\" for a backslash, "$$" for '$' and "$(EQUALS)" for '=' (CMake's
// ConvertToMakefilePath; a directory or source named "x=1" has one).
std::string unescapeRulePath(const std::string &s) {
  static const std::string equals = "$(EQUALS)";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, equals.size(), equals) == 0) {
      out += '=';
      i += equals.size() - 1;
      continue;
    }
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == ' ' || s[i + 1] == '#' || s[i + 1] == '\\'))
      ++i;
    else if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$')
      ++i;
    out += s[i];
  }
  return out;
}

// "out: prereq" of a rule line (not a recipe, comment or assignment), the
// separator being the first ": " not escaped; false for any other line.
bool splitRule(const std::string &line, std::string &out, std::string &prereq) {
  if (line.empty() || line[0] == '\t' || line[0] == '#')
    return false;
  for (size_t at = line.find(": "); at != std::string::npos; at = line.find(": ", at + 1)) {
    if (at > 0 && line[at - 1] == '\\')
      continue;
    out = unescapeRulePath(line.substr(0, at));
    prereq = unescapeRulePath(line.substr(at + 2));
    return !out.empty() && !prereq.empty();
  }
  return false;
}

} // namespace

std::vector<std::string> makeTargetRuleFiles(const std::string &buildDir, const std::vector<std::string> &targets) {
  std::ifstream in(buildDir + "/CMakeFiles/Makefile2");
  std::set<std::string> found;
  for (std::string line; std::getline(in, line);) {
    std::string f = fileArgument(line);
    for (const auto &t : targets) {
      std::string tail = "CMakeFiles/" + t + ".dir/build.make";
      if (f.size() >= tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0 &&
          (f.size() == tail.size() || f[f.size() - tail.size() - 1] == '/'))
        found.insert(absolutePath(f, buildDir));
    }
  }
  return {found.begin(), found.end()};
}

std::vector<std::string> makeDependants(const std::string &buildDir, const std::vector<std::string> &ruleFiles,
                                        const std::vector<std::string> &objects, std::vector<std::string> *unconsumed) {
  std::set<std::string> tuned(objects.begin(), objects.end());
  std::set<std::string> out, consumed;
  for (const auto &file : ruleFiles) {
    std::ifstream in(file);
    for (std::string line, target, prereq; std::getline(in, line);) {
      if (!splitRule(line, target, prereq))
        continue;
      std::string object = physicalPath(absolutePath(prereq, buildDir));
      if (!tuned.count(object))
        continue;
      std::string dependant = physicalPath(absolutePath(target, buildDir));
      if (!tuned.count(dependant)) {
        out.insert(dependant);
        consumed.insert(object);
      }
    }
  }
  if (unconsumed)
    for (const auto &o : tuned)
      if (!consumed.count(o))
        unconsumed->push_back(o);
  return {out.begin(), out.end()};
}

} // namespace ciq
