// Loads libkern.so (linked, found through the RUNPATH) and prints a fixed time.
#include <cstdio>

extern "C" int kern_answer();

int main() {
  std::printf("answer=%d\ntime_ms=%d.0\n", kern_answer(), kern_answer() / 21);
  return 0;
}
