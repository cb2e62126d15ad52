// What a new user hits first, through the binary (issue 24): a shipped name accepted by `run`, a directory
// refused, an unknown command answered with the command list, a tab in YAML named, contradicting link
// layers refused, the port_config an 800G run needs, the capture files a comparison writes, the fabric a
// collective runs on, an incast comparison's bottleneck, and timing-only flows not called unverified.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/support/run_cli.h"

namespace rough_edges_test {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string source_dir = FABRICSIM_SOURCE_DIR;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(rough_edges, run_accepts_a_shipped_scenario_name_as_explain_does) {
  const std::string json = testing::TempDir() + "shipped_default.json";
  const run_result r = fabricsim("run default --quiet --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["scenario"], "default");
  // testbench/scenarios/default.yaml lists three writes: 1048576, 1000003 and 65536 bytes.
  EXPECT_EQ(j["operations"], 3);
  ASSERT_EQ(j["flows"].size(), 3u);
  EXPECT_EQ(j["flows"][1]["bytes"], 1000003);
  EXPECT_TRUE(j["verified"].get<bool>());
  // A name that is neither a file nor shipped lists what is shipped.
  const run_result bad = fabricsim("run no_such_scenario");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "no shipped scenario of that name")) << bad.output;
  EXPECT_TRUE(contains(bad.output, "allreduce_ring")) << bad.output;
}

TEST(rough_edges, a_directory_is_not_an_empty_scenario) {
  const std::string dir = testing::TempDir() + "scenario_dir";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/b.yaml") << "name: b\n";
  std::ofstream(dir + "/a.yaml") << "name: a\n";
  for (const std::string& cmd : {"run ", "explain "}) {
    const run_result r = fabricsim(cmd + dir);
    EXPECT_EQ(r.exit_code, 2) << cmd << r.output;
    EXPECT_TRUE(contains(r.output, dir + ": is a directory, not a scenario file")) << r.output;
    EXPECT_TRUE(contains(r.output, dir + "/a.yaml, " + dir + "/b.yaml")) << r.output;  // sorted examples
  }
}

TEST(rough_edges, an_unknown_command_lists_the_commands) {
  const run_result r = fabricsim("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown command 'frobnicate'")) << r.output;
  for (const char* c : {"run", "replay", "keys", "verify-rtl", "pcie-bench", "list-scenarios", "explain", "plot"})
    EXPECT_TRUE(std::regex_search(r.output, std::regex(std::string("\n  ") + c + " +[A-Z0-9]"))) << c << "\n"
                                                                                                 << r.output;
  EXPECT_FALSE(contains(r.output, "The following argument was not expected")) << r.output;  // CLI11's own

  const run_result help = fabricsim("help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_TRUE(contains(help.output, "Subcommands:")) << help.output;
  const run_result help_run = fabricsim("help run");
  EXPECT_EQ(help_run.exit_code, 0) << help_run.output;
  EXPECT_TRUE(contains(help_run.output, "--compare")) << help_run.output;
}

TEST(rough_edges, a_tab_in_yaml_is_named_with_its_line) {
  const std::string path = testing::TempDir() + "tab.yaml";
  std::ofstream(path) << "name: tabbed\ntopology:\n  kind: single_switch\n\thosts: 3\n";  // the tab: line 4
  const run_result r = fabricsim("run " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, path + ":4: YAML syntax error")) << r.output;
  EXPECT_TRUE(contains(r.output, "line 4 is indented with a tab (column 1)")) << r.output;
}

TEST(rough_edges, a_link_layer_the_switch_cannot_carry_is_refused_naming_both_keys) {
  const run_result ib = fabricsim("run default --set nic.link_layer=infiniband");
  EXPECT_EQ(ib.exit_code, 2) << ib.output;
  EXPECT_TRUE(contains(ib.output, "nic.link_layer infiniband (--set nic.link_layer=infiniband)")) << ib.output;
  EXPECT_TRUE(contains(ib.output, "switch.model is spectrum4 (default)")) << ib.output;

  const run_result one = fabricsim("run default --set nic_overrides.h1.link_layer=infiniband");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_TRUE(contains(one.output, "nic_overrides.h1.link_layer infiniband")) << one.output;

  // The converse: ib_incast.yaml sets switch.model quantum_x800 on its line 32.
  const run_result eth = fabricsim("run ib_incast --set nic.link_layer=ethernet");
  EXPECT_EQ(eth.exit_code, 2) << eth.output;
  EXPECT_TRUE(contains(eth.output, "nic.link_layer ethernet (--set nic.link_layer=ethernet)")) << eth.output;
  EXPECT_TRUE(contains(eth.output, "switch.model quantum_x800 (testbench/scenarios/ib_incast.yaml:32)")) << eth.output;
}

TEST(rough_edges, an_800g_run_on_400g_ports_names_the_port_config_to_use) {
  const run_result r = fabricsim("run default --set topology.link_gbps=800");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "faster than the 400G ports of switch.port_config 128x400")) << r.output;
  EXPECT_TRUE(contains(r.output, "use --set switch.port_config=64x800")) << r.output;
  // ... and that advice works.
  const run_result ok = fabricsim("run default --quiet --set topology.link_gbps=800 --set switch.port_config=64x800");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  // 1000 Gb/s: no breakout runs it.
  const run_result fast = fabricsim("run default --set topology.link_gbps=1000");
  EXPECT_TRUE(contains(fast.output, "no port_config runs ports that fast")) << fast.output;
}

TEST(rough_edges, a_comparison_with_a_tap_names_every_capture_file) {
  const std::string base = testing::TempDir() + "cmp_tap";
  const run_result r = fabricsim("run default --compare nic.mtu_bytes=1024,4096 --tap h0:0=" + base + ".pcap");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string v : {"1024", "4096"}) {
    const std::string file = base + "." + v + ".pcap";
    EXPECT_TRUE(contains(r.output, "nic.mtu_bytes=" + v + ": tap: wrote " + file + " (")) << r.output;
    const std::string pcap = read_file(file);
    ASSERT_GE(pcap.size(), 4u) << file;
    // The nanosecond pcap magic, 0xa1b23c4d, little-endian.
    EXPECT_EQ(pcap.substr(0, 4), std::string("\x4d\x3c\xb2\xa1", 4)) << file;
  }
}

TEST(rough_edges, a_collective_prints_its_fabric_first) {
  // 2 leaves x 4 hosts at 400G, 2 spines: 1600 Gb/s down over 800 Gb/s up per leaf is 2:1; half the
  // narrowest tier (the 2 x 2 uplinks, 1600 Gb/s; the hosts give 3200) is 800 Gb/s.
  const run_result r = fabricsim(
      "run allreduce_ring --set topology.kind=leaf_spine --set topology.leaves=2 --set topology.hosts_per_leaf=4 "
      "--set topology.spines=2 --set collective.max_bytes=1048576");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("fabric: leaf_spine, 2 leaves x 4 hosts, 2 spines; hosts 400 Gb/s, uplinks 400 Gb/s; "
                           "leaf oversubscription 2:1; bisection 800 Gb/s",
                           0),
            0u)
      << r.output;
}

TEST(rough_edges, a_collective_on_a_terminal_prints_each_size_as_it_finishes) {
  // util-linux's `script` gives the run a terminal, where progress shows (never in a pipe).
  if (fabricsim::test::run_shell("command -v script").exit_code != 0) GTEST_SKIP() << "no `script` command";
  const run_result r = fabricsim::test::run_shell(
      "script -qc '" + std::string(FABRICSIM_BINARY) +
      " run allreduce_ring --set collective.max_bytes=2097152 --compare collective.algo=ring,tree' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 1 MiB and 2 MiB (factor 2) for each value, in run order, each line before the comparison's table.
  size_t at = 0;
  for (const std::string v : {"ring", "tree"})
    for (const std::string size : {"1048576 B done (1 of 2", "2097152 B done (2 of 2"}) {
      const size_t found = r.output.find("# collective.algo=" + v + ": size " + size + " sizes)", at);
      ASSERT_NE(found, std::string::npos) << v << " " << size << "\n" << r.output;
      at = found;
    }
  EXPECT_LT(at, r.output.find("busbw (GB/s) by size and collective.algo")) << r.output;
}

TEST(rough_edges, an_incast_comparison_shows_the_bottleneck_and_jain) {
  const std::string json = testing::TempDir() + "incast_cmp.json";
  const run_result r = fabricsim("run " + source_dir +
                                 "/tests/cli/incast_dcqcn_tiny.yaml --set run.duration_us=20 "
                                 "--compare nic.cc=none,dcqcn --json " +
                                 json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("nic.cc +eff.thru +bottleneck +Jain"))) << r.output;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  for (const auto& run : j["runs"]) {
    const auto& fab = run["report"]["fabric"];
    char row[128];
    std::snprintf(row, sizeof row, "%.1f%% +%.3f ", 100.0 * fab["bottleneck"]["utilization"].get<double>(),
                  fab["jain_fairness"].get<double>());
    EXPECT_TRUE(std::regex_search(r.output, std::regex("\n" + run["value"].get<std::string>() + " +[0-9.]+% +" + row)))
        << row << "\n"
        << r.output;
  }
}

TEST(rough_edges, timing_only_flows_are_not_checked_rather_than_unverified) {
  const run_result r = fabricsim("run ib_incast --set run.duration_us=20 --set run.warmup_us=5 --set run.sample_us=0");
  ASSERT_EQ(r.exit_code, 0) << r.output;  // a run of fixed length: unfinished flows are expected
  EXPECT_TRUE(contains(r.output, "operations 0/16 completed when run.duration_us ended the run")) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\n +0 +h4 +h0 .* not checked\n"))) << r.output;
  EXPECT_FALSE(std::regex_search(r.output, std::regex(" NO\n"))) << r.output;
}

}  // namespace rough_edges_test
