#include "engine/config/KnownOptions.h"
#include "common/CompilerVersion.h"
#include "common/FindExecutable.h"
#include "common/Subprocess.h"
#include "engine/config/YamlUtil.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <set>

namespace ciq {

namespace {

// What a compiler documents in --help: its option names ("--opt-level",
// "-O") and, where it lists them, each option's allowed values.
struct CompilerHelp {
  std::string path, version;                            // "" when no compiler was found
  std::set<std::string> names;
  std::set<std::string> valued;                         // names of options that take a value ("--opt-level <N>")
  std::map<std::string, std::set<std::string>> allowed; // long name -> values
  std::map<std::string, std::string> longName;          // every name and alias -> its long name
};

// "'a','b',\n 'c'." -> {a, b, c}
std::set<std::string> allowedValues(const std::string &text) {
  std::set<std::string> values;
  size_t end = text.find(".\n");
  std::string list = text.substr(0, end);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string v = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    v.erase(0, v.find_first_not_of(" \t\n'"));
    v.erase(v.find_last_not_of(" \t\n'.") + 1);
    if (!v.empty())
      values.insert(v);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return values;
}

void parseHelp(const std::string &text, CompilerHelp &h) {
  static const std::string kAllowed = "Allowed values for this option:";
  std::string current;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    size_t next = eol == std::string::npos ? text.size() : eol + 1;
    if (line.rfind("--", 0) == 0) {
      current = line.substr(0, line.find_first_of(" \t="));
      h.names.insert(current);
      h.longName[current] = current;
      // "--opt-level <N>   (-O)": the value's placeholder follows the name.
      size_t after = line.find_first_not_of(" \t", current.size());
      bool valued = after != std::string::npos && (line[after] == '<' || line[after] == '=');
      if (valued)
        h.valued.insert(current);
      auto open = line.find("(-");
      if (open != std::string::npos) {
        std::string alias = line.substr(open + 1, line.find(')', open) - open - 1);
        h.names.insert(alias);
        h.longName[alias] = current;
        if (valued)
          h.valued.insert(alias);
      }
    } else if (auto at = line.find(kAllowed); at != std::string::npos && !current.empty()) {
      h.allowed[current] = allowedValues(text.substr(pos + at + kAllowed.size()));
    }
    pos = next;
  }
}

const CompilerHelp &compilerHelp(const std::string &tool) {
  static std::map<std::string, CompilerHelp> cache;
  auto it = cache.find(tool);
  if (it != cache.end())
    return it->second;
  CompilerHelp &h = cache[tool];
  // The CUDA bin folder is often not on PATH (CMake finds nvcc by itself):
  // fall back to where CUDA installs so a misspelt option is still caught.
  auto exe = findExecutable(tool);
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (!exe && getenv(var) && *getenv(var))
      exe = findExecutable(std::string(getenv(var)) + "/bin/" + tool);
  if (!exe)
    exe = findExecutable("/usr/local/cuda/bin/" + tool);
  if (!exe)
    return h;
  h.path = *exe;
  std::string err;
  h.version = compilerVersion(*exe, err).value_or("");
  parseHelp(runSubprocess({*exe, "--help"}).out, h);
  return h;
}

// "13.0" is the release of "13.0.88"; "" (a space for no release) matches any.
bool sameRelease(const std::string &wanted, const std::string &found) {
  return wanted.empty() || found.empty() || found == wanted || found.rfind(wanted + ".", 0) == 0;
}

void note(const std::string &msg) { llvm::WithColor::note(llvm::errs(), "ciq") << msg << "\n"; }

// One warning per space written for another release than the one installed.
void warnOtherRelease(const Control &c, const std::string &tool, const CompilerHelp &h,
                      std::set<std::string> &warned) {
  if (sameRelease(c.spaceCompilerVersion, h.version) || !warned.insert(c.spaceName).second)
    return;
  llvm::WithColor::warning(llvm::errs(), "ciq")
      << "space '" << c.spaceName << "' is for " << tool << " " << c.spaceCompilerVersion << ", but "
      << h.path << " is " << tool << " " << h.version << ": what it does not accept (its --help) is left out\n";
}

// Leaves out the values `help` does not allow; false when none is left.
bool keepAllowedValues(Control &c, const std::string &name, const std::string &tool, const CompilerHelp &h) {
  auto allowed = h.allowed.find(name);
  if (allowed == h.allowed.end() || c.domain == DomainKind::Literal)
    return true;
  std::vector<std::string> kept;
  for (const auto &v : c.values) {
    if (allowed->second.count(v))
      kept.push_back(v);
    else
      note("control '" + c.name + "' (" + c.origin + "): value '" + v + "' left out: " + tool + " " + h.version +
           " does not accept it for " + name + " (allowed: " + llvm::join(allowed->second, ", ") + ")");
  }
  c.values = kept;
  return !kept.empty();
}

} // namespace

// "-Xcompiler -O1" (a control copied from a command line) would reach the
// compiler as one argument, and gcc says "unrecognized command-line option
// '-Xcompiler -O1'" for every candidate that sets it: an option that takes a
// value joins the word after it with '=' (nvcc's and ptxas's own spelling),
// other words stay arguments of their own, split by render().
void joinWords(Control &c, const std::string &tool, const CompilerHelp &h) {
  llvm::SmallVector<llvm::StringRef, 4> words;
  llvm::SplitString(c.option, words, " \t");
  std::vector<std::string> args;
  bool joined = false;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i].str();
    if (h.valued.count(w) && i + 1 < words.size()) {
      w += "=" + words[++i].str();
      joined = true;
    }
    args.push_back(w);
  }
  std::string written = c.option;
  c.option = llvm::join(args, " ");
  if (written != c.option || args.size() > 1)
    note("control '" + c.name + "' (" + c.origin + "): '" + written + "' read as the " + tool + " argument" +
         (args.size() == 1 ? " '" : "s '") + llvm::join(args, "' '") + "'" +
         (joined ? " (an option and its value, one argument)" : ""));
}

// nvcc options that nvcc hands to ptxas as ptxas's option of the same name
// (nvcc --help: "--maxrregcount ... Specify the maximum amount of registers
// that GPU functions can use"): nvcc's spelling and ptxas's are one option.
static bool nvccForwardsToPtxas(const std::string &longName) { return longName == "--maxrregcount"; }

std::string optionIdentity(const Control &c) {
  std::string tool = c.render == RenderKind::Ptxas ? "ptxas" : "nvcc";
  llvm::StringRef text = llvm::StringRef(c.option).trim();
  // nvcc's -Xptxas ARG (or --ptxas-options=ARG) is ptxas's ARG.
  if (tool == "nvcc")
    for (llvm::StringRef wrap : {"--ptxas-options", "-Xptxas"})
      if (text.startswith(wrap) && text.size() > wrap.size() && llvm::StringRef("= \t").contains(text[wrap.size()])) {
        text = text.drop_front(wrap.size() + 1).ltrim();
        tool = "ptxas";
        break;
      }
  std::string name = text.substr(0, text.find_first_of("={ \t,")).str();
  const CompilerHelp &h = compilerHelp(tool);
  auto known = h.longName.find(name);
  if (known == h.longName.end() && name.size() > 2 && name[1] != '-') {
    // "-O3": a short option with its value attached.
    for (const auto &alias : h.valued)
      if (alias.size() > 1 && alias[1] != '-' && llvm::StringRef(name).startswith(alias) &&
          (known == h.longName.end() || alias.size() > known->first.size()))
        known = h.longName.find(alias);
  }
  if (known != h.longName.end())
    name = known->second;
  // One dash or two: nvcc and ptxas take either for a long name.
  name = "--" + llvm::StringRef(name).ltrim('-').str();
  if (tool == "nvcc" && nvccForwardsToPtxas(name))
    tool = "ptxas";
  // nvcc's pass-through options (-Xcompiler ARG, -Xlinker, -Xnvlink) are as
  // many options as the arguments they pass.
  if (tool == "nvcc" && (name == "--compiler-options" || name == "--linker-options" || name == "--nvlink-options")) {
    llvm::StringRef inner = text.drop_front(std::min(text.size(), text.find_first_of("= \t") + 1)).ltrim();
    name += " " + inner.substr(0, inner.find_first_of("={ \t,")).str();
  }
  return tool + " " + name;
}

void checkOptionsKnown(SearchSpace &space) {
  std::set<std::string> warned;
  std::vector<Control> kept;
  for (auto &c : space.controls) {
    if (c.render != RenderKind::Ptxas && c.render != RenderKind::Nvcc) {
      kept.push_back(c);
      continue;
    }
    std::string tool = c.render == RenderKind::Ptxas ? "ptxas" : "nvcc";
    const CompilerHelp &h = compilerHelp(tool);
    if (h.names.empty()) { // no compiler here to ask: the build will tell
      kept.push_back(c);
      continue;
    }
    warnOtherRelease(c, tool, h, warned);
    if (c.option.find_first_of(" \t") != std::string::npos)
      joinWords(c, tool, h);
    std::string name = c.option.substr(0, c.option.find_first_of(" ={"));
    if (!h.names.count(name)) {
      if (sameRelease(c.spaceCompilerVersion, h.version))
        throw ConfigError(c.origin + ": control '" + c.name + "': '" + name + "' is not an option of " + tool +
                          " (not in `" + tool + " --help`); fix the spelling or remove the control");
      note("control '" + c.name + "' (" + c.origin + ") left out: " + name + " is not an option of " + tool + " " +
           h.version);
      continue;
    }
    if (keepAllowedValues(c, name, tool, h))
      kept.push_back(c);
  }
  space.controls = kept;
}

} // namespace ciq
