#include "common/ForeignJson.h"

#include <llvm/Support/ConvertUTF.h>

namespace ciq {
namespace {

constexpr unsigned Base = 0xF700; // byte b <-> U+F700 + b, b in 0x80..0xFF

void appendEscaped(std::string &out, unsigned char b) {
  unsigned cp = Base + b;
  out += char(0xE0 | (cp >> 12));
  out += char(0x80 | ((cp >> 6) & 0x3F));
  out += char(0x80 | (cp & 0x3F));
}

void unescapeStrings(nlohmann::json &j) {
  if (j.is_string())
    j = unescapeInvalidUtf8(j.get_ref<const std::string &>());
  else if (j.is_structured())
    for (auto &v : j)
      unescapeStrings(v);
}

} // namespace

std::string escapeInvalidUtf8(llvm::StringRef bytes) {
  std::string out;
  out.reserve(bytes.size());
  auto *p = reinterpret_cast<const llvm::UTF8 *>(bytes.data());
  auto *end = p + bytes.size();
  while (p < end) {
    unsigned n = llvm::getNumBytesForUTF8(*p);
    bool invalid = *p >= 0x80 && (n == 0 || p + n > end || !llvm::isLegalUTF8Sequence(p, p + n));
    // A real U+F780..U+F7FF in the text is escaped byte by byte too, so
    // that unescaping gives it back unchanged.
    bool ours = n == 3 && p + 3 <= end && p[0] == 0xEF && (p[1] == 0x9E || p[1] == 0x9F);
    if (invalid || ours) {
      for (unsigned k = 0; k < (invalid ? 1u : n); ++k)
        appendEscaped(out, *p++);
      continue;
    }
    out.append(reinterpret_cast<const char *>(p), n);
    p += n;
  }
  return out;
}

std::string unescapeInvalidUtf8(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto b = [&](size_t k) { return (unsigned char)text[k]; };
    // U+F780..U+F7FF is EF 9E 80..EF 9F BF.
    if (b(i) == 0xEF && i + 2 < text.size() && (b(i + 1) == 0x9E || b(i + 1) == 0x9F) && (b(i + 2) & 0xC0) == 0x80) {
      unsigned cp = ((b(i) & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
      out += char(cp - Base);
      i += 2;
      continue;
    }
    out += text[i];
  }
  return out;
}

nlohmann::json parseForeignJson(llvm::StringRef text) {
  nlohmann::json j = nlohmann::json::parse(escapeInvalidUtf8(text), nullptr, false);
  if (!j.is_discarded())
    unescapeStrings(j);
  return j;
}

} // namespace ciq
