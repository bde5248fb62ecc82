# Project-wide compile options. Only project targets get -Werror; third-party and generated
# code (later: Verilator output) is built without it.
option(SABLE_WERROR "Treat warnings as errors in project code" ON)
# The sanitizer a build is instrumented with: OFF, address (AddressSanitizer and
# UndefinedBehaviorSanitizer: the asan preset) or thread (ThreadSanitizer: the tsan preset). The two
# cannot share a build. Other files test `if(SABLE_SANITIZE)`: true for either.
set(SABLE_SANITIZE OFF CACHE STRING "Sanitizer of the build: OFF, address (ASan + UBSan) or thread (TSan)")
set_property(CACHE SABLE_SANITIZE PROPERTY STRINGS OFF address thread)
# The sanitizer builds run the HAL and device tests on the functional model: verilating the NPU and
# building the SystemC platform there would cost minutes of CI for code those tests never run.
option(SABLE_RTL "Verilate the RTL and build the SystemC platform (sable-simd --backend rtl)" ON)
if(SABLE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(SABLE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(SABLE_SANITIZE)
  message(FATAL_ERROR "SABLE_SANITIZE=${SABLE_SANITIZE}: one of OFF, address, thread")
endif()

# sable_target(<target>) applies the project's warning policy to one of its own targets.
function(sable_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-psabi
                         $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
  if(SABLE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# sable_test(<name> SOURCES ... LIBS ... [LABELS label] [PREFIX p]) builds one GoogleTest binary and
# registers its tests with ctest (names prefixed by p when one source serves several binaries).
function(sable_test name)
  cmake_parse_arguments(ARG "" "PREFIX" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  sable_target(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  # Tests sign with a key of the build tree, never the user's (docs/cache.md, "Keys").
  # One variable per property: gtest_discover_tests splits a list value (even an escaped ';') into
  # separate arguments, which would turn the second variable and the labels into property names.
  set(properties ENVIRONMENT "SABLE_SHARED_DIR=${PROJECT_SOURCE_DIR}/../shared"
                 ENVIRONMENT_MODIFICATION "SABLE_KEY_DIR=set:${PROJECT_BINARY_DIR}/test-keys")
  if(ARG_LABELS)
    # One label: gtest_discover_tests splits a list value into separate arguments (see above).
    list(LENGTH ARG_LABELS labelCount)
    if(labelCount GREATER 1)
      message(FATAL_ERROR "sable_test(${name}): one label only (${ARG_LABELS})")
    endif()
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${ARG_PREFIX}" PROPERTIES ${properties})
endfunction()
