#include "common/Fatbin.h"

#include <llvm/Support/Endian.h>

#include <lz4.h>
#include <zstd.h>

namespace ciq {
namespace {

using llvm::StringRef;
namespace endian = llvm::support::endian;

constexpr uint32_t kMagic = 0xBA55ED50;
constexpr size_t kContainerHeader = 16;
constexpr size_t kEntryHeader = 64; // the smallest entry header; newer ones are longer
constexpr uint16_t kKindElf = 2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;

uint16_t u16(StringRef b, size_t at) { return endian::read16le(b.data() + at); }
uint32_t u32(StringRef b, size_t at) { return endian::read32le(b.data() + at); }
uint64_t u64(StringRef b, size_t at) { return endian::read64le(b.data() + at); }

// One entry's payload as the cubin it holds: decompressed when its flags say so.
bool decompress(StringRef payload, uint64_t flags, uint64_t size, std::string &out, std::string &why) {
  if (!(flags & (kFlagLz4 | kFlagZstd))) {
    out = payload.str();
    return true;
  }
  if (size == 0 || size > (1ull << 32)) {
    why = "uncompressed size " + std::to_string(size) + " is not plausible";
    return false;
  }
  out.assign(size, '\0');
  if (flags & kFlagZstd) {
    size_t n = ZSTD_decompress(out.data(), size, payload.data(), payload.size());
    if (ZSTD_isError(n)) {
      why = std::string("Zstandard: ") + ZSTD_getErrorName(n);
      return false;
    }
    if (n != size) {
      why = "Zstandard: " + std::to_string(n) + " bytes, the entry records " + std::to_string(size);
      return false;
    }
    return true;
  }
  int n = LZ4_decompress_safe(payload.data(), out.data(), (int)payload.size(), (int)size);
  if (n < 0 || (uint64_t)n != size) {
    why = "LZ4: the block does not decompress to the " + std::to_string(size) + " bytes the entry records";
    return false;
  }
  return true;
}

// The entries of the container at the start of `c` (its header already checked).
bool walkContainer(StringRef c, size_t end, llvm::function_ref<void(int, StringRef)> onCubin, std::string &error) {
  size_t pos = u16(c, 6);
  for (int index = 1; pos < end; ++index) {
    std::string where = "fatbin entry " + std::to_string(index);
    if (pos + kEntryHeader > end) {
      error = where + ": truncated header";
      return false;
    }
    uint32_t headerSize = u32(c, pos + 4);
    uint64_t padded = u64(c, pos + 8);
    uint32_t compressed = u32(c, pos + 16);
    int sm = (int)u32(c, pos + 28);
    uint64_t flags = u64(c, pos + 40);
    uint64_t size = u64(c, pos + 56);
    if (headerSize < kEntryHeader || headerSize > end - pos || padded > end - pos - headerSize) {
      error = where + ": its payload runs past the container";
      return false;
    }
    if (u16(c, pos) == kKindElf) {
      bool packed = flags & (kFlagLz4 | kFlagZstd);
      StringRef payload = c.substr(pos + headerSize, packed ? std::min<uint64_t>(compressed, padded) : padded);
      std::string cubin, why;
      if (!decompress(payload, flags, size, cubin, why)) {
        error = where + " (sm_" + std::to_string(sm) + "): " + why;
        return false;
      }
      onCubin(sm, cubin);
    }
    pos += headerSize + padded;
  }
  return true;
}

} // namespace

bool isFatbin(StringRef bytes) { return bytes.size() >= kContainerHeader && u32(bytes, 0) == kMagic; }

bool forEachFatbinCubin(StringRef bytes, llvm::function_ref<void(int, StringRef)> onCubin, std::string &error) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    // Containers are aligned in a linked section: zero padding between and after them.
    if (bytes[pos] == 0) {
      ++pos;
      continue;
    }
    StringRef c = bytes.substr(pos);
    if (!isFatbin(c))
      break;
    uint64_t body = u64(c, 8);
    size_t headerSize = u16(c, 6);
    if (headerSize < kContainerHeader || body > c.size() - headerSize) {
      error = "fatbin container at byte " + std::to_string(pos) + ": truncated";
      return false;
    }
    if (!walkContainer(c, headerSize + body, onCubin, error))
      return false;
    pos += headerSize + body;
  }
  return true;
}

} // namespace ciq
