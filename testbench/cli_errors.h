// The messages a new user meets first: an unknown command, a directory given as a scenario, a tab in YAML,
// a link layer the switch model cannot carry. Each says what was wrong and what to type instead.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace fabricsim::testbench {

struct scenario;

// When `e` is CLI11's "arguments were not expected" on the top-level command line (an unknown command such
// as `fabricsim frobnicate`) or the word `help`, prints the full help on `out` for `help` (`help CMD`: that
// command's) and returns 0, or the command list on `err` for an unknown command and returns 2. Returns -1 for
// any other parse error, which CLI11's own message describes well enough.
int handle_unknown_command(const CLI::App& app, const CLI::ParseError& e, int argc, char* argv[], std::ostream& out,
                           std::ostream& err);

// Throws core::config_error when `path` is a directory: no scenario file is, and reading one would give an
// empty scenario that silently runs every default. The message names up to three .yaml files in it.
void refuse_directory_scenario(const std::string& path);

// yaml-cpp says where it stopped, not that a tab started it: when a tab character sits in the indentation of
// a line at or before the error, the hint naming that line and column ("" otherwise).
std::string yaml_tab_hint(const std::string& text, int error_line);

// Keys that contradict each other across sections: nic.link_layer (or a nic_overrides entry's) infiniband
// on Spectrum (Ethernet) switches, or ethernet set explicitly on Quantum-X800 (InfiniBand) switches.
// Throws core::config_error naming both keys and where each came from.
void check_link_layer(const scenario& s);

}  // namespace fabricsim::testbench
