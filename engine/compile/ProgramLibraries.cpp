#include "engine/compile/ProgramLibraries.h"
#include "common/Paths.h"

#include <algorithm>
#include <cstring>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

namespace {

using ELF = llvm::object::ELF64LE;

// DT_NEEDED names and the DT_RUNPATH/DT_RPATH folder lists of one ELF file,
// read through its dynamic string table (bounded by DT_STRSZ and the file).
void dynamicStrings(const llvm::object::ELFFile<ELF> &elf, std::vector<std::string> &needed,
                    std::vector<std::string> &searchPaths) {
  auto dyn = elf.dynamicEntries();
  if (!dyn) {
    llvm::consumeError(dyn.takeError());
    return;
  }
  uint64_t strtab = 0, strsz = 0;
  for (const auto &d : *dyn) {
    if (d.d_tag == llvm::ELF::DT_STRTAB)
      strtab = d.getPtr();
    else if (d.d_tag == llvm::ELF::DT_STRSZ)
      strsz = d.getVal();
  }
  if (!strtab || !strsz)
    return;
  auto mapped = elf.toMappedAddr(strtab);
  if (!mapped) {
    llvm::consumeError(mapped.takeError());
    return;
  }
  const char *table = reinterpret_cast<const char *>(*mapped);
  const char *end = reinterpret_cast<const char *>(elf.base()) + elf.getBufSize();
  if (table < reinterpret_cast<const char *>(elf.base()) || table > end || (uint64_t)(end - table) < strsz)
    return;
  for (const auto &d : *dyn) {
    bool need = d.d_tag == llvm::ELF::DT_NEEDED;
    if (!need && d.d_tag != llvm::ELF::DT_RUNPATH && d.d_tag != llvm::ELF::DT_RPATH)
      continue;
    uint64_t at = d.getVal();
    if (at >= strsz)
      continue;
    std::string text(table + at, strnlen(table + at, strsz - at));
    if (need)
      needed.push_back(text);
    else
      searchPaths.push_back(text);
  }
}

// One search-path entry with $ORIGIN (or ${ORIGIN}) as the program's folder.
std::string expandOrigin(std::string dir, const std::string &originDir) {
  for (const char *token : {"${ORIGIN}", "$ORIGIN"})
    for (size_t at; (at = dir.find(token)) != std::string::npos;)
      dir.replace(at, std::strlen(token), originDir);
  return dir;
}

} // namespace

std::vector<std::string> buildTreeLibraries(const std::string &program, const std::string &origin,
                                            const std::string &root) {
  std::vector<std::string> out;
  auto bin = llvm::object::ObjectFile::createObjectFile(program);
  if (!bin) {
    llvm::consumeError(bin.takeError());   // not an object: a script, which loads what its interpreter loads
    return out;
  }
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(bin->getBinary());
  if (!elf)
    return out;
  std::vector<std::string> needed, searchPaths;
  dynamicStrings(elf->getELFFile(), needed, searchPaths);
  std::string originDir = llvm::sys::path::parent_path(physicalPath(origin)).str();
  std::string top = physicalPath(root);
  std::vector<std::string> folders;
  for (const auto &list : searchPaths)
    for (llvm::StringRef dir : llvm::split(llvm::StringRef(list), ':'))
      if (!dir.empty())
        folders.push_back(expandOrigin(dir.str(), originDir));
  // Each library where the loader finds it first: a copy outside the tree
  // found earlier shadows the tree's.
  for (const auto &name : needed)
    for (const auto &folder : folders) {
      std::string file = folder + "/" + name;
      if (!llvm::sys::fs::exists(file))
        continue;
      file = physicalPath(file);
      if (file.rfind(top + "/", 0) == 0 && std::find(out.begin(), out.end(), file) == out.end())
        out.push_back(file);
      break;
    }
  return out;
}

} // namespace ciq
