#include "PtxasStats.h"

#include <llvm/Demangle/Demangle.h>

#include <cstdlib>
#include <regex>
#include <sstream>

namespace ciq::wrapper {
namespace {

const char kInfo[] = "ptxas info    : ";

bool startsWith(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string l;
  while (std::getline(ss, l))
    out.push_back(l);
  return out;
}

long number(const std::smatch &m, int i) { return std::strtol(m[i].str().c_str(), nullptr, 10); }

// "Used 14 registers, used 1 barriers, 128 bytes smem, 368 bytes cmem[0], ..."
void parseUsed(const std::string &body, KernelStats &k) {
  static const std::regex reg(R"(Used (\d+) registers)"), bar(R"(used (\d+) barriers)"),
      smem(R"((\d+) bytes smem)"), cmem(R"((\d+) bytes cmem\[\d+\])");
  std::smatch m;
  if (std::regex_search(body, m, reg))
    k.registers = (int)number(m, 1);
  if (std::regex_search(body, m, bar))
    k.barriers = (int)number(m, 1);
  if (std::regex_search(body, m, smem))
    k.sharedBytes = number(m, 1);
  k.constantBytes = 0;
  for (std::sregex_iterator it(body.begin(), body.end(), cmem), end; it != end; ++it)
    k.constantBytes += std::strtol((*it)[1].str().c_str(), nullptr, 10);
}

} // namespace

std::string demangle(const std::string &name) {
  if (!startsWith(name, "_Z"))
    return "";
  std::string d = llvm::demangle(name);
  return d == name ? "" : d;
}

std::vector<KernelStats> parsePtxasVerbose(const std::string &text) {
  static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex props(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex ctime(R"(Compile time = ([0-9.]+) ms)");
  std::vector<KernelStats> out;
  KernelStats *cur = nullptr;
  std::string propsFor; // the function the next "stack frame" line belongs to
  for (const auto &l : lines(text)) {
    std::smatch m;
    if (startsWith(l, kInfo)) {
      std::string body = l.substr(sizeof kInfo - 1);
      if (std::regex_search(body, m, entry)) {
        KernelStats k;
        k.name = m[1];
        k.demangled = demangle(k.name);
        k.arch = m[2];
        out.push_back(k);
        cur = &out.back();
        propsFor.clear();
      } else if (std::regex_search(body, m, props)) {
        propsFor = m[1];
      } else if (cur && startsWith(body, "Used ")) {
        parseUsed(body, *cur);
      } else if (cur && std::regex_search(body, m, ctime)) {
        cur->compileMs = std::strtod(m[1].str().c_str(), nullptr);
      }
    } else if (cur && !propsFor.empty() && std::regex_search(l, m, frame)) {
      // Properties of a callee (non-entry function) do not belong to the kernel.
      if (propsFor == cur->name) {
        cur->stackFrame = number(m, 1);
        cur->spillStores = number(m, 2);
        cur->spillLoads = number(m, 3);
      }
      propsFor.clear();
    }
  }
  return out;
}

std::string stripPtxasVerbose(const std::string &text) {
  static const std::regex frame(R"(^\s+\d+ bytes stack frame, \d+ bytes spill stores, \d+ bytes spill loads\s*$)");
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    std::string line = text.substr(pos, end - pos);
    std::string bare = line;
    while (!bare.empty() && (bare.back() == '\n' || bare.back() == '\r'))
      bare.pop_back();
    if (!startsWith(bare, kInfo) && !std::regex_match(bare, frame))
      out += line;
    pos = end;
  }
  return out;
}

} // namespace ciq::wrapper
