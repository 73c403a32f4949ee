# Runs a program and checks how it ends: its exit code and what it prints. For tests of command lines (a
# missing input, a bad flag), which need no test framework; see CliTest.cmake for the add_test wrapper.
#
#   cmake -DEXPECT_EXIT=2 [-DEXPECT_STDERR=<regex>] [-DEXPECT_STDOUT=<regex>] -P expect.cmake -- <program> [args...]
#
# Fails when the exit code differs, when a regex does not match its stream, or when the program died of an
# uncaught exception (`terminate called`), whatever its exit code. Regexes are CMake's; neither they nor the
# program's arguments may hold a `;` (CMake would split the argument there).
cmake_minimum_required(VERSION 3.25)

set(command "")
set(seen_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(seen_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(seen_separator TRUE)
  endif()
endforeach()
list(LENGTH command length)
if(length EQUAL 0)
  message(FATAL_ERROR "expect.cmake: no command: pass it after --")
endif()
if(NOT DEFINED EXPECT_EXIT)
  message(FATAL_ERROR "expect.cmake: set -DEXPECT_EXIT=<code>")
endif()

# The timeout only stops a program that hangs; these checks never time anything.
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
string(REPLACE ";" " " shown "${command}")

set(problems "")
if(NOT "${code}" STREQUAL "${EXPECT_EXIT}")
  string(APPEND problems "exit code ${code}, expected ${EXPECT_EXIT}\n")
endif()
if("${out}${err}" MATCHES "terminate called")
  string(APPEND problems "died of an uncaught exception\n")
endif()
if(DEFINED EXPECT_STDERR AND NOT "${err}" MATCHES "${EXPECT_STDERR}")
  string(APPEND problems "stderr does not match: ${EXPECT_STDERR}\n")
endif()
if(DEFINED EXPECT_STDOUT AND NOT "${out}" MATCHES "${EXPECT_STDOUT}")
  string(APPEND problems "stdout does not match: ${EXPECT_STDOUT}\n")
endif()
if(problems)
  string(LENGTH "${out}" n)
  if(n GREATER 2000)
    string(SUBSTRING "${out}" 0 2000 out)
    string(APPEND out "...")
  endif()
  # Plain message() prints the streams as they are; FATAL_ERROR would rewrap and indent them.
  message("${shown}\n${problems}--- stdout:\n${out}\n--- stderr:\n${err}")
  message(FATAL_ERROR "expect.cmake: ${shown}: see above")
endif()
