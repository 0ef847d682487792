cmake_minimum_required(VERSION 3.20)
# check_test_names.cmake: CTest splits doctest case names at ';', so a case named "a; b" is
# registered as "a", matches nothing, runs zero assertions and still "passes". This check fails
# when any TEST_CASE name in tests/ contains a ';'.   Usage: cmake -DROOT=<root> -P this file
file(GLOB_RECURSE sources "${ROOT}/tests/*.cpp")
set(bad "")
foreach(f ${sources})
  file(STRINGS "${f}" lines REGEX "TEST_CASE\\(\"[^\"]*;[^\"]*\"")
  foreach(line ${lines})
    string(APPEND bad "\n  ${f}: ${line}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "test names with ';' (CTest would run nothing for them):${bad}")
endif()
