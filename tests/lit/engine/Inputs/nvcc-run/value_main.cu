// A program whose "time" is VALUE, a -D parameter of the search: compiled
// and run by one nvcc command (`nvcc value_main.cu -o app --run`), or
// compiled and linked into a shared library by one (`nvcc -shared`).
#include <cstdio>
#ifndef VALUE
#define VALUE 4
#endif
__global__ void touch(int *p) { *p = VALUE; }
extern "C" int value() { return VALUE; }
int main() {
  std::printf("time_ms=%d.0\n", VALUE);
  return 0;
}
