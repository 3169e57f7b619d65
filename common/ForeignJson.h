// JSON that other programs write (CMake's compile_commands.json) holds paths
// as the bytes the file system has, which need not be UTF-8 (a Latin-1
// folder name); nlohmann::json refuses invalid UTF-8 when it parses.
// parseForeignJson parses such a text losslessly: every byte of an invalid
// sequence travels through the parser as one code point of the Private Use
// Area (U+F780..U+F7FF, byte 0x80..0xFF), and every string of the result is
// mapped back to the original bytes. Such strings must not be dump()ed;
// Protocol.h's bytesToJson carries them onward.
#pragma once
#include <llvm/ADT/StringRef.h>
#include <nlohmann/json.hpp>
#include <string>

namespace ciq {

// The parsed value; a discarded value (is_discarded()) when the text is not JSON.
nlohmann::json parseForeignJson(llvm::StringRef text);

// The escaping parseForeignJson applies before parsing, and its inverse
// (exposed for the unit test).
std::string escapeInvalidUtf8(llvm::StringRef bytes);
std::string unescapeInvalidUtf8(llvm::StringRef text);

} // namespace ciq
