// The messages a new user meets first (testbench/cli_errors.h).
#include "testbench/cli_errors.h"

#include <dirent.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "sc_models/core/params.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

namespace {

// CLI11 2.1 has no non-throwing lookup by name.
const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; }))
    if (c->get_name() == name) return c;
  return nullptr;
}

}  // namespace

int handle_unknown_command(const CLI::App& app, const CLI::ParseError& e, int argc, char* argv[], std::ostream& out,
                           std::ostream& err) {
  if (argc < 2 || e.get_exit_code() != int(CLI::ExitCodes::ExtrasError)) return -1;
  const std::string word = argv[1];
  if (word.empty() || word[0] == '-' || find_command(app, word) != nullptr) return -1;
  const std::vector<const CLI::App*> commands = app.get_subcommands([](const CLI::App*) { return true; });
  if (word == "help") {
    if (argc >= 3)
      if (const CLI::App* cmd = find_command(app, argv[2])) {
        out << cmd->help();
        return 0;
      }
    out << app.help();
    return 0;
  }
  err << "fabricsim: unknown command '" << word << "'. The commands are:\n";
  size_t width = 0;
  for (const CLI::App* c : commands) width = std::max(width, c->get_name().size());
  for (const CLI::App* c : commands) {
    const std::string d = c->get_description();
    err << "  " << c->get_name() << std::string(width + 2 - c->get_name().size(), ' ') << d.substr(0, d.find('\n'))
        << '\n';
  }
  err << "`fabricsim COMMAND --help` describes one; `fabricsim run FILE` runs a scenario.\n";
  return 2;
}

void refuse_directory_scenario(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  std::set<std::string> yaml;  // sorted, so the message does not depend on the directory's order
  if (DIR* d = opendir(path.c_str())) {
    while (const dirent* entry = readdir(d)) {
      const std::string n = entry->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0) yaml.insert(n);
    }
    closedir(d);
  }
  std::string examples;
  size_t shown = 0;
  for (const std::string& n : yaml) {
    if (shown++ == 3) break;
    examples += (examples.empty() ? "" : ", ") + path + (path.back() == '/' ? "" : "/") + n;
  }
  throw core::config_error(path + ": is a directory, not a scenario file; give one YAML file" +
                           (examples.empty() ? std::string() : " such as " + examples) +
                           ", or a shipped scenario's name (fabricsim list-scenarios)");
}

std::string yaml_tab_hint(const std::string& text, int error_line) {
  std::istringstream in(text);
  std::string line;
  for (int n = 0; std::getline(in, line) && n <= error_line; ++n) {
    const size_t indent_end = line.find_first_not_of(" \t");
    const size_t tab = line.find('\t');
    if (tab != std::string::npos && (indent_end == std::string::npos || tab < indent_end))
      return "line " + std::to_string(n + 1) + " is indented with a tab (column " + std::to_string(tab + 1) +
             "): YAML indents with spaces only";
  }
  return "";
}

namespace {

std::string where(const scenario& s, const std::string& key) {
  const auto it = s.key_sources.find(key);
  return it == s.key_sources.end() ? "default" : it->second;
}

}  // namespace

void check_link_layer(const scenario& s) {
  const bool quantum = s.switch_model.infiniband();
  std::vector<std::pair<std::string, std::string>> layers{{"nic.link_layer", s.nic.link_layer}};
  for (const auto& [host, p] : s.nic_overrides)
    layers.emplace_back("nic_overrides." + host + ".link_layer", p.link_layer);
  for (const auto& [key, layer] : layers) {
    // Ethernet is the key's default: on Quantum switches only an explicit ethernet contradicts the model.
    const bool explicit_key = s.key_sources.count(key) > 0;
    if (!quantum && layer == "infiniband")
      throw core::config_error(s.source + ": " + key + " infiniband (" + where(s, key) +
                               ") needs InfiniBand "
                               "switches, but switch.model is " +
                               s.switch_model.name + " (" + where(s, "switch.model") +
                               "), an Ethernet switch; set switch.model: quantum_x800 (which makes every NIC an "
                               "InfiniBand HCA), or leave " +
                               key + " at ethernet");
    if (quantum && layer == "ethernet" && explicit_key)
      throw core::config_error(s.source + ": " + key + " ethernet (" + where(s, key) +
                               ") cannot talk to switch.model "
                               "quantum_x800 (" +
                               where(s, "switch.model") + "), an InfiniBand switch; leave " + key +
                               " out (Quantum switches make every NIC an InfiniBand HCA), or use switch.model: "
                               "spectrum4");
  }
}

}  // namespace fabricsim::testbench
