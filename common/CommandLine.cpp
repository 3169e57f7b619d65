#include "common/CommandLine.h"
#include "common/FileIO.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/StringSaver.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace ciq::wrapper {

const char *originName(Origin o) {
  switch (o) {
  case Origin::Argv: return "the command line";
  case Origin::OptionsFile: return "an options file";
  case Origin::PrependEnv: return "NVCC_PREPEND_FLAGS";
  case Origin::AppendEnv: return "NVCC_APPEND_FLAGS";
  }
  return "";
}

std::vector<std::string> splitNvccList(const std::string &value) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '\\' && i + 1 < value.size() && (value[i + 1] == ',' || value[i + 1] == '\\')) {
      out.back() += value[++i];
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

namespace {

// Tokenizes an options file or an environment variable the way a shell would
// (quotes, backslashes), which is what nvcc accepts in both.
std::vector<std::string> tokenize(const std::string &text) {
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::SmallVector<const char *, 32> toks;
  llvm::cl::TokenizeGNUCommandLine(text, saver, toks);
  std::vector<std::string> out;
  for (const char *t : toks)
    if (t)
      out.emplace_back(t);
  return out;
}

std::string absolute(const std::string &p, const std::string &cwd) {
  if (p.empty() || p[0] == '/' || cwd.empty())
    return p;
  return cwd + "/" + p;
}

bool isListOption(const std::string &name) {
  return name == "ptxas-options" || name == "define-macro";
}

using ParseFn = ParsedOption (*)(const std::string &, const std::string *);

// Parses tokens into Args; options files become children (up to a small depth).
std::vector<Arg> parseTokens(const std::vector<std::string> &toks, Origin origin, ParseFn parseOpt,
                             const std::string &cwd, int depth, std::string &error) {
  std::vector<Arg> args;
  for (size_t i = 0; i < toks.size(); ++i) {
    Arg a;
    a.origin = origin;
    const std::string &t = toks[i];
    if (t.size() > 1 && t[0] == '-') {
      a.isOption = true;
      a.opt = parseOpt(t, i + 1 < toks.size() ? &toks[i + 1] : nullptr);
      for (int k = 0; k < a.opt.tokens; ++k)
        a.tokens.push_back(toks[i + k]);
      i += a.opt.tokens - 1;
      if (isListOption(a.opt.name))
        for (auto &s : splitNvccList(a.opt.value))
          a.items.push_back({s});
      if (a.opt.name == "options-file" && depth < 8) {
        a.isOptionsFile = true;
        for (const auto &f : splitNvccList(a.opt.value)) {
          auto file = readWholeFile(absolute(f, cwd));
          if (!file) {
            if (error.empty())
              error = "cannot read options file '" + f + "' (named by " + t + ")";
            continue;
          }
          auto kids = parseTokens(tokenize(*file), origin == Origin::Argv ? Origin::OptionsFile : origin,
                                  parseOpt, cwd, depth + 1, error);
          for (auto &k : kids)
            a.children.push_back(std::move(k));
        }
      }
    } else {
      a.tokens.push_back(t);
      a.input = t;
    }
    args.push_back(std::move(a));
  }
  return args;
}

void flatten(std::vector<Arg> &args, std::vector<Arg *> &out) {
  for (auto &a : args) {
    out.push_back(&a);
    flatten(a.children, out);
  }
}

bool hasExt(const std::string &f, std::initializer_list<const char *> exts) {
  auto dot = f.rfind('.');
  if (dot == std::string::npos)
    return false;
  std::string e = f.substr(dot + 1);
  for (const char *x : exts)
    if (e == x)
      return true;
  return false;
}

// "arch=compute_90,code=[sm_90,compute_90]" or "arch=compute_90,code=\"sm_90,compute_90\"".
void parseGencode(const std::string &spec, std::vector<GpuTarget> &out) {
  std::string arch, codes;
  size_t a = spec.find("arch=");
  size_t c = spec.find("code=");
  if (a == std::string::npos || c == std::string::npos)
    return;
  arch = spec.substr(a + 5, spec.find(',', a) - a - 5);
  codes = spec.substr(c + 5);
  codes.erase(std::remove_if(codes.begin(), codes.end(),
                             [](char ch) { return ch == '[' || ch == ']' || ch == '"' || ch == '\''; }),
              codes.end());
  for (auto &code : splitNvccList(codes))
    if (!code.empty())
      out.push_back({arch, code});
}

std::string virtualOf(const std::string &arch) {
  if (arch.rfind("sm_", 0) == 0)
    return "compute_" + arch.substr(3);
  return arch;
}

// The targets nvcc 13.0 compiles for, from -gencode / -arch / -code (nvcc --help, "--gpu-architecture").
std::vector<GpuTarget> resolveTargets(const std::vector<Arg *> &flat) {
  std::vector<GpuTarget> gencode;
  std::string arch;
  std::vector<std::string> codes;
  for (Arg *a : flat) {
    if (a->opt.name == "generate-code")
      parseGencode(a->opt.value, gencode);
    else if (a->opt.name == "gpu-architecture")
      arch = a->opt.value;
    else if (a->opt.name == "gpu-code")
      for (auto &c : splitNvccList(a->opt.value))
        codes.push_back(c);
  }
  std::vector<GpuTarget> out = gencode;
  if (!arch.empty()) {
    if (!codes.empty()) {
      for (auto &c : codes)
        out.push_back({virtualOf(arch), c});
    } else if (arch == "all" || arch == "all-major" || arch == "native") {
      out.push_back({arch, arch}); // real code for several GPUs
    } else if (arch.rfind("sm_", 0) == 0) {
      out.push_back({virtualOf(arch), arch});
      out.push_back({virtualOf(arch), virtualOf(arch)});
    } else {
      out.push_back({arch, arch}); // compute_XX alone: PTX only
    }
  }
  if (out.empty()) {
    out.push_back({"compute_75", "sm_75"});
    out.push_back({"compute_75", "compute_75"});
  }
  return out;
}

bool isSass(const std::string &code) {
  return code.rfind("sm_", 0) == 0 || code == "all" || code == "all-major" || code == "native";
}

// Whether ptxas produces SASS in this nvcc invocation (when not, the wrapper
// only passes the command through, so no reason is kept).
void decidePtxasRuns(NvccCommand &c, const std::vector<Arg *> &flat) {
  std::set<std::string> has;
  for (Arg *a : flat)
    if (a->isOption)
      has.insert(a->opt.name);
  c.ptxasRuns = false;
  if (has.count("version") || has.count("help"))
    return;
  if (has.count("dryrun")) // prints the commands, runs nothing
    return;
  if (has.count("preprocess")) // -E
    return;
  if ((has.count("generate-dependencies") || has.count("generate-nonsystem-dependencies"))) // -M/-MM
    return;
  if (has.count("ptx") || has.count("cuda") || has.count("optix-ir") || has.count("ltoir")) // no SASS
    return;
  bool lto = has.count("dlink-time-opt") != 0;
  bool deviceSource = false;
  bool forceCu = false;
  for (Arg *a : flat)
    if (a->opt.name == "x")
      forceCu = a->opt.value == "cu";
  for (auto &in : c.inputs)
    if (hasExt(in, {"cu", "ptx", "gpu", "cup"}) || (forceCu && hasExt(in, {"c", "cc", "cpp", "cxx", "C"})))
      deviceSource = true;
  // Without device source: nvlink runs ptxas on LTO IR (-dlto), so controls
  // apply; else -dlink without -dlto (nvlink only) or a host-only/link step.
  if (!deviceSource && !((has.count("device-link") || c.inputs.size() > 0) && lto))
    return;
  bool anySass = false;
  for (auto &t : c.targets)
    anySass = anySass || isSass(t.code);
  if (!anySass && !lto) // only PTX (compute_XX) or LTO targets: ptxas produces no SASS
    return;
  c.ptxasRuns = true;
}

// Collects the ptxas options from every -Xptxas list, in nvcc's order.
void collectNvccPtxasOptions(NvccCommand &c, const std::vector<Arg *> &flat) {
  std::vector<std::pair<ListItem *, Origin>> items;
  for (Arg *a : flat) {
    if (a->opt.name == "ptxas-options")
      for (auto &it : a->items)
        items.push_back({&it, a->origin});
    if (a->opt.name == "resource-usage")
      c.userAskedPtxasVerbose = true;
    c.deviceDebug |= a->opt.name == "device-debug";
    c.lineinfo |= a->opt.name == "generate-line-info";
    // -rdc=true, --relocatable-device-code true, -dc: the last -rdc wins.
    if (a->opt.name == "relocatable-device-code")
      c.relocatable = a->opt.value.empty() || a->opt.value == "true";
    c.relocatable |= a->opt.name == "device-c";
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string *next = i + 1 < items.size() ? &items[i + 1].first->text : nullptr;
    UserPtxasOption u;
    u.opt = parsePtxasOption(items[i].first->text, next);
    u.spelled = items[i].first->text;
    u.origin = items[i].second;
    for (int k = 0; k < u.opt.tokens; ++k)
      u.items.push_back(items[i + k].first);
    if (u.opt.tokens == 2)
      u.spelled += " " + items[i + 1].first->text;
    i += u.opt.tokens - 1;
    if (u.opt.name == "verbose")
      c.userAskedPtxasVerbose = true;
    c.deviceDebug |= u.opt.name == "device-debug";
    c.lineinfo |= u.opt.name == "generate-line-info";
    c.ptxasOptions.push_back(u);
  }
}

void renderInto(const Arg &a, bool nvccLists, std::vector<std::string> &out) {
  if (a.removed)
    return;
  if (!a.dirty) {
    out.insert(out.end(), a.tokens.begin(), a.tokens.end());
    return;
  }
  if (a.isOptionsFile) {
    for (const auto &k : a.children)
      renderInto(k, nvccLists, out);
    return;
  }
  // A list option with some elements removed: render what is left, escaped.
  std::string joined;
  bool any = false;
  for (const auto &it : a.items) {
    if (it.removed)
      continue;
    joined += (any ? "," : "") + escapeNvccListItem(it.text);
    any = true;
  }
  if (!any)
    return;
  if (a.opt.name == "define-macro") {
    out.push_back("-D" + joined);
    return;
  }
  out.push_back(a.tokens.size() == 2 ? a.tokens[0] : a.tokens[0].substr(0, a.tokens[0].find('=')));
  out.push_back(joined);
}

} // namespace

std::vector<Arg *> NvccCommand::flat() {
  std::vector<Arg *> out;
  flatten(prependArgs, out);
  flatten(args, out);
  flatten(appendArgs, out);
  return out;
}

std::vector<std::string> NvccCommand::sassArchs() const {
  std::vector<std::string> out;
  for (const auto &t : targets)
    if (isSass(t.code) && std::find(out.begin(), out.end(), t.code) == out.end())
      out.push_back(t.code);
  return out;
}

std::string NvccCommand::source() const {
  for (const auto &in : inputs)
    if (hasExt(in, {"cu", "ptx", "gpu", "cup", "c", "cc", "cpp", "cxx"}))
      return in;
  return inputs.empty() ? "" : inputs[0];
}

NvccCommand parseNvcc(const std::vector<std::string> &argv, const std::string &prependEnv,
                      const std::string &appendEnv, const std::string &cwd) {
  NvccCommand c;
  c.argv = argv;
  c.prependArgs = parseTokens(tokenize(prependEnv), Origin::PrependEnv, parseNvccOption, cwd, 0, c.error);
  c.args = parseTokens(argv, Origin::Argv, parseNvccOption, cwd, 0, c.error);
  c.appendArgs = parseTokens(tokenize(appendEnv), Origin::AppendEnv, parseNvccOption, cwd, 0, c.error);
  auto flat = c.flat();
  for (Arg *a : flat) {
    if (!a->input.empty())
      c.inputs.push_back(a->input);
    if (a->opt.name == "output-file")
      c.output = a->opt.value;
    else if (a->opt.name == "dependency-output")
      c.depfile = a->opt.value;
  }
  c.targets = resolveTargets(flat);
  collectNvccPtxasOptions(c, flat);
  decidePtxasRuns(c, flat);
  return c;
}

PtxasCommand parsePtxas(const std::vector<std::string> &argv, const std::string &cwd) {
  PtxasCommand c;
  c.argv = argv;
  c.args = parseTokens(argv, Origin::Argv, parsePtxasOption, cwd, 0, c.error);
  std::vector<Arg *> flat;
  flatten(c.args, flat);
  c.output = "elf.o";
  for (Arg *a : flat) {
    if (!a->input.empty() && c.input.empty())
      c.input = a->input;
    if (!a->isOption || a->isOptionsFile)
      continue;
    const auto &n = a->opt.name;
    if (n == "output-file")
      c.output = a->opt.value;
    else if (n == "gpu-name")
      c.arch = a->opt.value;
    else if (n == "verbose")
      c.verbose = true;
    else if (n == "device-debug")
      c.deviceDebug = true;
    else if (n == "generate-line-info")
      c.lineinfo = true;
    else if (n == "version" || n == "help" || n == "list-version")
      c.versionQuery = true;
    UserPtxasOption u;
    u.opt = a->opt;
    u.spelled = a->tokens[0] + (a->tokens.size() > 1 ? " " + a->tokens[1] : "");
    u.origin = a->origin;
    u.arg = a;
    c.options.push_back(u);
  }
  if (c.arch.empty())
    c.arch = "sm_75"; // ptxas 13.0's default --gpu-name
  c.ptxasRuns = !c.versionQuery && !c.input.empty() && c.arch.rfind("sm_", 0) == 0;
  return c;
}

std::vector<std::string> renderArgs(const std::vector<Arg> &args, bool nvccLists) {
  std::vector<std::string> out;
  for (const auto &a : args)
    renderInto(a, nvccLists, out);
  return out;
}

} // namespace ciq::wrapper
