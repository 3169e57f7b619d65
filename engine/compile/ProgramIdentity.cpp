#include "engine/compile/ProgramIdentity.h"
#include "common/DeviceCode.h"
#include "common/Elf64.h"
#include "common/Sha256.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <map>

namespace ciq {

namespace {

// Every section an ELF file loads (SHF_ALLOC), by name: its address, size
// and bytes; the device code (.nv_fatbin) and the build-id note (a hash of
// the whole file) left out. nullopt: not a 64-bit little-endian ELF file.
std::optional<std::map<std::string, std::string>> loadedSections(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return std::nullopt;
  auto elf = openElf64((*buf)->getBuffer());
  if (!elf)
    return std::nullopt;
  auto sections = elf->sections();
  if (!sections)
    return llvm::consumeError(sections.takeError()), std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto &sec : *sections) {
    auto name = elf->getSectionName(sec);
    if (!name)
      return llvm::consumeError(name.takeError()), std::nullopt;
    if (!(sec.sh_flags & llvm::ELF::SHF_ALLOC) || *name == ".nv_fatbin" || *name == ".note.gnu.build-id")
      continue;
    std::string key = name->str() + "@" + std::to_string(sec.sh_addr) + "+" + std::to_string(sec.sh_size);
    std::string content;
    if (sec.sh_type != llvm::ELF::SHT_NOBITS) {
      auto c = elf->getSectionContents(sec);
      if (!c)
        return llvm::consumeError(c.takeError()), std::nullopt;
      content.assign((const char *)c->data(), c->size());
    }
    out[key] = std::move(content);
  }
  return out;
}

// Two files of other bytes that run alike: every loaded section the same
// bytes at the same address but the device code, whose hash (unit names
// made canonical: common/DeviceCode.h) is the same; what differs is not
// loaded (nvcc's temporary file names in .strtab) or a hash of the file
// (the build-id).
bool sameLoadedCode(const std::string &a, const std::string &b) {
  auto x = loadedSections(a), y = loadedSections(b);
  if (!x || !y || *x != *y)
    return false;
  std::string err;
  auto da = readDeviceCode(a, err), db = readDeviceCode(b, err);
  return da && db && da->sha256 == db->sha256;
}

// Relative path -> SHA-256 of every regular file under dir but ciq's own *.json.
std::map<std::string, std::string> filesOf(const std::string &dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec, false), end; it != end && !ec; it.increment(ec)) {
    if (it->type() != llvm::sys::fs::file_type::regular_file)
      continue;
    llvm::StringRef path = it->path();
    if (path.endswith(".json"))
      continue;
    std::string rel = path.substr(dir.size() + 1).str();
    out[rel] = sha256File(path.str()).value_or("unreadable");
  }
  return out;
}

} // namespace

ProgramComparison compareProgramCopies(const std::string &measuredDir, const std::string &rehearsedDir) {
  ProgramComparison c;
  if (measuredDir.empty() || rehearsedDir.empty())
    return c.difference = "no copy to compare", c;
  auto a = filesOf(measuredDir), b = filesOf(rehearsedDir);
  if (a.empty())
    return c.difference = "the measured copy holds no file", c;
  for (const auto &[rel, sha] : a) {
    auto it = b.find(rel);
    if (it == b.end())
      return c.difference = rel + ": not in the rehearsed program", c;
    if (it->second == sha)
      continue;
    if (!sameLoadedCode(measuredDir + "/" + rel, rehearsedDir + "/" + rel))
      return c.difference = rel + ": other bytes", c;
    c.loadedOnly.push_back(rel);
  }
  for (const auto &[rel, sha] : b)
    if (!a.count(rel))
      return c.difference = rel + ": not in the measured copy", c;
  c.identical = true;
  return c;
}

std::string copyFolderOf(const std::vector<std::string> &command, const std::string &under) {
  for (const auto &arg : command) {
    llvm::StringRef a(arg);
    if (under.empty() || !a.startswith(under + "/"))
      continue;
    llvm::StringRef rel = a.substr(under.size() + 1);
    if (rel.contains('/'))
      return under + "/" + rel.split('/').first.str();
  }
  return "";
}

} // namespace ciq
