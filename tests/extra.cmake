# SPDX-License-Identifier: MIT
# Tests beyond the Criterion suites. Included from tests/CMakeLists.txt.

# Install into a scratch prefix and build a host project against it (find_package,
# C++, static, pkg-config), and check the exported symbols. Skipped in sanitizer
# builds: the installed library then needs the sanitizer runtime loaded first.
if(BP_SANITIZE STREQUAL "")
  add_test(NAME install_consumer
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 300 LABELS install)
  # The example hosts (tools/examples), in C and C++, against the installed package.
  add_test(NAME example_host
    COMMAND ${PROJECT_SOURCE_DIR}/tools/examples/run.sh ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(example_host PROPERTIES TIMEOUT 300 LABELS install)
endif()

# Threaded workloads through the bp tool. Criterion cannot start under TSan, so in a
# TSan build this is the threaded check (tools/test.sh runs `ctest -L threads` there).
if(BP_BUILD_TOOLS)
  add_test(NAME threads_smoke COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/threads_smoke.sh $<TARGET_FILE:bp>)
  set_tests_properties(threads_smoke PROPERTIES TIMEOUT 600 LABELS threads)
endif()

# bp under `ulimit -v`: a step out of memory, or out of address space for its threads,
# exits 3 in about the time a success takes. Sanitizer builds reserve terabytes of
# address space for their shadow memory and cannot start under such a cap.
if(BP_BUILD_TOOLS AND BP_SANITIZE STREQUAL "")
  add_test(NAME resource_limits COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/resource_limits.sh $<TARGET_FILE:bp>)
  set_tests_properties(resource_limits PROPERTIES TIMEOUT 300 LABELS limits)
endif()

# Every BP_API function of the public headers is exported by the shared library.
if(TARGET broadphase AND BP_SANITIZE STREQUAL "")
  add_test(NAME exports COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/exports.sh $<TARGET_FILE:broadphase> ${PROJECT_SOURCE_DIR}/include)
  set_tests_properties(exports PROPERTIES TIMEOUT 60)
endif()

# world.h's check of filter arrays' width: a host's 64-bit arrays compile without a warning;
# 32-bit ones do not compile even with every warning off (-w), where a plain prototype passes.
set(filter_width_compile ${CMAKE_C_COMPILER} -std=c11 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
  ${CMAKE_CURRENT_SOURCE_DIR}/compile/filter_width.c)
add_test(NAME filter_width_64 COMMAND ${filter_width_compile} -Wall -Wextra -Werror)
add_test(NAME filter_width_32 COMMAND ${filter_width_compile} -w -DBITS_TYPE=uint32_t)
add_test(NAME filter_width_32_unchecked COMMAND ${filter_width_compile} -w -DBITS_TYPE=uint32_t -DBP_NO_FILTER_ARRAY_CHECK)
add_test(NAME filter_width_64_deprecated COMMAND ${filter_width_compile} -Wall -Wextra -Werror -DDEPRECATED_NAMES)
add_test(NAME filter_width_32_deprecated COMMAND ${filter_width_compile} -w -DBITS_TYPE=uint32_t -DDEPRECATED_NAMES)
set_tests_properties(filter_width_32 filter_width_32_deprecated PROPERTIES WILL_FAIL TRUE)

# The differential history engine (tests/fuzz/history.c) as a plain program: the scripted
# reproductions, the fuzz_history corpus, then random seeds (BP_HISTORY_SEEDS; tests/fuzz/README.md).
add_executable(history_soak ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/history_soak.c ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/history.c
  ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/history_trace.c)
target_link_libraries(history_soak PRIVATE broadphase_static bp_warnings bp_sanitize)
add_test(NAME history_soak COMMAND history_soak --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/fuzz_history)
set_tests_properties(history_soak PROPERTIES TIMEOUT 900 LABELS history)
if(BP_SANITIZE STREQUAL "thread")
  # Under ThreadSanitizer too (tools/test.sh runs the label `threads` there), on fewer seeds:
  # a history runs ~30x slower.
  set_tests_properties(history_soak PROPERTIES LABELS "history;threads" ENVIRONMENT BP_HISTORY_SEEDS=300)
endif()

# libFuzzer targets and their short ctest runs (label `fuzz`); see tests/fuzz/README.md.
option(BP_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)
if(BP_FUZZ)
  include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.cmake)
endif()

# USDT probes (src/base/probes.h, cmake/profiling.cmake): readelf -n must show every broadphase
# probe in the shared library and in bp (which links the static one). Skipped when BP_USDT is off.
set(bp_probe_files $<TARGET_FILE:broadphase>)
if(BP_BUILD_TOOLS)
  list(APPEND bp_probe_files $<TARGET_FILE:bp>)
endif()
add_test(NAME probes_readelf COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/probes_readelf.sh
  $<IF:$<BOOL:${BP_USDT}>,ON,OFF> ${bp_probe_files})
set_tests_properties(probes_readelf PROPERTIES TIMEOUT 60 LABELS probes SKIP_RETURN_CODE 77)
