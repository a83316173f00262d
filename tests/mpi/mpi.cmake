# SPDX-License-Identifier: MIT
# The MPI component's tests (label `mpi`) on 1 to 4 ranks of this machine, oversubscribed,
# one MPI job at a time (RESOURCE_LOCK mpi): two jobs of up to 4 ranks each on 2 cores
# beside the other tests is more oversubscription than the tests are about. Included from
# tests/CMakeLists.txt when broadphase_mpi is built. Under AddressSanitizer leak checks are
# off: Open MPI itself does not free everything it allocates at exit.
add_executable(test_mpi_api mpi/test_mpi_api.c)
target_link_libraries(test_mpi_api PRIVATE broadphase_mpi bp_test_common)
set(bp_mpi_env "")
if(BP_SANITIZE STREQUAL "address")
  set(bp_mpi_env ASAN_OPTIONS=detect_leaks=0)
endif()
foreach(ranks 1 2 3 4)
  add_test(NAME mpi_api_np${ranks}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/mpirun.sh ${MPIEXEC_EXECUTABLE} ${ranks} $<TARGET_FILE:test_mpi_api>)
  set_tests_properties(mpi_api_np${ranks} PROPERTIES TIMEOUT 300 LABELS mpi RESOURCE_LOCK mpi ENVIRONMENT "${bp_mpi_env}")
  if(TARGET bp-mpi)
    add_test(NAME mpi_scenes_np${ranks}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/scenes.sh $<TARGET_FILE:bp> $<TARGET_FILE:bp-mpi>
        ${MPIEXEC_EXECUTABLE} ${ranks})
    set_tests_properties(mpi_scenes_np${ranks} PROPERTIES TIMEOUT 600 LABELS mpi RESOURCE_LOCK mpi
      ENVIRONMENT "${bp_mpi_env}")
  endif()
endforeach()
