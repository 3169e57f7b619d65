#include "engine/config/InitConfig.h"
#include "common/Subprocess.h"

#include <algorithm>
#include <cctype>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/StringSaver.h>
#include <regex>

namespace ciq {

namespace {

// A YAML flow sequence of the words, each single-quoted where YAML would
// read it as something other than the string (a number, a flag, a colon).
std::string flowList(const std::vector<std::string> &words) {
  std::string out = "[";
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string &w = words[i];
    bool plain = !w.empty() && w.find_first_of(":#,[]{}&*!|>'\"%@`") == std::string::npos &&
                 !std::isdigit((unsigned char)w[0]) && w != "-" && w[0] != '?' && w[0] != ' ' &&
                 !(w[0] == '-' && w.size() > 1 && std::isdigit((unsigned char)w[1])) &&
                 w.back() != ' ' && w != "true" && w != "false" && w != "null" && w != "~";
    std::string q;
    for (char c : w)
      q += c == '\'' ? std::string("''") : std::string(1, c);
    out += (i ? ", " : "") + (plain ? w : "'" + q + "'");
  }
  return out + "]";
}

std::string joinWords(const std::vector<std::string> &words) {
  std::string s;
  for (const auto &w : words)
    s += (s.empty() ? "" : " ") + shellQuote(w);
  return s;
}

bool isMake(const std::string &program) {
  std::string name = llvm::sys::path::filename(program).str();
  return name == "make" || name == "gmake";
}

// A word that runs nvcc by a path: /usr/local/cuda/bin/nvcc,
// $(CUDA_HOME)/bin/nvcc, "${CUDA_PATH}/bin/nvcc" (quotes and make's
// @/- recipe prefixes aside).
bool nvccPathWord(std::string w) {
  while (!w.empty() && (w.front() == '@' || w.front() == '-' || w.front() == '+' || w.front() == '"' ||
                        w.front() == '\''))
    w.erase(0, 1);
  while (!w.empty() && (w.back() == '"' || w.back() == '\'' || w.back() == ';'))
    w.pop_back();
  return w.size() > 5 && llvm::StringRef(w).endswith("/nvcc");
}

} // namespace

NvccByPath findNvccByPath(const std::string &makefileText) {
  NvccByPath out;
  static const std::regex assign(R"(^\s*(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::{1,2}=|\?=|\+=|=)\s*(.*)$)");
  llvm::SmallVector<llvm::StringRef, 64> lines;
  llvm::StringRef(makefileText).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i].rtrim("\r").str();
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    llvm::SmallVector<llvm::StringRef, 8> words;
    llvm::StringRef(line).split(words, ' ', -1, false);
    if (!line.empty() && line[0] == '\t') {   // a recipe line
      bool byPath = false;
      for (auto w : words)
        for (auto part : llvm::split(w, '\t'))
          byPath = byPath || nvccPathWord(part.str());
      if (byPath)
        out.recipeLines.push_back((int)i + 1);
      continue;
    }
    if (std::smatch m; std::regex_match(line, m, assign)) {
      llvm::StringRef value = llvm::StringRef(m[2].str()).trim();
      if (nvccPathWord(value.split(' ').first.str()) &&
          std::find(out.variables.begin(), out.variables.end(), m[1].str()) == out.variables.end())
        out.variables.push_back(m[1].str());
    }
  }
  return out;
}

std::string makefileOf(const std::vector<std::string> &makeArgs, const std::function<bool(const std::string &)> &exists) {
  std::string dir, file;
  for (size_t i = 1; i < makeArgs.size(); ++i) {
    llvm::StringRef a(makeArgs[i]);
    bool more = i + 1 < makeArgs.size();
    if ((a == "-f" || a == "--file" || a == "--makefile") && more)
      file = makeArgs[++i];
    else if (a.consume_front("--file=") || a.consume_front("--makefile=") || (a.startswith("-f") && a.consume_front("-f")))
      file = a.str();
    else if ((a == "-C" || a == "--directory") && more)
      dir = makeArgs[++i];
    else if (a.consume_front("--directory=") || (a.startswith("-C") && a.consume_front("-C")))
      dir = a.str();
  }
  auto in = [&](const std::string &f) { return dir.empty() || (!f.empty() && f[0] == '/') ? f : dir + "/" + f; };
  if (!file.empty())
    return in(file);
  for (const char *name : {"GNUmakefile", "makefile", "Makefile"})
    if (exists(in(name)))
      return in(name);
  return "";
}

std::optional<std::vector<std::string>> splitCommand(const std::string &text, const std::string &what,
                                                     std::string &error) {
  size_t quotes = 0, dquotes = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\\' && i + 1 < text.size())
      ++i;
    else if (text[i] == '\'' && dquotes % 2 == 0)
      ++quotes;
    else if (text[i] == '"' && quotes % 2 == 0)
      ++dquotes;
  if (quotes % 2 || dquotes % 2) {
    error = what + " '" + text + "': a quote is not closed";
    return std::nullopt;
  }
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::SmallVector<const char *, 16> argv;
  llvm::cl::TokenizeGNUCommandLine(text, saver, argv);
  std::vector<std::string> words;
  for (const char *a : argv)
    if (a)
      words.push_back(a);
  if (words.empty()) {
    error = what + " is empty: give the command, e.g. " + what + " \"make app\"";
    return std::nullopt;
  }
  return words;
}

// A make build whose makefile calls nvcc by its path: the yaml's comment
// lines, `VAR=nvcc` added to `command` for each variable that holds the path
// (make takes a command-line variable over the makefile's), and a note for
// each (recipes that run the path themselves cannot be overridden).
static std::string nvccByPathLines(const InitRequest &r, std::vector<std::string> &command, std::vector<std::string> *notes) {
  if (r.makefileText.empty())
    return "";
  NvccByPath found = findNvccByPath(r.makefileText);
  std::string y;
  for (const auto &v : found.variables) {
    command.push_back(v + "=nvcc");
    y += "  # " + v + "=nvcc: " + r.makefilePath + " sets " + v + " to nvcc's path, which the stand-in on PATH\n"
         "  # never sees; on make's command line nvcc is called by name.\n";
    if (notes)
      notes->push_back(r.makefilePath + " sets " + v + " to nvcc by its path; the build command overrides it (" + v +
                       "=nvcc) so that ciq's nvcc stand-in sees each compile");
  }
  for (int line : found.recipeLines) {
    std::string where = r.makefilePath + ":" + std::to_string(line);
    y += "  # " + where + " runs nvcc by its path: ciq sees none of those compiles until it calls nvcc\n"
         "  # (or $(NVCC)) by name.\n";
    if (notes)
      notes->push_back(where + ": a recipe runs nvcc by its path, which ciq's nvcc stand-in on PATH never sees; "
                               "call it as nvcc or $(NVCC) there, or the tune stops at the baseline (stale_build)");
  }
  return y;
}

std::optional<std::string> initYaml(const InitRequest &r, std::string &error, std::vector<std::string> *notes) {
  if (!r.target.empty() || !r.buildDir.empty()) {
    error = "--build names a build command; --build-dir and --target name a CMake build tree: give one or the other";
    return std::nullopt;
  }
  auto build = splitCommand(r.build, "--build", error);
  if (!build)
    return std::nullopt;
  std::optional<std::vector<std::string>> run;
  if (!r.run.empty() && !(run = splitCommand(r.run, "--run", error)))
    return std::nullopt;
  std::string y;
  y += "# ciq.yaml, written by: ciq init --build " + shellQuote(r.build) +
       (run ? " --run " + shellQuote(r.run) : "") + "\n";
  y += "# Tune with `ciq tune` in this folder; the winner is frozen in ciq.lock here.\n"
       "# Every key: docs/config.md. Paths are relative to this file's folder.\n\n";
  y += "build:\n";
  bool make = isMake(build->front());
  if (make) {
    // make -B: every target is remade, so each candidate's build compiles
    // every CUDA source with the candidate's options (ciq sees the compiles
    // through the nvcc on PATH during a tune: its stand-in).
    std::vector<std::string> always = {build->front(), "-B"};
    always.insert(always.end(), build->begin() + 1, build->end());
    y += "  # Run for every candidate, with ciq's nvcc and ptxas stand-ins first on PATH (a build that runs\n"
         "  # nvcc by name needs no change). -B remakes everything, so each build compiles its CUDA sources\n"
         "  # with the candidate; to rebuild less, drop -B and give a clean: step that deletes only the\n"
         "  # CUDA objects and what links them, e.g. clean: [make, clean-cuda].\n";
    y += nvccByPathLines(r, always, notes);
    y += "  command: " + flowList(always) + "\n";
  } else {
    y += "  # Run for every candidate, with ciq's nvcc and ptxas stand-ins first on PATH. Each build must\n"
         "  # compile its CUDA sources again: give a clean: step unless the command always recompiles.\n";
    y += "  command: " + flowList(*build) + "\n";
    y += "  # clean: [rm, -f, kernels.o]\n";
  }
  if (run) {
    y += "\nbenchmark:\n  # Run after each build; its exit status is the correctness gate.\n";
    y += "  command: " + flowList(*run) + "\n";
    if (r.kernelTrace)
      y += "\n# The GPU time of the kernels the benchmark launches, measured by ciq (CUPTI): no timer needed.\n"
           "# A program that prints its own time: metric: {regex: 'time_ms=([0-9.]+)'} under benchmark:\n"
           "# and objectives: [time_ms].\n"
           "objectives: [kernel_time_ms]\n";
    else
      y += "\n# The benchmark's wall time, measured by ciq (kernel_time_ms, the kernels' GPU time, needs a ciq\n"
           "# built with CUPTI: " + r.traceWhy + ").\n"
           "objectives: [time_ms]\n";
  } else {
    y += "\n# Compile-only (no benchmark, no GPU needed): the fewest spill bytes, then registers, from\n"
         "# ptxas's own report. Add a benchmark: section (ciq init --run) to tune for speed.\n"
         "objectives: [spill_bytes, registers]\n";
  }
  y += "\nsearch:\n"
       "  max_evaluations: 40   # distinct binaries, the baseline included\n"
       "\n# No space: key: the default space (ptxas-13.0-default; docs/search-space.md). Your own\n"
       "# -D parameters and more controls:\n"
       "# space:\n#   include: [ptxas-13.0-default]\n#   controls:\n"
       "#     - {name: tile, define: TILE, choice: [16, 32, 64]}\n";
  return y;
}

std::vector<std::string> parseTargetHelp(const std::string &text) {
  std::vector<std::string> out;
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    llvm::StringRef t = line.trim();
    if (t.consume_front("... ")) {   // make
      out.push_back(t.split(' ').first.str());
    } else if (t.endswith(": phony") || t.endswith(": CUSTOM_COMMAND")) {   // ninja
      out.push_back(t.rsplit(':').first.str());
    } else if (size_t c = t.find(": "); c != llvm::StringRef::npos && t.find(' ') > c) {
      out.push_back(t.substr(0, c).str());   // ninja's other rules (CUDA_EXECUTABLE_LINKER...)
    }
  }
  return out;
}

std::optional<std::vector<std::string>> initCMakeLines(const InitRequest &r, bool exists,
                                                       const std::vector<std::string> &targets, std::string &error) {
  if (!r.build.empty()) {
    error = "--build names a build command; --build-dir and --target name a CMake build tree: give one or the other";
    return std::nullopt;
  }
  if (r.target.empty()) {
    error = "--build-dir " + r.buildDir + " needs --target <the CMake target to tune>";
    return std::nullopt;
  }
  if (!exists) {
    std::string some;
    size_t n = 0;
    for (const auto &t : targets)
      if (t.find('/') == std::string::npos && t.find('.') == std::string::npos && t.rfind("ciq-", 0) != 0 &&
          t != "all" && t != "clean" && t != "help" && t != "depend" && t != "edit_cache" && t != "rebuild_cache" &&
          n++ < 8)
        some += (some.empty() ? "" : ", ") + t;
    error = "--target " + r.target + ": no such target in the build tree " + r.buildDir +
            (some.empty() ? "" : " (it has: " + some + ")");
    return std::nullopt;
  }
  std::optional<std::vector<std::string>> run;
  if (!r.run.empty() && !(run = splitCommand(r.run, "--run", error)))
    return std::nullopt;
  std::string tune = "ciq_tune(" + r.target;
  if (run) {
    // A first word naming the target's own executable becomes the target:
    // ciq_tune() then runs the file it builds, wherever the generator puts it.
    std::vector<std::string> words = *run;
    if (llvm::sys::path::filename(words.front()) == r.target)
      words.front() = r.target;
    tune += " BENCHMARK " + joinWords(words) +
            (r.kernelTrace ? " METRIC kernel_time_ms)   # the GPU time of its kernels, measured by ciq"
                           : " METRIC time_ms)   # its wall time (no kernel times: " + r.traceWhy + ")");
  } else {
    tune += " METRIC spill_bytes registers)   # compile-only: no GPU needed";
  }
  return std::vector<std::string>{
      "# Paste after " + r.target + " is defined (add_executable/add_library) in its CMakeLists.txt:",
      "find_package(CompileIQ REQUIRED)",
      tune,
      "ciq_apply_lock(" + r.target + ")",
      "# Then: cmake -S <source> -B " + shellQuote(r.buildDir) + " -DCompileIQ_DIR=" + shellQuote(r.packageDir),
      "#       cmake --build " + shellQuote(r.buildDir) + " --target ciq-tune-" + r.target +
          "   # search; writes " + r.target + ".ciq.lock next to that CMakeLists.txt",
  };
}

} // namespace ciq
