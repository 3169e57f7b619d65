#include "wrapper/UserKeep.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>

namespace ciq::wrapper {
namespace {

bool keeps(const std::string &name) { return name == "keep" || name == "save-temps"; }

} // namespace

UserKeep userKeepOf(NvccCommand &cmd, const std::string &cwd) {
  UserKeep k;
  bool asked = false;
  std::string dir;
  for (Arg *a : cmd.flat()) {
    if (!a->isOption)
      continue;
    const std::string &n = a->opt.name;
    asked = asked || keeps(n);
    if (n != "keep-dir")
      continue;
    dir = a->opt.value;
    if (a->origin != Origin::Argv)
      k.problem = "nvcc option " + (a->tokens.empty() ? n : a->tokens[0]) + " in " + originName(a->origin) +
                  ", which ciq cannot take off the command line to keep the files itself";
  }
  if (asked)
    k.dir = dir.empty() ? cwd : dir[0] == '/' ? dir : cwd + "/" + dir;
  return k;
}

std::vector<std::string> withoutKeepOptions(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size();) {
    // Parsed as nvcc parses it, so that the value of another option
    // (-Xcompiler -keep, -o -keep-dir) is never taken for one of these.
    const std::string *next = i + 1 < args.size() ? &args[i + 1] : nullptr;
    ParsedOption p = parseNvccOption(args[i], next);
    size_t used = p.known ? std::max(p.tokens, 1) : 1;
    bool drop = args[i].size() > 1 && args[i][0] == '-' && (keeps(p.name) || p.name == "keep-dir");
    for (size_t k = 0; k < used && i + k < args.size(); ++k)
      if (!drop)
        out.push_back(args[i + k]);
    i += used;
  }
  return out;
}

std::string copyKeptFiles(const std::string &keepDir, const std::string &userDir,
                          const std::vector<std::string> &skip,
                          const std::vector<std::pair<std::string, std::string>> &built) {
  // nvcc fails when its -keep-dir is missing, and so does this copy.
  if (!llvm::sys::fs::is_directory(userDir))
    return "the keep folder " + userDir + " does not exist; make it or change -keep-dir";
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(keepDir, ec), end; !ec && it != end; it.increment(ec)) {
    if (std::find(skip.begin(), skip.end(), it->path()) != skip.end())
      continue;
    std::string to = userDir + "/" + llvm::sys::path::filename(it->path()).str();
    if (auto e = llvm::sys::fs::copy_file(it->path(), to))
      return "cannot copy " + it->path() + " to " + to + ": " + e.message();
  }
  if (ec)
    return "cannot read " + keepDir + ": " + ec.message();
  for (const auto &[kept, from] : built) {
    std::string to = userDir + "/" + llvm::sys::path::filename(kept).str();
    if (auto e = llvm::sys::fs::copy_file(from, to))
      return "cannot copy " + from + " to " + to + ": " + e.message();
  }
  return "";
}

} // namespace ciq::wrapper
