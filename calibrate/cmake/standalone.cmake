# Standalone configuration of calibrate/ (cmake -S calibrate ...), for GPU machines whose image
# lacks the simulator's dependencies (Boost): provides what the top level would (C++20, the
# warnings target, fmt, nlohmann_json, CLI11, doctest). Missing header-only packages may come from
# HOPSIM_DEPS_INCLUDE, a directory with fmt/, nlohmann/, CLI/ and doctest/ (see pack_deps.sh).
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
include(${HOPSIM_REPO_ROOT}/cmake/warnings.cmake)

set(HOPSIM_DEPS_INCLUDE "" CACHE PATH "header-only fmt, nlohmann, CLI11, doctest for machines without them")

# hopsim_header_dep(<target> <package> <header> [definitions...]): the package's config, else an
# INTERFACE target over HOPSIM_DEPS_INCLUDE with the given compile definitions.
function(hopsim_header_dep target package header)
  find_package(${package} QUIET)
  if(TARGET ${target})
    return()
  endif()
  find_path(hopsim_${package}_include ${header} HINTS ${HOPSIM_DEPS_INCLUDE})
  if(NOT hopsim_${package}_include)
    message(FATAL_ERROR "${package} not found: install it or set HOPSIM_DEPS_INCLUDE (calibrate/pack_deps.sh)")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${hopsim_${package}_include}
                        INTERFACE_COMPILE_DEFINITIONS "${ARGN}")
  message(STATUS "${package}: headers from ${hopsim_${package}_include}")
endfunction()

hopsim_header_dep(fmt::fmt fmt fmt/format.h FMT_HEADER_ONLY)
hopsim_header_dep(nlohmann_json::nlohmann_json nlohmann_json nlohmann/json.hpp)
hopsim_header_dep(CLI11::CLI11 CLI11 CLI/CLI.hpp)

option(HOPSIM_TESTS "Build the doctest suites" ON)
if(HOPSIM_TESTS)
  hopsim_header_dep(doctest::doctest doctest doctest/doctest.h)
  enable_testing()
endif()
