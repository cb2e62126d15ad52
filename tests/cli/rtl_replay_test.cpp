// RTL blocks in the system: a full run records every block's transactions and verify-rtl replays them through
// the RTL and the reference model; and a SuperNIC with RTL blocks gives the same report as one with reference
// models.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

namespace rtl_replay_test {

using nlohmann::json;

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string scenarios = std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/";
const std::string tiny_incast = std::string(FABRICSIM_SOURCE_DIR) + "/tests/cli/incast_dcqcn_tiny.yaml";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

uint64_t count_lines_starting(const std::string& text, const std::string& prefix) {
  uint64_t n = 0;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(rtl_replay, sprayed_leaf_spine_recording_replays_and_does_not_change_the_run) {
  const std::string dir = testing::TempDir() + "rec_leaf_spine";
  const std::string with = testing::TempDir() + "rec_on.json", without = testing::TempDir() + "rec_off.json";
  run_result r = fabricsim("run " + scenarios + "leaf_spine_small.yaml --quiet --record-rtl " + dir + " --json " + with);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = fabricsim("run " + scenarios + "leaf_spine_small.yaml --quiet --json " + without);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json a = json::parse(slurp(with)), b = json::parse(slurp(without));
  for (json* j : {&a, &b})
    for (const char* wall : {"wall_time_s", "packet_hops_per_s", "peak_rss_mib"}) j->erase(wall);
  EXPECT_EQ(a, b) << "recording changed the result";

  // Every data packet the responders saw is one arrive line: 16 WRITEs of 256 KiB at MTU 4096, no loss.
  const std::string rec = slurp(dir + "/reorder_tracker.txt");
  EXPECT_EQ(count_lines_starting(rec, "arrive "), 16u * 64u);
  EXPECT_EQ(count_lines_starting(rec, "new "), 32u);  // one QP per host and direction
  r = fabricsim("verify-rtl --block reorder_tracker --replay " + dir + "/reorder_tracker.txt");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("transactions           1056"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("RTL matches the reference model after every recorded transaction"), std::string::npos)
      << r.output;
}

TEST(rtl_replay, dcqcn_incast_recordings_of_all_three_blocks_replay) {
  const std::string dir = testing::TempDir() + "rec_incast";
  run_result r = fabricsim("run " + tiny_incast + " --quiet --record-rtl " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* block : {"reorder_tracker", "dcqcn_rp", "cnp_gen"}) {
    const std::string file = dir + "/" + block + ".txt";
    const std::string rec = slurp(file);
    ASSERT_FALSE(rec.empty()) << file;
    r = fabricsim(std::string("verify-rtl --block ") + block + " --replay " + file);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("RTL matches the reference model"), std::string::npos) << r.output;
  }
  // The congestion-control blocks acted: CNPs cut rates and the notification point saw marked arrivals.
  EXPECT_GT(count_lines_starting(slurp(dir + "/dcqcn_rp.txt"), "cnp "), 0u);
  EXPECT_GT(count_lines_starting(slurp(dir + "/cnp_gen.txt"), "mark "), 0u);
}

TEST(rtl_replay, corrupted_line_and_wrong_block_are_errors_naming_file_and_line) {
  const std::string dir = testing::TempDir() + "rec_corrupt";
  run_result r = fabricsim("run " + tiny_incast + " --quiet --record-rtl " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string good = slurp(dir + "/dcqcn_rp.txt");
  // Break the byte count of the first `sent` line.
  std::istringstream in(good);
  std::ostringstream out;
  uint64_t line_no = 0, broken = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (broken == 0 && line.rfind("sent ", 0) == 0) {
      std::istringstream fields(line);
      std::string op, id;
      fields >> op >> id;
      line = op + " " + id + " many 17";
      broken = line_no;
    }
    out << line << '\n';
  }
  ASSERT_GT(broken, 0u);
  const std::string bad = testing::TempDir() + "corrupt_dcqcn_rp.txt";
  std::ofstream(bad) << out.str();
  r = fabricsim("verify-rtl --block dcqcn_rp --replay " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(bad + ":" + std::to_string(broken) + ": bytes 'many' is not an unsigned integer"),
            std::string::npos)
      << r.output;

  r = fabricsim("verify-rtl --block cnp_gen --replay " + dir + "/dcqcn_rp.txt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dcqcn_rp.txt:1: this is a recording of block 'dcqcn_rp', not cnp_gen"), std::string::npos)
      << r.output;
}

// Every NIC with Verilated blocks against every NIC with the reference models: the same report, field for
// field, but for the wall-clock figures (wall_time_s, packet_hops_per_s). Nothing else is excluded: the
// tracker's cycle counts agree because both kinds run behind the same handshake adapter, cycle-exact.
TEST(rtl_in_the_loop, rtl_blocks_and_reference_models_give_identical_reports) {
  const std::string common = "run " + tiny_incast + " --quiet ";
  json reports[2];
  const char* kinds[2] = {"rtl", "ref"};
  for (int i = 0; i < 2; ++i) {
    const std::string k = kinds[i];
    const std::string out = testing::TempDir() + "loop_" + k + ".json";
    const run_result r = fabricsim(common + "--set nic.reorder=" + k + " --set nic.dcqcn_model=" + k +
                                   " --set nic.cnp_model=" + k + " --json " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    reports[i] = json::parse(slurp(out));
    for (const char* wall : {"wall_time_s", "packet_hops_per_s", "peak_rss_mib"}) reports[i].erase(wall);
  }
  // The blocks acted: marks became CNPs, CNPs cut rates, sprayed packets arrived out of order.
  const std::string dump = reports[0].dump();
  EXPECT_EQ(reports[0], reports[1]) << json::diff(reports[0], reports[1]).dump(2);
  EXPECT_NE(dump.find("\"tx_cnps\""), std::string::npos);
}

}  // namespace rtl_replay_test
