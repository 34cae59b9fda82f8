# Nothing in the project may point at notes a reader of the repository cannot
# open: the team's design notes and reference pages live outside it. A comment
# or a knowledge-base `source:` names the primary source (NVIDIA's page, a
# CUDA header, an issue) or a page under docs/ instead. Fails naming each
# file and line that holds one of the patterns below.
#
#   cmake -DSOURCE_DIR=<dir> [-DGIT=<git>] [-DSKIP_DIR=<dir>] -P check_no_private_pointers.cmake
#
# With GIT, and SOURCE_DIR in a git checkout: `git grep` over the tracked
# files. Otherwise every file under SOURCE_DIR is read, except .git and
# SKIP_DIR (the build tree, when it lies inside).
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "SOURCE_DIR='${SOURCE_DIR}' is not a directory")
endif()

# Built from pieces, so that this file does not match itself.
set(_notes "sha" "red")
string(CONCAT _notes ${_notes})
string(CONCAT _design "DESI" "GN" ".md")
set(patterns "${_notes}/reference" "../${_notes}" "${_design}")

set(found "")
set(_git_checkout FALSE)
if(GIT)
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --is-inside-work-tree
                  RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET)
  if(result EQUAL 0)
    set(_git_checkout TRUE)
  endif()
endif()

if(_git_checkout)
  set(_args "")
  foreach(pattern IN LISTS patterns)
    list(APPEND _args -e "${pattern}")
  endforeach()
  # Fixed strings, case-sensitive, tracked files under SOURCE_DIR only.
  execute_process(COMMAND "${GIT}" -c core.quotePath=false grep -n -F --no-color ${_args} -- .
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE error)
  if(result EQUAL 0)
    string(REPLACE ";" "\\;" output "${output}")
    string(REGEX REPLACE "\n$" "" output "${output}")
    string(REPLACE "\n" ";" found "${output}")
  elseif(NOT result EQUAL 1)
    message(FATAL_ERROR "git grep in ${SOURCE_DIR} failed (${result}): ${error}")
  endif()
  set(_how "tracked files (git grep)")
else()
  file(GLOB_RECURSE files LIST_DIRECTORIES false "${SOURCE_DIR}/*")
  string(REPLACE "." "\\." _alternatives "${patterns}")
  string(REPLACE ";" "|" _regex "${_alternatives}")
  foreach(path IN LISTS files)
    file(RELATIVE_PATH relative "${SOURCE_DIR}" "${path}")
    if(relative MATCHES "^\\.git/")
      continue()
    endif()
    if(SKIP_DIR)
      cmake_path(IS_PREFIX SKIP_DIR "${path}" NORMALIZE _skipped)
      if(_skipped)
        continue()
      endif()
    endif()
    file(STRINGS "${path}" hits REGEX "${_regex}")
    if(NOT hits)
      continue()
    endif()
    # file(STRINGS) gives the lines but not their numbers: count the line
    # breaks before each occurrence.
    file(READ "${path}" text)
    foreach(pattern IN LISTS patterns)
      set(rest "${text}")
      set(consumed 0)
      while(TRUE)
        string(FIND "${rest}" "${pattern}" at)
        if(at EQUAL -1)
          break()
        endif()
        math(EXPR end "${consumed} + ${at}")
        string(SUBSTRING "${text}" 0 ${end} before)
        string(REGEX MATCHALL "\n" breaks "${before}")
        list(LENGTH breaks line)
        math(EXPR line "${line} + 1")
        list(APPEND found "${relative}:${line}: contains '${pattern}'")
        string(LENGTH "${pattern}" length)
        math(EXPR skip "${at} + ${length}")
        string(SUBSTRING "${rest}" ${skip} -1 rest)
        math(EXPR consumed "${consumed} + ${skip}")
      endwhile()
    endforeach()
  endforeach()
  set(_how "files (no git checkout)")
endif()

if(found)
  list(LENGTH found count)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR
    "${count} place(s) point at notes outside the repository; name the primary "
    "source or a page under docs/ instead:\n  ${text}")
endif()
message(STATUS "no pointer to notes outside the repository in ${SOURCE_DIR}'s ${_how}")
