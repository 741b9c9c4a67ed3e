# mapp_add_app_tests(APP): the tests every mini-app gets, derived from its
# variant table (`mapp-APP --list`) and its files, so a new app costs one
# line here (the call in its tests/CMakeLists.txt):
#
#   APP.baseline.CASE.VARIANT.BACKEND.nR   `mapp run` against baselines/APP/CASE.h5
#       for every variant x built CPU backend (but variants the table marks
#       not_alone: no answer of their own), tiny.h5 at 1, 2 and 4 ranks
#       and tiny-weakR.h5 at R ranks under --scaling weak;
#   APP.agree.VARIANT.BACKEND.nR           every answer dataset bit for bit
#       equal to the first variant's on its first CPU backend on 1 rank
#       (when the app declares bitwise_variants), at 1, 2 and 4 ranks;
#   APP.bad.NAME                           each line of tests/bad_input.txt,
#       "NAME | RANKS | STDERR REGEX | ARGUMENTS", must exit 2 with exactly
#       one line on stderr matching the regex; {tests} in the arguments
#       stands for the app's tests folder (fixture files).
#
# The variant x backend tests are discovered when ctest starts (as
# gtest_discover_tests does), from the built executable's own table: a new
# variant is tested without a line of CMake changing.
set(MAPP_APP_TESTS_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/mapp_app_tests.cmake.in)
find_program(MAPP_H5DIFF h5diff REQUIRED)
find_program(MAPP_H5LS h5ls REQUIRED)

function(mapp_add_bad_input_tests app file)
  set(expect ${PROJECT_SOURCE_DIR}/miniapps/common/tests/expect_exit.sh)
  # Lines as a list with brackets and semicolons masked: CMake does not
  # split a list inside [...], and a regex may hold either.
  file(READ ${file} text)
  string(REPLACE "[" "<mapp-lb>" text "${text}")
  string(REPLACE "]" "<mapp-rb>" text "${text}")
  string(REPLACE ";" "<mapp-sc>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*(#|$)")
      continue()
    endif()
    string(REPLACE "<mapp-lb>" "[" line "${line}")
    string(REPLACE "<mapp-rb>" "]" line "${line}")
    string(REPLACE "<mapp-sc>" ";" line "${line}")
    # Split on the first three " | " by position (a CMake list would not
    # split inside the regex's square brackets); the arguments keep the rest.
    set(rest "${line}")
    set(fields "")
    foreach(field name ranks regex)
      string(FIND "${rest}" " | " at)
      if(at LESS 0)
        message(FATAL_ERROR "${file}: '${line}' is not 'NAME | RANKS | REGEX | ARGUMENTS'")
      endif()
      string(SUBSTRING "${rest}" 0 ${at} value)
      string(STRIP "${value}" ${field})
      math(EXPR at "${at} + 3")
      string(SUBSTRING "${rest}" ${at} -1 rest)
    endforeach()
    set(argtext "${rest}")
    string(REPLACE "{tests}" "${PROJECT_SOURCE_DIR}/miniapps/${app}/tests" argtext "${argtext}")
    separate_arguments(args UNIX_COMMAND "${argtext}")
    set(launch $<TARGET_FILE:mapp-${app}>)
    if(ranks GREATER 1)
      set(launch ${MPIEXEC_EXECUTABLE} -q -np ${ranks} --oversubscribe $<TARGET_FILE:mapp-${app}>)
    endif()
    mapp_add_test(${app}.bad.${name} LABELS ${app} bad-input
      COMMAND ${expect} 2 "${regex}" -- ${launch} ${args})
  endforeach()
endfunction()

function(mapp_add_app_tests app)
  set(bad ${PROJECT_SOURCE_DIR}/miniapps/${app}/tests/bad_input.txt)
  if(EXISTS ${bad})
    mapp_add_bad_input_tests(${app} ${bad})
  endif()
  # Configured per app; read by ctest, which then registers the tests.
  set(APP ${app})
  set(APP_BIN ${CMAKE_BINARY_DIR}/bin)
  set(APP_SOURCE ${PROJECT_SOURCE_DIR})
  set(APP_WORK ${CMAKE_CURRENT_BINARY_DIR}/app-tests)
  set(APP_MPIEXEC ${MPIEXEC_EXECUTABLE})
  set(APP_ENV "${MAPP_TEST_ENV};MAPP_SOURCE_DIR=${PROJECT_SOURCE_DIR};MAPP_BIN_DIR=${CMAKE_BINARY_DIR}/bin")
  set(APP_AGREE ${PROJECT_SOURCE_DIR}/miniapps/common/tests/agree.sh)
  set(APP_H5DIFF ${MAPP_H5DIFF})
  set(APP_H5LS ${MAPP_H5LS})
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${app}_app_tests.cmake)
  configure_file(${MAPP_APP_TESTS_TEMPLATE} ${script} @ONLY)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
