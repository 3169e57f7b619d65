// A space's ptxas/nvcc options checked against the installed compiler's own
// --help before any build (KnownOptions.cpp), and a control written as two
// words ("-Xcompiler -O1", copied from a command line) made one argument.
#pragma once
#include "engine/config/Space.h"

namespace ciq {

// Checks each ptxas/nvcc option template against the installed compiler's
// own --help, before any build. A space written for another release
// (compiler_version) gets one warning naming the space and the release found,
// and its options that compiler does not have are left out with a note; a
// value outside an option's "Allowed values" is left out with a note. An
// option missing from --help in a space for this release (or for none) is a
// misspelling: ConfigError. A template of several words is read as the
// command line it was copied from: an option that takes a value and the word
// after it become one argument ("-Xcompiler -O1" -> "-Xcompiler=-O1", nvcc's
// own spelling), other words stay arguments of their own (render() passes
// each on), with one note saying so.
void checkOptionsKnown(SearchSpace &space);

// The compiler option a ptxas or nvcc control renders, whatever its spelling
// ("ptxas --maxrregcount" for ptxas's --maxrregcount or -maxrregcount, and
// for nvcc's -maxrregcount, --maxrregcount, -Xptxas --maxrregcount and
// --ptxas-options=-maxrregcount): one dash or two, a short alias (ptxas -O3 is
// --opt-level, from the compiler's --help when it is installed), nvcc's
// -Xptxas wrapping, and nvcc's options that it hands to ptxas.
std::string optionIdentity(const Control &c);

} // namespace ciq
