// Whether two copies of a benchmark program are the same program (issue 56
// item 2): the copy the search measured (programs/<candidate>) and the
// program the lock's own build made (rehearsal/<candidate>/program). Every
// file the copy holds (the program, its shared libraries, benchmark
// artifacts) is compared by SHA-256; an ELF file of other bytes is the same
// program when every section it loads is (ProgramComparison::loadedOnly).
// The files ciq writes beside them (command.json, manifests: *.json) are not
// compared.
#pragma once

#include <string>
#include <vector>

namespace ciq {

struct ProgramComparison {
  bool identical = false;
  // Files identical only in what they load: ELF files whose every loaded
  // section but the device code and the build-id note is the same bytes at
  // the same address, and whose device code hashes the same (.nv_fatbin,
  // unit names made canonical: common/DeviceCode.h); what differs is not
  // loaded (nvcc's temporary file names in .strtab, a per-process number).
  std::vector<std::string> loadedOnly;
  // When not: the first file that differs or is missing ("app: other bytes").
  std::string difference;
};

ProgramComparison compareProgramCopies(const std::string &measuredDir, const std::string &rehearsedDir);

// The folder of a program copy from the command that runs it: under/<name>
// for the first argument inside a folder of `under` (programs/c0003/app:
// programs/c0003), "" when none is.
std::string copyFolderOf(const std::vector<std::string> &command, const std::string &under);

} // namespace ciq
