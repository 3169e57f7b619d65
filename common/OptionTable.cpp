#include "common/OptionTable.h"

#include <iterator>
#include <string_view>

namespace ciq::wrapper {
namespace {

// ptxas 13.0 (`ptxas --help`). Flags that take a value are marked true.
const OptionSpec kPtxas[] = {
    {"Ofast-compile", "Ofc", true, false},
    {"allow-expensive-optimizations", "allow-expensive-optimizations", true, false},
    {"apply-controls", "apply-controls", true, false},
    {"compile-as-tools-patch", "astoolspatch", false, false},
    {"compile-only", "c", false, false},
    {"compiler-annotations", "annotate", false, false},
    {"def-load-cache", "dlcm", true, false},
    {"def-store-cache", "dscm", true, false},
    {"device-debug", "g", false, false},
    {"device-function-maxrregcount", "func-maxrregcount", true, false},
    {"device-stack-protector", "device-stack-protector", true, false},
    {"disable-optimizer-constants", "disable-optimizer-consts", false, false},
    {"disable-warnings", "w", false, false},
    {"dont-merge-basicblocks", "no-bb-merge", false, false},
    {"entry", "e", true, false},
    {"extensible-whole-program", "ewp", false, false},
    {"fmad", "fmad", true, false},
    {"force-load-cache", "flcm", true, false},
    {"force-store-cache", "fscm", true, false},
    {"generate-line-info", "lineinfo", false, false},
    {"gpu-name", "arch", true, false},
    {"help", "h", false, false},
    {"input-as-string", "ias", true, false},
    {"list-version", "version-ls", false, false},
    {"machine", "m", true, true},
    {"maxntid", "maxntid", true, false},
    {"maxrregcount", "maxrregcount", true, false},
    {"minnctapersm", "minnctapersm", true, false},
    {"opt-level", "O", true, true},
    {"optimize-float-atomics", "opt-fp-atomics", false, false},
    {"options-file", "optf", true, false},
    {"output-file", "o", true, false},
    {"override-directive-values", "override-directive-values", false, false},
    {"position-independent-code", "pic", true, false},
    {"preserve-relocs", "preserve-relocs", false, false},
    {"register-usage-level", "regUsageLevel", true, false},
    {"return-at-end", "ret-end", false, false},
    {"sanitize", "sanitize", true, false},
    {"sp-bounds-check", "sp-bounds-check", false, false},
    {"split-compile", "split-compile", true, false},
    {"suppress-debug-info", "suppress-debug-info", false, false},
    {"suppress-stack-size-warning", "suppress-stack-size-warning", false, false},
    {"verbose", "v", false, false},
    {"version", "V", false, false},
    {"warn-on-double-precision-use", "warn-double-usage", false, false},
    {"warn-on-local-memory-usage", "warn-lmem-usage", false, false},
    {"warn-on-spills", "warn-spills", false, false},
    {"warning-as-error", "Werror", false, false},
};

// nvcc 13.0 (`nvcc --help`): every option that takes a value, plus the flags
// whose meaning the wrapper needs (phases, verbosity, the ptxas-facing ones).
// kList marks the options that accumulate (lists: -D, -I, -Xptxas, ...): a
// candidate adding one never conflicts with the build's own.
constexpr bool kList = true;
const OptionSpec kNvcc[] = {
    {"Ofast-compile", "Ofc", true, false},
    {"Werror", "Werror", true, false},
    {"archive-options", "Xarchive", true, false, kList},
    {"archiver-binary", "arbin", true, false},
    {"brief-diagnostics", "brief-diag", true, false},
    {"compile", "c", false, false},
    {"compiler-bindir", "ccbin", true, false},
    {"compiler-options", "Xcompiler", true, false, kList},
    {"compress-mode", "compress-mode", true, false},
    {"cubin", "cubin", false, false},
    {"cuda", "cuda", false, false},
    {"cudadevrt", "cudadevrt", true, false},
    {"cudart", "cudart", true, false},
    {"default-stream", "default-stream", true, false},
    {"define-macro", "D", true, true, kList},
    {"dependency-drive-prefix", "ddp", true, false},
    {"dependency-output", "MF", true, false},
    {"dependency-target-name", "MT", true, false},
    {"device-c", "dc", false, false},
    {"device-debug", "G", false, false},
    {"device-link", "dlink", false, false},
    {"device-stack-protector", "device-stack-protector", true, false},
    {"device-w", "dw", false, false},
    {"diag-error", "diag-error", true, false, kList},
    {"diag-suppress", "diag-suppress", true, false, kList},
    {"diag-warn", "diag-warn", true, false, kList},
    {"dlink-time-opt", "dlto", false, false},
    {"dopt", "dopt", true, false},
    {"drive-prefix", "dp", true, false},
    {"dryrun", "dryrun", false, false},
    {"entries", "e", true, false},
    {"fatbin", "fatbin", false, false},
    {"fdevice-time-trace", "fdevice-time-trace", true, false},
    {"fmad", "fmad", true, false},
    {"frandom-seed", "frandom-seed", true, false},
    {"ftemplate-backtrace-limit", "ftemplate-backtrace-limit", true, false},
    {"ftemplate-depth", "ftemplate-depth", true, false},
    {"ftz", "ftz", true, false},
    {"generate-code", "gencode", true, false, kList},
    {"generate-dependencies", "M", false, false},
    {"generate-line-info", "lineinfo", false, false},
    {"generate-dependencies-with-compile", "MD", false, false},
    {"generate-nonsystem-dependencies", "MM", false, false},
    {"generate-nonsystem-dependencies-with-compile", "MMD", false, false},
    {"gpu-architecture", "arch", true, false},
    {"gpu-code", "code", true, false},
    {"help", "h", false, false},
    {"host-linker-script", "hls", true, false},
    {"include-path", "I", true, true, kList},
    {"input-drive-prefix", "idp", true, false},
    {"jump-table-density", "jtd", true, false},
    {"keep-dir", "keep-dir", true, false},
    {"lib", "lib", false, false},
    {"libdevice-directory", "ldir", true, false},
    {"library", "l", true, true, kList},
    {"library-path", "L", true, true, kList},
    {"link", "link", false, false},
    {"linker-options", "Xlinker", true, false, kList},
    {"ltoir", "ltoir", false, false},
    {"machine", "m", true, false},
    {"maxrregcount", "maxrregcount", true, false},
    {"nvlink-options", "Xnvlink", true, false, kList},
    {"optimization-info", "opt-info", true, false},
    {"optimize", "O", true, true},
    {"optix-ir", "optix-ir", false, false},
    {"options-file", "optf", true, false, kList},
    {"output-directory", "odir", true, false},
    {"output-file", "o", true, false},
    {"pre-include", "include", true, false, kList},
    {"prec-div", "prec-div", true, false},
    {"prec-sqrt", "prec-sqrt", true, false},
    {"preprocess", "E", false, false},
    {"ptx", "ptx", false, false},
    {"ptxas-options", "Xptxas", true, false, kList},
    {"relocatable-device-code", "rdc", true, false},
    {"resource-usage", "res-usage", false, false},
    {"run", "run", false, false},
    {"run-args", "run-args", true, false},
    {"sanitize", "sanitize", true, false},
    {"split-compile", "split-compile", true, false},
    {"split-compile-extended", "split-compile-extended", true, false},
    {"static-global-template-stub", "static-global-template-stub", true, false},
    {"std", "std", true, false},
    {"system-include", "isystem", true, false, kList},
    {"target-directory", "target-dir", true, false},
    {"threads", "t", true, false},
    {"time", "time", true, false},
    {"undefine-macro", "U", true, true, kList},
    {"verbose", "v", false, false},
    {"version", "V", false, false},
    {"x", "x", true, false},
    {"Xcudafe", "Xcudafe", true, false, kList},
    {"Xfatbin", "Xfatbin", true, false, kList},
    {"Xcicc", "Xcicc", true, false, kList},
    {"device-entity-has-hidden-visibility", "device-entity-has-hidden-visibility", true, false},
};

template <size_t N>
const OptionSpec *find(const OptionSpec (&table)[N], std::string_view name) {
  for (const auto &o : table)
    if (name == o.longName || name == o.shortName)
      return &o;
  return nullptr;
}

// An attached-short option ("-O3", "-Ifoo", "-DX=1") whose short name is a prefix.
template <size_t N>
const OptionSpec *findAttached(const OptionSpec (&table)[N], std::string_view body) {
  for (const auto &o : table) {
    std::string_view s = o.shortName;
    if (o.attachedShort && body.size() > s.size() && body.substr(0, s.size()) == s)
      return &o;
  }
  return nullptr;
}

template <size_t N>
ParsedOption parse(const OptionSpec (&table)[N], const std::string &arg, const std::string *next) {
  ParsedOption p;
  if (arg.size() < 2 || arg[0] != '-')
    return p;
  bool doubleDash = arg.size() > 2 && arg[1] == '-';
  std::string body = arg.substr(doubleDash ? 2 : 1);
  auto eq = body.find('=');
  std::string name = eq == std::string::npos ? body : body.substr(0, eq);
  if (const OptionSpec *o = find(table, name)) {
    p.name = o->longName;
    p.known = true;
    p.accumulates = o->accumulates;
    if (eq != std::string::npos) {
      p.value = body.substr(eq + 1);
      p.hasValue = true;
    } else if (o->takesValue && next) {
      p.value = *next;
      p.hasValue = true;
      p.tokens = 2;
    }
    return p;
  }
  if (!doubleDash)
    if (const OptionSpec *o = findAttached(table, body)) {
      p.name = o->longName;
      p.known = true;
      p.accumulates = o->accumulates;
      p.value = body.substr(std::string_view(o->shortName).size());
      p.hasValue = true;
      return p;
    }
  // Unknown option: keep it whole as a flag ("--foo=bar" stays one token).
  p.name = name;
  if (eq != std::string::npos) {
    p.value = body.substr(eq + 1);
    p.hasValue = true;
  }
  return p;
}

} // namespace

ParsedOption parsePtxasOption(const std::string &arg, const std::string *next) {
  return parse(kPtxas, arg, next);
}
ParsedOption parseNvccOption(const std::string &arg, const std::string *next) {
  return parse(kNvcc, arg, next);
}

} // namespace ciq::wrapper
