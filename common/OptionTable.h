// The option tables of ptxas 13.0 and nvcc 13.0 that the wrapper needs: which
// names are aliases of one option (so "-O2" and "--opt-level=2" conflict) and
// which options take a value (so "-o out.o" is not read as an input file), and
// which nvcc options accumulate (so a candidate's -D or -Xptxas adds to the
// build's own instead of replacing it).
// Taken from `ptxas --help` and `nvcc --help` of CUDA 13.0; an option missing
// here is treated as a flag without a value.
#pragma once
#include <string>

namespace ciq::wrapper {

struct OptionSpec {
  const char *longName;   // canonical name without dashes, e.g. "opt-level"
  const char *shortName;  // alias without dashes, e.g. "O" ("" when none)
  bool takesValue;
  bool attachedShort;     // short form takes its value attached: -O3, -Ifoo, -DX
  bool accumulates = false; // a list option (-D, -I, -Xptxas): repeats add, never replace
};

// One option of a command line, split into its canonical name and value.
struct ParsedOption {
  std::string name;       // canonical long name, or the spelled name when unknown
  std::string value;      // "" for a flag
  bool hasValue = false;
  int tokens = 1;         // how many argv entries it used (2 for "-o file")
  bool known = false;
  bool accumulates = false; // OptionSpec::accumulates of a known option
};

// Parses the option starting at args[i] ("-x", "--x=v", "-x v", "-Ov").
// `next` is args[i+1] or nullptr. Returns known=false for a non-option.
ParsedOption parsePtxasOption(const std::string &arg, const std::string *next);
ParsedOption parseNvccOption(const std::string &arg, const std::string *next);

} // namespace ciq::wrapper
