// One line per message on stderr, in LLVM's colours: the engine library and
// the commands report through these, so the library links without main.cpp.
#include "engine/commands/Command.h"
#include "common/ConsoleLine.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace ciq {

int reportError(const std::string &message) {
  llvm::WithColor::error(llvm::errs(), "ciq") << consoleLine(message) << "\n";
  return 1;
}
void reportWarning(const std::string &message) {
  llvm::WithColor::warning(llvm::errs(), "ciq") << consoleLine(message) << "\n";
}
void reportNote(const std::string &message) {
  llvm::WithColor::note(llvm::errs(), "ciq") << consoleLine(message) << "\n";
}

} // namespace ciq
