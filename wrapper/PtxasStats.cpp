#include "wrapper/PtxasStats.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Demangle/Demangle.h>

#include <cstdlib>

// StringRef scanning, not std::regex: libstdc++ compiles each regex at first
// use, in every compile ciq-ptxas wraps, for lines of a fixed shape.
namespace ciq::wrapper {
namespace {

using llvm::StringRef;

const StringRef kInfo = "ptxas info    : ";

// "<N> <unit>" (after blanks; `unit` may be followed by more only when
// `prefixOnly`, as in "cmem[0]"): N, or -1.
long leadingCount(StringRef s, StringRef unit, bool prefixOnly = false) {
  s = s.trim();
  unsigned long long n;
  if (s.consumeInteger(10, n) || !s.consume_front(" "))
    return -1;
  return (prefixOnly ? s.startswith(unit) : s == unit) ? (long)n : -1;
}

// "    256 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads"
bool parseFrameLine(StringRef line, long &frame, long &stores, long &loads) {
  llvm::SmallVector<StringRef, 3> parts;
  line.rtrim().split(parts, ", ");
  if (parts.size() != 3 || !line.startswith(" "))
    return false;
  frame = leadingCount(parts[0], "bytes stack frame");
  stores = leadingCount(parts[1], "bytes spill stores");
  loads = leadingCount(parts[2], "bytes spill loads");
  return frame >= 0 && stores >= 0 && loads >= 0;
}

// "Used 14 registers, used 1 barriers, 128 bytes smem, 368 bytes cmem[0], ..."
void parseUsed(StringRef body, KernelStats &k) {
  llvm::SmallVector<StringRef, 8> parts;
  body.split(parts, ", ");
  k.constantBytes = 0;
  for (StringRef p : parts) {
    long n;
    if (p.consume_front("Used ") && (n = leadingCount(p, "registers")) >= 0)
      k.registers = (int)n;
    else if (p.consume_front("used ") && (n = leadingCount(p, "barriers")) >= 0)
      k.barriers = (int)n;
    else if ((n = leadingCount(p, "bytes smem")) >= 0)
      k.sharedBytes = n;
    else if ((n = leadingCount(p, "bytes cmem[", true)) >= 0)
      k.constantBytes += n;
  }
}

// "Compiling entry function '<name>' for '<arch>'"
bool parseEntry(StringRef body, KernelStats &k) {
  if (!body.consume_front("Compiling entry function '"))
    return false;
  auto [name, rest] = body.split("' for '");
  if (rest.empty() || !rest.consume_back("'"))
    return false;
  k.name = name.str();
  k.arch = rest.str();
  return true;
}

} // namespace

std::string demangle(const std::string &name) {
  if (name.rfind("_Z", 0) != 0)
    return "";
  std::string d = llvm::demangle(name);
  return d == name ? "" : d;
}

std::vector<KernelStats> parsePtxasVerbose(const std::string &text) {
  std::vector<KernelStats> out;
  long cur = -1;        // index of the entry function the "Used"/"Compile time" lines belong to
  std::string arch;     // of the last entry: device functions are reported within its ptxas run
  StringRef propsFor;   // the function the next "stack frame" line belongs to
  llvm::SmallVector<StringRef, 32> lines;
  StringRef(text).split(lines, '\n');
  for (StringRef l : lines) {
    l = l.rtrim("\r");
    StringRef body = l;
    long frame, stores, loads;
    if (body.consume_front(kInfo)) {
      KernelStats k;
      if (parseEntry(body, k)) {
        k.demangled = demangle(k.name);
        arch = k.arch;
        out.push_back(k);
        cur = (long)out.size() - 1;
        propsFor = "";
      } else if (body.consume_front("Function properties for ")) {
        propsFor = body.trim();
      } else if (cur >= 0 && body.startswith("Used ")) {
        parseUsed(body, out[cur]);
        out[cur].usageKnown = true;
      } else if (cur >= 0 && body.consume_front("Compile time = ")) {
        out[cur].compileMs = std::strtod(body.str().c_str(), nullptr);
      }
    } else if (!propsFor.empty() && parseFrameLine(l, frame, stores, loads)) {
      KernelStats *k = cur >= 0 && propsFor == out[cur].name ? &out[cur] : nullptr;
      if (!k) {
        // A device (non-entry) function: its spills and stack are the
        // kernel's too at run time, so it is recorded in its own right.
        KernelStats f;
        f.name = propsFor.str();
        f.demangled = demangle(f.name);
        f.arch = arch;
        f.entry = false;
        out.push_back(f);
        k = &out.back();
      }
      k->stackFrame = frame;
      k->spillStores = stores;
      k->spillLoads = loads;
      k->frameKnown = true;
      propsFor = "";
    }
  }
  return out;
}

bool ptxasReported(const std::string &text) { return text.find(kInfo.str()) != std::string::npos; }

std::string stripPtxasVerbose(const std::string &text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    StringRef line(text.data() + pos, end - pos);
    long frame, stores, loads;
    StringRef bare = line.rtrim("\r\n");
    if (!bare.startswith(kInfo) && !parseFrameLine(bare, frame, stores, loads))
      out += line.str();
    pos = end;
  }
  return out;
}

} // namespace ciq::wrapper
