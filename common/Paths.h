// Where ciq's installed data lives, found from the running executable so the
// build tree (build/bin, build/share/ciq) and an install prefix work alike.
#pragma once
#include <optional>
#include <string>

namespace ciq {

std::string executablePath();            // absolute path of the running `ciq`
std::string binDir();                    // folder of ciq (and ciq-ptxas)
std::string shareDir();                  // <prefix>/share/ciq, or $CIQ_SHARE_DIR
std::string wrapperPath();               // <bin>/ciq-ptxas
std::string buildGuardPath();            // <bin>/ciq-build-guard
// ciq's cache: $XDG_CACHE_HOME/ciq, else $HOME/.cache/ciq, else (no home)
// <tmp>/ciq-<uid>/cache. Created when missing and used only when it is this
// user's own (common/OwnedDir.h): its entries (a compiler's version, a
// release manifest) are believed. nullopt with one line saying what to do.
std::optional<std::string> cacheDir(std::string &error);
// p made absolute against base (unless it already is), with . and .. removed.
std::string absolutePath(const std::string &p, const std::string &base);
// Absolute p with the symbolic links of its existing folders resolved (the
// file and missing folders need not exist); p itself when nothing resolves.
std::string physicalPath(const std::string &p);

} // namespace ciq
