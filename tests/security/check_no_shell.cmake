# No shell is ever spawned with strings a user controls: archfit runs
# programs with posix_spawn and an argument vector (sys/run_program.hpp).
# This check fails, naming the file and the line's text, on any call that goes through a
# shell (system, popen, the exec*p family with "sh -c", /bin/sh) in the
# product's sources: sdk/, plugins/, host_adapters/libtorch.
#
#   cmake -DROOTS="dir;dir" -P check_no_shell.cmake
cmake_minimum_required(VERSION 3.25)
set(found "")
foreach(root IN LISTS ROOTS)
  file(GLOB_RECURSE sources "${root}/*.c" "${root}/*.cpp" "${root}/*.hpp" "${root}/*.h")
  foreach(source IN LISTS sources)
    # Only the lines that may call one (file(STRINGS) splits lines at ';',
    # so lines are named by their text, not their number).
    file(STRINGS "${source}" lines REGEX "system|popen|wordexp|/bin/sh|\"sh\"")
    foreach(line IN LISTS lines)
      # Comments may name what is forbidden.
      string(REGEX REPLACE "//.*$" "" code "${line}")
      if(code MATCHES "(^|[^A-Za-z0-9_.>])(system|popen|wordexp)[ ]*\\(" OR code MATCHES "\"/bin/sh\"|\"sh\", *\"-c\"")
        string(STRIP "${line}" line)
        list(APPEND found "${source}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "spawns a shell:\n  ${text}")
endif()
message(STATUS "no shell is spawned in: ${ROOTS}")
