# Warnings as an INTERFACE target, -Werror and sanitizers as project options.
# Off for users (a newer compiler's new warning must not stop their build); CI turns it on: the
# presets pass $HOPSIM_WERROR, which .ci/run sets to ON.
option(HOPSIM_WERROR "Treat compiler warnings as errors" OFF)
set(HOPSIM_CXX_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
add_library(hopsim_warnings INTERFACE)
add_library(hopsim::warnings ALIAS hopsim_warnings)
target_compile_options(hopsim_warnings INTERFACE
  "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:${HOPSIM_CXX_WARNINGS}>"
  "$<$<AND:$<BOOL:${HOPSIM_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>")

# Sanitizers: project-wide on purpose (every translation unit must be instrumented).
set(HOPSIM_SANITIZE "" CACHE STRING "sanitizers, e.g. address;undefined")
if(HOPSIM_SANITIZE)
  list(JOIN HOPSIM_SANITIZE "," hopsim_san)
  add_compile_options(-fsanitize=${hopsim_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${hopsim_san})
endif()

# Precompiled headers (HOPSIM_PCH, the sanitizer presets): the standard and third-party headers
# nearly every translation unit parses. Off in Release, so that a missing #include still fails
# the build there. The sanitizer presets also build as unity builds (CMAKE_UNITY_BUILD, 16 files
# a unit; hopsim_config, hopsim_calib_core and the test binaries opt out): Release does not, so
# its errors name the real files.
option(HOPSIM_PCH "Precompile the common standard and third-party headers" OFF)
if(HOPSIM_PCH)
  target_precompile_headers(hopsim_warnings INTERFACE
    "$<$<COMPILE_LANGUAGE:CXX>:<algorithm$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<cstdint$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<functional$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<map$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<memory$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<optional$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<fmt/format.h$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp$<ANGLE-R>>")
endif()
