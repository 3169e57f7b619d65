# CompileIQ: tune NVIDIA's CUDA compilers (ptxas, nvcc) for one target of this
# build, and build it later with the frozen winner. docs/cmake.md has the
# whole reference; in short:
#
#   ciq_tune(<target> [BENCHMARK <cmd>...] [METRIC <m>...] [SPACE <s>...] [BUDGET n] ...)
#       writes <build>/ciq/<target>/ciq.yaml, makes the ciq-ptxas wrapper the
#       CUDA compiler launcher of <target> (a pure pass-through outside a
#       tuning run) and adds the targets ciq-tune-<target>,
#       ciq-validate-<target> and ciq-canary-<target>.
#   ciq_apply_lock(<target> [LOCKFILE <file>] [POLICY error|warn])
#       compiles <target> with the winner frozen in ciq.lock, after checking
#       that the lock still applies (nvcc/ptxas version, architectures, ACF bytes).
# find_package(CompileIQ) may be called in several folders (two sibling
# add_subdirectory()s each with its own): the lists the functions read are
# directory variables, so every call sets them in its own folder; the
# functions and the one-time work below are defined once.
include(${CMAKE_CURRENT_LIST_DIR}/CompileIQStrategies.cmake)   # _CIQ_STRATEGIES
include(${CMAKE_CURRENT_LIST_DIR}/CompileIQMetrics.cmake)      # _CIQ_COMPILE_METRICS, _CIQ_BENCHMARK_METRICS
# The engine finds the CUDA objects of a target through the CMake File API and
# compile_commands.json; ask for the latter unless the project decided.
if(NOT DEFINED CMAKE_EXPORT_COMPILE_COMMANDS)
  set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
endif()
include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "CompileIQ needs CMake 3.20 or newer (this is ${CMAKE_VERSION})")
endif()

# The binaries sit in ../../../bin of this file, in a build tree as in an
# install prefix. A project may point elsewhere by setting these first.
get_filename_component(_CIQ_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT CIQ_EXECUTABLE)
  set(CIQ_EXECUTABLE "${_CIQ_PREFIX}/bin/ciq")
endif()
if(NOT CIQ_PTXAS_EXECUTABLE)
  set(CIQ_PTXAS_EXECUTABLE "${_CIQ_PREFIX}/bin/ciq-ptxas")
endif()
foreach(_ciq_tool CIQ_EXECUTABLE CIQ_PTXAS_EXECUTABLE)
  if(NOT EXISTS "${${_ciq_tool}}")
    message(FATAL_ERROR " CompileIQ: ${${_ciq_tool}} does not exist: build ciq first "
      "(cmake --build <ciq build dir>), or set ${_ciq_tool} to its path")
  endif()
endforeach()
unset(_ciq_tool)
# Functions read them from here: variables do not reach sibling directories.
set_property(GLOBAL PROPERTY _CIQ_EXECUTABLE "${CIQ_EXECUTABLE}")
set_property(GLOBAL PROPERTY _CIQ_PTXAS_EXECUTABLE "${CIQ_PTXAS_EXECUTABLE}")

# A tuning run killed with kill -9 cannot put the build tree back: the objects
# it last built carry a candidate's controls. Its list of them
# (docs/troubleshooting.md) is acted on here, at the next configure, unless
# that ciq is still running.
# Ends the process groups the killed search's compiles registered in
# <run dir>/procs (common/ProcessTrack.h: "<pgid> <leader start time>"
# lines), so that none writes an object after the repair.
function(_ciq_end_compiles run_dir)
  file(GLOB records "${run_dir}/procs/*")
  foreach(record IN LISTS records)
    file(STRINGS "${record}" groups)
    foreach(group IN LISTS groups)
      if(NOT group MATCHES "^([0-9]+) ([0-9]+)$")
        continue()
      endif()
      set(pgid ${CMAKE_MATCH_1})
      set(start ${CMAKE_MATCH_2})
      if(NOT EXISTS "/proc/${pgid}/stat")
        continue()
      endif()
      file(READ "/proc/${pgid}/stat" stat)
      string(REGEX REPLACE "^.*\\) " "" fields "${stat}")
      string(REPLACE " " ";" fields "${fields}")
      list(GET fields 19 now)
      if(now STREQUAL start)
        execute_process(COMMAND kill -KILL -- -${pgid} OUTPUT_QUIET ERROR_QUIET)
      endif()
    endforeach()
    file(REMOVE "${record}")
  endforeach()
endfunction()

function(_ciq_repair_build_tree)
  set(list "${CMAKE_BINARY_DIR}/CMakeFiles/ciq-candidate-objects.txt")
  if(NOT EXISTS "${list}")
    return()
  endif()
  file(STRINGS "${list}" lines)
  set(removed 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "^# ciq engine ([0-9]+) ")
      set(comm "")
      if(EXISTS "/proc/${CMAKE_MATCH_1}/comm")
        file(READ "/proc/${CMAKE_MATCH_1}/comm" comm)
      endif()
      if(comm MATCHES "^ciq")
        return()
      endif()
    elseif(line MATCHES "^# ciq run dir (.+)$")
      _ciq_end_compiles("${CMAKE_MATCH_1}")
    elseif(IS_ABSOLUTE "${line}" AND EXISTS "${line}")
      file(REMOVE "${line}")
      math(EXPR removed "${removed} + 1")
    endif()
  endforeach()
  file(REMOVE "${list}")
  message(STATUS "CompileIQ: removed ${removed} object(s) an interrupted ciq search left in this build tree "
    "(the build recompiles them with your own flags)")
endfunction()
_ciq_repair_build_tree()

# Default for ciq_apply_lock's POLICY (e.g. -DCIQ_LOCK_POLICY=warn on a CI
# machine whose nvcc differs by a patch release).
set(CIQ_LOCK_POLICY "error" CACHE STRING "What ciq_apply_lock does with a lock that no longer applies: error or warn")
set_property(CACHE CIQ_LOCK_POLICY PROPERTY STRINGS error warn)

# Off: ciq_apply_lock() leaves every target as the compiler defaults build
# it, e.g. to tune again from the defaults instead of from the current lock.
option(CIQ_APPLY_LOCKS "ciq_apply_lock() applies lockfiles" ON)

# Touched by every successful ciq-tune-<target>: a build after a tune
# reconfigures, so a ciq_apply_lock whose lockfile did not exist yet applies it.
function(_ciq_lock_stamp out)
  set(${out} "${CMAKE_BINARY_DIR}/ciq/lock.stamp" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

# The leading space keeps CMake from re-wrapping the line: one line per error.
function(_ciq_fail fn msg)
  message(FATAL_ERROR " ${fn}: ${msg}")
endfunction()

# One error for what cmake_parse_arguments (prefix ARG) could not place:
# unknown words, or keywords given without a value.
function(_ciq_check_parsed fn keywords)
  if(ARG_UNPARSED_ARGUMENTS)
    string(REPLACE ";" " " bad "${ARG_UNPARSED_ARGUMENTS}")
    string(REPLACE ";" " " all "${keywords}")
    _ciq_fail("${fn}" "unexpected argument(s) '${bad}'; the keywords are: ${all}")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    string(REPLACE ";" " " bad "${ARG_KEYWORDS_MISSING_VALUES}")
    _ciq_fail("${fn}" "${bad} given without a value")
  endif()
endfunction()

# Resolves an ALIAS and checks that `name` is a target this project builds.
function(_ciq_real_target out fn name)
  if(NOT TARGET "${name}")
    _ciq_fail("${fn}" "'${name}' is not a target; call it after add_executable()/add_library() of '${name}'")
  endif()
  get_target_property(aliased "${name}" ALIASED_TARGET)
  if(aliased)
    set(name "${aliased}")
  endif()
  get_target_property(imported "${name}" IMPORTED)
  get_target_property(type "${name}" TYPE)
  if(imported OR type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    _ciq_fail("${fn}" "target '${name}' (${type}) has no CUDA sources this project compiles; name an executable or library target")
  endif()
  set(${out} "${name}" PARENT_SCOPE)
endfunction()

# Calls `command` with these argument values at the end of the current
# directory (DEFER would otherwise read the variables only then).
function(_ciq_defer command)
  set(args "")
  foreach(i RANGE 1 ${ARGC})
    if(i LESS ARGC)
      string(APPEND args " [==[${ARGV${i}}]==]")
    endif()
  endforeach()
  cmake_language(EVAL CODE "cmake_language(DEFER CALL ${command}${args})")
endfunction()

# `value` as one POSIX shell word, for commands a message tells people to
# copy: a path with spaces must paste as one argument.
function(_ciq_shell_quote out value)
  if(NOT "${value}" MATCHES "^[A-Za-z0-9_./:=+@%,-]+$")
    string(REPLACE "'" "'\\''" value "${value}")
    set(value "'${value}'")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# An integer from min to max: the engine's range for the ciq.yaml key the
# argument becomes (engine/config/Config.cpp), so that a value out of it stops the
# configure here and not the tune in a file the user did not write.
# Compared as digit strings: CMake's GREATER would round 20 digits.
function(_ciq_require_uint fn key value min max)
  if(NOT "${value}" MATCHES "^[0-9]+$")
    _ciq_fail("${fn}" "${key} '${value}' is not a non-negative integer")
  endif()
  string(REGEX REPLACE "^0+([0-9])" "\\1" n "${value}")
  string(LENGTH "${n}" n_len)
  string(LENGTH "${max}" max_len)
  if(n_len GREATER max_len OR (n_len EQUAL max_len AND n STRGREATER max) OR n LESS min)
    _ciq_fail("${fn}" "${key} '${value}' is outside ${min} to ${max}")
  endif()
endfunction()

# A YAML scalar for `value`, written after "key: " or "- " at column `indent`.
# Plain text is single-quoted (quotes doubled). Text holding a generator
# expression is only known after generation, so it goes into a literal block
# scalar, which takes every character as is, quotes and backslashes included.
function(_ciq_yaml_scalar out value indent)
  if(value MATCHES "\\$<" OR value MATCHES "\n")
    string(REPEAT " " ${indent} pad)
    string(REPLACE "\n" "\n${pad}  " body "${value}")
    set(${out} "|2-\n${pad}  ${body}" PARENT_SCOPE)
  else()
    string(REPLACE "'" "''" quoted "${value}")
    set(${out} "'${quoted}'" PARENT_SCOPE)
  endif()
endfunction()

# "key:" followed by one "- item" line per element, at column `indent`.
function(_ciq_yaml_list out key indent)
  string(REPEAT " " ${indent} pad)
  set(text "${pad}${key}:\n")
  math(EXPR item_indent "${indent} + 2")
  foreach(item IN LISTS ARGN)
    _ciq_yaml_scalar(q "${item}" ${item_indent})
    string(APPEND text "${pad}  - ${q}\n")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# A command for the benchmark or the correctness gate: a first word that names
# an executable target becomes its file, as in add_custom_command().
function(_ciq_command out)
  set(cmd ${ARGN})
  list(LENGTH cmd n)
  if(n GREATER 0)
    list(GET cmd 0 first)
    if(TARGET "${first}")
      get_target_property(type "${first}" TYPE)
      if(type STREQUAL "EXECUTABLE")
        list(REMOVE_AT cmd 0)
        list(PREPEND cmd "$<TARGET_FILE:${first}>")
      endif()
    endif()
  endif()
  set(${out} "${cmd}" PARENT_SCOPE)
endfunction()

# The configuration a tuning run builds with a multi-config generator.
function(_ciq_tune_config out)
  if(CIQ_TUNE_CONFIG)
    set(cfg "${CIQ_TUNE_CONFIG}")
  elseif(CMAKE_DEFAULT_BUILD_TYPE)
    set(cfg "${CMAKE_DEFAULT_BUILD_TYPE}")
  elseif("Release" IN_LIST CMAKE_CONFIGURATION_TYPES)
    set(cfg "Release")
  else()
    list(GET CMAKE_CONFIGURATION_TYPES 0 cfg)
  endif()
  set(${out} "${cfg}" PARENT_SCOPE)
endfunction()

# The default lockfile of <target>: <target>.ciq.lock in this source folder,
# so that two tuned targets of one folder never share one. An older
# ciq.lock there is still read unless it names another target (one that
# cannot be read is taken, so that its error is reported).
function(_ciq_default_lockfile out target)
  set(lock "${CMAKE_CURRENT_SOURCE_DIR}/${target}.ciq.lock")
  set(old "${CMAKE_CURRENT_SOURCE_DIR}/ciq.lock")
  if(NOT EXISTS "${lock}" AND EXISTS "${old}")
    file(READ "${old}" json)
    string(JSON old_target ERROR_VARIABLE err GET "${json}" target)
    if(err OR old_target STREQUAL target)
      set(lock "${old}")
    endif()
  endif()
  set(${out} "${lock}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------------------
# ciq_tune
# ---------------------------------------------------------------------------

# The text of <build>/ciq/<target>/ciq.yaml (docs/config.md) from ciq_tune's
# parsed arguments (ARG_* in the caller's scope).
macro(_ciq_tune_yaml out)
  _ciq_yaml_scalar(_y_target "${target}" 0)
  _ciq_yaml_scalar(_y_build "${CMAKE_BINARY_DIR}" 0)
  _ciq_yaml_scalar(_y_lock "${lockfile}" 0)
  string(CONCAT ${out} "# Written by ciq_tune(${target}) in ${CMAKE_CURRENT_LIST_FILE}.\n"
             "# Change the ciq_tune() call, not this file: the next configure rewrites it.\n"
             "target: ${_y_target}\nbuild_dir: ${_y_build}\nlockfile: ${_y_lock}\n")
  if(_ciq_config)
    _ciq_yaml_scalar(_y_cfg "${_ciq_config}" 0)
    string(APPEND ${out} "config: ${_y_cfg}\n")
  endif()
  if(tune_targets)
    _ciq_yaml_list(_y "tune_targets" 0 ${tune_targets})
    string(APPEND ${out} "${_y}")
  endif()
  if(ARG_TUNE_ARCHITECTURES)
    # "90" as in CUDA_ARCHITECTURES, or "sm_90".
    list(TRANSFORM ARG_TUNE_ARCHITECTURES REPLACE "^([0-9]+[af]?)(-real)?$" "sm_\\1" OUTPUT_VARIABLE _y_arches)
    _ciq_yaml_list(_y "tune_architectures" 0 ${_y_arches})
    string(APPEND ${out} "${_y}")
  endif()
  if(ARG_NARROW_ARCHITECTURES)
    string(APPEND ${out} "narrow_architectures: true\n")
  endif()
  if(DEFINED ARG_KERNEL_CONTROLS)
    # Per-kernel controls (docs/search-space.md): on, off or auto.
    if(NOT ARG_KERNEL_CONTROLS MATCHES "^(on|off|auto|ON|OFF|AUTO)$")
      _ciq_fail("${fn}" "KERNEL_CONTROLS '${ARG_KERNEL_CONTROLS}' is not one of on, off, auto")
    endif()
    string(TOLOWER "${ARG_KERNEL_CONTROLS}" _y_kc)
    set(_y_kmap "")
    if(DEFINED ARG_KERNELS AND NOT kernel_time)
      # KERNELS picks the kernels that get controls (with kernel_time_ms it
      # picks the timed kernels, and those get controls too).
      _ciq_yaml_scalar(_y "${ARG_KERNELS}" 2)
      string(APPEND _y_kmap "  kernels: ${_y}\n")
    endif()
    if(ARG_KERNEL_DIRECTIVES)
      # Which directives are searched (kernel_controls.directives), e.g.
      # maxnreg minnctapersm without smem_spilling, whose spills go to shared
      # memory, which ptxas does not count as spill bytes.
      _ciq_yaml_list(_y "directives" 2 ${ARG_KERNEL_DIRECTIVES})
      string(APPEND _y_kmap "${_y}")
    endif()
    if(_y_kmap)
      string(APPEND ${out} "kernel_controls:\n  mode: ${_y_kc}\n${_y_kmap}")
    else()
      string(APPEND ${out} "kernel_controls: ${_y_kc}\n")
    endif()
  endif()
  string(APPEND ${out} "objectives:\n")
  foreach(_m IN LISTS metrics)
    set(_dir "")
    if(_m MATCHES "^(.+):(minimize|maximize)$")
      set(_m "${CMAKE_MATCH_1}")
      set(_dir "${CMAKE_MATCH_2}")
    endif()
    _ciq_yaml_scalar(_y "${_m}" 4)
    string(APPEND ${out} "  - metric: ${_y}\n")
    if(_dir)
      string(APPEND ${out} "    direction: ${_dir}\n")
    endif()
  endforeach()
  if(benchmark)
    string(APPEND ${out} "benchmark:\n")
    _ciq_yaml_list(_y "command" 2 ${benchmark})
    string(APPEND ${out} "${_y}")
    _ciq_yaml_scalar(_y_wd "${CMAKE_BINARY_DIR}" 2)
    string(APPEND ${out} "  working_dir: ${_y_wd}\n")
    # The project's shared libraries tuned here (the target or TUNE_TARGETS,
    # SHARED or MODULE) are loaded by the benchmark from the build tree:
    # each program copy carries its build's (benchmark.artifacts), or every
    # copy would load the last candidate's.
    set(_y_libs "")
    foreach(_t ${target} ${tune_targets})
      get_target_property(_y_type ${_t} TYPE)
      if(_y_type STREQUAL "SHARED_LIBRARY" OR _y_type STREQUAL "MODULE_LIBRARY")
        list(APPEND _y_libs "$<TARGET_FILE:${_t}>")
      endif()
    endforeach()
    if(_y_libs)
      _ciq_yaml_list(_y "artifacts" 2 ${_y_libs})
      string(APPEND ${out} "${_y}")
    endif()
    foreach(_k warmup repeats timeout_s)
      if(NOT "${_bench_${_k}}" STREQUAL "")
        string(APPEND ${out} "  ${_k}: ${_bench_${_k}}\n")
      endif()
    endforeach()
    if(kernel_time)
      string(APPEND ${out} "  metric:\n    kernel_time: true\n")
      if(DEFINED ARG_KERNELS)
        _ciq_yaml_scalar(_y "${ARG_KERNELS}" 2)
        string(APPEND ${out} "  kernels: ${_y}\n")
      endif()
    else()
      _ciq_yaml_scalar(_y "${metric_regex}" 4)
      string(APPEND ${out} "  metric:\n    regex: ${_y}\n")
    endif()
    if(DEFINED ARG_UNIT)
      _ciq_yaml_scalar(_y "${ARG_UNIT}" 4)
      string(APPEND ${out} "    unit: ${_y}\n")
    endif()
    if(DEFINED ARG_SCALE)
      string(APPEND ${out} "    scale: ${ARG_SCALE}\n")
    endif()
    if(ARG_COMPARE)
      # COMPARE: every number of the output is checked against the baseline's
      # (docs/config.md, "Output comparison"); CORRECTNESS, if given, is the
      # check whose stdout or file is compared.
      string(APPEND ${out} "  correctness:\n")
      if(correctness)
        _ciq_yaml_list(_y "command" 4 ${correctness})
        string(APPEND ${out} "${_y}")
      endif()
      _ciq_yaml_scalar(_y "${ARG_COMPARE}" 4)
      string(APPEND ${out} "    compare: ${_y}\n")
      foreach(_k rtol atol)
        string(TOUPPER ${_k} _K)
        if(DEFINED ARG_${_K})
          string(APPEND ${out} "    ${_k}: ${ARG_${_K}}\n")
        endif()
      endforeach()
    elseif(correctness)
      _ciq_yaml_list(_y "correctness" 2 ${correctness})
      string(APPEND ${out} "${_y}")
    endif()
    _ciq_yaml_cases(_y)
    string(APPEND ${out} "${_y}")
  endif()
  set(_search "")
  foreach(_k strategy pool_size generations seed max_evaluations max_minutes)
    if(NOT "${_search_${_k}}" STREQUAL "")
      string(APPEND _search "  ${_k}: ${_search_${_k}}\n")
    endif()
  endforeach()
  if(_search)
    string(APPEND ${out} "search:\n${_search}")
  endif()
  # Without SPACE the engine's default space applies (docs/config.md, "The
  # default space"): ptxas-13.0-default, and nvcc's numerics controls too
  # when COMPARE checks the output.
  if(spaces)
    string(APPEND ${out} "space:\n")
    _ciq_yaml_list(_y "include" 2 ${spaces})
    string(APPEND ${out} "${_y}")
  endif()
  if(ARG_CONSTRAINT)
    _ciq_yaml_list(_y "constraints" 0 ${ARG_CONSTRAINT})
    string(APPEND ${out} "${_y}")
  endif()
endmacro()

# CASE <name> [ARGS <arg>...] [ENV <VAR=value>...], repeated (benchmark.cases,
# docs/cmake.md): taken out of ciq_tune's arguments before
# cmake_parse_arguments, which cannot repeat a group. Sets _ciq_cases (the
# names, in order), _ciq_case_args_<name> and _ciq_case_env_<name>, and
# `rest_out` (the other arguments).
function(_ciq_split_cases rest_out fn keywords)
  set(rest "")
  set(names "")
  set(mode "")
  foreach(tok IN LISTS ARGN)
    if(tok STREQUAL "CASE")
      set(mode name)
    elseif(mode STREQUAL "name")
      if(NOT tok MATCHES "^[A-Za-z0-9_.+-]+$")
        _ciq_fail("${fn}" "CASE '${tok}': a case name is letters, digits, '_', '.', '+' or '-'")
      elseif(tok IN_LIST names)
        _ciq_fail("${fn}" "CASE '${tok}' is given twice; case names are unique")
      endif()
      list(APPEND names "${tok}")
      set(cur "${tok}")
      set(args_${cur} "")
      set(env_${cur} "")
      set(mode case)
    elseif(mode AND (tok STREQUAL "ARGS" OR tok STREQUAL "ENV"))
      string(TOLOWER "${tok}" mode)
    elseif(tok IN_LIST keywords)
      set(mode "")
      list(APPEND rest "${tok}")
    elseif(mode STREQUAL "args")
      list(APPEND args_${cur} "${tok}")
    elseif(mode STREQUAL "env")
      if(NOT tok MATCHES "^[A-Za-z_][A-Za-z0-9_]*=")
        _ciq_fail("${fn}" "CASE ${cur} ENV '${tok}': expected VAR=value")
      endif()
      list(APPEND env_${cur} "${tok}")
    elseif(mode STREQUAL "case")
      _ciq_fail("${fn}" "CASE ${cur}: expected ARGS or ENV after the case name, got '${tok}'")
    else()
      list(APPEND rest "${tok}")
    endif()
  endforeach()
  if(mode STREQUAL "name")
    _ciq_fail("${fn}" "CASE given without a name (CASE <name> [ARGS <arg>...] [ENV <VAR=value>...])")
  endif()
  set(_ciq_cases "${names}" PARENT_SCOPE)
  foreach(n IN LISTS names)
    set(_ciq_case_args_${n} "${args_${n}}" PARENT_SCOPE)
    set(_ciq_case_env_${n} "${env_${n}}" PARENT_SCOPE)
  endforeach()
  set(${rest_out} "${rest}" PARENT_SCOPE)
endfunction()

# benchmark.cases and max_regression_percent under benchmark: in ciq.yaml.
function(_ciq_yaml_cases out)
  set(text "")
  if(_ciq_cases)
    string(APPEND text "  cases:\n")
    foreach(c IN LISTS _ciq_cases)
      string(APPEND text "    - name: '${c}'\n")
      if(_ciq_case_args_${c})
        _ciq_yaml_list(y "args" 6 ${_ciq_case_args_${c}})
        string(APPEND text "${y}")
      endif()
      if(_ciq_case_env_${c})
        string(APPEND text "      env:\n")
        foreach(kv IN LISTS _ciq_case_env_${c})
          string(REGEX MATCH "^([^=]+)=(.*)$" _ "${kv}")
          _ciq_yaml_scalar(y "${CMAKE_MATCH_2}" 8)
          string(APPEND text "        ${CMAKE_MATCH_1}: ${y}\n")
        endforeach()
      endif()
    endforeach()
  endif()
  if(DEFINED ARG_MAX_REGRESSION)
    string(APPEND text "  max_regression_percent: ${ARG_MAX_REGRESSION}\n")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(ciq_tune target)
  set(fn "ciq_tune(${target})")
  set(one CONFIG METRIC_REGEX KERNELS UNIT SCALE WARMUP REPEATS RUN_TIMEOUT BUDGET TIME POOL_SIZE GENERATIONS SEED
          STRATEGY LOCKFILE COMPARE RTOL ATOL KERNEL_CONTROLS)
  set(multi METRIC BENCHMARK CORRECTNESS SPACE TUNE_TARGETS TUNE_ARCHITECTURES CONSTRAINT KERNEL_DIRECTIVES)
  set(_ciq_cases "")
  if("CASE" IN_LIST ARGN)
    _ciq_split_cases(rest "${fn}" "NARROW_ARCHITECTURES;CASE;MAX_REGRESSION;${one};${multi}" ${ARGN})
    cmake_parse_arguments(ARG "NARROW_ARCHITECTURES" "${one};MAX_REGRESSION" "${multi}" ${rest})
  else()
    cmake_parse_arguments(PARSE_ARGV 1 ARG "NARROW_ARCHITECTURES" "${one};MAX_REGRESSION" "${multi}")
  endif()
  _ciq_check_parsed("${fn}" "NARROW_ARCHITECTURES;${one};${multi};CASE;MAX_REGRESSION")
  _ciq_real_target(target "${fn}" "${target}")
  if(TARGET "ciq-tune-${target}")
    _ciq_fail("${fn}" "ciq_tune() was already called for '${target}'; call it once per target")
  endif()

  set(tune_targets "")
  foreach(t IN LISTS ARG_TUNE_TARGETS)
    _ciq_real_target(real "${fn}" "${t}")
    list(APPEND tune_targets "${real}")
  endforeach()
  list(REMOVE_DUPLICATES tune_targets)
  list(REMOVE_ITEM tune_targets "${target}")

  _ciq_default_lockfile(lockfile "${target}")
  if(ARG_LOCKFILE)
    get_filename_component(lockfile "${ARG_LOCKFILE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()

  if(ARG_CONFIG)
    # A hand-written ciq.yaml is the whole configuration: the engine reads it
    # as is, so arguments that would write one have no place beside it.
    foreach(k METRIC_REGEX KERNELS WARMUP REPEATS RUN_TIMEOUT BUDGET TIME POOL_SIZE GENERATIONS SEED STRATEGY
              LOCKFILE METRIC BENCHMARK CORRECTNESS COMPARE RTOL ATOL SPACE TUNE_ARCHITECTURES CONSTRAINT
              MAX_REGRESSION KERNEL_CONTROLS KERNEL_DIRECTIVES)
      if(DEFINED ARG_${k})
        _ciq_fail("${fn}" "${k} cannot be combined with CONFIG ${ARG_CONFIG}: set it in that file instead")
      endif()
    endforeach()
    if(_ciq_cases)
      _ciq_fail("${fn}" "CASE cannot be combined with CONFIG ${ARG_CONFIG}: list the cases under benchmark.cases in that file instead")
    endif()
    if(ARG_NARROW_ARCHITECTURES)
      _ciq_fail("${fn}" "NARROW_ARCHITECTURES cannot be combined with CONFIG ${ARG_CONFIG}: set narrow_architectures: true in that file instead")
    endif()
    get_filename_component(yaml "${ARG_CONFIG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${yaml}")
      _ciq_fail("${fn}" "CONFIG ${yaml} does not exist")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${yaml}")
    _ciq_config_lockfile(lockfile "${yaml}" "${lockfile}")
  else()
    set(yaml "${CMAKE_BINARY_DIR}/ciq/${target}/ciq.yaml")
    _ciq_tune_generate("${fn}" "${target}" "${yaml}" "${lockfile}" "${tune_targets}")
  endif()

  # What ciq_apply_lock(<target>) reuses: the lockfile and the targets tuned with it.
  set_property(TARGET ${target} PROPERTY CIQ_LOCKFILE "${lockfile}")
  set_property(TARGET ${target} PROPERTY CIQ_TUNE_TARGETS "${tune_targets}")

  foreach(t IN LISTS target tune_targets)
    _ciq_check_findcuda("${fn}" "${t}")
  endforeach()

  # The wrapper goes first in the launcher chain of the tuned targets only;
  # done at the end of this directory, after the project set its own launchers.
  foreach(t IN LISTS target tune_targets)
    set_property(TARGET ${t} PROPERTY EXPORT_COMPILE_COMMANDS ON)
    _ciq_defer(_ciq_chain_launcher "${t}")
  endforeach()

  _ciq_add_engine_targets("${target}" "${yaml}")
endfunction()

# Legacy FindCUDA (cuda_add_executable, cuda_add_library) compiles .cu files
# with custom commands, whose objects (<t>_generated_<name>.cu.o) it adds to
# the target as sources: compiler launchers never run there. It works when
# CUDA_NVCC_EXECUTABLE is the nvcc stand-in (a link named nvcc to ciq-ptxas).
function(_ciq_findcuda_objects out t)
  get_target_property(sources ${t} SOURCES)
  set(generated "")
  foreach(s IN LISTS sources)
    if(s MATCHES "${t}_generated_[^/]*\\.cu\\.(o|obj)$")
      list(APPEND generated "${s}")
    endif()
  endforeach()
  set(${out} "${generated}" PARENT_SCOPE)
endfunction()

function(_ciq_check_findcuda fn t)
  _ciq_findcuda_objects(generated ${t})
  if(NOT generated)
    return()
  endif()
  get_property(wrapper GLOBAL PROPERTY _CIQ_PTXAS_EXECUTABLE)
  get_filename_component(wrapper_real "${wrapper}" REALPATH)
  get_filename_component(nvcc_real "${CUDA_NVCC_EXECUTABLE}" REALPATH)
  if(CUDA_NVCC_EXECUTABLE AND nvcc_real STREQUAL wrapper_real)
    message(STATUS "ciq: ${t}: FindCUDA compiles its CUDA sources through the nvcc stand-in ${CUDA_NVCC_EXECUTABLE}")
    return()
  endif()
  message(WARNING " ${fn}: ${t} compiles its CUDA sources with legacy FindCUDA (cuda_add_executable, "
    "cuda_add_library), whose custom commands bypass compiler launchers: no candidate would reach nvcc. "
    "Either use CMake's CUDA language (project(... LANGUAGES CUDA), add_executable), or configure again "
    "with -DCUDA_NVCC_EXECUTABLE=<a link named nvcc to ${wrapper}> (FindCUDA resets it on the configure "
    "that sets CUDA_TOOLKIT_ROOT_DIR; docs/cmake.md, \"Legacy FindCUDA\")")
endfunction()

# METRIC names checked at configure against the engine's table, as ciq tune
# would check them (parseObjective, engine/config/Config.cpp): without a BENCHMARK
# only a compile metric can be scored; with one, any name may be what the
# benchmark prints.
function(_ciq_check_metrics fn benchmark)
  list(JOIN _CIQ_COMPILE_METRICS ", " compile)
  foreach(m IN LISTS ARGN)
    if(m MATCHES "^(.*):(.*)$")
      set(m "${CMAKE_MATCH_1}")
      set(dir "${CMAKE_MATCH_2}")
      if(NOT dir MATCHES "^(minimize|maximize)$")
        _ciq_fail("${fn}" "METRIC '${m}:${dir}': the direction after ':' is minimize or maximize")
      endif()
    endif()
    # Every value after METRIC up to the next keyword is read as a metric:
    # a misspelt keyword (BUDGT 8) and its value land here.
    set(misspelt "")
    if(m MATCHES "^[0-9.]+$")
      set(misspelt "a number is no metric name")
    elseif(NOT benchmark AND m MATCHES "^[A-Z][A-Z0-9_]*$")
      set(misspelt "no compile metric is in capitals")
    endif()
    if(misspelt)
      string(REPLACE ";" " " keywords "${one};${multi}")
      _ciq_fail("${fn}" "METRIC '${m}': ${misspelt}; a misspelt keyword after METRIC is read as a metric name (the keywords are: ${keywords})")
    endif()
    if(benchmark OR m IN_LIST _CIQ_COMPILE_METRICS)
      continue()
    elseif(m IN_LIST _CIQ_BENCHMARK_METRICS)
      _ciq_fail("${fn}" "METRIC '${m}' is measured by running a benchmark: add BENCHMARK <command>, or use a compile metric (${compile})")
    else()
      _ciq_fail("${fn}" "METRIC '${m}' is not a compile metric; use one of ${compile}, or add BENCHMARK <command> for a metric the benchmark prints")
    endif()
  endforeach()
endfunction()

# Writes <build>/ciq/<target>/ciq.yaml from ciq_tune's arguments (ARG_*).
macro(_ciq_tune_generate fn target yaml lockfile tune_targets)
  set(benchmark "")
  if(ARG_BENCHMARK)
    _ciq_command(benchmark ${ARG_BENCHMARK})
  endif()
  set(correctness "")
  if(ARG_CORRECTNESS)
    _ciq_command(correctness ${ARG_CORRECTNESS})
  endif()
  if(NOT benchmark)
    foreach(k METRIC_REGEX KERNELS UNIT SCALE WARMUP REPEATS RUN_TIMEOUT CORRECTNESS COMPARE RTOL ATOL MAX_REGRESSION)
      if(DEFINED ARG_${k})
        _ciq_fail("${fn}" "${k} needs a BENCHMARK command to apply to")
      endif()
    endforeach()
    if(_ciq_cases)
      _ciq_fail("${fn}" "CASE needs a BENCHMARK command whose arguments the cases extend")
    endif()
  endif()
  if(DEFINED ARG_COMPARE AND ARG_COMPARE STREQUAL "")
    _ciq_fail("${fn}" "COMPARE needs stdout or the path of a file the benchmark (or CORRECTNESS) writes")
  endif()
  foreach(k RTOL ATOL)
    if(DEFINED ARG_${k} AND NOT DEFINED ARG_COMPARE)
      _ciq_fail("${fn}" "${k} applies to an output comparison; add COMPARE stdout or COMPARE <file>")
    elseif(DEFINED ARG_${k} AND NOT ARG_${k} MATCHES "^[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$")
      _ciq_fail("${fn}" "${k} '${ARG_${k}}' is not a non-negative number (e.g. 1e-5)")
    endif()
  endforeach()
  # UNIT: what the benchmark's number is in (s, ms, us, GB/s); SCALE: a factor
  # applied to it first. Without UNIT, a METRIC other than time_ms is labelled
  # by its own name, never "ms".
  if(DEFINED ARG_SCALE AND NOT ARG_SCALE MATCHES "^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$")
    _ciq_fail("${fn}" "SCALE '${ARG_SCALE}' is not a number (e.g. 1e3 to turn seconds into ms)")
  endif()
  if(DEFINED ARG_UNIT AND ARG_UNIT STREQUAL "")
    _ciq_fail("${fn}" "UNIT is empty; give the unit the benchmark prints (s, ms, us, GB/s, ...)")
  endif()

  set(metrics "${ARG_METRIC}")
  if(NOT metrics)
    if(benchmark)
      set(metrics time_ms)
    else()
      set(metrics spill_bytes registers)
    endif()
  endif()
  _ciq_check_metrics("${fn}" "${benchmark}" ${metrics})
  set(metric_regex "time_ms=([0-9.eE+-]+)")
  if(DEFINED ARG_METRIC_REGEX)
    set(metric_regex "${ARG_METRIC_REGEX}")
  endif()
  # METRIC kernel_time_ms: ciq times the kernels itself (CUPTI), nothing is
  # parsed; KERNELS picks them by name (a regex, all kernels without it).
  set(kernel_time OFF)
  foreach(_m IN LISTS metrics)
    if(_m MATCHES "^kernel_time_ms(:.*)?$")
      set(kernel_time ON)
    endif()
  endforeach()
  foreach(k METRIC_REGEX UNIT SCALE)
    if(kernel_time AND DEFINED ARG_${k})
      _ciq_fail("${fn}" "${k} does not apply to METRIC kernel_time_ms, which ciq measures in ms itself; pick kernels with KERNELS <regex>")
    endif()
  endforeach()
  if(DEFINED ARG_KERNEL_DIRECTIVES AND NOT DEFINED ARG_KERNEL_CONTROLS)
    _ciq_fail("${fn}" "KERNEL_DIRECTIVES applies to KERNEL_CONTROLS on|auto (the per-kernel directives searched)")
  endif()
  if(DEFINED ARG_KERNELS AND NOT kernel_time AND NOT DEFINED ARG_KERNEL_CONTROLS)
    _ciq_fail("${fn}" "KERNELS applies to METRIC kernel_time_ms (the GPU time of the kernels it matches) or to KERNEL_CONTROLS (the kernels that get per-kernel controls)")
  endif()

  foreach(k WARMUP REPEATS)
    string(TOLOWER ${k} key)
    set(_bench_${key} "${ARG_${k}}")
    # REPEATS adaptive: measure until the noise target (docs/config.md)
    if(k STREQUAL "REPEATS" AND DEFINED ARG_${k} AND NOT ARG_${k} MATCHES "^([0-9]+|adaptive)$")
      _ciq_fail("${fn}" "REPEATS '${ARG_${k}}' is neither a non-negative integer nor adaptive")
    elseif(k STREQUAL "REPEATS" AND DEFINED ARG_${k} AND NOT ARG_${k} STREQUAL "adaptive")
      _ciq_require_uint("${fn}" ${k} "${ARG_${k}}" 1 100000)
    elseif(DEFINED ARG_${k} AND NOT k STREQUAL "REPEATS")
      _ciq_require_uint("${fn}" ${k} "${ARG_${k}}" 0 1000)
    endif()
  endforeach()
  set(_bench_timeout_s "${ARG_RUN_TIMEOUT}")
  if(DEFINED ARG_MAX_REGRESSION AND NOT ARG_MAX_REGRESSION MATCHES "^[0-9]+(\\.[0-9]+)?$")
    _ciq_fail("${fn}" "MAX_REGRESSION '${ARG_MAX_REGRESSION}' is not a percentage (e.g. 1 or 2.5)")
  elseif(DEFINED ARG_MAX_REGRESSION AND NOT _ciq_cases)
    _ciq_fail("${fn}" "MAX_REGRESSION applies to cases only: add CASE <name> ARGS ... (one per input)")
  endif()
  if(DEFINED ARG_RUN_TIMEOUT AND NOT ARG_RUN_TIMEOUT MATCHES "^[0-9]+(\\.[0-9]+)?$")
    _ciq_fail("${fn}" "RUN_TIMEOUT '${ARG_RUN_TIMEOUT}' is not a number of seconds")
  endif()

  # TIME 10m (90s, 1.5h): the time budget of the whole tune, written as
  # search.max_minutes with six decimals (CMake's arithmetic is integer).
  set(_search_max_minutes "")
  if(DEFINED ARG_TIME)
    if(NOT ARG_TIME MATCHES "^([0-9]+)(\\.([0-9]+))?([smh])$")
      _ciq_fail("${fn}" "TIME '${ARG_TIME}' is not a duration; expected a positive number and a unit, s, m or h (90s, 10m, 1.5h)")
    endif()
    set(_whole "${CMAKE_MATCH_1}")
    string(SUBSTRING "${CMAKE_MATCH_3}000" 0 3 _milli)
    set(_unit_s 1)
    if(CMAKE_MATCH_4 STREQUAL "m")
      set(_unit_s 60)
    elseif(CMAKE_MATCH_4 STREQUAL "h")
      set(_unit_s 3600)
    endif()
    string(REGEX REPLACE "^0+([0-9])" "\\1" _milli "${_milli}")
    string(REGEX REPLACE "^0+([0-9])" "\\1" _whole "${_whole}")
    # The same bounds as ciq tune --time (engine/search/TimeBudget.h): 1s to
    # 1000h; a number too long for CMake's 64-bit arithmetic is over them.
    string(LENGTH "${_whole}" _digits)
    set(_ms 3600000001)
    if(_digits LESS 10)
      math(EXPR _ms "(${_whole} * 1000 + ${_milli}) * ${_unit_s}")
    endif()
    if(_ms LESS 1000)
      _ciq_fail("${fn}" "TIME '${ARG_TIME}' is under 1s, less than any tune can use; give at least 1s (90s, 10m, 1.5h)")
    elseif(_ms GREATER 3600000000)
      _ciq_fail("${fn}" "TIME '${ARG_TIME}' is over 1000h; give at most 1000h, or no TIME (the binary budget alone)")
    endif()
    # Six decimals, rounded up: TIME 1s is 0.016667 minutes, never under the
    # 1s search.max_minutes takes (three decimals wrote 0.016, 0.96 s).
    math(EXPR _min_whole "${_ms} / 60000")
    math(EXPR _min_frac "((${_ms} % 60000) * 1000000 + 59999) / 60000 + 1000000")
    if(_min_frac GREATER_EQUAL 2000000)
      math(EXPR _min_whole "${_min_whole} + 1")
      set(_min_frac 1000000)
    endif()
    string(SUBSTRING "${_min_frac}" 1 6 _min_frac)
    set(_search_max_minutes "${_min_whole}.${_min_frac}")
  endif()
  foreach(pair BUDGET:max_evaluations:0:10000000 POOL_SIZE:pool_size:1:100000 GENERATIONS:generations:1:100000
               SEED:seed:0:9223372036854775807)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 k)
    list(GET pair 1 key)
    list(GET pair 2 min)
    list(GET pair 3 max)
    set(_search_${key} "${ARG_${k}}")
    if(DEFINED ARG_${k})
      _ciq_require_uint("${fn}" ${k} "${ARG_${k}}" ${min} ${max})
    endif()
  endforeach()
  # What the yaml writer turns into sm_XX (engine/config/Config.cpp reads sm_[0-9]+[af]?).
  foreach(a IN LISTS ARG_TUNE_ARCHITECTURES)
    if(NOT a MATCHES "^(sm_)?[0-9]+[af]?$" AND NOT a MATCHES "^[0-9]+[af]?-real$")
      _ciq_fail("${fn}" "TUNE_ARCHITECTURES '${a}' is not an SASS architecture; write it as 90 or sm_90 (sm_90a, sm_100f)")
    endif()
  endforeach()
  set(_search_strategy "${ARG_STRATEGY}")
  if(DEFINED ARG_STRATEGY AND NOT ARG_STRATEGY IN_LIST _CIQ_STRATEGIES)
    list(JOIN _CIQ_STRATEGIES ", " _names)
    _ciq_fail("${fn}" "STRATEGY '${ARG_STRATEGY}' is not one of ${_names}")
  endif()

  # A search space is a built-in name or a YAML file (relative to this directory).
  set(spaces "")
  foreach(s IN LISTS ARG_SPACE)
    if(s MATCHES "\\.ya?ml$" OR EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${s}")
      get_filename_component(s "${s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      if(NOT EXISTS "${s}")
        _ciq_fail("${fn}" "SPACE file ${s} does not exist")
      endif()
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${s}")
    endif()
    list(APPEND spaces "${s}")
  endforeach()

  get_property(_multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  set(_ciq_config "")
  set(_condition 1)
  if(_multi)
    _ciq_tune_config(_ciq_config)
    # Generator expressions in the commands may differ per configuration; the
    # file is written for the configuration the tuning run builds.
    set(_condition "$<CONFIG:${_ciq_config}>")
  endif()
  _ciq_tune_yaml(_yaml_text)
  file(GENERATE OUTPUT "${yaml}" CONTENT "${_yaml_text}" CONDITION "${_condition}" TARGET ${target})
endmacro()

# The `lockfile:` of a hand-written ciq.yaml (relative to its folder), or `default`.
# A plain top-level scalar is all ciq_apply_lock needs; the engine parses the rest.
function(_ciq_config_lockfile out yaml default)
  file(STRINGS "${yaml}" lines REGEX "^lockfile:")
  set(lock "${default}")
  if(lines MATCHES "^lockfile:[ \t]*['\"]?([^'\"#]*[^'\"# \t])")
    get_filename_component(dir "${yaml}" DIRECTORY)
    get_filename_component(lock "${CMAKE_MATCH_1}" ABSOLUTE BASE_DIR "${dir}")
  endif()
  set(${out} "${lock}" PARENT_SCOPE)
endfunction()

# The launcher chain <t> has (its property, else CMAKE_CUDA_COMPILER_LAUNCHER)
# in `out`, and in `out_first` whether ciq-ptxas is already its first entry.
function(_ciq_target_launcher out out_first t)
  get_property(wrapper GLOBAL PROPERTY _CIQ_PTXAS_EXECUTABLE)
  # A RULE_LAUNCH_COMPILE launcher (global, directory or target: ggml sets
  # ccache there) runs in front of every compiler launcher, so a cache would
  # take ciq-ptxas for the compiler. ciq-ptxas takes the outermost place
  # instead, for this target only (its non-CUDA compiles pass straight through).
  get_target_property(rule ${t} RULE_LAUNCH_COMPILE)
  if(rule)
    separate_arguments(rule_words UNIX_COMMAND "${rule}")
    list(GET rule_words 0 first)
    if(NOT first STREQUAL wrapper)
      set(front "${wrapper}")
      if(wrapper MATCHES "[ \t]")
        set(front "\"${wrapper}\"")
      endif()
      set_property(TARGET ${t} PROPERTY RULE_LAUNCH_COMPILE "${front} ${rule}")
      message(STATUS "ciq: ${t}: RULE_LAUNCH_COMPILE '${rule}' runs before the compiler launcher; "
        "ciq-ptxas goes in front of it for ${t}")
    endif()
    return()
  endif()
  get_target_property(launcher ${t} CUDA_COMPILER_LAUNCHER)
  if(NOT launcher)
    set(launcher "${CMAKE_CUDA_COMPILER_LAUNCHER}")
  endif()
  set(first_is_wrapper OFF)
  if(launcher)
    list(GET launcher 0 first)
    if(first STREQUAL wrapper)
      set(first_is_wrapper ON)
    endif()
  endif()
  set(${out} "${launcher}" PARENT_SCOPE)
  set(${out_first} ${first_is_wrapper} PARENT_SCOPE)
endfunction()

# CUDA_COMPILER_LAUNCHER = ciq-ptxas, then whatever launcher the target
# already had (its property, else CMAKE_CUDA_COMPILER_LAUNCHER: ccache, sccache).
function(_ciq_chain_launcher t)
  get_property(wrapper GLOBAL PROPERTY _CIQ_PTXAS_EXECUTABLE)
  _ciq_target_launcher(launcher first_is_wrapper ${t})
  if(first_is_wrapper)
    return()  # a second ciq_tune() naming this target as TUNE_TARGETS
  endif()
  set_property(TARGET ${t} PROPERTY CUDA_COMPILER_LAUNCHER "${wrapper}" ${launcher})
endfunction()

# ciq-tune-<target>, ciq-validate-<target>, ciq-canary-<target>. They run
# only the engine and do not depend on <target>: the engine builds it itself,
# once per candidate, with `cmake --build` (a nested build of this tree, which
# Ninja and Make allow while the outer one waits on this command).
function(_ciq_add_engine_targets target yaml)
  get_property(ciq GLOBAL PROPERTY _CIQ_EXECUTABLE)
  _ciq_lock_stamp(stamp)
  add_custom_target(ciq-tune-${target}
    COMMAND "${ciq}" tune --config "${yaml}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "ciq: tuning the compilers for ${target} (${yaml})"
    USES_TERMINAL VERBATIM)
  # Starts over, whatever an earlier tune left (an unfinished search that a
  # changed ciq_tune() cannot resume): `ciq tune --fresh` (issue 41 item 6).
  add_custom_target(ciq-tune-fresh-${target}
    COMMAND "${ciq}" tune --fresh --config "${yaml}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "ciq: tuning the compilers for ${target} from scratch (${yaml})"
    USES_TERMINAL VERBATIM)
  add_custom_target(ciq-validate-${target}
    COMMAND "${ciq}" validate --config "${yaml}"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "ciq: validating the lock of ${target} against the baseline"
    USES_TERMINAL VERBATIM)
  add_custom_target(ciq-canary-${target}
    COMMAND "${ciq}" canary --config "${yaml}"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "ciq: checking that compiler controls reach ${target}"
    USES_TERMINAL VERBATIM)
endfunction()

# ---------------------------------------------------------------------------
# ciq_apply_lock
# ---------------------------------------------------------------------------

function(ciq_apply_lock target)
  set(fn "ciq_apply_lock(${target})")
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "LOCKFILE;POLICY" "")
  _ciq_check_parsed("${fn}" "LOCKFILE;POLICY")
  _ciq_real_target(target "${fn}" "${target}")
  set(policy "${CIQ_LOCK_POLICY}")
  if(ARG_POLICY)
    set(policy "${ARG_POLICY}")
  endif()
  if(NOT policy MATCHES "^(error|warn)$")
    _ciq_fail("${fn}" "POLICY '${policy}' is not one of error, warn")
  endif()

  get_target_property(lockfile ${target} CIQ_LOCKFILE)
  if(ARG_LOCKFILE)
    get_filename_component(lockfile "${ARG_LOCKFILE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  elseif(NOT lockfile)
    _ciq_default_lockfile(lockfile "${target}")
  endif()

  if(NOT CIQ_APPLY_LOCKS)
    message(STATUS "ciq: ${target}: CIQ_APPLY_LOCKS is OFF, not applying ${lockfile}")
    return()
  endif()
  if(NOT EXISTS "${lockfile}")
    if(TARGET ciq-tune-${target})
      _ciq_shell_quote(bin "${CMAKE_BINARY_DIR}")
      set(how "run `cmake --build ${bin} --target ciq-tune-${target}` to create it")
    else()
      set(how "tune with `ciq tune` to create it")
    endif()
    message(STATUS "ciq: ${target}: no lockfile ${lockfile} yet, building with the compiler defaults; ${how}")
    # A tune through ciq-tune-<target> touches the stamp: the next build then
    # reconfigures and applies the new lock.
    _ciq_lock_stamp(stamp)
    if(NOT EXISTS "${stamp}")
      file(WRITE "${stamp}" "")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${stamp}")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${lockfile}")

  # FindCUDA reads no compile options: the lock would not reach its compiles.
  _ciq_findcuda_objects(generated ${target})
  if(generated)
    _ciq_shell_quote(quoted "${lockfile}")
    message(WARNING " ${fn}: ${target} is compiled by legacy FindCUDA, which reads no compile options, so "
      "the lock cannot be applied here; build with CIQ_LOCK=${quoted} in the environment and "
      "CUDA_NVCC_EXECUTABLE set to the nvcc stand-in (docs/cmake.md, \"Legacy FindCUDA\")")
    return()
  endif()

  # The checks read the target's final CUDA_ARCHITECTURES: run them at the
  # end of this directory.
  get_target_property(tune_targets ${target} CIQ_TUNE_TARGETS)
  if(NOT tune_targets)
    set(tune_targets "")
  endif()
  _ciq_defer(_ciq_apply_lock_now "${target}" "${lockfile}" "${policy}" "${tune_targets}")
endfunction()

# One reason the lock does not apply (a ';' would split a CMake list, so the
# reasons are kept as text, one "  - " line each).
macro(_ciq_problem text)
  string(APPEND problems "\n  - ${text}")
endmacro()

# The elements of ARGN with the characters a generator expression would
# read as its own ('>' and ',') spelled as generator expressions.
function(_ciq_genex_escape out)
  set(escaped "")
  foreach(v IN LISTS ARGN)
    string(REPLACE ">" "$<ANGLE-R>" v "${v}")
    string(REPLACE "," "$<COMMA>" v "${v}")
    list(APPEND escaped "${v}")
  endforeach()
  set(${out} "${escaped}" PARENT_SCOPE)
endfunction()

# The architectures <target> compiles for, or "" when CMake leaves the choice to nvcc.
function(_ciq_target_arches out t)
  get_target_property(arches ${t} CUDA_ARCHITECTURES)
  if(arches STREQUAL "all" AND CMAKE_CUDA_ARCHITECTURES_ALL)
    set(arches "${CMAKE_CUDA_ARCHITECTURES_ALL}")
  elseif(arches STREQUAL "all-major" AND CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR)
    set(arches "${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR}")
  elseif(arches STREQUAL "native" AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
    set(arches "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  elseif(NOT arches OR arches MATCHES "^(all|all-major|native)$")
    set(arches "")
  endif()
  set(${out} "${arches}" PARENT_SCOPE)
endfunction()

# "13.0.88" from `ptxas --version` next to the CUDA compiler, once per configure.
function(_ciq_ptxas_version out)
  get_property(v GLOBAL PROPERTY _CIQ_PTXAS_VERSION)
  if(NOT v)
    get_filename_component(nvcc "${CMAKE_CUDA_COMPILER}" REALPATH)
    get_filename_component(bin "${nvcc}" DIRECTORY)
    # A CMAKE_CUDA_COMPILER that is a link to ccache resolves to ccache's
    # folder, which holds no ptxas: the toolkit CMake found behind it does.
    if(NOT EXISTS "${bin}/ptxas" AND EXISTS "${CMAKE_CUDA_COMPILER_TOOLKIT_ROOT}/bin/ptxas")
      set(bin "${CMAKE_CUDA_COMPILER_TOOLKIT_ROOT}/bin")
    endif()
    execute_process(COMMAND "${bin}/ptxas" --version OUTPUT_VARIABLE text ERROR_QUIET
      RESULT_VARIABLE rc)
    set(v "unknown")
    if(rc EQUAL 0 AND text MATCHES "V([0-9]+\\.[0-9]+\\.[0-9]+)")
      set(v "${CMAKE_MATCH_1}")
    endif()
    set_property(GLOBAL PROPERTY _CIQ_PTXAS_VERSION "${v}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Checks the lock against this build and applies it to <target> and the
# targets tuned with it. Every way the lock no longer applies is collected,
# so one message says all that differs.
function(_ciq_apply_lock_now target lockfile policy tune_targets)
  set(fn "ciq_apply_lock(${target})")
  set(problems "")
  # `ciq lock verify --build-dir` reads why a lock was left out (lock.cpp).
  unset(CIQ_LOCK_LEFT_OUT_${target} CACHE)
  _ciq_lock_render("${lockfile}" "${policy}")
  if(problems)
    set(text " ${fn}: ${lockfile} does not apply to this build:${problems}")
    if(policy STREQUAL "warn")
      message(WARNING "${text}\n (POLICY warn: building ${target} with the compiler defaults, without the lock)")
      set(CIQ_LOCK_LEFT_OUT_${target} "POLICY warn" CACHE INTERNAL "ciq_apply_lock() built ${target} without its lock")
      return()
    endif()
    message(FATAL_ERROR "${text}\n (POLICY warn, or -DCIQ_LOCK_POLICY=warn, builds without the lock instead)")
  endif()
  if(skip)
    # Another build configuration (a Debug build of a Release lock): left
    # out whatever the policy, in one line; `ciq lock verify` reads why.
    message(STATUS "ciq: ${target}: ${skip}")
    set(CIQ_LOCK_LEFT_OUT_${target} "build configuration" CACHE INTERNAL "ciq_apply_lock() built ${target} without its lock")
    return()
  endif()

  # A lock that names the targets tuned with it (`tune_targets`) gets them
  # too, when they exist here.
  if(lock_tune_targets)
    foreach(tt IN LISTS lock_tune_targets)
      if(TARGET "${tt}")
        list(APPEND tune_targets "${tt}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES tune_targets)
    list(REMOVE_ITEM tune_targets "${target}")
  endif()
  set(why_wrapper "CUDA_ARCHITECTURES is not a fixed list; applying ${lockfile} (candidate ${candidate}) through ciq-ptxas --lock, which refuses it on a compile for other architectures than the lock's ${lock_arches}")
  if(wrapper_reason)
    set(why_wrapper "${wrapper_reason}; applying ${lockfile} (candidate ${candidate}) through ciq-ptxas --lock, which checks each compile's architectures and -G")
  endif()
  if(NOT through_wrapper)
    _ciq_user_overrides(overridden ${target} "${options}")
    if(overridden)
      set(through_wrapper ON)
      set(why_wrapper "the build's own ${overridden} would reach ptxas after the lock's and win (nvcc passes its own options last), while the tuning run had removed it; applying ${lockfile} (candidate ${candidate}) through ciq-ptxas --lock, which removes it the same way")
    endif()
  endif()
  if(through_wrapper)
    foreach(t IN LISTS target tune_targets)
      _ciq_apply_through_wrapper(${t} "${lockfile}" "${policy}")
    endforeach()
    message(STATUS "ciq: ${target}: ${why_wrapper}")
    return()
  endif()
  _ciq_genex_escape(options_gx ${options})
  _ciq_genex_escape(defines_gx ${defines})
  foreach(t IN LISTS target tune_targets)
    set_property(TARGET ${t} PROPERTY EXPORT_COMPILE_COMMANDS ON)
    if(options)
      target_compile_options(${t} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${options_gx}>")
    endif()
    if(defines)
      target_compile_definitions(${t} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${defines_gx}>")
    endif()
  endforeach()
  set(shown "${options};${defines}")
  list(FILTER shown EXCLUDE REGEX "^$")
  list(JOIN shown " " shown)
  if(NOT shown)
    set(shown "the compiler defaults (the baseline won)")
  endif()
  message(STATUS "ciq: ${target}: applying ${lockfile} (candidate ${candidate}): ${shown}")
endfunction()

# Applies the lock with ciq-ptxas --lock first in <t>'s launcher chain, for a
# target whose architectures only its compile lines know: the wrapper checks
# the SASS architectures of every compile against the lock's and refuses (or,
# POLICY warn, compiles without) a lock frozen for others.
# The build's own -maxrregcount (nvcc's spelling of a ptxas option the lock
# also sets) in the target's or its directory's compile options or in
# CMAKE_CUDA_FLAGS[_<CONFIG>]: nvcc hands it to ptxas after every -Xptxas
# option, so it would override the lock's value. Sets `out` to the option
# found, or "". Runs deferred, when the directory's options are all set.
function(_ciq_user_overrides out target options)
  set(${out} "" PARENT_SCOPE)
  if(NOT options MATCHES "maxrregcount")
    return()
  endif()
  get_target_property(own ${target} COMPILE_OPTIONS)
  get_target_property(dir ${target} SOURCE_DIR)
  get_directory_property(dir_opts DIRECTORY "${dir}" COMPILE_OPTIONS)
  set(flags "${CMAKE_CUDA_FLAGS}")
  foreach(cfg IN LISTS CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE)
    string(TOUPPER "${cfg}" cfg)
    string(APPEND flags " ${CMAKE_CUDA_FLAGS_${cfg}}")
  endforeach()
  set(all "${own};${dir_opts};${flags}")
  # -maxrregcount, --maxrregcount, -maxrregcount=N or " N"; not -Xptxas forms,
  # which come before the lock's and lose.
  string(REGEX MATCH "(^|[ ;>:])--?maxrregcount[= ]?[0-9]*" found "${all}")
  string(REGEX REPLACE "^[ ;>:]" "" found "${found}")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(_ciq_apply_through_wrapper t lockfile policy)
  get_property(wrapper GLOBAL PROPERTY _CIQ_PTXAS_EXECUTABLE)
  _ciq_target_launcher(launcher first_is_wrapper ${t})
  if(first_is_wrapper)
    list(REMOVE_AT launcher 0)  # ciq_tune() put it there; a tuning run ignores --lock
  endif()
  set_property(TARGET ${t} PROPERTY CUDA_COMPILER_LAUNCHER
    "${wrapper}" --lock "${lockfile}" --lock-policy ${policy} ${launcher})
  # The command line names the lockfile, not what it holds: rebuild when it changes.
  get_target_property(sources ${t} SOURCES)
  get_target_property(source_dir ${t} SOURCE_DIR)
  foreach(s IN LISTS sources)
    if(s MATCHES "\\.cu$")
      set_property(SOURCE "${s}" DIRECTORY "${source_dir}" APPEND PROPERTY OBJECT_DEPENDS "${lockfile}")
    endif()
  endforeach()
endfunction()

# The CUDA flags of <t> that CMake knows at configure time, token by token
# (CMAKE_CUDA_FLAGS, CMAKE_CUDA_FLAGS_<CONFIG> of a single-config build, the
# target's COMPILE_OPTIONS, which start as its folder's), and the
# configuration arguments of `ciq lock render`: the architectures these
# flags add to CUDA_ARCHITECTURES, and -G, are checked against the lock.
function(_ciq_known_cuda_flags out_flags out_config t)
  get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  separate_arguments(flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS}")
  set(config "--build-type=${CMAKE_BUILD_TYPE}")
  if(multi)
    set(config "--multi-config")
  elseif(CMAKE_BUILD_TYPE)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
    separate_arguments(cfg_flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS_${cfg}}")
    list(APPEND flags ${cfg_flags})
  endif()
  get_target_property(own ${t} COMPILE_OPTIONS)
  if(own)
    list(APPEND flags ${own})
  endif()
  set(${out_flags} "${flags}" PARENT_SCOPE)
  set(${out_config} "${config}" PARENT_SCOPE)
endfunction()

# The absolute paths of <t>'s .cu sources (generator expressions left out:
# not known before the build), for the lock's per-unit check.
function(_ciq_cuda_sources out t)
  get_target_property(sources ${t} SOURCES)
  get_target_property(source_dir ${t} SOURCE_DIR)
  set(found "")
  foreach(s IN LISTS sources)
    if(s MATCHES "\\.cu$" AND NOT s MATCHES "\\$<")
      get_filename_component(abs "${s}" ABSOLUTE BASE_DIR "${source_dir}")
      list(APPEND found "${abs}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Asks `ciq lock render` whether the lock applies to <target> and with which
# compile arguments: the checks (integrity, target, compiler versions,
# architectures, ACF bytes) and the rendering live in C++ only
# (engine/winner/LockApply.cpp, docs/lockfile.md), shared with ciq-ptxas --lock and
# `ciq lock verify`. Fills the caller's `problems`, `candidate`, `lock_arches`,
# `through_wrapper`, `options`, `defines` and `lock_tune_targets`.
macro(_ciq_lock_render lockfile policy)
  get_property(_ciq_exe GLOBAL PROPERTY _CIQ_EXECUTABLE)
  _ciq_target_arches(_ciq_arches ${target})
  set(_ciq_ptxas_v "")
  if(CMAKE_CUDA_COMPILER_VERSION)
    _ciq_ptxas_version(_ciq_ptxas_v)
  endif()
  _ciq_known_cuda_flags(_ciq_flags _ciq_config_args ${target})
  _ciq_cuda_sources(_ciq_sources ${target})
  execute_process(COMMAND "${_ciq_exe}" lock render "${lockfile}" --target "${target}" "--sources=${_ciq_sources}"
                    --build-dir "${CMAKE_BINARY_DIR}" --policy "${policy}" "--nvcc=${CMAKE_CUDA_COMPILER}"
                    "--nvcc-version=${CMAKE_CUDA_COMPILER_VERSION}" "--ptxas-version=${_ciq_ptxas_v}"
                    "--architectures=${_ciq_arches}" "--cuda-flags=${_ciq_flags}" ${_ciq_config_args}
                  OUTPUT_VARIABLE _ciq_out ERROR_VARIABLE _ciq_err RESULT_VARIABLE _ciq_rc)
  set(skip "")
  set(wrapper_reason "")
  set(candidate "")
  set(lock_arches "")
  set(through_wrapper OFF)
  set(options "")
  set(defines "")
  set(lock_tune_targets "")
  if(NOT _ciq_rc EQUAL 0)
    string(REGEX REPLACE "^ciq: error: " "" _ciq_err "${_ciq_err}")
    string(STRIP "${_ciq_err}" _ciq_err)
    _ciq_problem("`ciq lock render` failed (${_ciq_err}); is ${_ciq_exe} the ciq of this CompileIQ?")
  endif()
  # One "<kind> <value>" line each; a ';' in a problem must not split it.
  string(REPLACE ";" "\\;" _ciq_out "${_ciq_out}")
  string(REPLACE "\n" ";" _ciq_lines "${_ciq_out}")
  foreach(_ciq_line IN LISTS _ciq_lines)
    if(_ciq_line MATCHES "^problem (.*)")
      _ciq_problem("${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^candidate (.*)")
      set(candidate "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^lock-architectures (.*)")
      set(lock_arches "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^skip (.*)")
      set(skip "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^warning (.*)")
      message(WARNING "ciq_apply_lock(${target}): ${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^note (.*)")
      # A lock of sections: an architecture built without one, said once here.
      message(STATUS "ciq: ${target}: ${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^wrapper-reason (.*)")
      set(wrapper_reason "${CMAKE_MATCH_1}")
    elseif(_ciq_line STREQUAL "through-wrapper")
      set(through_wrapper ON)
    elseif(_ciq_line MATCHES "^option (.*)")
      list(APPEND options "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^define (.*)")
      list(APPEND defines "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^depends (.*)")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_MATCH_1}")
    elseif(_ciq_line MATCHES "^tune-target (.*)")
      list(APPEND lock_tune_targets "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endmacro()
