// Unit tests of engine/assets: manifests, catalogs, checksums, zip safety,
// the cache, and search-space resolution from a mirror. (The network paths
// are tested end to end in tests/lit/assets against a real HTTP server.)
#include "engine/assets/AssetCache.h"
#include "engine/assets/BoosterCatalog.h"
#include "engine/assets/PackArchive.h"
#include "common/Sha256.h"
#include "engine/assets/SpaceManifest.h"
#include "engine/assets/SpaceResolver.h"

#include <archive.h>
#include <archive_entry.h>
#include <cstdlib>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <nlohmann/json.hpp>

using namespace ciq;
using nlohmann::json;

namespace {

// Removed again when the test program exits (the tests keep paths into it
// in the environment: XDG_CACHE_HOME, CIQ_SEARCH_SPACES_DIR).
struct TempDirs {
  std::vector<std::string> made;
  ~TempDirs() {
    for (const auto &d : made)
      llvm::sys::fs::remove_directories(d);
  }
};

std::string tempDir() {
  static TempDirs dirs;
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ciq-assets-test", dir);
  dirs.made.push_back(dir.str().str());
  return dir.str().str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::string err;
  ASSERT_TRUE(writeFileAtomically(path, bytes, err)) << err;
}

json manifestEntry(const std::string &variant, const std::string &bytes,
                   const std::string &fmt = "yaml") {
  return {{"compiler", "ptxas"}, {"compiler_version", "13.0"}, {"variant", variant},
          {"filename", "ptxas-13.0-" + variant + ".yaml"}, {"sha256", sha256Hex(bytes)},
          {"size_bytes", bytes.size()}, {"search_space_format", fmt}, {"description", "d"}};
}

json manifest(std::vector<json> entries) {
  return {{"manifest_format", "1.0.0"}, {"tag", "search-spaces-1"},
          {"generated_at", "2025-01-01T00:00:00Z"}, {"entries", entries}};
}

} // namespace

TEST(SpaceManifest, ParsesEntriesAndFindsByVariant) {
  std::string err;
  auto m = parseSpaceManifest(manifest({manifestEntry("default", "a"), manifestEntry("att", "b")}).dump(),
                              "m.json", err);
  ASSERT_TRUE(m) << err;
  EXPECT_EQ(m->entries.size(), 2u);
  const SpaceEntry *e = findSpaceEntry(*m, "ptxas", "13.0", "att", "m.json", err);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->sha256, sha256Hex("b"));
  EXPECT_EQ(e->format(), "yaml");
}

TEST(SpaceManifest, UnknownVariantListsTheAvailableOnes) {
  std::string err;
  auto m = parseSpaceManifest(manifest({manifestEntry("default", "a"), manifestEntry("att", "b")}).dump(),
                              "m.json", err);
  ASSERT_TRUE(m);
  EXPECT_EQ(findSpaceEntry(*m, "ptxas", "13.0", "gemm", "m.json", err), nullptr);
  EXPECT_NE(err.find("unknown variant 'gemm'"), std::string::npos) << err;
  EXPECT_NE(err.find("available variants: att, default"), std::string::npos) << err;
  EXPECT_EQ(findSpaceEntry(*m, "ptxas", "12.8", "default", "m.json", err), nullptr);
  EXPECT_NE(err.find("available versions: 13.0"), std::string::npos) << err;
}

TEST(SpaceManifest, RejectsUnknownFieldsDuplicatesAndBadValues) {
  std::string err;
  json extra = manifest({manifestEntry("default", "a")});
  extra["entries"][0]["signature"] = "x";
  EXPECT_FALSE(parseSpaceManifest(extra.dump(), "m.json", err));
  EXPECT_NE(err.find("unknown field 'signature'"), std::string::npos) << err;

  EXPECT_FALSE(parseSpaceManifest(manifest({manifestEntry("default", "a"), manifestEntry("default", "b")}).dump(),
                                  "m.json", err));
  EXPECT_NE(err.find("duplicate entry"), std::string::npos) << err;

  json badSha = manifest({manifestEntry("default", "a")});
  badSha["entries"][0]["sha256"] = "ABC";
  EXPECT_FALSE(parseSpaceManifest(badSha.dump(), "m.json", err));

  json badName = manifest({manifestEntry("default", "a")});
  badName["entries"][0]["filename"] = "../etc/passwd";
  EXPECT_FALSE(parseSpaceManifest(badName.dump(), "m.json", err));
  EXPECT_NE(err.find("plain file name"), std::string::npos) << err;

  json newer = manifest({});
  newer["manifest_format"] = "2.0.0";
  EXPECT_FALSE(parseSpaceManifest(newer.dump(), "m.json", err));
  EXPECT_FALSE(parseSpaceManifest("{not json", "m.json", err));
}

TEST(SpaceManifest, OpaqueFormatsAreBin) {
  SpaceEntry e;
  e.searchSpaceFormat = "nvidia-encrypted";
  EXPECT_EQ(e.format(), "bin");
  e.searchSpaceFormat = "yaml";
  EXPECT_EQ(e.format(), "yaml");
}

namespace {

json catalogJson() {
  json acfs = json::array({{{"filename", "a.acf"}, {"sha256", sha256Hex("A")}, {"size_bytes", 1}}});
  json pack = {{"pack_id", "p"}, {"artifact_name", "p.zip"}, {"artifact_sha256", sha256Hex("zip")},
               {"artifact_size_bytes", 3}, {"manifest_path", "booster-pack-manifest.json"},
               {"manifest_sha256", sha256Hex("{}")}, {"acf_count", 1}, {"acfs", acfs},
               {"display_name", "P"}, {"pack_type", "gemm"}, {"description", ""},
               {"cuda_version", "13.0"}, {"controls_stage", "ptxas"},
               {"supported_gpus", {"sm_90"}}, {"validation_summary", json::object()},
               {"future_field", 1}};
  return {{"schema_version", "1.0"}, {"catalog_version", "1"}, {"release_tag", "t"}, {"packs", {pack}}};
}

} // namespace

TEST(BoosterCatalog, ParsesNvidiaFormat) {
  std::string err;
  auto c = parseBoosterCatalog(catalogJson().dump(), "c.json", err);
  ASSERT_TRUE(c) << err;
  ASSERT_NE(c->find("p"), nullptr);
  EXPECT_EQ(c->find("p")->controlsStage, "ptxas");
  EXPECT_EQ(c->find("p")->supportedGpus.at(0), "sm_90");
  EXPECT_EQ(c->find("q"), nullptr);
}

TEST(BoosterCatalog, RejectsInconsistentPacks) {
  std::string err;
  json count = catalogJson();
  count["packs"][0]["acf_count"] = 2;
  EXPECT_FALSE(parseBoosterCatalog(count.dump(), "c.json", err));
  EXPECT_NE(err.find("'acf_count'"), std::string::npos) << err;
  json stage = catalogJson();
  stage["packs"][0]["controls_stage"] = "cicc";
  EXPECT_FALSE(parseBoosterCatalog(stage.dump(), "c.json", err));
  EXPECT_NE(err.find("expected ptxas or nvcc"), std::string::npos) << err;
  json noSha = catalogJson();
  noSha["packs"][0].erase("artifact_sha256");
  EXPECT_FALSE(parseBoosterCatalog(noSha.dump(), "c.json", err));
  EXPECT_NE(err.find("artifact_sha256"), std::string::npos) << err;
}

TEST(BoosterCatalog, Sha256SumsAndVersions) {
  std::string err;
  std::string h = sha256Hex("x");
  auto sums = parseSha256Sums(h + "  a.zip\n" + h + " *b.zip\r\n\n", "SUMS", err);
  ASSERT_TRUE(sums) << err;
  EXPECT_EQ(sums->at("a.zip"), h);
  EXPECT_EQ(sums->at("b.zip"), h);
  EXPECT_FALSE(parseSha256Sums("nothex a.zip\n", "SUMS", err));
  EXPECT_NE(err.find("SUMS:1"), std::string::npos) << err;

  EXPECT_LT(compareVersions("13.0", "13.1"), 0);
  EXPECT_GT(compareVersions("13.10", "13.9"), 0);
  EXPECT_EQ(compareVersions("13.0", "13"), 0);
  EXPECT_GT(compareVersions("99.1", "13.0"), 0);
}

TEST(PackArchive, UnsafeEntryNames) {
  EXPECT_TRUE(isUnsafeEntryName("/etc/passwd"));
  EXPECT_TRUE(isUnsafeEntryName("../x.acf"));
  EXPECT_TRUE(isUnsafeEntryName("acfs/../../x.acf"));
  EXPECT_TRUE(isUnsafeEntryName("C:\\x.acf"));
  EXPECT_TRUE(isUnsafeEntryName("a\\..\\b"));
  EXPECT_FALSE(isUnsafeEntryName("acfs/x.acf"));
  EXPECT_FALSE(isUnsafeEntryName("x..acf"));
  EXPECT_FALSE(isUnsafeEntryName("./booster-pack-manifest.json"));
}

namespace {

// A zip written with libarchive's writer, entries in order.
void writeZip(const std::string &path, const std::vector<std::pair<std::string, std::string>> &entries) {
  archive *a = archive_write_new();
  archive_write_set_format_zip(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto &[name, bytes] : entries) {
    archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, bytes.size());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_write_header(a, e);
    archive_write_data(a, bytes.data(), bytes.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

BoosterPack packFor(const std::vector<std::pair<std::string, std::string>> &acfs, const std::string &manifest) {
  BoosterPack p;
  p.packId = "p";
  p.manifestPath = "booster-pack-manifest.json";
  p.manifestSha256 = sha256Hex(manifest);
  for (const auto &[name, bytes] : acfs)
    p.acfs.push_back({name, sha256Hex(bytes), (int64_t)bytes.size()});
  return p;
}

} // namespace

TEST(PackArchive, ExtractsAndVerifiesEveryAcf) {
  std::string dir = tempDir(), err;
  BoosterPack p = packFor({{"a.acf", "AAAA"}, {"b.acf", "BB"}}, "{}");
  writeZip(dir + "/p.zip", {{"booster-pack-manifest.json", "{}"}, {"acfs/a.acf", "AAAA"},
                            {"acfs/b.acf", "BB"}, {"README", "x"}});
  auto x = extractPack(dir + "/p.zip", p, dir + "/out", err);
  ASSERT_TRUE(x) << err;
  ASSERT_EQ(x->acfs.size(), 2u);
  EXPECT_EQ(*sha256File(x->acfs[1].path), sha256Hex("BB"));
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/out/README"));   // outside the pack contract
  // A second call reuses the verified extraction; a corrupted one is redone.
  writeFile(x->acfs[0].path, "AAAB");
  auto again = extractPack(dir + "/p.zip", p, dir + "/out", err);
  ASSERT_TRUE(again) << err;
  EXPECT_EQ(*sha256File(again->acfs[0].path), sha256Hex("AAAA"));
}

TEST(PackArchive, RefusesTraversalMismatchAndMissing) {
  std::string dir = tempDir(), err;
  BoosterPack p = packFor({{"a.acf", "AAAA"}}, "{}");
  writeZip(dir + "/dotdot.zip", {{"booster-pack-manifest.json", "{}"}, {"../a.acf", "AAAA"}});
  EXPECT_FALSE(extractPack(dir + "/dotdot.zip", p, dir + "/o1", err));
  EXPECT_NE(err.find("'..' component"), std::string::npos) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/a.acf"));

  writeZip(dir + "/bad.zip", {{"booster-pack-manifest.json", "{}"}, {"a.acf", "AAAX"}});
  EXPECT_FALSE(extractPack(dir + "/bad.zip", p, dir + "/o2", err));
  EXPECT_NE(err.find("checksum mismatch for ACF a.acf"), std::string::npos) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/o2"));

  writeZip(dir + "/missing.zip", {{"booster-pack-manifest.json", "{}"}});
  EXPECT_FALSE(extractPack(dir + "/missing.zip", p, dir + "/o3", err));
  EXPECT_NE(err.find("lacks the ACF a.acf"), std::string::npos) << err;

  writeFile(dir + "/notzip.zip", "plain text");
  EXPECT_FALSE(extractPack(dir + "/notzip.zip", p, dir + "/o4", err));
}

TEST(AssetCache, VerifyAndLayout) {
  std::string dir = tempDir(), err;
  writeFile(dir + "/f", "hello");
  EXPECT_TRUE(verifyAsset(dir + "/f", 5, sha256Hex("hello"), "f", err)) << err;
  EXPECT_FALSE(verifyAsset(dir + "/f", 6, sha256Hex("hello"), "f", err));
  EXPECT_NE(err.find("size mismatch"), std::string::npos);
  EXPECT_FALSE(verifyAsset(dir + "/f", 5, sha256Hex("hellO"), "f", err));
  EXPECT_NE(err.find("checksum mismatch"), std::string::npos);
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  std::string sha = sha256Hex("hello");
  EXPECT_EQ(cacheEntryPath("tag-1", sha, "x.yaml", err), dir + "/ciq/tag-1/" + sha.substr(0, 12) + "_x.yaml") << err;
  // Offline (no URL): a missing entry is an error naming the path.
  EXPECT_FALSE(fetchToCache("", "tag-1", "x.yaml", 5, sha, HttpSettings{}, err));
  EXPECT_NE(err.find("no cached copy"), std::string::npos) << err;
  writeFile(*cacheEntryPath("tag-1", sha, "x.yaml", err), "hello");
  auto hit = fetchToCache("", "tag-1", "x.yaml", 5, sha, HttpSettings{}, err);
  ASSERT_TRUE(hit) << err;
  EXPECT_TRUE(hit->fromCache);
  unsetenv("XDG_CACHE_HOME");
}

TEST(SpaceResolver, MirrorPinnedTagAndBinSpaces) {
  std::string dir = tempDir(), err;
  std::string yaml = "controls: []\n", bin = std::string("\x01\x02\x03", 3);
  json m = manifest({manifestEntry("default", yaml), manifestEntry("nvidia", bin, "nvidia-encrypted")});
  m["entries"][1]["filename"] = "ptxas-13.0-nvidia.bin";
  writeFile(dir + "/manifest.json", m.dump());
  writeFile(dir + "/ptxas-13.0-default.yaml", yaml);
  writeFile(dir + "/ptxas-13.0-nvidia.bin", bin);
  setenv("CIQ_SEARCH_SPACES_DIR", dir.c_str(), 1);

  SpaceRequest req{"ptxas", "13.0", "default", "latest", ""};
  auto r = resolveSpace(req, err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->provider, "mirror");
  EXPECT_EQ(r->tag, "search-spaces-1");
  EXPECT_EQ(r->sha256, sha256Hex(yaml));
  EXPECT_EQ(r->localPath, dir + "/ptxas-13.0-default.yaml");

  req.tag = "search-spaces-0";
  EXPECT_FALSE(resolveSpace(req, err));
  EXPECT_NE(err.find("differs from the mirror's manifest tag 'search-spaces-1'"), std::string::npos) << err;

  req.tag = "latest";
  req.variant = "nvidia";
  err.clear();
  r = resolveSpace(req, err);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->format, "bin");
  EXPECT_NE(err.find("no consumer"), std::string::npos) << err;

  writeFile(dir + "/ptxas-13.0-default.yaml", "controls: [] \n");
  req.variant = "default";
  EXPECT_FALSE(resolveSpace(req, err));
  EXPECT_NE(err.find("size mismatch"), std::string::npos) << err;
  unsetenv("CIQ_SEARCH_SPACES_DIR");
}

TEST(SpaceResolver, FileProviderAndUnknownProvider) {
  std::string dir = tempDir(), err;
  writeFile(dir + "/s.yaml", "controls: []\n");
  auto r = resolveSpace({"file", "", "default", "latest", dir + "/s.yaml"}, err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->provider, "file");
  EXPECT_EQ(r->sha256, sha256Hex("controls: []\n"));
  EXPECT_FALSE(resolveSpace({"file", "", "default", "latest", dir + "/nope.yaml"}, err));
  EXPECT_NE(err.find("cannot read the search-space file"), std::string::npos) << err;
  EXPECT_FALSE(resolveSpace({"cicc", "13.0", "default", "latest", ""}, err));
  EXPECT_NE(err.find("unknown space provider 'cicc'"), std::string::npos) << err;
}
