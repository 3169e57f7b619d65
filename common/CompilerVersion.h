// The release of an nvcc or ptxas binary ("13.0.88", from the "V13.0.88" of
// `--version`). The probe costs a process start (~10 ms for nvcc), so its
// answer is cached under ciq's cache folder (cacheDir(), common/Paths.h: only
// a folder of this user's own), in compiler-version/, keyed on the binary's
// real path, mtime and size.
#pragma once
#include <optional>
#include <string>

namespace ciq {

// Parses "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88".
std::string parseCompilerVersion(const std::string &versionText);

// nullopt (error set) when the binary cannot be run or prints no version.
std::optional<std::string> compilerVersion(const std::string &path, std::string &error);

} // namespace ciq
