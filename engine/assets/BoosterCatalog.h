// booster-pack-catalog.json and SHA256SUMS.txt of a booster-pack release, in
// NVIDIA CompileIQ's published format:
//
//   {"schema_version": "1.0", "catalog_version": "...", "release_tag": "...",
//    "packs": [{"pack_id", "artifact_name", "artifact_sha256", "artifact_size_bytes",
//               "manifest_path", "manifest_sha256", "acf_count",
//               "acfs": [{"filename", "sha256", "size_bytes"}], "display_name",
//               "pack_type", "description", "cuda_version", "controls_stage",
//               "supported_gpus", "validation_summary"}]}
//
// Required fields are checked strictly (every hash and size is used later);
// fields ciq does not know are kept out of the way so newer catalogs still load.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct PackAcf {
  std::string filename;   // as named in the pack (a path inside the zip, or a plain name)
  std::string sha256;
  int64_t sizeBytes = 0;
};

struct BoosterPack {
  std::string packId, artifactName, artifactSha256;
  int64_t artifactSizeBytes = 0;
  std::string manifestPath, manifestSha256;
  std::vector<PackAcf> acfs;
  std::string displayName, packType, description;
  std::string cudaVersion;      // the CUDA release the ACFs were made for, "13.0"
  std::string controlsStage;    // "ptxas" or "nvcc": which tool gets --apply-controls
  std::vector<std::string> supportedGpus;
  nlohmann::json validationSummary;
};

struct BoosterCatalog {
  std::string schemaVersion, catalogVersion, releaseTag;
  std::vector<BoosterPack> packs;
  const BoosterPack *find(const std::string &packId) const;
};

std::optional<BoosterCatalog> parseBoosterCatalog(const std::string &text, const std::string &where,
                                                  std::string &error);

// "<sha256>  <name>" lines (sha256sum's format, '*' binary marker allowed).
std::optional<std::map<std::string, std::string>> parseSha256Sums(const std::string &text,
                                                                  const std::string &where,
                                                                  std::string &error);

// Compares dotted versions numerically: <0, 0, >0.
int compareVersions(const std::string &a, const std::string &b);

} // namespace ciq
