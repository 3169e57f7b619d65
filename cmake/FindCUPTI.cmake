# FindCUPTI: the headers of NVIDIA's CUPTI (the CUDA Profiling Tools
# Interface), which libciq-kernel-trace is compiled against. The library
# itself is opened at run time (trace/CuptiLoader.cpp), so only its folder is
# recorded here, as the first place to look for it.
#
# Searched, in order: CIQ_CUPTI_ROOT (cache variable or environment), the CUDA
# toolkit's extras/CUPTI (CUDAToolkit_ROOT, CUDA_PATH, /usr/local/cuda), and
# NVIDIA's Python package nvidia-cuda-cupti (site-packages/nvidia/cu<N> or
# nvidia/cuda_cupti), which `make deps` installs where the toolkit lacks it.
#
# Sets CUPTI_FOUND, CUPTI_INCLUDE_DIR, CUPTI_LIBRARY (libcupti.so.<N>),
# CUPTI_LIBRARY_DIR, and CUPTI_NOT_FOUND_REASON (one line) when not found.
set(CIQ_CUPTI_ROOT "$ENV{CIQ_CUPTI_ROOT}" CACHE PATH "a CUPTI folder (holding include/cupti.h and lib/ or lib64/)")

set(_cupti_roots)
if(CIQ_CUPTI_ROOT)
  list(APPEND _cupti_roots "${CIQ_CUPTI_ROOT}")
endif()
foreach(_tk "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}" "/usr/local/cuda")
  if(_tk)
    list(APPEND _cupti_roots "${_tk}/extras/CUPTI")
  endif()
endforeach()
# The pip package: ask the Python interpreter where it put it.
find_program(CIQ_CUPTI_PYTHON NAMES python3)
if(CIQ_CUPTI_PYTHON)
  execute_process(COMMAND "${CIQ_CUPTI_PYTHON}" -c
    "import importlib.metadata as m, os\nd = m.distribution('nvidia-cuda-cupti')\nfor f in d.files or []:\n  if str(f).endswith('include/cupti.h'): print(os.path.dirname(os.path.dirname(str(d.locate_file(f))))); break"
    OUTPUT_VARIABLE _cupti_pip OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _cupti_rc)
  if(_cupti_rc EQUAL 0 AND _cupti_pip)
    list(APPEND _cupti_roots "${_cupti_pip}")
  endif()
endif()

find_path(CUPTI_INCLUDE_DIR cupti_activity.h PATHS ${_cupti_roots} PATH_SUFFIXES include NO_DEFAULT_PATH)
if(CUPTI_INCLUDE_DIR)
  get_filename_component(_cupti_root "${CUPTI_INCLUDE_DIR}" DIRECTORY)
  file(GLOB _cupti_libs "${_cupti_root}/lib64/libcupti.so.*" "${_cupti_root}/lib/libcupti.so.*")
  list(FILTER _cupti_libs EXCLUDE REGEX "\\.so\\.[0-9]+\\.[0-9]")  # the SONAME file, not libcupti.so.13.0.85
  if(NOT _cupti_libs)
    file(GLOB _cupti_libs "${_cupti_root}/lib64/libcupti.so*" "${_cupti_root}/lib/libcupti.so*")
  endif()
  list(SORT _cupti_libs)
  list(GET _cupti_libs 0 CUPTI_LIBRARY)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUPTI REQUIRED_VARS CUPTI_INCLUDE_DIR CUPTI_LIBRARY)
if(CUPTI_FOUND)
  get_filename_component(CUPTI_LIBRARY_DIR "${CUPTI_LIBRARY}" DIRECTORY)
else()
  string(REPLACE ";" ", " _tried "${_cupti_roots}")
  set(CUPTI_NOT_FOUND_REASON "ciq was built without CUPTI (no include/cupti_activity.h and lib/libcupti.so.* in ${_tried}); install NVIDIA's nvidia-cuda-cupti (make deps) or the toolkit's CUPTI, or configure with -DCIQ_CUPTI_ROOT=<folder>, and rebuild")
endif()
mark_as_advanced(CUPTI_INCLUDE_DIR CIQ_CUPTI_PYTHON)
