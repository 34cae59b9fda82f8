# cmake -DSOURCE_DIR=<sdk/src> [-DCLI_DIR=<sdk/cli>] -DRULES=<module=dep,dep|…>
#       -P check_layering.cmake
#
# The module graph of docs/design.md, enforced: every file under
# SOURCE_DIR/<module>/ may include (#include "<other>/…" or <other/…>) only
# the modules RULES lets it link — what sdk/CMakeLists.txt's
# archfit_module(… DEPENDS …) says. A wrong include fails the build here,
# naming the file, the include and what the module may include, instead of
# compiling because every module shares one include root. "archfit/" (the
# public headers) is open to all. Folders RULES does not name (capi/, the C
# ABI shims, which may use every module) are not checked, but no module may
# include them.
#
# The command line (CLI_DIR, its *.cpp and *.hpp) sits above every module: it
# may include any of them and archfit/, but never capi/; and no file under
# SOURCE_DIR may include cli/.
#
# <x/…> in angle brackets names a module only where SOURCE_DIR/x/… (for cli/,
# CLI_DIR/…) exists: the compiler searches the include roots before the
# system's folders, and <sys/stat.h> is the system's, not sys/'s.
cmake_minimum_required(VERSION 3.25)  # IN_LIST
if(NOT SOURCE_DIR OR NOT RULES)
  message(FATAL_ERROR "check_layering: SOURCE_DIR and RULES are required")
endif()

get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)
if(CLI_DIR)
  get_filename_component(CLI_DIR "${CLI_DIR}" ABSOLUTE)
endif()
string(REPLACE "|" ";" RULES "${RULES}")
# Every folder of SOURCE_DIR is a module; folders inside one (jit/cache/,
# included as "cache/…" from jit/) are not.
file(GLOB children LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
set(known_modules "")
foreach(child IN LISTS children)
  if(IS_DIRECTORY "${SOURCE_DIR}/${child}")
    list(APPEND known_modules "${child}")
  endif()
endforeach()
set(known "${known_modules}")
if(CLI_DIR)
  list(APPEND known cli)
endif()

set(problems "")
# Each include of DIRECTORY/FILE that names a folder of `known` outside
# ALLOWED is a problem, shown as SHOWN/FILE with MAY.
function(check_file directory shown file allowed may)
  file(STRINGS "${directory}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][a-z_]+/")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "([\"<])(([a-z_]+)/[^\">]*)[\">]" included "${line}")
    set(bracket "${CMAKE_MATCH_1}")
    set(path "${CMAKE_MATCH_2}")
    set(target "${CMAKE_MATCH_3}")
    if(NOT target IN_LIST known OR target IN_LIST allowed)
      continue()
    endif()
    if(bracket STREQUAL "<")
      if(target STREQUAL "cli")
        string(REGEX REPLACE "^cli/" "${CLI_DIR}/" resolved "${path}")
      else()
        set(resolved "${SOURCE_DIR}/${path}")
      endif()
      if(NOT EXISTS "${resolved}")
        continue()
      endif()
    endif()
    # Indented: message() leaves such lines as they are, one per problem.
    list(APPEND problems "  ${shown}/${file} includes ${included}: ${may}\n")
  endforeach()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

set(ruled "")
foreach(rule IN LISTS RULES)
  string(REGEX MATCH "^([a-z_]+)=(.*)$" matched "${rule}")
  set(module "${CMAKE_MATCH_1}")
  list(APPEND ruled "${module}")
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  string(REPLACE "," ", " may "${CMAKE_MATCH_2}")
  if(may STREQUAL "")
    set(may "no other module")
  endif()
  list(APPEND allowed "${module}" archfit)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${module}/*.cpp"
       "${SOURCE_DIR}/${module}/*.hpp")
  foreach(file IN LISTS files)
    check_file("${SOURCE_DIR}" sdk/src "${file}" "${allowed}" "${module}/ may include only ${may}")
  endforeach()
endforeach()

# The folders RULES leaves out (capi/) may include every module, not cli/.
set(every_module "${known_modules}")
list(APPEND every_module archfit)
foreach(module IN LISTS known_modules)
  if(module IN_LIST ruled)
    continue()
  endif()
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${module}/*.cpp"
       "${SOURCE_DIR}/${module}/*.hpp")
  foreach(file IN LISTS files)
    check_file("${SOURCE_DIR}" sdk/src "${file}" "${every_module}"
               "${module}/ may include any module and archfit/, never cli/")
  endforeach()
endforeach()

if(CLI_DIR)
  set(cli_may "${known_modules}")
  list(REMOVE_ITEM cli_may capi)
  list(APPEND cli_may archfit cli)
  file(GLOB_RECURSE files RELATIVE "${CLI_DIR}" "${CLI_DIR}/*.cpp" "${CLI_DIR}/*.hpp")
  foreach(file IN LISTS files)
    check_file("${CLI_DIR}" sdk/cli "${file}" "${cli_may}"
               "cli/ may include any module and archfit/, never capi/")
  endforeach()
endif()

if(problems)
  string(REPLACE ";" "" problems "${problems}")
  message(FATAL_ERROR "archfit: an include crosses the module graph:\n${problems}"
                      "  The graph is archfit_module(… DEPENDS …) in sdk/CMakeLists.txt, drawn in "
                      "docs/design.md (\"The modules\").")
endif()
