// `fabricsim sweep` through the binary: the cross product in order, the same rows whatever --jobs, each row
// what `fabricsim run` reports for that point, a resumed sweep running only the missing points, and bad
// grid keys or values refused before anything runs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_cli.h"

namespace sweep_test {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line + ",");
    std::string c;
    while (std::getline(l, c, ',')) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

// A directory of this test's, empty: TempDir() outlives a test run.
std::string fresh_dir(const std::string& name) {
  std::string dir = testing::TempDir() + name;
  fabricsim::test::run_shell("rm -rf '" + dir + "'");
  return dir;
}

const std::string grid = "default --grid nic.mtu_bytes=1024,4096 --grid topology.link_gbps=100,400";

TEST(sweep, cross_product_in_order_same_rows_whatever_the_jobs) {
  const std::string one = fresh_dir("sweep_j1"), two = fresh_dir("sweep_j2");
  const run_result a = fabricsim("sweep " + grid + " --jobs 1 --out " + one);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const run_result b = fabricsim("sweep " + grid + " --jobs 2 --out " + two);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_EQ(read_file(one + "/sweep.csv"), read_file(two + "/sweep.csv"));  // deterministic, order by point
  const auto rows = csv_rows(read_file(one + "/sweep.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0][0], "point");
  EXPECT_EQ(rows[0][1], "nic.mtu_bytes");
  EXPECT_EQ(rows[0][2], "topology.link_gbps");
  // The first axis varies slowest.
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"1024", "100"}, {"1024", "400"}, {"4096", "100"}, {"4096", "400"}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i + 1][0], std::to_string(i));
    EXPECT_EQ(rows[i + 1][1], expect[i].first);
    EXPECT_EQ(rows[i + 1][2], expect[i].second);
    EXPECT_EQ(rows[i + 1][5], "3");                   // operations: default.yaml's three writes
    EXPECT_EQ(rows[i + 1][rows[0].size() - 2], "1");  // leaf_oversubscription: one switch
    // bisection_gbps: 2 hosts on one switch, half of 2 x the link rate.
    EXPECT_EQ(rows[i + 1][rows[0].size() - 1], expect[i].second);
  }
  // A row is what `fabricsim run` reports for the point.
  const std::string json = testing::TempDir() + "sweep_point2.json";
  const run_result r =
      fabricsim("run default --quiet --set nic.mtu_bytes=4096 --set topology.link_gbps=100 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json report = nlohmann::json::parse(read_file(json));
  const nlohmann::json sweep = nlohmann::json::parse(read_file(one + "/sweep.json"));
  const auto& row = sweep["rows"][2];
  EXPECT_EQ(row["nic.mtu_bytes"], "4096");
  EXPECT_EQ(row["effective_throughput"], report["fabric"]["effective_throughput"]);
  EXPECT_EQ(row["max_queue_bytes"], report["fabric"]["max_queue_bytes"]);
  EXPECT_DOUBLE_EQ(row["simulated_us"].get<double>(), report["simulated_time_ns"].get<double>() / 1000.0);
}

TEST(sweep, a_resumed_sweep_runs_only_the_missing_points) {
  const std::string dir = fresh_dir("sweep_resume");
  ASSERT_EQ(fabricsim("sweep " + grid + " --out " + dir).exit_code, 0);
  const std::string first = read_file(dir + "/sweep.csv");
  // An interrupted sweep: point 2 never wrote its row, point 1 was cut while writing.
  std::remove((dir + "/points/p0002.json").c_str());
  std::ofstream(dir + "/points/p0001.json") << "{\"point\": 1, \"set\": [";
  const run_result r = fabricsim("sweep " + grid + " --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 points (2 already complete"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("point 1 (nic.mtu_bytes=1024 topology.link_gbps=400)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("point 2 (nic.mtu_bytes=4096 topology.link_gbps=100)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("point 0 ("), std::string::npos) << r.output;
  EXPECT_EQ(read_file(dir + "/sweep.csv"), first);
  // Another grid in the same directory reruns what no longer matches.
  const run_result other = fabricsim("sweep default --grid nic.mtu_bytes=2048 --out " + dir);
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("1 points (0 already complete"), std::string::npos) << other.output;
}

TEST(sweep, bad_keys_and_values_are_refused_before_anything_runs) {
  const std::string dir = fresh_dir("sweep_bad");
  const run_result key = fabricsim("sweep default --grid nic.mtu_bytes=1024 --grid nic.mtu_byte=1 --out " + dir);
  EXPECT_EQ(key.exit_code, 2) << key.output;
  EXPECT_NE(key.output.find("--grid nic.mtu_byte=1: unknown key; did you mean mtu_bytes?"), std::string::npos)
      << key.output;
  const run_result value = fabricsim("sweep default --grid nic.mtu_bytes=1024,100000 --out " + dir);
  EXPECT_EQ(value.exit_code, 2) << value.output;
  EXPECT_NE(value.output.find("--grid nic.mtu_bytes=100000: 100000 is out of range [256, 4096]"), std::string::npos)
      << value.output;
  const run_result twice = fabricsim("sweep default --grid seed=1 --grid seed=2 --out " + dir);
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("--grid seed: the key is swept twice"), std::string::npos) << twice.output;
  struct stat st {};
  EXPECT_NE(stat(dir.c_str(), &st), 0) << "a refused sweep created " << dir;
}

TEST(sweep, a_value_a_block_refuses_stops_the_sweep_before_any_point_runs) {
  // 800 Gb/s hosts on the default 128x400 ports: loading accepts it, building the switch does not.
  const std::string dir = fresh_dir("sweep_elab");
  const run_result r = fabricsim("sweep default --grid topology.link_gbps=400,800 --out " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sweep: point 1 (topology.link_gbps=800): sw0: port 0 runs at 800 Gb/s"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("done: point 0"), std::string::npos) << r.output;  // not even the good point ran
  struct stat st {};
  EXPECT_NE(stat((dir + "/points/p0000.json").c_str(), &st), 0);
}

}  // namespace sweep_test
