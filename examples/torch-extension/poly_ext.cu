// A one-kernel PyTorch extension that ciq tunes (examples/torch-extension):
// ITEMS elements per thread (a -D parameter the search sets) trade
// instruction-level parallelism against registers, and ptxas's controls
// (register ceiling, optimization level) change how it schedules them.
// The binding is Python's C API on raw device pointers (tensor.data_ptr()):
// no torch header, so a candidate's build takes seconds.
#include <Python.h>
#include <cuda_runtime.h>

#ifndef ITEMS
#define ITEMS 2
#endif

__global__ void poly(const float *__restrict__ x, float *__restrict__ y, int n, int steps) {
  int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
  float v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    int i = base + k * blockDim.x;
    v[k] = i < n ? x[i] : 0.f;
  }
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
      v[k] = v[k] * 0.999f + 0.001f * __sinf(v[k] + 0.5f * __cosf(v[k]));
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    int i = base + k * blockDim.x;
    if (i < n)
      y[i] = v[k];
  }
}

// run(x_ptr, y_ptr, n, steps): launches on the default stream, as PyTorch's
// current stream is unless the caller changed it; returns cudaGetLastError().
static PyObject *run(PyObject *, PyObject *args) {
  unsigned long long x, y;
  int n, steps;
  if (!PyArg_ParseTuple(args, "KKii", &x, &y, &n, &steps))
    return nullptr;
  const int threads = 256;
  int blocks = (n + threads * ITEMS - 1) / (threads * ITEMS);
  poly<<<blocks, threads>>>(reinterpret_cast<const float *>(x), reinterpret_cast<float *>(y), n, steps);
  return PyLong_FromLong(cudaGetLastError());
}

static PyObject *items(PyObject *, PyObject *) { return PyLong_FromLong(ITEMS); }

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "run(x_ptr, y_ptr, n, steps): y = poly(x) on the default stream"},
    {"items", items, METH_NOARGS, "the ITEMS the module was built with"},
    {nullptr, nullptr, 0, nullptr}};
static PyModuleDef module = {PyModuleDef_HEAD_INIT, "ciq_torch_ext", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_ciq_torch_ext(void) { return PyModule_Create(&module); }
