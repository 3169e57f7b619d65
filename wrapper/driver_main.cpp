// ciq-ptxas-driver: every mode but the plain pass-through (see main.cpp).
#include "wrapper/Driver.h"
#include "common/Subprocess.h"

#include <openssl/crypto.h>

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
  // The driver only hashes (SHA-256) and never speaks TLS: skip reading
  // openssl.cnf and registering every cipher and digest in every compile it
  // wraps. (The ciq engine keeps OpenSSL's defaults for libcurl.)
  OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                          OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
                      nullptr);
  // The compiler runs in its own process group (timeouts end the whole
  // group); Ctrl-C on the build must still end it.
  ciq::forwardTerminationSignals();
  // Nothing may abort a build with a bare `terminate called`: one line instead.
  try {
    int status = ciq::wrapper::runWrapper(argc, argv);
    ciq::endLeftoverProcesses();
    return status;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ciq-ptxas: error: %s (a bug in ciq-ptxas: please report it with this command line)\n",
                 e.what());
    return 70;
  }
}
