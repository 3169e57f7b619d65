#include "common/DeviceCode.h"
#include "common/Elf64.h"
#include "common/Fatbin.h"
#include "common/Sha256.h"


#include <algorithm>
#include <cctype>
#include <llvm/Object/ELF.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

namespace ciq {
namespace {

using Elf = Elf64;   // common/Elf64.h: ELFFile directly, no generic reader

std::optional<Elf> openElf(llvm::StringRef bytes) { return openElf64(bytes); }

// Calls f(name, header) for every section header with a readable name.
template <typename F> void forEachSection(const Elf &elf, F f) {
  auto sections = elf.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return;
  }
  auto strtab = elf.getSectionStringTable(*sections);
  if (!strtab) {
    llvm::consumeError(strtab.takeError());
    return;
  }
  for (const auto &sec : *sections) {
    auto name = elf.getSectionName(sec, *strtab);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    f(*name, sec);
  }
}

// A section's bytes; SHT_NOBITS sections have none in the file.
llvm::Expected<llvm::StringRef> contentsOf(const Elf &elf, const Elf::Elf_Shdr &sec) {
  if (sec.sh_type == llvm::ELF::SHT_NOBITS)
    return llvm::StringRef();
  auto bytes = elf.getSectionContents(sec);
  if (!bytes)
    return bytes.takeError();
  return llvm::toStringRef(*bytes);
}

} // namespace

// nvcc names the file-local device entities of a translation unit (static
// functions, anonymous namespaces, and so libcu++'s and cooperative groups'
// internals) after it: "_ZN36_INTERNAL_393f41ab_6_red_cu_2c143ad1...",
// "_GLOBAL__N__393f41ab_...", "__nv_static_27__393f41ab_...". The unit id is
// "<8 hex>_<n>_<n characters of the file name>_<8 hex>": both hex parts are
// hashes nvcc derives from where and how it compiled (the first from the
// source's absolute path; the second differs between checkouts too, issue
// 56), so the same file compiled in another folder (a CI checkout, a
// colleague's tree, a compiler cache's temporary copy) names the same code
// differently. Some units (an -rdc compile of cuda-samples' reduction) add
// "_<number>", a number of the compiling process, which two builds never
// share; the names around it then differ in length too (_ZN41_INTERNAL_...
// against _ZN42_INTERNAL_...). Other units are named after a function
// instead of the second hash ("_INTERNAL_fdfc7e2e_7_Main_cu_main...",
// "_INTERNAL_6e7e3d88_5_io_cu__Z4logoi..."). So both hashes are blanked, the
// process number dropped, and the length before the tag, which counts it,
// replaced by "#"; what stays is the tag, the file's name and what follows.
namespace {

bool hex8At(const std::string &b, size_t q) {
  if (q + 8 > b.size())
    return false;
  for (size_t i = q; i < q + 8; ++i)
    if (!isxdigit((unsigned char)b[i]))
      return false;
  return true;
}

// The end of "<8 hex>_<n>_<name>_<8 hex>" (hashed) or of "<8 hex>_<n>_<name>"
// followed by something else (a function-named unit) starting at p, or npos.
size_t unitIdEnd(const std::string &b, size_t p, bool &hashed) {
  hashed = false;
  if (!hex8At(b, p) || p + 8 >= b.size() || b[p + 8] != '_')
    return std::string::npos;
  size_t q = p + 9, n = 0;
  while (q < b.size() && isdigit((unsigned char)b[q]) && n < 100000)
    n = n * 10 + (b[q++] - '0');
  if (q == p + 9 || q >= b.size() || b[q] != '_' || q + 1 + n > b.size())
    return std::string::npos;
  size_t nameEnd = q + 1 + n;
  if (nameEnd < b.size() && b[nameEnd] == '_' && hex8At(b, nameEnd + 1)) {
    hashed = true;
    return nameEnd + 9;
  }
  return nameEnd;
}

// Whether [end, stop) after a unit id is nothing or a process number "_<digits>"
// (with a trailing '_' where a name follows, as in __nv_static_).
bool unitIdRest(const std::string &b, size_t end, size_t stop) {
  if (end == stop)
    return true;
  if (b[end] != '_')
    return false;
  size_t d = end + 1;
  while (d < stop && isdigit((unsigned char)b[d]))
    ++d;
  return d > end + 1 && (d == stop || (d + 1 == stop && b[d] == '_'));
}

// Appends the hashed unit id at [p, end) canonically: both hashes blanked, a
// process number "_<digits>" up to `limit` (the end the name's length gives)
// dropped.
void appendUnitId(const std::string &b, size_t p, size_t end, size_t limit, std::string &out) {
  out += "00000000";
  out.append(b, p + 8, end - 8 - (p + 8));
  out += "00000000";
  size_t q = end;
  if (q < limit && b[q] == '_') {
    size_t d = q + 1;
    while (d < limit && isdigit((unsigned char)b[d]))
      ++d;
    if (d > q + 1 && (d == limit || b[d] == '_'))
      q = d;   // "_27043": dropped
  }
  out.append(b, q, limit - q);
}

} // namespace

std::string canonicalUnitIds(llvm::StringRef in) {
  const std::string b = in.str();
  std::string out;
  out.reserve(b.size());
  size_t copied = 0;
  for (size_t at = 0; at < b.size(); ++at) {
    size_t tagLen = 0;
    bool lengthBefore = true;   // _ZN<len>_INTERNAL_..., <len>_GLOBAL__N__...
    if (b.compare(at, 10, "_INTERNAL_") == 0)
      tagLen = 10;
    else if (b.compare(at, 12, "_GLOBAL__N__") == 0)
      tagLen = 12;
    else if (b.compare(at, 12, "__nv_static_") == 0)
      tagLen = 12, lengthBefore = false;
    if (!tagLen)
      continue;
    size_t lenBegin = at, lenEnd = at;   // the decimal length that counts the unit id
    size_t id = at + tagLen, limit = std::string::npos;
    if (!lengthBefore) {
      lenBegin = lenEnd = id;
      while (lenEnd < b.size() && isdigit((unsigned char)b[lenEnd]))
        ++lenEnd;
      if (lenEnd == lenBegin || b.compare(lenEnd, 2, "__") != 0)
        continue;
      id = lenEnd + 2;
      limit = id + std::stoul(b.substr(lenBegin, std::min<size_t>(lenEnd - lenBegin, 6)));
    }
    bool hashed = false;
    size_t end = unitIdEnd(b, id, hashed);
    if (end == std::string::npos)
      continue;
    if (!hashed) {
      // Named after a function: no process number, so every length stays;
      // only the path hash goes.
      out.append(b, copied, id - copied);
      out += "00000000";
      copied = id + 8;
      at = copied - 1;
      continue;
    }
    if (lengthBefore) {
      // The identifier's length ends the digits before the tag, which may
      // follow another name's digits ("3__443_GLOBAL__N__": `3__4`, then 43):
      // the shortest run of them that spans the unit id is its length.
      for (size_t k = 1; k <= 6 && at >= copied + k && isdigit((unsigned char)b[at - k]); ++k) {
        size_t len = std::stoul(b.substr(at - k, k)), stop = at + len;
        if (stop >= end && stop <= b.size() && unitIdRest(b, end, stop)) {
          lenBegin = at - k;
          limit = stop;
          break;
        }
      }
    }
    if (limit == std::string::npos || limit < end || limit > b.size() || !unitIdRest(b, end, limit))
      limit = end;   // no length to trust: only the hashes go
    if (lengthBefore) {
      out.append(b, copied, lenBegin - copied);
      out += lenBegin < at ? "#" : "";
      out.append(b, at, id - at);
    } else {
      out.append(b, copied, lenBegin - copied);
      out += "#__";
    }
    appendUnitId(b, id, end, limit, out);
    copied = limit;
    at = limit - 1;
  }
  out.append(b, copied, std::string::npos);
  return out;
}

namespace {

std::string blankUnitIds(llvm::StringRef in) { return canonicalUnitIds(in); }

// Debug information (-G, -lineinfo) names the source file's path and runs
// nowhere: "-lineinfo" code built in two folders is the same SASS. With
// -rdc=true -lineinfo ptxas also writes `.nv_debug_ptx_txt.<number>` (the
// number derived from the path of the PTX it read, so from the folder or
// nvcc's per-process temporary file) and relocates `.nv_debug_line_sass`
// (`.rela.nv_debug_line_sass`): both are debug information too.
bool isDebugSection(llvm::StringRef name) {
  for (llvm::StringRef prefix : {".debug_", ".rela.debug_", ".rel.debug_", ".nv_debug", ".rela.nv_debug", ".rel.nv_debug"})
    if (name.startswith(prefix))
      return true;
  return false;
}

// Section names by index ("" for one without a readable name).
std::vector<std::string> sectionNames(const Elf &elf) {
  std::vector<std::string> names;
  forEachSection(elf, [&](llvm::StringRef name, const Elf::Elf_Shdr &) { names.push_back(name.str()); });
  return names;
}

// A symbol table by what each symbol says (name with the unit ids blanked,
// binding and type, visibility, the name of its section, value, size), not by
// its raw bytes: st_name is an offset into .strtab, which moves whenever a
// name before it changes length, e.g. `.nv_debug_ptx_txt.864162681` against
// `.nv_debug_ptx_txt.3414890316` in another folder. Symbols of debug
// sections are left out with those sections.
void hashSymbols(const Elf &elf, const Elf::Elf_Shdr &symtab, const std::vector<std::string> &sections,
                 std::string &acc) {
  auto symbols = elf.symbols(&symtab);
  auto names = elf.getStringTableForSymtab(symtab);
  if (!symbols || !names) {
    if (!symbols) llvm::consumeError(symbols.takeError());
    if (!names) llvm::consumeError(names.takeError());
    acc += "unreadable symbols\n";
    return;
  }
  std::string all;
  for (const auto &sym : *symbols) {
    std::string section = sym.st_shndx < sections.size() ? sections[sym.st_shndx] : std::to_string(sym.st_shndx);
    if (isDebugSection(section))
      continue;
    auto symName = sym.getName(*names);
    std::string n = "?";
    if (symName)
      n = blankUnitIds(*symName);
    else
      llvm::consumeError(symName.takeError());
    all += n + "/" + std::to_string(sym.st_info) + "/" + std::to_string(sym.st_other) + "/" + blankUnitIds(section) +
           "/" + std::to_string(sym.st_value) + "/" + std::to_string(sym.st_size) + ";";
  }
  acc += sha256Hex(all) + "\n";
}

// One cubin's SASS and its resource tables, hashed section by section, with
// the translation unit's ids blanked (blankUnitIds). The `.note.nv.tkinfo`
// note is left out: it records the ptxas command line (options, -v), which
// changes with every spelling of the same code; so are the debug sections.
// String tables count through the names they hold (sections', symbols').
void hashCubin(const Elf &cubin, std::string &acc) {
  std::vector<std::string> sections = sectionNames(cubin);
  forEachSection(cubin, [&](llvm::StringRef name, const Elf::Elf_Shdr &sec) {
    if (name == ".note.nv.tkinfo" || isDebugSection(name) || sec.sh_type == llvm::ELF::SHT_STRTAB)
      return;
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB) {
      acc += blankUnitIds(name) + ":";
      hashSymbols(cubin, sec, sections, acc);
      return;
    }
    acc += blankUnitIds(name) + ":" + std::to_string(sec.sh_size) + ":";
    bool bss = sec.sh_type == llvm::ELF::SHT_NOBITS && (sec.sh_flags & llvm::ELF::SHF_ALLOC);
    if (bss)
      return;
    auto contents = contentsOf(cubin, sec);
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return;
    }
    acc += sha256Hex(blankUnitIds(*contents)) + "\n";
  });
}

bool isCubin(const Elf &elf) { return elf.getHeader().e_machine == llvm::ELF::EM_CUDA; }

// One cubin hashed into `acc`, its section lines (DeviceCode::sections) into
// `lines`: hashCubin's own "name:size:digest" or "name:digest" lines, read back.
void hashCubinListed(const Elf &cubin, const std::string &arch, std::string &acc, std::vector<std::string> *lines) {
  size_t start = acc.size();
  hashCubin(cubin, acc);
  if (!lines)
    return;
  llvm::StringRef added = llvm::StringRef(acc).substr(start);
  while (!added.empty()) {
    auto [line, rest] = added.split('\n');
    added = rest;
    auto [head, digest] = line.rsplit(':');
    auto [name, size] = head.rsplit(':');
    if (head.find(':') == llvm::StringRef::npos)   // a symbol table: "name:digest"
      name = head, size = "";
    lines->push_back(arch + " " + name.str() + (size.empty() ? "" : " " + size.str()) + " " +
                     digest.take_front(16).str());
  }
}

// Older containers seen by no parser: every ELF image for the CUDA machine
// found in the bytes. Returns false when there is none.
bool scanForCubins(llvm::StringRef bytes, std::string &acc, std::vector<std::string> *lines) {
  bool found = false;
  size_t pos = 0;
  while ((pos = bytes.find("\x7f" "ELF", pos)) != llvm::StringRef::npos) {
    if (auto elf = openElf(bytes.substr(pos)); elf && isCubin(*elf)) {
      hashCubinListed(*elf, "cubin", acc, lines);
      found = true;
    }
    pos += 4;
  }
  return found;
}

// The cubins of a fatbin (decompressed: -rdc and -compress-mode store them
// compressed, see Fatbin.h) hashed into `acc`. Returns false when there is
// none (a PTX-only fatbin); false with `error` when the container is damaged.
bool hashEmbeddedCubins(llvm::StringRef fatbin, std::string &acc, std::string &error, int onlySm,
                        std::vector<std::string> *lines) {
  if (!isFatbin(fatbin))
    return scanForCubins(fatbin, acc, lines);
  bool found = false;
  bool ok = forEachFatbinCubin(fatbin, [&](int sm, llvm::StringRef cubin) {
    if (onlySm && sm != onlySm)
      return;
    if (auto elf = openElf(cubin); elf && isCubin(*elf)) {
      hashCubinListed(*elf, "sm_" + std::to_string(sm), acc, lines);
      found = true;
    }
  }, error);
  return ok && found;
}

} // namespace

std::optional<DeviceCode> readDeviceCode(const std::string &path, std::string &error, int onlySm) {
  // A FIFO or device in its place would block the read or never end it.
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status(path, st) && llvm::sys::fs::exists(st) &&
      st.type() != llvm::sys::fs::file_type::regular_file) {
    error = path + ": not a regular file (a FIFO, socket, device or folder); give the object or program itself";
    return std::nullopt;
  }
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = path + ": " + buf.getError().message();
    return std::nullopt;
  }
  llvm::StringRef bytes = (*buf)->getBuffer();
  DeviceCode dc;
  auto elf = openElf(bytes);
  if (!elf) {
    // Not an ELF object: a fatbin (nvcc -fatbin) is hashed by its cubins like
    // an object's .nv_fatbin; anything else is device code as a whole.
    std::string acc, damaged;
    bool cubins = hashEmbeddedCubins(bytes, acc, damaged, onlySm, &dc.sections);
    if (!damaged.empty()) {
      error = path + ": " + damaged;
      return std::nullopt;
    }
    dc.sha256 = sha256Hex(cubins ? llvm::StringRef(acc) : bytes);
    dc.bytes = (long)bytes.size();
    dc.section = cubins ? "file cubins" : "file";
    dc.isCuda = cubins || isFatbin(bytes);
    return dc;
  }
  // A cubin is an ELF for the CUDA machine: the whole file is device code.
  if (isCubin(*elf)) {
    std::string acc;
    hashCubinListed(*elf, "cubin", acc, &dc.sections);
    dc.sha256 = sha256Hex(acc);
    dc.bytes = (long)bytes.size();
    dc.section = "file";
    dc.isCuda = true;
    return dc;
  }
  bool done = false, failed = false;
  forEachSection(*elf, [&](llvm::StringRef name, const Elf::Elf_Shdr &sec) {
    // -rdc=true (CUDA_SEPARABLE_COMPILATION) objects keep their relocatable
    // device code in __nv_relfatbin instead.
    if (done || (name != ".nv_fatbin" && name != "__nv_relfatbin"))
      return;
    done = true;
    dc.isCuda = true;
    auto contents = contentsOf(*elf, sec);
    if (!contents) {
      error = path + ": " + llvm::toString(contents.takeError());
      failed = true;
      return;
    }
    std::string acc, damaged;
    dc.bytes = (long)contents->size();
    bool cubins = hashEmbeddedCubins(*contents, acc, damaged, onlySm, &dc.sections);
    if (!damaged.empty()) {
      error = path + ": " + name.str() + ": " + damaged;
      failed = true;
      return;
    }
    if (cubins) {
      dc.sha256 = sha256Hex(acc);
      dc.section = name.str() + " cubins";
    } else {
      dc.sha256 = sha256Hex(*contents);
      dc.section = name.str();
    }
  });
  if (failed)
    return std::nullopt;
  return dc;
}

std::string combineDeviceCodeHashes(std::vector<std::string> hashes) {
  std::sort(hashes.begin(), hashes.end());
  std::string all;
  for (const auto &h : hashes)
    all += h + "\n";
  return sha256Hex(all);
}

namespace {

// nvcc names its temporary files after its process id
// ("tmpxft_000078c9_00000000-6_k.cudafe1.cpp"): blank the id wherever such a
// name lands in the bytes, or no two builds would ever be equal.
std::string blankTempNames(llvm::StringRef in) {
  std::string bytes = in.str();
  const std::string tag = "tmpxft_";
  for (size_t at = bytes.find(tag); at != std::string::npos; at = bytes.find(tag, at + 1))
    for (size_t i = at + tag.size(); i < bytes.size() && i < at + tag.size() + 8 && isxdigit((unsigned char)bytes[i]); ++i)
      bytes[i] = '0';
  return bytes;
}

// What a host object does when run, and nothing about how it was made: every
// section but the symbol and string tables and the embedded device code
// (compared on its own through readDeviceCode, without the ptxas command line
// each cubin records), plus every symbol but the STT_FILE ones. The file
// symbol names nvcc's intermediate source, which differs between a plain
// compile ("tmpxft_..._k.cudafe1.cpp") and one that keeps its intermediates
// for PTX reuse ("k.cudafe1.cpp") while the code is the same.
bool hashHostObject(const Elf &elf, std::string &acc) {
  bool ok = true;
  forEachSection(elf, [&](llvm::StringRef name, const Elf::Elf_Shdr &sec) {
    acc += name.str() + ":" + std::to_string(sec.sh_type) + ":" + std::to_string(sec.sh_flags) + ":";
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB) {
      auto symbols = elf.symbols(&sec);
      auto names = elf.getStringTableForSymtab(sec);
      if (!symbols || !names) {
        if (!symbols) llvm::consumeError(symbols.takeError());
        if (!names) llvm::consumeError(names.takeError());
        ok = false;
        return;
      }
      for (const auto &sym : *symbols) {
        if (sym.getType() == llvm::ELF::STT_FILE)
          continue;
        auto symName = sym.getName(*names);
        std::string n = "?";
        if (symName)
          n = blankUnitIds(blankTempNames(*symName));
        else
          llvm::consumeError(symName.takeError());
        acc += n + "/" + std::to_string(sym.st_info) + "/" + std::to_string(sym.st_shndx) + "/" +
               std::to_string(sym.st_value) + "/" + std::to_string(sym.st_size) + ";";
      }
      acc += "\n";
      return;
    }
    if (sec.sh_type == llvm::ELF::SHT_STRTAB || name == ".nv_fatbin" || name == "__nv_relfatbin" ||
        sec.sh_type == llvm::ELF::SHT_NOBITS) {
      acc += std::to_string(sec.sh_type == llvm::ELF::SHT_NOBITS ? sec.sh_size : 0) + "\n";
      return;
    }
    auto contents = contentsOf(elf, sec);
    if (!contents) {
      llvm::consumeError(contents.takeError());
      ok = false;
      return;
    }
    acc += sha256Hex(blankUnitIds(blankTempNames(*contents))) + "\n";
  });
  return ok;
}

} // namespace

std::optional<std::string> objectsCodeSha256(const std::vector<std::string> &paths, std::string &error) {
  std::vector<std::string> hashes;
  for (const auto &p : paths) {
    auto buf = llvm::MemoryBuffer::getFile(p, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf) {
      error = "cannot read " + p + ": " + buf.getError().message();
      return std::nullopt;
    }
    llvm::StringRef bytes = (*buf)->getBuffer();
    std::string acc;
    auto elf = openElf(bytes);
    if (elf && !isCubin(*elf) && hashHostObject(*elf, acc))
      hashes.push_back(sha256Hex(acc));
    else // a fatbin, a cubin or an object no reader understands: all of its bytes
      hashes.push_back(sha256Hex(blankTempNames(bytes)));
  }
  return combineDeviceCodeHashes(hashes);
}

} // namespace ciq
