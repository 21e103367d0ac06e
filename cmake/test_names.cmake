# Checks of the test sources, at configure time.
#
# ctest runs each doctest case by name, and CMake cuts a name at a ';' (a list separator): such
# a case would match nothing under ctest and pass without running. Refuse those names at
# configure time. The pattern skips escaped quotes inside the name.
function(hopsim_check_test_names)
  foreach(src ${ARGN})
    file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${src} cut
         REGEX "TEST_CASE\\(\"([^\"\\\\]|\\\\.)*;")
    if(cut)
      message(FATAL_ERROR "${src}: a test case name holds a ';', which ctest cannot select: ${cut}")
    endif()
    # doctest::Approx's default scale of 1 turns its epsilon into an absolute tolerance for
    # values below 1; tests compare through hopsim::test::approx (tests/approx.hpp).
    file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${src} loose REGEX "doctest::Approx")
    if(loose)
      message(FATAL_ERROR "${src}: use hopsim::test::approx (tests/approx.hpp), not "
                          "doctest::Approx, whose epsilon is absolute below 1: ${loose}")
    endif()
  endforeach()
endfunction()
