#include "DeviceCode.h"
#include "Sha256.h"

#include <algorithm>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

namespace ciq {

std::optional<DeviceCode> readDeviceCode(const std::string &path, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = path + ": " + buf.getError().message();
    return std::nullopt;
  }
  llvm::StringRef bytes = (*buf)->getBuffer();
  DeviceCode dc;
  auto obj = llvm::object::ObjectFile::createObjectFile((*buf)->getMemBufferRef());
  if (!obj) {
    llvm::consumeError(obj.takeError());
    // Not an object file: a fatbin or something else that is device code as a whole.
    dc.sha256 = sha256Hex(bytes);
    dc.bytes = (long)bytes.size();
    dc.section = "file";
    return dc;
  }
  // A cubin is an ELF for the CUDA machine: the whole file is device code.
  if (auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(obj->get());
      elf && elf->getEMachine() == llvm::ELF::EM_CUDA) {
    dc.sha256 = sha256Hex(bytes);
    dc.bytes = (long)bytes.size();
    dc.section = "file";
    return dc;
  }
  for (const auto &sec : (*obj)->sections()) {
    auto name = sec.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".nv_fatbin")
      continue;
    auto contents = sec.getContents();
    if (!contents) {
      error = path + ": " + llvm::toString(contents.takeError());
      return std::nullopt;
    }
    dc.sha256 = sha256Hex(*contents);
    dc.bytes = (long)contents->size();
    dc.section = ".nv_fatbin";
    return dc;
  }
  return dc;
}

std::string combineDeviceCodeHashes(std::vector<std::string> hashes) {
  std::sort(hashes.begin(), hashes.end());
  std::string all;
  for (const auto &h : hashes)
    all += h + "\n";
  return sha256Hex(all);
}

} // namespace ciq
