// manifest.json of a search-space release (or offline mirror): which space
// file serves which compiler, version and variant, with its size and SHA-256.
//
//   {"manifest_format": "1.0.0", "tag": "search-spaces-2025.09", "generated_at": "...",
//    "entries": [{"compiler": "ptxas", "compiler_version": "13.0", "variant": "default",
//                 "filename": "ptxas-13.0-default.yaml", "sha256": "<64 hex>",
//                 "size_bytes": 1234, "search_space_format": "yaml", "description": "..."}]}
//
// Unknown fields and two entries for one compiler/version/variant are errors:
// a manifest ciq half-understands would pin the wrong file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct SpaceEntry {
  std::string compiler, compilerVersion, variant, filename, sha256;
  int64_t sizeBytes = 0;
  std::string searchSpaceFormat;   // as written: "yaml" (ciq language) or NVIDIA's encrypted format
  std::string description;
  // "yaml" when ciq can read it, else "bin" (opaque, resolvable but not searchable).
  std::string format() const;
  std::string name() const { return compiler + "-" + compilerVersion + "-" + variant; }
};

struct SpaceManifest {
  std::string manifestFormat, tag, generatedAt;
  std::vector<SpaceEntry> entries;
};

// `where` names the file or URL in error messages.
std::optional<SpaceManifest> parseSpaceManifest(const std::string &text, const std::string &where,
                                                std::string &error);

// The entry for compiler/version/variant; else nullptr and an error that lists
// what is available (versions of that compiler, or variants of that version).
const SpaceEntry *findSpaceEntry(const SpaceManifest &m, const std::string &compiler,
                                 const std::string &version, const std::string &variant,
                                 const std::string &where, std::string &error);

} // namespace ciq
