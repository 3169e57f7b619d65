// The cubins inside a fatbin container (an object's .nv_fatbin or
// __nv_relfatbin section, or an `nvcc -fatbin` file), decompressed.
//
// nvcc 13 stores device code compressed: a relocatable cubin (-rdc=true) and
// every entry of a `-compress-mode=size|balance` compile with Zstandard
// (entry flag 0x8000), `-compress-mode=speed` with an LZ4 block (flag 0x2000).
// The compressed bytes hide the cubin's sections (and embed the ptxas command
// line), so they are decompressed before hashing.
//
// Layout (little-endian; NVIDIA documents no format, these are the fields
// nvcc 12.x-13.x writes and cuobjdump reads):
//   container: u32 magic 0xBA55ED50, u16 version, u16 header size,
//              u64 size of the entries that follow
//   entry:     u16 kind (1 PTX, 2 ELF), u16 version, u32 header size,
//              u64 payload size (padded), u32 compressed size at +16,
//              u32 sm at +28, u64 flags at +40, u64 uncompressed size at +56;
//              the payload follows the entry header.
#pragma once
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace ciq {

// True when `bytes` starts with a fatbin container's magic.
bool isFatbin(llvm::StringRef bytes);

// Calls onCubin(sm, cubinBytes) for every ELF entry of every container in
// `bytes` (containers follow each other, zero-padded, as in a linked
// .nv_fatbin), after decompressing it; call only when isFatbin(bytes). False
// with `error` (which entry, why) when a container is truncated or an entry
// does not decompress to its recorded size.
bool forEachFatbinCubin(llvm::StringRef bytes, llvm::function_ref<void(int sm, llvm::StringRef cubin)> onCubin,
                        std::string &error);

} // namespace ciq
