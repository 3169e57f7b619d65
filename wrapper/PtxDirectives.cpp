#include "wrapper/PtxDirectives.h"

#include "common/FileIO.h"

#include <fstream>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <cstring>
#include <llvm/ADT/StringRef.h>

namespace ciq::wrapper {
namespace {

// Where one entry's header lies in the text.
struct EntrySpan {
  PtxEntry entry;
  size_t directivesBegin = 0;  // just after the parameter list's ')'
  size_t bodyBegin = 0;        // the body's '{'
};

// The product of a ".maxntid 256, 1, 1" list.
int threadProduct(const std::string &list) {
  static const std::regex num("[0-9]+");
  long p = 1;
  bool any = false;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), num); it != std::sregex_iterator(); ++it) {
    p *= std::stol(it->str());
    any = true;
    if (p > (1 << 20))
      break;
  }
  return any ? (int)p : 0;
}

void readDirectives(const std::string &region, PtxEntry &e) {
  static const std::regex dir(R"(\.(maxntid|reqntid|minnctapersm|maxnreg)\s+([0-9][0-9,\s]*))");
  for (auto it = std::sregex_iterator(region.begin(), region.end(), dir); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1], args = (*it)[2];
    if (name == "maxntid" || name == "reqntid")
      e.maxThreads = threadProduct(args);
    else if (name == "minnctapersm")
      e.minBlocks = threadProduct(args);
    else
      e.maxnreg = threadProduct(args);
  }
}

// Past a comment or a string literal at p (the position after it), or p.
size_t skipCommentOrString(const std::string &ptx, size_t p) {
  if (ptx.compare(p, 2, "//") == 0) {
    size_t nl = ptx.find('\n', p);
    return nl == std::string::npos ? ptx.size() : nl + 1;
  }
  if (ptx.compare(p, 2, "/*") == 0) {
    size_t end = ptx.find("*/", p + 2);
    return end == std::string::npos ? ptx.size() : end + 2;
  }
  if (ptx[p] == '"') {
    for (size_t q = p + 1; q < ptx.size(); ++q)
      if (ptx[q] == '\\')
        ++q;
      else if (ptx[q] == '"')
        return q + 1;
    return ptx.size();
  }
  return p;
}

// The first of `stops` at or after p outside comments and string literals
// (a header may hold `.pragma "nounroll";` or a comment with a brace).
size_t findCode(const std::string &ptx, size_t p, const char *stops) {
  while (p < ptx.size()) {
    size_t past = skipCommentOrString(ptx, p);
    if (past != p) {
      p = past;
      continue;
    }
    if (std::strchr(stops, ptx[p]))
      return p;
    ++p;
  }
  return std::string::npos;
}

// The body's '{' of the header after the parameter list (p), or npos for a
// declaration: a ';' that ends no `.pragma "...";` of the header.
size_t bodyBrace(const std::string &ptx, size_t p) {
  for (size_t q = findCode(ptx, p, "{;"); q != std::string::npos; q = findCode(ptx, q + 1, "{;")) {
    if (ptx[q] == '{')
      return q;
    size_t line = ptx.rfind('\n', q);
    llvm::StringRef stmt = llvm::StringRef(ptx).slice(line == std::string::npos ? p : std::max(p, line + 1), q).trim();
    if (!stmt.startswith(".pragma"))
      return std::string::npos;
  }
  return std::string::npos;
}

// Past the '}' that closes the body opened at `brace` (or the end).
size_t bodyEnd(const std::string &ptx, size_t brace) {
  int depth = 0;
  for (size_t q = brace; q != std::string::npos && q < ptx.size(); q = findCode(ptx, q + 1, "{}")) {
    depth += ptx[q] == '{' ? 1 : -1;
    if (depth == 0)
      return q + 1;
  }
  return ptx.size();
}

bool containsWord(llvm::StringRef text, llvm::StringRef word) {
  auto isName = [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%'; };
  for (size_t at = text.find(word); at != llvm::StringRef::npos; at = text.find(word, at + 1))
    if ((at == 0 || !isName(text[at - 1])) && (at + word.size() == text.size() || !isName(text[at + word.size()])))
      return true;
  return false;
}

// The module's dynamic shared memory: `.extern .shared .align 16 .b8 smem[];`.
std::vector<std::string> externSharedNames(const std::string &ptx) {
  static const std::regex decl(R"(\.extern\s+\.shared\s+(\.align\s+[0-9]+\s+)?\.[a-z0-9]+\s+([A-Za-z_$%][A-Za-z0-9_$%]*)\s*\[\s*\])");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), decl); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[2]);
  return names;
}

// Finds every `.entry NAME (...) directives {` of a definition; declarations
// (`.extern .entry f(...);`) have no body and are skipped.
std::vector<EntrySpan> findEntries(const std::string &ptx, std::string &error) {
  std::vector<EntrySpan> out;
  const std::vector<std::string> dynamicSharedNames = externSharedNames(ptx);
  static const std::regex head(R"((^|\n)[ \t]*(\.(visible|weak|extern)[ \t]+)*\.entry[ \t]+([A-Za-z_$%][A-Za-z0-9_$%]*))");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), head); it != std::sregex_iterator(); ++it) {
    EntrySpan s;
    s.entry.name = (*it)[4];
    size_t p = it->position(4) + it->length(4);
    while (p < ptx.size() && std::isspace((unsigned char)ptx[p]))
      ++p;
    if (p < ptx.size() && ptx[p] == '(') {
      size_t close = findCode(ptx, p, ")");
      if (close == std::string::npos) {
        error = "entry " + s.entry.name + ": its parameter list has no ')'";
        return {};
      }
      p = close + 1;
    }
    s.directivesBegin = p;
    size_t brace = bodyBrace(ptx, p);
    if (brace == std::string::npos) {
      if (findCode(ptx, p, "{;") == std::string::npos) {
        error = "entry " + s.entry.name + ": no '{' after its parameter list";
        return {};
      }
      continue; // a declaration
    }
    s.bodyBegin = brace;
    // What decides which per-kernel controls the entry may take (KernelSpace.h):
    // register reconfiguration (setmaxnreg) and dynamic shared memory.
    llvm::StringRef body = llvm::StringRef(ptx).slice(brace, bodyEnd(ptx, brace));
    s.entry.setmaxnreg = body.contains("setmaxnreg.");
    for (const auto &name : dynamicSharedNames)
      s.entry.dynamicShared = s.entry.dynamicShared || containsWord(body, name);
    readDirectives(ptx.substr(p, brace - p), s.entry);
    out.push_back(std::move(s));
  }
  return out;
}

// The region without the directive `name` and its arguments.
std::string withoutDirective(const std::string &region, const std::string &name) {
  std::regex re("[ \\t]*\\." + name + "[ \\t]+[0-9][0-9, \\t]*\\n?");
  return std::regex_replace(region, re, "");
}

} // namespace

std::vector<PtxEntry> readPtxEntries(const std::string &ptx, std::string &error) {
  std::vector<PtxEntry> out;
  for (auto &s : findEntries(ptx, error))
    out.push_back(s.entry);
  return out;
}

PtxEdit applyDirectives(const std::string &ptx, const std::vector<KernelDirective> &ds) {
  PtxEdit r;
  auto spans = findEntries(ptx, r.error);
  if (!r.error.empty()) {
    r.ptx = ptx;
    return r;
  }
  size_t copied = 0;
  for (const auto &s : spans) {
    std::string key = kernelKey(s.entry.name);
    std::vector<const KernelDirective *> mine;
    for (const auto &d : ds)
      if (d.kernel == key)
        mine.push_back(&d);
    if (mine.empty())
      continue;
    std::string region = ptx.substr(s.directivesBegin, s.bodyBegin - s.directivesBegin);
    std::string added, bodyFirst;
    for (const auto *d : mine) {
      DirectiveOutcome o{key, "", d->directive, d->value, "applied", ""};
      if (d->directive == kDirectiveMinBlocks && s.entry.maxThreads == 0) {
        o.status = "not_applicable";
        o.note = "the entry has no .maxntid/.reqntid (__launch_bounds__), so ptxas has no block size for .minnctapersm";
      } else if (d->directive == kDirectiveSmemSpilling) {
        bodyFirst += "\n" + directivePtx(*d);
      } else if (knownDirective(d->directive)) {
        region = withoutDirective(region, d->directive);
        added += directivePtx(*d) + "\n";
      } else {
        o.status = "not_applicable";
        o.note = "unknown directive '" + d->directive + "'";
      }
      r.outcomes.push_back(o);
    }
    // The region ends with the newline before '{' (or nothing): new lines go last.
    if (!added.empty() && !region.empty() && region.back() != '\n')
      region += "\n";
    r.ptx += ptx.substr(copied, s.directivesBegin - copied) + region + added + "{" + bodyFirst;
    copied = s.bodyBegin + 1;
  }
  r.ptx += ptx.substr(copied);
  return r;
}

int registerCeiling(const KernelDirective &d, int maxThreads) {
  if (d.directive == kDirectiveMaxnreg)
    return d.value;
  if (d.directive == kDirectiveMinBlocks && maxThreads > 0 && d.value > 0) {
    // Warps allocate whole registers per thread in units of 8 (ptxas 13.0
    // on sm_70 and later: 3 blocks of 256 threads get 80, 2 get 128).
    int perThread = 65536 / (d.value * ((maxThreads + 31) / 32 * 32));
    return std::min(255, perThread / 8 * 8);
  }
  return 0;
}

void checkDirectives(std::vector<DirectiveOutcome> &outcomes, const std::vector<KernelStats> &kernels,
                     const std::vector<PtxEntry> &entries) {
  std::map<std::string, int> threads;
  for (const auto &e : entries)
    threads[kernelKey(e.name)] = e.maxThreads;
  for (auto &o : outcomes) {
    if (o.status != "applied")
      continue;
    for (const auto &k : kernels) {
      if (!k.entry || !k.usageKnown || kernelKey(k.name) != o.kernel || (!o.arch.empty() && k.arch != o.arch))
        continue;
      int cap = registerCeiling(KernelDirective{o.kernel, o.directive, o.value, ""}, threads[o.kernel]);
      if (cap > 0 && k.registers > cap) {
        o.status = "ignored";
        o.note = "ptxas used " + std::to_string(k.registers) + " registers, above the " + std::to_string(cap) +
                 " that ." + o.directive + " " + std::to_string(o.value) + " allows";
      }
    }
  }
}

void notePtxEntries(std::vector<KernelStats> &kernels, const std::vector<PtxEntry> &entries) {
  for (auto &k : kernels)
    for (const auto &e : entries)
      if (k.entry && k.name == e.name) {
        k.ptxKnown = true;
        k.ptxMaxThreads = e.maxThreads;
        k.ptxMinBlocks = e.minBlocks;
        k.ptxMaxnreg = e.maxnreg;
        k.ptxSetmaxnreg = e.setmaxnreg;
        k.ptxDynamicShared = e.dynamicShared;
      }
}

} // namespace ciq::wrapper

namespace ciq::wrapper {

std::vector<PtxEntry> readPtxFile(const std::string &path, std::string &error) {
  auto text = readWholeFile(path);
  if (!text) {
    error = "cannot read " + path;
    return {};
  }
  return readPtxEntries(*text, error);
}

std::string editPtxFile(const std::string &input, const std::string &output, const std::vector<KernelDirective> &ds,
                        const std::string &arch, std::vector<PtxEntry> &entries,
                        std::vector<DirectiveOutcome> &outcomes) {
  auto text = readWholeFile(input);
  if (!text)
    return "cannot read the PTX " + input;
  PtxEdit e = applyDirectives(*text, ds);
  if (!e.error.empty())
    return "the PTX " + input + " does not parse as ciq expects (" + e.error + ")";
  std::string err;
  for (auto &x : readPtxEntries(*text, err))
    entries.push_back(x);
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << e.ptx;
  if (!out.flush())
    return "cannot write the edited PTX " + output;
  for (auto &o : e.outcomes) {
    o.arch = arch;
    outcomes.push_back(o);
  }
  return "";
}

} // namespace ciq::wrapper
