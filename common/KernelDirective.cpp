#include "common/KernelDirective.h"

#include "common/JsonRead.h"

#include <cctype>
#include <regex>

namespace ciq {
namespace {

// Replaces each hex digit of s[from, from+n) by 'x'.
void maskHex(std::string &s, size_t from, size_t n) {
  for (size_t i = from; i < from + n && i < s.size(); ++i)
    if (std::isxdigit((unsigned char)s[i]))
      s[i] = 'x';
}

} // namespace

std::string kernelKey(const std::string &mangled) {
  std::string k = mangled;
  // _GLOBAL__N__7eea5e32_15_spill_kernel_cu_b1130c7c: the first hex part is
  // derived from the source path (the same file in two folders differs).
  static const std::regex anon("_GLOBAL__N__([0-9a-f]+)_");
  static const std::regex internal("_INTERNAL_([0-9a-f]+)_([0-9]+)_");
  for (const std::regex *re : {&anon, &internal}) {
    std::string out;
    auto begin = std::sregex_iterator(k.begin(), k.end(), *re);
    for (auto it = begin; it != std::sregex_iterator(); ++it)
      for (size_t g = 1; g < it->size(); ++g)
        maskHex(k, it->position(g), it->length(g));
  }
  return k;
}

bool knownDirective(const std::string &name) {
  return name == kDirectiveMaxnreg || name == kDirectiveMinBlocks || name == kDirectiveSmemSpilling;
}

std::string directivePtx(const KernelDirective &d) {
  if (d.directive == kDirectiveMaxnreg)
    return ".maxnreg " + std::to_string(d.value);
  if (d.directive == kDirectiveMinBlocks)
    return ".minnctapersm " + std::to_string(d.value);
  if (d.directive == kDirectiveSmemSpilling)
    return ".pragma \"enable_smem_spilling\";";
  return "";
}

#define READ(...)                                                                                                   \
  JsonFields f(j, "");                                                                                              \
  f __VA_ARGS__;                                                                                                    \
  if (!f.ok())                                                                                                      \
    why = f.error().substr(2);                                                                                      \
  return f.ok();

void to_json(nlohmann::json &j, const KernelDirective &v) {
  j = nlohmann::json{{"kernel", v.kernel}, {"directive", v.directive}, {"value", v.value}};
  if (!v.label.empty())
    j["label"] = v.label;
}
bool readJson(const nlohmann::json &j, KernelDirective &v, std::string &why) {
  READ(.need("kernel", v.kernel).need("directive", v.directive).need("value", v.value).opt("label", v.label))
}

void to_json(nlohmann::json &j, const DirectiveOutcome &v) {
  j = nlohmann::json{{"kernel", v.kernel},   {"arch", v.arch},     {"directive", v.directive},
                     {"value", v.value},     {"status", v.status}, {"note", v.note}};
}
bool readJson(const nlohmann::json &j, DirectiveOutcome &v, std::string &why) {
  READ(.need("kernel", v.kernel).opt("arch", v.arch).need("directive", v.directive).opt("value", v.value)
           .need("status", v.status).opt("note", v.note))
}
#undef READ

} // namespace ciq
