# Checks what a shared library exports against the C ABI (docs/c-abi.md, "Names":
# `nm -D` on the library shows nothing but the archfit_ prefix).
#
#   cmake -DLIBRARY=<libarchfit.so> [-DHEADER=<archfit.h>] [-DNM=<nm>] -P check_exported_symbols.cmake
#
# Fails, naming each symbol, when the library exports anything outside the
# archfit_ prefix. With HEADER it also fails when a function the header
# declares ARCHFIT_API is not exported, or an exported function is not declared.
cmake_minimum_required(VERSION 3.25)

if(NOT LIBRARY OR NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "LIBRARY='${LIBRARY}' does not exist")
endif()
if(NOT NM)
  find_program(NM nm REQUIRED)
endif()

execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}"
  RESULT_VARIABLE result OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed (${result}): ${errors}")
endif()

string(REPLACE "\n" ";" lines "${listing}")
set(exported "")
set(foreign "")
foreach(line IN LISTS lines)
  # "<value> <type> <name>[@[@]<version>]"; nm leaves the value blank for some types.
  if(NOT line MATCHES "^[0-9a-fA-F]* *([A-Za-z]) ([^ ]+)$")
    if(NOT line STREQUAL "")
      list(APPEND foreign "unparsed nm line '${line}'")
    endif()
    continue()
  endif()
  set(type "${CMAKE_MATCH_1}")
  string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_2}")
  if(type STREQUAL "A" AND name MATCHES "^ARCHFIT_")
    continue()  # a symbol-version node of a version script (ARCHFIT_0 …), not code or data
  endif()
  if(name MATCHES "^archfit_[a-z0-9_]+$")
    list(APPEND exported "${name}")
  else()
    list(APPEND foreign "${name} (type ${type})")
  endif()
endforeach()

set(problems "")
foreach(symbol IN LISTS foreign)
  list(APPEND problems "exports non-archfit symbol: ${symbol}")
endforeach()
if(NOT exported)
  list(APPEND problems "exports no archfit_ symbol at all")
endif()

if(HEADER)
  file(READ "${HEADER}" header_text)
  # Declarations read "ARCHFIT_API [ARCHFIT_NODISCARD] <type> archfit_<name>(".
  string(REGEX MATCHALL "ARCHFIT_API[^;(]*[ *\n]archfit_[a-z0-9_]+\\(" declarations "${header_text}")
  set(declared "")
  foreach(declaration IN LISTS declarations)
    string(REGEX MATCH "archfit_[a-z0-9_]+\\($" name "${declaration}")
    string(REGEX REPLACE "\\($" "" name "${name}")
    list(APPEND declared "${name}")
  endforeach()
  if(NOT declared)
    list(APPEND problems "found no ARCHFIT_API declarations in ${HEADER}")
  endif()
  foreach(name IN LISTS declared)
    if(NOT name IN_LIST exported)
      list(APPEND problems "declared in ${HEADER} but not exported: ${name}")
    endif()
  endforeach()
  foreach(name IN LISTS exported)
    if(NOT name IN_LIST declared)
      list(APPEND problems "exported but not declared ARCHFIT_API in ${HEADER}: ${name}")
    endif()
  endforeach()
endif()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "${LIBRARY}:\n  ${text}")
endif()
list(LENGTH exported count)
message(STATUS "${LIBRARY}: ${count} symbols, all archfit_: ${exported}")
