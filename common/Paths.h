// Where ciq's installed data lives, found from the running executable so the
// build tree (build/bin, build/share/ciq) and an install prefix work alike.
#pragma once
#include <string>

namespace ciq {

std::string executablePath();            // absolute path of the running `ciq`
std::string binDir();                    // folder of ciq (and ciq-ptxas)
std::string shareDir();                  // <prefix>/share/ciq, or $CIQ_SHARE_DIR
std::string wrapperPath();               // <bin>/ciq-ptxas
std::string cacheDir();
// p made absolute against base (unless it already is), with . and .. removed.
std::string absolutePath(const std::string &p, const std::string &base);
// Absolute p with the symbolic links of its existing folders resolved (the
// file and missing folders need not exist); p itself when nothing resolves.
std::string physicalPath(const std::string &p);

} // namespace ciq
