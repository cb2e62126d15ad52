// The fabricsim command line as a function: the executable's sc_main() (testbench/main.cpp), the help-page test
// (tests/cli/ux_help_test.cpp) and the CLI fuzz target (fuzz/cli_fuzz.cpp) all call it.
#pragma once

// Parses argv and runs the command; with parse_only stops after parsing (the fuzz target and the help-page
// test drive only the parser). Returns the process's exit status (docs/report.md).
int fabricsim_cli(int argc, char* argv[], bool parse_only);
