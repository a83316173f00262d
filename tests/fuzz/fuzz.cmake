# SPDX-License-Identifier: MIT
# libFuzzer targets (BP_FUZZ=ON, clang only). The library is compiled a second time here
# with coverage instrumentation (-fsanitize=fuzzer-no-link) plus ASan and UBSan, so the
# fuzzers see inside it; the normal library targets keep their own flags.
# Each target also runs as a ctest test (label `fuzz`): BP_FUZZ_SECONDS (environment,
# default 30) of fuzzing from the seed corpus. tools/fuzz.sh is for long runs.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "BP_FUZZ=ON needs clang (libFuzzer); configure with CC=clang (got ${CMAKE_C_COMPILER_ID})")
endif()

# -O1 whatever the build type (options after CMAKE_C_FLAGS_<CONFIG> win). cells_build.c and
# cells_find.c at -O0: their always_inline specialisations (then one cells.c) took 442 s to
# compile at -O2 and 207 s at -O1 with UBSan (45 s with ASan alone), 10 s at -O0 with both.
set(BP_FUZZ_FLAGS -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
add_library(bp_fuzz_lib STATIC ${BP_SOURCES})
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/algorithms/cells_build.c ${PROJECT_SOURCE_DIR}/src/algorithms/cells_find.c
  TARGET_DIRECTORY bp_fuzz_lib PROPERTIES COMPILE_OPTIONS -O0)
target_include_directories(bp_fuzz_lib PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(bp_fuzz_lib PUBLIC BP_STATIC_DEFINE PRIVATE BP_BUILDING_LIBRARY)
target_compile_options(bp_fuzz_lib PRIVATE ${BP_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)
target_link_libraries(bp_fuzz_lib PUBLIC OpenMP::OpenMP_C Threads::Threads mimalloc m PRIVATE bp_warnings)
# The scene library (tools/scene) the same way, so fuzz_scene sees inside the readers.
add_library(bp_fuzz_scene STATIC ${BP_SCENE_SOURCES})
target_include_directories(bp_fuzz_scene PUBLIC ${PROJECT_SOURCE_DIR}/tools/scene)
target_compile_options(bp_fuzz_scene PRIVATE ${BP_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)
target_link_libraries(bp_fuzz_scene PUBLIC bp_fuzz_lib PRIVATE bp_output bp_warnings)

foreach(target fuzz_scene fuzz_api fuzz_pairs fuzz_history fuzz_trace)
  add_executable(${target} ${CMAKE_CURRENT_LIST_DIR}/${target}.c)
  target_compile_options(${target} PRIVATE ${BP_FUZZ_FLAGS} -fsanitize=fuzzer)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${target} PRIVATE bp_fuzz_lib bp_warnings)
  add_test(NAME ${target}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/run.sh $<TARGET_FILE:${target}> ${CMAKE_CURRENT_LIST_DIR}/corpus/${target}
      ${CMAKE_CURRENT_BINARY_DIR}/corpus-${target})
  set_tests_properties(${target} PROPERTIES TIMEOUT 900 LABELS fuzz)
endforeach()
target_link_libraries(fuzz_scene PRIVATE bp_fuzz_scene)
# fuzz_history: the history engine of tests/fuzz/history.c (history_soak in extra.cmake is its ctest).
target_sources(fuzz_history PRIVATE ${CMAKE_CURRENT_LIST_DIR}/history.c)
add_custom_target(fuzz DEPENDS fuzz_scene fuzz_api fuzz_pairs fuzz_history fuzz_trace)
