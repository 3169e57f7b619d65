// The device code of one compiler output, for hashing: the SASS of every
// cubin in the `.nv_fatbin` section of a host object (nvcc -c), of a cubin
// (ptxas -o) or of a fatbin file (nvcc -fatbin). Read with LLVM's ELFFile.
// Each cubin's sections are hashed except `.note.nv.tkinfo`, where ptxas
// records its own command line: two spellings of the same options (or an
// added -v) give the same hash, and only a change of the generated code
// changes it. Debug sections (-G, -lineinfo; with -rdc=true also
// `.nv_debug_ptx_txt.<number>`, named after the PTX file's path) are left
// out, and string and symbol tables count by the names and symbols they hold,
// not their bytes, so the same source compiled in another folder or process
// hashes the same (issue 41). Compressed cubins (-rdc=true, -compress-mode) are decompressed
// first (Fatbin.h), so they hash as the same code uncompressed. Without a
// cubin to find (a PTX-only target) the raw bytes are hashed.
#pragma once
#include <llvm/ADT/StringRef.h>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct DeviceCode {
  std::string sha256;   // of the device code bytes
  long bytes = 0;
  std::string section;  // ".nv_fatbin", "__nv_relfatbin" (-rdc objects), or "file" when the whole file is device code, "file cubins" for a fatbin file
  bool isCuda = false;  // a cubin, a fatbin, or an object with a .nv_fatbin/__nv_relfatbin section
  // What the hash covers, one line per cubin section: "sm_90 .text._Z6kernelPf 1280 3f2a1c0d9e8b7a65"
  // (architecture, section with unit ids made canonical, size, the first 16 hex of its digest;
  // ".symtab" counts its symbols). Two builds whose hashes differ differ in these lines, so a
  // lock that keeps them can say which section (deviceCodeSectionDifferences).
  std::vector<std::string> sections;
};

// nullopt (with error) when the file cannot be read or its fatbin is damaged; a host object without
// device code gives sha256 "" and bytes 0.
// onlySm (90 for sm_90): hash only the fatbin cubins of that architecture, as
// `ciq lock verify` does for a lock tuned with narrow_architectures.
std::optional<DeviceCode> readDeviceCode(const std::string &path, std::string &error, int onlySm = 0);

// `in` with every translation-unit id of a file-local name made canonical
// ("_ZN41_INTERNAL_59a1065c_5_rk_cu_8d71df23_270434cuda..." ->
// "_ZN#_INTERNAL_00000000_5_rk_cu_8d71df23" + "4cuda..."): the source path's
// hash blanked, a compiling process's number dropped, the length that counts
// them replaced by '#'. What the device-code hash reads names by.
std::string canonicalUnitIds(llvm::StringRef in);

// The sections that differ between a lock's recorded section lines and those
// of a build, as one clause ("sm_90 .text._Z6kernelPf: 1280 bytes, 1344
// built; sm_90 .nv.info._Z6kernelPf differs"), at most `most` named; "" when
// the lines are the same.
std::string deviceCodeSectionDifferences(const std::vector<std::string> &locked,
                                         const std::vector<std::string> &built, size_t most = 4);
// When two builds' section lines (a lock's and a build's) differ only in the
// names of file-local entities (sections or symbols named with nvcc's
// _INTERNAL_, _GLOBAL__N_ or __nv_static_ unit ids in a form canonicalUnitIds
// does not know) while every section's contents are the same: which names
// differ, in words ("sm_90 .text.<name> in the tuned build, .text.<name> here").
// nullopt when anything else differs, or when either has no lines.
std::optional<std::string> onlyFileLocalNamesDiffer(const std::vector<std::string> &locked,
                                                    const std::vector<std::string> &built);

// One hash for a set of objects: SHA-256 over their sorted per-object hashes,
// so it does not depend on where the build tree is.
std::string combineDeviceCodeHashes(std::vector<std::string> hashes);

// One hash over what a set of objects does when run (host code, data and
// relocations of each ELF object; all bytes of anything else), independent of
// how it was built: nvcc's temporary file names, the STT_FILE symbol and the
// embedded device code (hash that with readDeviceCode) are left out. A runtime
// measurement may be reused only between builds with equal hashes of both.
std::optional<std::string> objectsCodeSha256(const std::vector<std::string> &paths, std::string &error);

} // namespace ciq
