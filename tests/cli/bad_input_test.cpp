// Bad input through the fabricsim binary, one test per class of docs/robustness.md that no other CLI test
// covers: each must exit non-zero (2: bad input) with a message naming the file, line or frame, the field
// and what was expected. Never a crash (status 3 or a signal) and never silently accepted.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run_cli.h"

namespace {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = testing::TempDir() + "bad_input_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

bool has(const run_result& r, const std::string& s) { return r.output.find(s) != std::string::npos; }

// A classic pcap header (microseconds, little-endian, snaplen 65535) and records, byte by byte.
struct pcap_file {
  std::string b;
  void le32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(v >> (8 * i)));
  }
  explicit pcap_file(uint32_t link_type) {
    for (uint32_t v : {0xa1b2c3d4u, 2u | 4u << 16, 0u, 0u, 65535u, link_type}) le32(v);
  }
  void record_header(uint32_t captured, uint32_t length) {
    for (uint32_t v : {1700000000u, 0u, captured, length}) le32(v);
  }
};

// Truncated: a capture cut inside its 24-byte file header is not a capture.
TEST(bad_input, truncated_capture_header) {
  const std::string path = temp_file("cut.pcap", pcap_file(1).b.substr(0, 10));
  const run_result r = fabricsim("replay " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, path + ": cannot read as a pcap or pcapng capture")) << r.output;
  EXPECT_TRUE(has(r, "file header")) << r.output;  // libpcap says which part was short
}

// Oversized lengths: a record claiming more captured bytes than the snapshot length allows.
TEST(bad_input, oversized_record_length_in_a_capture) {
  pcap_file pcap(1);
  pcap.record_header(0xfffffff0u, 0xfffffff0u);
  pcap.b.append(64, '\0');
  const std::string path = temp_file("huge.pcap", pcap.b);
  const run_result r = fabricsim("replay " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, path + ": frame 1: corrupt record header")) << r.output;
  EXPECT_TRUE(has(r, "snapshot length")) << r.output;
}

// Wrong link type: an 802.11 capture.
TEST(bad_input, wrong_link_type) {
  pcap_file pcap(105);
  pcap.record_header(60, 60);
  pcap.b.append(60, '\0');
  const std::string path = temp_file("wifi.pcap", pcap.b);
  const run_result r = fabricsim("replay " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, path + ": link type 105")) << r.output;
  EXPECT_TRUE(has(r, "only Ethernet")) << r.output;
}

// Truncated: a scenario cut in the middle of a flow mapping is a YAML syntax error at its line.
TEST(bad_input, truncated_scenario) {
  const std::string path = temp_file("cut.yaml", "name: cut\ntopology: {kind: leaf_spine, leaves: 2,\n");
  const run_result r = fabricsim("run " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, path + ":")) << r.output;
}

// Zero-rate links: from the file (naming its line) and from --set; the range is stated.
TEST(bad_input, zero_rate_links) {
  const std::string path =
      temp_file("zero.yaml", "name: zero\ntopology:\n  kind: single_switch\n  hosts: 2\n  link_gbps: 0\n");
  run_result r = fabricsim("run " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, path + ":5")) << r.output;
  EXPECT_TRUE(has(r, "topology.link_gbps")) << r.output;
  EXPECT_TRUE(has(r, "[1, 3200]")) << r.output;
  r = fabricsim("run " + path + " --quiet --set topology.link_gbps=400 --set topology.uplink_gbps=-1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "--set topology.uplink_gbps=-1")) << r.output;
  EXPECT_TRUE(has(r, "[0, 3200]")) << r.output;
}

// Out-of-range values beyond 64 bits and wrong types, through --set.
TEST(bad_input, integer_overflow_and_wrong_type_in_overrides) {
  const std::string path = temp_file("ok.yaml", "name: ok\ntopology: {kind: single_switch, hosts: 2}\n");
  run_result r = fabricsim("run " + path + " --quiet --set seed=99999999999999999999999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "seed")) << r.output;
  r = fabricsim("run " + path + " --quiet --set topology.hosts=[1,2]");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "topology.hosts")) << r.output;
}

// A topology that cannot be wired (the closest the parametric topologies come to a disconnected one: core
// planes need cores to be a multiple of spines).
TEST(bad_input, topology_that_cannot_be_wired) {
  const std::string path = temp_file(
      "planes.yaml", "name: planes\ntopology: {kind: three_tier, pods: 2, leaves: 2, spines: 2, cores: 3}\n");
  const run_result r = fabricsim("run " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "topology.cores")) << r.output;
  EXPECT_TRUE(has(r, "multiple of topology.spines")) << r.output;
}

// A flow list with a bad row, named by the scenario: the CSV's own name, line and column.
TEST(bad_input, flow_list_bad_row) {
  const std::string csv = temp_file("flows.csv", "src,dst,bytes,start_ns\n0,1,4096,0\n1,0,-5,0\n");
  const std::string path = temp_file(
      "flows.yaml", "name: flows\ntopology: {kind: single_switch, hosts: 2}\nworkload: {kind: flows, flow_file: " +
                        csv + "}\n");
  const run_result r = fabricsim("run " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, csv + ":3")) << r.output;
  EXPECT_TRUE(has(r, "bytes")) << r.output;
}

// A flow-size CDF whose fractions go down: the file, line and what was expected.
TEST(bad_input, cdf_file_out_of_order) {
  const std::string cdf = temp_file("sizes.cdf", "100 0.5\n200 0.4\n300 1\n");
  const std::string path = temp_file(
      "cdf.yaml", "name: cdf\ntopology: {kind: single_switch, hosts: 2}\n"
                  "workload: {kind: generated, distribution: " + cdf + ", flow_count: 4}\n");
  const run_result r = fabricsim("run " + path + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, cdf)) << r.output;
}

// Wrong types and out-of-range values of command-line options: CLI11 names the option.
TEST(bad_input, option_of_the_wrong_type) {
  run_result r = fabricsim("verify-rtl --block reorder_tracker --cycles many");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(r.exit_code, 128) << r.output;  // an error status, not a signal
  EXPECT_TRUE(has(r, "--cycles")) << r.output;
  r = fabricsim("replay x.pcap --timing slow");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "--timing")) << r.output;
}

}  // namespace
