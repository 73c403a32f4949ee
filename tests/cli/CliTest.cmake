# gnn_add_cli_test: a CTest test that runs one command line and checks its exit code and messages with
# expect.cmake (no test framework, so any program can be checked).
#
#   include(${PROJECT_SOURCE_DIR}/tests/cli/CliTest.cmake)
#   gnn_add_cli_test(my_tool_missing_input EXIT 1 STDERR "my_tool: error: .*no such file"
#                    COMMAND $<TARGET_FILE:my_tool> --input /no/such/file)
#
# EXIT is required; STDERR and STDOUT are CMake regexes (no `;`); LABELS are added to the label `cli`.
set(GNN_CLI_EXPECT_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/expect.cmake")

function(gnn_add_cli_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXIT;STDERR;STDOUT" "COMMAND;LABELS")
  if(NOT DEFINED arg_EXIT OR NOT arg_COMMAND)
    message(FATAL_ERROR "gnn_add_cli_test(${name}): EXIT and COMMAND are required")
  endif()
  set(defs "-DEXPECT_EXIT=${arg_EXIT}")
  if(DEFINED arg_STDERR)
    list(APPEND defs "-DEXPECT_STDERR=${arg_STDERR}")
  endif()
  if(DEFINED arg_STDOUT)
    list(APPEND defs "-DEXPECT_STDOUT=${arg_STDOUT}")
  endif()
  add_test(NAME ${name} COMMAND "${CMAKE_COMMAND}" ${defs} -P "${GNN_CLI_EXPECT_SCRIPT}" -- ${arg_COMMAND})
  # A hung program fails here rather than holding the suite; the checks themselves time nothing.
  set_tests_properties(${name} PROPERTIES LABELS "cli;${arg_LABELS}" TIMEOUT 120)
endfunction()
