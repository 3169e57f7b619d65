// An ACF path that reaches the compiler whole. nvcc hands -Xptxas values to
// ptxas through a command line it splits on spaces (and on commas before
// that), so a path such as ".../ci q/acf/k.acf" arrives as two arguments.
// Such a file is staged, by content, under a folder whose path holds only
// characters every tool passes through unchanged, named by its SHA-256.
#pragma once
#include <optional>
#include <string>

namespace ciq {

// True when every character of `path` is one that nvcc, ptxas and a shell
// pass through as is: letters, digits and "/._+-@".
bool acfPathIsPlain(const std::string &path);

// `path` itself when it is plain; else a copy named <sha256>.acf in the first
// plain folder of $XDG_CACHE_HOME/ciq/acf, $HOME/.cache/ciq/acf,
// <tmp>/ciq-<uid>/acf that is this user's own (common/OwnedDir.h), named by
// the SHA-256 of its bytes. nullopt with `error` when the file cannot be read or staged.
std::optional<std::string> plainAcfPath(const std::string &path, std::string &error);

} // namespace ciq
