cmake_minimum_required(VERSION 3.20)
# check_self_contained.cmake: the repository stands alone. It ships its corpus (data/corpora/) and
# its PyTorch reference scripts (bench/), so no file in it may name the team's shared folder beside
# it (a dot-dot path to "shared"). Build trees, run outputs and caches (.gitignore) are skipped.
#   Usage: cmake -DROOT=<root> -P this file
# The pattern is written with escapes, so this file does not match itself.
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${ROOT}" "${ROOT}/*")
set(bad "")
foreach(f ${files})
  if(f MATCHES "^(\\.git|build[^/]*|runs|\\.cache)/" OR f MATCHES "(^|/)__pycache__/" OR f STREQUAL ".git")
    continue()
  endif()
  file(STRINGS "${ROOT}/${f}" lines REGEX "\\.\\./shared")
  foreach(line ${lines})
    string(APPEND bad "\n  ${f}: ${line}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "files that name a path outside the repository (ship the file instead):${bad}")
endif()
