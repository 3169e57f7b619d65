#include "engine/winner/SharedObjectCode.h"
#include "common/Elf64.h"
#include "common/DeviceCode.h"
#include "common/Fatbin.h"
#include "common/FileIO.h"

#include <llvm/Object/ELF.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cstring>

namespace ciq {

namespace {

// The fatbin containers of a linked .nv_fatbin: each starts with the magic,
// header size at +6 and body size at +8 (common/Fatbin.h), zero padding between.
std::vector<llvm::StringRef> containers(llvm::StringRef bytes) {
  std::vector<llvm::StringRef> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes[pos] == 0) {
      ++pos;
      continue;
    }
    llvm::StringRef c = bytes.substr(pos);
    if (!isFatbin(c) || c.size() < 16)
      break;
    uint16_t header;
    uint64_t body;
    std::memcpy(&header, c.data() + 6, 2);
    std::memcpy(&body, c.data() + 8, 8);
    if (header < 16 || body > c.size() - header)
      break; // readDeviceCode of a piece says what is damaged
    out.push_back(c.substr(0, header + body));
    pos += header + body;
  }
  return out;
}

} // namespace

std::optional<std::vector<std::string>> sharedObjectUnitHashes(const std::string &path, std::string &error,
                                                               int onlySm) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return std::nullopt;
  auto elf = openElf64((*buf)->getBuffer());
  if (!elf)
    return std::nullopt;
  if (elf->getHeader().e_type != llvm::ELF::ET_DYN)
    return std::nullopt;
  auto sections = elf->sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return std::nullopt;
  }
  for (const auto &sec : *sections) {
    auto name = elf->getSectionName(sec);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".nv_fatbin")
      continue;
    auto contents = elf->getSectionContents(sec);
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return std::nullopt;
    }
    llvm::StringRef section(reinterpret_cast<const char *>(contents->data()), contents->size());
    auto pieces = containers(section);
    if (pieces.size() < 2)
      return std::nullopt;
    // Each container as the fatbin file it was in its object: readDeviceCode
    // hashes a fatbin file's cubins as it hashes an object's .nv_fatbin.
    std::vector<std::string> hashes;
    llvm::SmallString<128> tmp;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (llvm::sys::fs::createTemporaryFile("ciq-unit", "fatbin", tmp))
        return std::nullopt;
      bool ok = writeFileAtomically(tmp.str().str(), pieces[i].str(), error);
      auto dc = ok ? readDeviceCode(tmp.str().str(), error, onlySm) : std::nullopt;
      llvm::sys::fs::remove(tmp);
      if (!dc) {
        error = path + ": fatbin container " + std::to_string(i + 1) + ": " + error;
        return std::nullopt;
      }
      hashes.push_back(dc->sha256);
    }
    return hashes;
  }
  return std::nullopt;
}

} // namespace ciq
