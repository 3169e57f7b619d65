#include "wrapper/PtxReuseStore.h"

#include "common/FileIO.h"
#include "common/Protocol.h"
#include "common/Sha256.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

namespace ciq::wrapper {
namespace {

using nlohmann::json;

// Bumped whenever the layout or the meaning of an entry changes.
constexpr const char *kFormat = "ciq-ptx-reuse-1";

// A tool's identity without hashing its bytes (cicc is tens of MB): where it
// is, its size and modification time. A reinstalled toolkit changes them.
std::string toolIdentity(const std::string &path) {
  struct stat st {};
  std::string real = resolvedPath(path);
  if (stat(real.c_str(), &st) != 0)
    return real + ":missing";
  return real + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string envOrEmpty(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

// "" when it cannot be read: a missing manifest or depfile is a miss.
std::string readFile(const std::string &path) { return readWholeFile(path).value_or(""); }

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

} // namespace

std::string resolvedPath(const std::string &p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// Paths and arguments are bytes (a Latin-1 directory name is legal), so each
// goes through the protocol's lossless byte encoding before it is hashed.
static json bytesArray(const std::vector<std::string> &items) {
  json a = json::array();
  for (const auto &s : items)
    a.push_back(bytesToJson(s));
  return a;
}

std::string frontEndKey(const KeyInputs &in) {
  std::string nvcc = resolvedPath(in.nvccPath);
  std::string bin = llvm::sys::path::parent_path(nvcc).str();
  json j = {{"format", kFormat},
            {"nvcc", bytesToJson(toolIdentity(nvcc))},
            {"cicc", bytesToJson(toolIdentity(bin + "/../nvvm/bin/cicc"))},
            {"cudafe", bytesToJson(toolIdentity(bin + "/cudafe++"))},
            {"cwd", bytesToJson(in.cwd)},
            {"args", bytesArray(in.userArgs)},
            {"prepend", bytesToJson(envOrEmpty("NVCC_PREPEND_FLAGS"))},
            {"append", bytesToJson(envOrEmpty("NVCC_APPEND_FLAGS"))},
            {"ccbin", bytesToJson(envOrEmpty("NVCC_CCBIN"))},
            {"path", bytesToJson(envOrEmpty("PATH"))}};
  return sha256Hex(j.dump());
}

std::string entryDir(const std::string &runDir, const std::string &key) {
  return runDir + "/ptx-reuse/" + key.substr(0, 24);
}

// Make's depfile syntax as nvcc -MD writes it: "target: dep dep \<newline> dep",
// a backslash before a space keeps the space in the name. Only prerequisites
// matter here, so everything up to the first unescaped ':' is skipped.
std::vector<std::string> depfilePrerequisites(const std::string &text) {
  std::vector<std::string> out;
  std::string cur;
  bool inTarget = true;
  auto flush = [&] {
    if (!cur.empty() && !inTarget)
      out.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      flush();
      ++i;
      continue;
    }
    if (ch == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '#')) {
      cur += text[++i];
      continue;
    }
    if (inTarget && ch == ':' && (i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      cur.clear();
      inTarget = false;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      flush();
      if (ch == '\n')
        inTarget = true; // a new rule (nvcc writes one)
      continue;
    }
    cur += ch;
  }
  flush();
  return out;
}

std::optional<KeptEntry> loadEntry(const std::string &dir, std::string &stale) {
  std::string text = readFile(dir + "/manifest.json");
  if (text.empty())
    return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Any field of the wrong type (another version's manifest, a damaged
  // file) is a miss, never an abort of the compile.
  KeptEntry e;
  e.dir = dir;
  try {
    if (!j.is_object() || j.value("format", "") != kFormat)
      return std::nullopt;
    const json &steps = j.at("front_end_steps"), &deps = j.at("deps");
    if (!steps.is_array() || !deps.is_array() || deps.empty()) // commitEntry writes both, deps never empty
      return std::nullopt;
    for (const auto &step : steps)
      e.frontEndSteps.push_back(bytesFromJson(step));
    e.fatbinSection = bytesFromJson(j.at("fatbin_section"));
    for (const auto &d : deps)
      e.deps.push_back({bytesFromJson(d.at("path")), d.at("sha256").get<std::string>()});
  } catch (const json::exception &) {
    return std::nullopt;
  }
  for (const auto &dep : e.deps) {
    auto now = sha256File(dep.path);
    if (dep.sha256.empty() ? llvm::sys::fs::exists(dep.path) : !now || *now != dep.sha256) {
      stale = dep.path;
      return std::nullopt;
    }
  }
  return e;
}

std::string commitEntry(const std::string &tmpDir, const std::string &finalDir, KeptEntry entry,
                        const std::string &object, const std::string &depfile, const std::string &cwd,
                        bool keepPreprocessed) {
  if (auto ec = llvm::sys::fs::copy_file(object, tmpDir + "/object.o"))
    return "cannot keep " + object + ": " + ec.message();
  std::string deps = readFile(depfile);
  if (deps.empty())
    return "the compile wrote no dependency file " + depfile;
  if (!writeFile(tmpDir + "/deps.d", deps))
    return "cannot write " + tmpDir + "/deps.d";
  json jdeps = json::array();
  for (const auto &p : depfilePrerequisites(deps)) {
    std::string abs = p[0] == '/' ? p : cwd + "/" + p;
    auto sha = sha256File(abs);
    // nvcc names paths that are no file: in a folder whose name holds a '"'
    // (/src/a"b/k.cu) its depfile's last line is "/src/a", cut at the quote.
    // Such a path is kept as absent (""), and the entry holds while it is.
    if (!sha && llvm::sys::fs::exists(abs))
      return "cannot read " + abs + ", named in " + depfile;
    jdeps.push_back({{"path", bytesToJson(abs)}, {"sha256", sha.value_or("")}});
  }
  if (jdeps.empty())
    return depfile + " names no source file";
  json j = {{"format", kFormat},
            {"front_end_steps", bytesArray(entry.frontEndSteps)},
            {"fatbin_section", bytesToJson(entry.fatbinSection)},
            {"deps", jdeps}};
  // The preprocessed sources are the bulk of nvcc's kept files and nothing
  // reuse runs reads them, unless the user's -keep asks for them.
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(tmpDir + "/keep", ec), end; !keepPreprocessed && !ec && it != end;
       it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(".ii"))
      llvm::sys::fs::remove(it->path());
  if (!writeFile(tmpDir + "/manifest.json", j.dump(1)))
    return "cannot write " + tmpDir + "/manifest.json";
  llvm::sys::fs::remove_directories(finalDir);
  if (auto ec = llvm::sys::fs::rename(tmpDir, finalDir))
    return "cannot move " + tmpDir + " to " + finalDir + ": " + ec.message();
  return "";
}

} // namespace ciq::wrapper
