// ciq-ptxas-driver: every mode but the plain pass-through (see main.cpp).
#include "Driver.h"
#include "Subprocess.h"

int main(int argc, char **argv) {
  // The compiler runs in its own process group (timeouts end the whole
  // group); Ctrl-C on the build must still end it.
  ciq::forwardTerminationSignals();
  return ciq::wrapper::runWrapper(argc, argv);
}
