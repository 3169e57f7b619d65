// ciq-kernel-trace-probe: loads libciq-kernel-trace.so the way the CUDA
// driver does (dlopen, InitializeInjection) and exits normally, so a machine
// without a GPU can test that the library loads, never fails its host, and
// writes its trace file (tests/lit/engine/kernel-trace-lib.test).
#include <cstdio>
#include <dlfcn.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ciq-kernel-trace-probe <libciq-kernel-trace.so>\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
  if (!init) {
    std::fprintf(stderr, "%s exports no InitializeInjection\n", argv[1]);
    return 1;
  }
  std::printf("InitializeInjection returned %d\n", init());
  return 0; // exit handlers write the trace
}
