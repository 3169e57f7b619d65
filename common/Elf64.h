// One reader of 64-bit little-endian ELF files (host objects, programs,
// shared objects, cubins) for every part that looks inside them.
// ELFFile directly, not ObjectFile::createObjectFile: the generic reader links
// every object format, bitcode included, and with it LLVM IR's static
// initializers, which cost ciq-ptxas-driver start-up time on every compile.
#pragma once
#include <llvm/ADT/StringRef.h>
#include <llvm/Object/ELF.h>

#include <optional>

namespace ciq {

using Elf64 = llvm::object::ELFFile<llvm::object::ELF64LE>;

// nullopt when `bytes` are not a 64-bit little-endian ELF file LLVM reads.
inline std::optional<Elf64> openElf64(llvm::StringRef bytes) {
  if (bytes.size() < llvm::ELF::EI_NIDENT || !bytes.startswith("\x7f" "ELF") ||
      bytes[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 || bytes[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB)
    return std::nullopt;
  auto elf = Elf64::create(bytes);
  if (!elf) {
    llvm::consumeError(elf.takeError());
    return std::nullopt;
  }
  return std::move(*elf);
}

} // namespace ciq
