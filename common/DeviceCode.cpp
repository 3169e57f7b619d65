#include "DeviceCode.h"
#include "Sha256.h"

#include <algorithm>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

namespace ciq {
namespace {

// One cubin's SASS and its resource tables, hashed section by section. The
// `.note.nv.tkinfo` note is left out: it records the ptxas command line
// (options, -v), which changes with every spelling of the same code.
void hashCubin(const llvm::object::ObjectFile &cubin, std::string &acc) {
  for (const auto &sec : cubin.sections()) {
    auto name = sec.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".note.nv.tkinfo")
      continue;
    acc += name->str() + ":" + std::to_string(sec.getSize()) + ":";
    if (sec.isBSS())
      continue;
    auto contents = sec.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    acc += sha256Hex(*contents) + "\n";
  }
}

// The cubins embedded in a fatbin: every ELF image for the CUDA machine.
// ciq never interprets the fatbin container itself, it only finds the ELFs.
// Returns false when there is none (e.g. a compressed fatbin).
bool hashEmbeddedCubins(llvm::StringRef fatbin, std::string &acc) {
  bool found = false;
  size_t pos = 0;
  while ((pos = fatbin.find("\x7f" "ELF", pos)) != llvm::StringRef::npos) {
    llvm::MemoryBufferRef ref(fatbin.substr(pos), "cubin");
    auto obj = llvm::object::ObjectFile::createObjectFile(ref);
    if (!obj) {
      llvm::consumeError(obj.takeError());
      pos += 4;
      continue;
    }
    auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(obj->get());
    if (elf && elf->getEMachine() == llvm::ELF::EM_CUDA) {
      hashCubin(**obj, acc);
      found = true;
    }
    pos += 4;
  }
  return found;
}

} // namespace

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
    std::string acc;
    hashCubin(**obj, acc);
    dc.sha256 = sha256Hex(acc);
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
    // -rdc=true (CUDA_SEPARABLE_COMPILATION) objects keep their relocatable
    // device code in __nv_relfatbin instead.
    if (*name != ".nv_fatbin" && *name != "__nv_relfatbin")
      continue;
    auto contents = sec.getContents();
    if (!contents) {
      error = path + ": " + llvm::toString(contents.takeError());
      return std::nullopt;
    }
    std::string acc;
    dc.bytes = (long)contents->size();
    if (hashEmbeddedCubins(*contents, acc)) {
      dc.sha256 = sha256Hex(acc);
      dc.section = name->str() + " cubins";
    } else {
      dc.sha256 = sha256Hex(*contents);
      dc.section = name->str();
    }
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
