// A kernel as ptxas reports it, for tests that need one in a receipt or an
// evaluation: _Z1kv (k()) on sm_90, with the figures a test sets after.
#pragma once
#include "common/Protocol.h"

namespace ciq::test {

inline KernelStats sampleKernel(int registers, long spillStores, long spillLoads, long stackFrame) {
  KernelStats k;
  k.name = "_Z1kv";
  k.demangled = "k()";
  k.arch = "sm_90";
  k.registers = registers;
  k.spillStores = spillStores;
  k.spillLoads = spillLoads;
  k.stackFrame = stackFrame;
  k.compileMs = 1.5;
  return k;
}

} // namespace ciq::test
