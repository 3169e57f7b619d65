#include "wrapper/CompileTemp.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

namespace ciq::wrapper {

CompileTemp::CompileTemp() {
  llvm::SmallString<128> dir;
  // Under $TMPDIR (LLVM's system temporary folder), so a user's choice of
  // where temporary files go still holds.
  if (!llvm::sys::fs::createUniqueDirectory("ciq-compile", dir))
    path_ = dir.str().str();
}

CompileTemp::~CompileTemp() {
  if (!path_.empty())
    llvm::sys::fs::remove_directories(path_, /*IgnoreErrors=*/true);
}

} // namespace ciq::wrapper
