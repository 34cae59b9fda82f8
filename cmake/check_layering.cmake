# cmake -DSOURCE_DIR=<sdk/src> -DRULES=<module=dep,dep|…> -P check_layering.cmake
#
# The module graph of docs/design.md, enforced: every file under
# SOURCE_DIR/<module>/ may include (#include "<other>/…") only the modules
# RULES lets it link — what sdk/CMakeLists.txt's archfit_module(… DEPENDS …)
# says. A wrong include fails the build here, naming the file, the include and
# what the module may include, instead of compiling because every module
# shares one include root. "archfit/" (the public headers) is open to all.
# Folders RULES does not name (capi/, the C ABI shims, which may use every
# module) are not checked, but no module may include them.
cmake_minimum_required(VERSION 3.25)  # IN_LIST
if(NOT SOURCE_DIR OR NOT RULES)
  message(FATAL_ERROR "check_layering: SOURCE_DIR and RULES are required")
endif()

get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)
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

set(problems "")
foreach(rule IN LISTS RULES)
  string(REGEX MATCH "^([a-z_]+)=(.*)$" matched "${rule}")
  set(module "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  string(REPLACE "," ", " may "${CMAKE_MATCH_2}")
  if(may STREQUAL "")
    set(may "no other module")
  endif()
  list(APPEND allowed "${module}" archfit)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${module}/*.cpp"
       "${SOURCE_DIR}/${module}/*.hpp")
  foreach(file IN LISTS files)
    file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "\"([a-z_]+)/[^\"]*\"" included "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(NOT target IN_LIST known_modules)
        continue()
      endif()
      if(NOT target IN_LIST allowed)
        # Indented: message() leaves such lines as they are, one per problem.
        list(APPEND problems
             "  sdk/src/${file} includes ${included}: ${module}/ may include only ${may}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  string(REPLACE ";" "" problems "${problems}")
  message(FATAL_ERROR "archfit: an include crosses the module graph:\n${problems}"
                      "  The graph is archfit_module(… DEPENDS …) in sdk/CMakeLists.txt, drawn in "
                      "docs/design.md (\"The modules\").")
endif()
