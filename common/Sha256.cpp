#include "common/Sha256.h"

#include <fstream>
#include <memory>
#include <openssl/evp.h>

namespace ciq {
namespace {

struct Hasher {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
  Hasher() { EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr); }
  void update(const void *p, size_t n) { EVP_DigestUpdate(ctx.get(), p, n); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx.get(), md, &len);
    static const char *digits = "0123456789abcdef";
    std::string s;
    for (unsigned i = 0; i < len; ++i) {
      s += digits[md[i] >> 4];
      s += digits[md[i] & 15];
    }
    return s;
  }
};

} // namespace

std::string sha256Hex(std::string_view bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::optional<std::string> sha256File(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  Hasher h;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    h.update(buf, in.gcount());
  return h.hex();
}

} // namespace ciq
