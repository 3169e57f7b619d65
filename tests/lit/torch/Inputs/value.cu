// A shared library the benchmark loads (not runs): its speed is VALUE, a -D
// parameter of the search (the stand-in for an extension module's kernel).
#ifndef VALUE
#define VALUE 4
#endif
__global__ void touch(int *p) { *p = VALUE; }
extern "C" int value() { return VALUE; }
