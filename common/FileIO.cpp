#include "common/FileIO.h"

#include <fcntl.h>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <unistd.h>

namespace ciq {

namespace {

bool syncPath(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

} // namespace

std::optional<std::string> readWholeFile(const std::string &path, std::string *error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    if (error)
      *error = path + ": cannot be read (" + buf.getError().message() + ")";
    return std::nullopt;
  }
  return (*buf)->getBuffer().str();
}

bool writeFileAtomically(const std::string &path, const std::string &bytes, std::string &error, bool durable) {
  std::string dir = llvm::sys::path::parent_path(path).str();
  if (!dir.empty())
    if (auto ec = llvm::sys::fs::create_directories(dir)) {
      error = "cannot create the folder of " + path + ": " + ec.message();
      return false;
    }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out.flush()) {
      error = "cannot write " + tmp;
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (durable && !syncPath(tmp, O_RDONLY)) {
    error = "cannot fsync " + tmp;
    return false;
  }
  if (auto ec = llvm::sys::fs::rename(tmp, path)) {
    error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    llvm::sys::fs::remove(tmp);
    return false;
  }
  if (durable && !dir.empty())
    syncPath(dir, O_RDONLY | O_DIRECTORY); // the rename itself survives a crash
  return true;
}

} // namespace ciq
