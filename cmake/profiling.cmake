# SPDX-License-Identifier: MIT
# Profiling support (docs/design.md "Observability"): USDT probes, optional Intel ITT markup for VTune, and frame
# pointers in RelWithDebInfo. Included from the top CMakeLists.txt once bp_objects exists.
# Release flags are untouched; with BP_USDT and BP_WITH_ITT off, src/base/probes.h expands to nothing.
include(CheckIncludeFile)
include(CheckCCompilerFlag)

# USDT: a nop per probe plus an ELF note; on by default where <sys/sdt.h> exists
# (Debian: systemtap-sdt-dev).
check_include_file(sys/sdt.h BP_HAVE_SYS_SDT_H)
option(BP_USDT "USDT probes (<sys/sdt.h>) at frame and stage boundaries" ${BP_HAVE_SYS_SDT_H})
if(BP_USDT)
  if(NOT BP_HAVE_SYS_SDT_H)
    message(FATAL_ERROR "BP_USDT=ON but <sys/sdt.h> was not found: install systemtap-sdt-dev "
      "(Debian/Ubuntu) or systemtap-sdt-devel (Fedora), or configure with -DBP_USDT=OFF")
  endif()
  target_compile_definitions(bp_objects PRIVATE BP_HAVE_USDT=1)
endif()

# Intel ITT (VTune task and frame markup), from a VTune installation's SDK.
option(BP_WITH_ITT "Intel ITT task and frame markup for VTune (needs the VTune SDK)" OFF)
if(BP_WITH_ITT)
  set(VTUNE_PROFILER_DIR "" CACHE PATH "VTune installation (the folder holding sdk/include/ittnotify.h)")
  set(bp_itt_hints ${VTUNE_PROFILER_DIR} $ENV{VTUNE_PROFILER_DIR} $ENV{VTUNE_PROFILER_2023_DIR}
    /opt/intel/oneapi/vtune/latest)
  find_path(BP_ITT_INCLUDE_DIR ittnotify.h HINTS ${bp_itt_hints} PATH_SUFFIXES sdk/include include)
  find_library(BP_ITT_LIBRARY NAMES libittnotify.a ittnotify HINTS ${bp_itt_hints}
    PATH_SUFFIXES sdk/lib64 lib64)
  if(NOT BP_ITT_INCLUDE_DIR OR NOT BP_ITT_LIBRARY)
    message(FATAL_ERROR "BP_WITH_ITT=ON but ittnotify.h / libittnotify.a were not found "
      "(include: ${BP_ITT_INCLUDE_DIR}, library: ${BP_ITT_LIBRARY}). Set -DVTUNE_PROFILER_DIR=<VTune root> "
      "(the folder with sdk/include and sdk/lib64), or source VTune's env/vars.sh so "
      "VTUNE_PROFILER_2023_DIR is set, or configure with -DBP_WITH_ITT=OFF")
  endif()
  message(STATUS "ITT: ${BP_ITT_INCLUDE_DIR}, ${BP_ITT_LIBRARY}")
  target_compile_definitions(bp_objects PRIVATE BP_WITH_ITT=1)
  target_include_directories(bp_objects PRIVATE ${BP_ITT_INCLUDE_DIR})
  # libittnotify.a uses dlopen to find the collector VTune injects; PRIVATE on the static
  # library still reaches whatever links it.
  foreach(target broadphase broadphase_static)
    target_link_libraries(${target} PRIVATE ${BP_ITT_LIBRARY} ${CMAKE_DL_LIBS})
  endforeach()
endif()

# Frame pointers: CMAKE_C_FLAGS_RELWITHDEBINFO already has -fno-omit-frame-pointer, so
# `perf record --call-graph fp` walks the library, the tools and perf/. Leaf functions (the
# sweep's inner loops) keep theirs too with -mno-omit-leaf-frame-pointer where the compiler
# has it (gcc and clang on x86-64). The variable is read at generate time, so this reaches
# every target of the build, including those in subdirectories added later.
check_c_compiler_flag(-mno-omit-leaf-frame-pointer BP_HAVE_NO_OMIT_LEAF_FP)
if(BP_HAVE_NO_OMIT_LEAF_FP AND NOT CMAKE_C_FLAGS_RELWITHDEBINFO MATCHES "omit-leaf-frame-pointer")
  string(APPEND CMAKE_C_FLAGS_RELWITHDEBINFO " -mno-omit-leaf-frame-pointer")
endif()
