// A one-kernel PyTorch extension that ciq tunes (examples/torch-extension).
// Two -D parameters the search sets: FAST_SINCOS trades precision for speed
// (the SFU's __sinf/__cosf approximations instead of sinf/cosf, whose range
// reduction and polynomial run as some twenty instructions each on the FMA
// pipe); bench.py's check against PyTorch decides whether the approximation
// is close enough. ITEMS, the elements per thread, trades instruction-level
// parallelism against registers, and ptxas's controls (register ceiling,
// optimization level) change how the kernel's registers and schedule come out.
// The binding is Python's C API on raw device pointers (tensor.data_ptr()):
// no torch header, so a candidate's build takes seconds.
#include <Python.h>
#include <cuda_runtime.h>

#ifndef ITEMS
#define ITEMS 2
#endif
#ifndef FAST_SINCOS
#define FAST_SINCOS 0
#endif

#if FAST_SINCOS
#define SIN __sinf
#define COS __cosf
#else
#define SIN sinf
#define COS cosf
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
      v[k] = v[k] * 0.999f + 0.001f * SIN(v[k] + 0.5f * COS(v[k]));
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
static PyObject *fastSincos(PyObject *, PyObject *) { return PyLong_FromLong(FAST_SINCOS); }

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "run(x_ptr, y_ptr, n, steps): y = poly(x) on the default stream"},
    {"items", items, METH_NOARGS, "the ITEMS the module was built with"},
    {"fast_sincos", fastSincos, METH_NOARGS, "the FAST_SINCOS the module was built with"},
    {nullptr, nullptr, 0, nullptr}};
static PyModuleDef module = {PyModuleDef_HEAD_INIT, "ciq_torch_ext", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_ciq_torch_ext(void) { return PyModule_Create(&module); }
