#include "engine/assets/PackArchive.h"

#include "engine/assets/AssetCache.h"

#include <archive.h>
#include <archive_entry.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <memory>
#include <unistd.h>

namespace ciq {

bool isUnsafeEntryName(const std::string &name) {
  if (name.empty() || name[0] == '/' || name[0] == '\\')
    return true;
  if (name.size() >= 2 && name[1] == ':')   // C:\...
    return true;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("/\\", start);
    if (end == std::string::npos)
      end = name.size();
    if (name.compare(start, end - start, "..") == 0 && end - start == 2)
      return true;
    start = end + 1;
  }
  return false;
}

static std::string stripDotSlash(std::string s) {
  while (s.rfind("./", 0) == 0)
    s = s.substr(2);
  return s;
}

namespace {

// Where one zip entry goes: the manifest, one of the catalog's ACFs, or nowhere.
struct Target {
  int acf = -1;          // index into pack.acfs
  bool manifest = false;
  int64_t maxBytes = 0;
};

std::optional<Target> classify(const std::string &entry, const BoosterPack &pack) {
  std::string name = stripDotSlash(entry);
  if (name == stripDotSlash(pack.manifestPath))
    return Target{-1, true, 16 << 20};
  std::string base = llvm::sys::path::filename(name).str();
  for (size_t i = 0; i < pack.acfs.size(); ++i) {
    const std::string &want = stripDotSlash(pack.acfs[i].filename);
    if (name == want || base == want)
      return Target{(int)i, false, pack.acfs[i].sizeBytes};
  }
  return std::nullopt;
}

bool writeBytes(const std::string &path, const std::string &bytes, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << bytes;
    out.close();
    if (!out.has_error())
      return true;
    ec = out.error();
  }
  error = "cannot write " + path + ": " + ec.message();
  return false;
}

// Checks an existing extraction: every file present with the catalog's hash.
std::optional<ExtractedPack> reuse(const BoosterPack &pack, const std::string &dir) {
  ExtractedPack out;
  out.dir = dir;
  out.manifestPath = dir + "/" + llvm::sys::path::filename(pack.manifestPath).str();
  std::string ignored;
  if (!verifyAsset(out.manifestPath, -1, pack.manifestSha256, "manifest", ignored))
    return std::nullopt;
  for (const auto &a : pack.acfs) {
    std::string path = dir + "/" + llvm::sys::path::filename(a.filename).str();
    if (!verifyAsset(path, a.sizeBytes, a.sha256, a.filename, ignored))
      return std::nullopt;
    out.acfs.push_back({a, path});
  }
  return out;
}

// The bytes of the zip entry the archive is at, no more than the catalog's
// size for it; false with `error` otherwise.
bool readEntry(archive *ar, const std::string &name, int64_t maxBytes, const std::string &what,
               std::string &bytes, std::string &error) {
  char buf[1 << 16];
  la_ssize_t n;
  while ((n = archive_read_data(ar, buf, sizeof buf)) > 0) {
    bytes.append(buf, n);
    if ((int64_t)bytes.size() > maxBytes) {
      error = what + ": zip entry '" + name + "' is larger than the catalog says (" + std::to_string(maxBytes) +
              " bytes)";
      return false;
    }
  }
  if (n < 0) {
    error = "cannot read zip entry '" + name + "' of " + what + ": " + archive_error_string(ar);
    return false;
  }
  return true;
}

// Every file the catalog lists was in the zip, with the catalog's hash.
bool verifyExtracted(const BoosterPack &pack, const std::string &manifestOut, const std::vector<std::string> &acfPaths,
                     const std::string &what, std::string &error) {
  if (manifestOut.empty()) {
    error = what + " has no " + pack.manifestPath + " (the catalog's manifest_path)";
    return false;
  }
  if (!verifyAsset(manifestOut, -1, pack.manifestSha256, pack.manifestPath + " of " + what, error))
    return false;
  for (size_t i = 0; i < pack.acfs.size(); ++i) {
    if (acfPaths[i].empty()) {
      error = what + " lacks the ACF " + pack.acfs[i].filename + " that the catalog lists";
      return false;
    }
    if (!verifyAsset(acfPaths[i], pack.acfs[i].sizeBytes, pack.acfs[i].sha256,
                     "ACF " + pack.acfs[i].filename + " of " + what, error))
      return false;
  }
  return true;
}

} // namespace

static std::optional<ExtractedPack> extractUnlocked(const std::string &zipPath, const BoosterPack &pack,
                                                    const std::string &destDir, std::string &error) {
  if (auto ok = reuse(pack, destDir))
    return ok;
  std::string tmp = destDir + ".tmp-" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(tmp);
  if (auto ec = llvm::sys::fs::create_directories(tmp)) {
    error = "cannot create " + tmp + ": " + ec.message();
    return std::nullopt;
  }
  auto fail = [&](const std::string &why) -> std::optional<ExtractedPack> {
    error = why;
    llvm::sys::fs::remove_directories(tmp);
    return std::nullopt;
  };

  std::unique_ptr<archive, int (*)(archive *)> ar(archive_read_new(), archive_read_free);
  archive_read_support_format_zip(ar.get());
  if (archive_read_open_filename(ar.get(), zipPath.c_str(), 1 << 16) != ARCHIVE_OK)
    return fail("cannot read booster pack " + zipPath + " as a zip: " +
                archive_error_string(ar.get()));
  const std::string what = "booster pack " + pack.packId + " (" + zipPath + ")";
  std::string manifestOut;
  std::vector<std::string> acfPaths(pack.acfs.size());
  archive_entry *entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(ar.get(), &entry)) == ARCHIVE_OK) {
    const char *raw = archive_entry_pathname(entry);
    std::string name = raw ? raw : "";
    if (isUnsafeEntryName(name))
      return fail("refusing " + what + ": zip entry '" + name +
                  "' has an absolute path or a '..' component; the pack is malformed or malicious");
    if (archive_entry_hardlink(entry) || archive_entry_symlink(entry))
      return fail("refusing " + what + ": zip entry '" + name + "' is a link");
    if (archive_entry_filetype(entry) == AE_IFDIR)
      continue;
    auto target = classify(name, pack);
    if (!target)
      continue;   // not part of the pack's contract (README, licence): not extracted
    int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
    if (declared > target->maxBytes)
      return fail(what + ": zip entry '" + name + "' is " + std::to_string(declared) +
                  " bytes, the catalog says " + std::to_string(target->maxBytes));
    std::string bytes;
    if (!readEntry(ar.get(), name, target->maxBytes, what, bytes, error))
      return fail(error);
    std::string out = tmp + "/" + llvm::sys::path::filename(name).str();
    std::string &slot = target->manifest ? manifestOut : acfPaths[target->acf];
    if (!slot.empty())
      return fail(what + " holds '" + name + "' twice");
    if (!writeBytes(out, bytes, error))
      return fail(error);
    slot = out;
  }
  if (rc != ARCHIVE_EOF)
    return fail("cannot read booster pack " + zipPath + ": " + archive_error_string(ar.get()));
  if (!verifyExtracted(pack, manifestOut, acfPaths, what, error))
    return fail(error);
  llvm::sys::fs::remove_directories(destDir);
  if (auto ec = llvm::sys::fs::rename(tmp, destDir))
    return fail("cannot move " + tmp + " to " + destDir + ": " + ec.message());
  auto done = reuse(pack, destDir);
  if (!done)
    error = "extracted " + what + " into " + destDir + " but it does not verify; is another "
            "process writing there?";
  return done;
}

// Two processes extracting one pack (searches that start together) take
// turns: the second finds the first's folder and reuses it, instead of
// removing it while the first verifies it.
std::optional<ExtractedPack> extractPack(const std::string &zipPath, const BoosterPack &pack,
                                         const std::string &destDir, std::string &error) {
  if (auto ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(destDir))) {
    error = "cannot create " + llvm::sys::path::parent_path(destDir).str() + ": " + ec.message();
    return std::nullopt;
  }
  int fd = -1;
  // Hidden beside the folder: a listing of the packs shows only packs.
  const std::string lockPath = llvm::sys::path::parent_path(destDir).str() + "/." +
                               llvm::sys::path::filename(destDir).str() + ".lock";
  if (auto ec = llvm::sys::fs::openFileForWrite(lockPath, fd, llvm::sys::fs::CD_OpenAlways)) {
    error = "cannot open " + lockPath + ": " + ec.message();
    return std::nullopt;
  }
  if (auto ec = llvm::sys::fs::lockFile(fd)) {
    error = "cannot lock " + lockPath + ": " + ec.message();
    close(fd);
    return std::nullopt;
  }
  auto out = extractUnlocked(zipPath, pack, destDir, error);
  close(fd); // releases the lock
  return out;
}

} // namespace ciq
