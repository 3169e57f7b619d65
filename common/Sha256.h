// SHA-256 through OpenSSL's EVP interface, as lowercase hex.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace ciq {

std::string sha256Hex(std::string_view bytes);
// Hash of a file's bytes; nullopt when it cannot be read.
std::optional<std::string> sha256File(const std::string &path);

} // namespace ciq
