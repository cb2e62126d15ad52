// What users see: `fabricsim list-scenarios` against the files in testbench/scenarios, `fabricsim explain`'s
// sources of values (file:line, --set, default), `fabricsim plot` writing valid PNGs, and every help page
// carrying an example, the PFC pause timeline against the XOFF/XON reasoning.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <map>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

namespace {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string source_dir = FABRICSIM_SOURCE_DIR;

std::set<std::string> yaml_files(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0) out.insert(n);
    }
    closedir(d);
  }
  return out;
}

// The line of `out` that starts (after blanks) with `first`, or "".
std::string line_starting(const std::string& out, const std::string& first) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(' ');
    if (b != std::string::npos && line.compare(b, first.size() + 1, first + " ") == 0) return line;
  }
  return "";
}

TEST(ux, list_scenarios_lists_every_shipped_file_with_a_description) {
  const std::set<std::string> files = yaml_files(source_dir + "/testbench/scenarios");
  ASSERT_GE(files.size(), 10u);
  const run_result r = fabricsim("list-scenarios");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& f : files) {
    const std::string line = line_starting(r.output, f);
    ASSERT_FALSE(line.empty()) << f << " missing from:\n" << r.output;
    // Something beyond the file name: the description.
    const std::string rest = line.substr(line.find(f) + f.size());
    EXPECT_NE(rest.find_first_not_of(' '), std::string::npos) << f << " has no description: " << line;
  }
  // A description taken from the file itself, not invented.
  EXPECT_NE(line_starting(r.output, "default.yaml").find("One 1 MiB RDMA WRITE plus an odd-sized one"), std::string::npos)
      << r.output;
}

TEST(ux, explain_names_the_file_line_the_set_and_the_default) {
  const std::string path = testing::TempDir() + "explain.yaml";
  std::ofstream(path) << "# a test scenario\n"
                         "name: explain_me\n"
                         "topology:\n"
                         "  kind: single_switch\n"
                         "  hosts: 3\n"                // line 5
                         "nic:\n"
                         "  mtu_bytes: 1024\n"         // line 7
                         "nic_overrides:\n"
                         "  h1: {reorder: ref}\n"      // line 9
                         "writes: [{src: h0, dst: h1, bytes: 4096}]\n";
  const run_result r = fabricsim("explain " + path + " --set topology.link_gbps=800");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string hosts = line_starting(r.output, "topology.hosts");
  EXPECT_NE(hosts.find(" 3 "), std::string::npos) << hosts;
  EXPECT_NE(hosts.find(path + ":5"), std::string::npos) << hosts;
  const std::string mtu = line_starting(r.output, "nic.mtu_bytes");
  EXPECT_NE(mtu.find("bytes"), std::string::npos) << mtu;  // the unit
  EXPECT_NE(mtu.find(path + ":7"), std::string::npos) << mtu;
  const std::string rate = line_starting(r.output, "topology.link_gbps");
  EXPECT_NE(rate.find(" 800 "), std::string::npos) << rate;
  EXPECT_NE(rate.find("Gb/s"), std::string::npos) << rate;
  EXPECT_NE(rate.find("--set topology.link_gbps=800"), std::string::npos) << rate;
  const std::string limit = line_starting(r.output, "run.limit_us");
  EXPECT_NE(limit.find("default"), std::string::npos) << limit;
  EXPECT_NE(limit.find("us"), std::string::npos) << limit;
  // The per-host override: its own key from line 9, the others inherited from `nic`.
  EXPECT_NE(line_starting(r.output, "nic_overrides.h1.reorder").find(path + ":9"), std::string::npos) << r.output;
  EXPECT_NE(line_starting(r.output, "nic_overrides.h1.mtu_bytes").find("as nic.mtu_bytes (" + path + ":7)"),
            std::string::npos)
      << r.output;
  // A shipped scenario by name, and a bad --set is an error naming it.
  const run_result shipped = fabricsim("explain incast_dcqcn");
  EXPECT_EQ(shipped.exit_code, 0) << shipped.output;
  EXPECT_NE(shipped.output.find("testbench/scenarios/incast_dcqcn.yaml:"), std::string::npos) << shipped.output;
  const run_result bad = fabricsim("explain " + path + " --set topology.link_gbps=fast");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--set topology.link_gbps=fast"), std::string::npos) << bad.output;
  const run_result missing = fabricsim("explain no_such_scenario");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("shipped: "), std::string::npos) << missing.output;
}

TEST(ux, every_help_page_has_an_example) {
  for (const char* cmd : {"", "run", "replay", "keys", "verify-rtl", "pcie-bench", "list-scenarios", "explain", "plot"}) {
    const run_result r = fabricsim(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd << r.output;
    EXPECT_NE(r.output.find("xample"), std::string::npos) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find("fabricsim "), std::string::npos) << cmd << ":\n" << r.output;
  }
}

bool is_png(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string head((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // The PNG signature, then the IHDR chunk first (length 13).
  return head.size() > 33 && head.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 && head.compare(12, 4, "IHDR") == 0;
}

bool have_matplotlib() { return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0; }

// Runs a shell command line in `dir`: exit status and everything it printed.
run_result run_in(const std::string& dir, const std::string& cmd) { return fabricsim::test::run_shell("cd " + dir + " && " + cmd); }

// The `fabricsim ...` commands after "Example:" on a help page, `&&`-joined ones split.
std::vector<std::string> help_examples(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    const size_t ex = line.find("xample: fabricsim");
    if (ex == std::string::npos) continue;
    std::string rest = line.substr(ex + 8);
    for (size_t amp; (amp = rest.find(" && ")) != std::string::npos; rest = rest.substr(amp + 4))
      out.push_back(rest.substr(0, amp));
    out.push_back(rest);
  }
  return out;
}

// The examples of the cheap pages run as written, from a directory laid out like the checkout: the plot
// page's chains a run of a comparison scenario into `fabricsim plot`, which the parser alone cannot check.
TEST(ux, the_examples_of_plot_explain_list_and_keys_run_as_written) {
  const std::string dir = testing::TempDir() + "ux_examples";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + " && ln -s " + source_dir + "/testbench " + dir +
                         "/testbench").c_str()),
            0);
  for (const char* page : {"plot", "explain", "list-scenarios", "keys"}) {
    if (std::string(page) == "plot" && !have_matplotlib()) continue;
    const run_result help = fabricsim(std::string(page) + " --help");
    const std::vector<std::string> ex = help_examples(help.output);
    ASSERT_FALSE(ex.empty()) << page << ":\n" << help.output;
    for (const std::string& cmd : ex) {
      ASSERT_EQ(cmd.compare(0, 10, "fabricsim "), 0) << cmd;
      const run_result r = run_in(dir, std::string(FABRICSIM_BINARY) + cmd.substr(9));
      EXPECT_EQ(r.exit_code, 0) << "`" << cmd << "` (" << page << " --help):\n" << r.output.substr(0, 3000);
    }
  }
  EXPECT_TRUE(is_png(dir + "/plots/compare.png"));
}

TEST(ux, plot_writes_png_figures_of_a_run_and_of_a_collective) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3-matplotlib is not installed (scripts/setup installs it)";
  const std::string dir = testing::TempDir() + "ux_plot";
  const std::string report = dir + "_incast.json", csv = dir + "_incast.csv";
  run_result r = fabricsim("run " + source_dir + "/tests/cli/incast_dcqcn_tiny.yaml --set run.duration_us=20 "
                           "--set run.sample_us=1 --json " + report + " --timeseries " + csv + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = fabricsim("plot " + report + " --timeseries " + csv + " --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* png : {"flow_rate.png", "queue_depth.png", "link_utilization.png"})
    EXPECT_TRUE(is_png(dir + "/" + png)) << png << "\n" << r.output;

  // A comparison report (one value): its bar chart, and the sprayed run's out-of-order histogram.
  const std::string spray = dir + "_spray.json";
  r = fabricsim("run " + source_dir + "/testbench/scenarios/spraying.yaml --compare nic.path_entropy=per_packet "
                "--quiet --json " + spray);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = fabricsim("plot " + spray + " --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* png : {"compare.png", "ooo_distance.per_packet.png", "flow_goodput.per_packet.png"})
    EXPECT_TRUE(is_png(dir + "/" + png)) << png << "\n" << r.output;

  const std::string coll = dir + "_coll.json";
  r = fabricsim("run " + source_dir + "/testbench/scenarios/allreduce_ring.yaml --set collective.ranks=4 "
                "--set topology.hosts=4 --set collective.min_bytes=65536 --set collective.max_bytes=262144 "
                "--quiet --json " + coll);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = fabricsim("plot " + coll + " --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(is_png(dir + "/busbw.png")) << r.output;

  // A missing report is an error naming it.
  r = fabricsim("plot " + dir + "/none.json --out " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("none.json"), std::string::npos) << r.output;
}

// The PFC pause timeline (fabric.pfc_pause_intervals) of a 4:1 incast through one 400G switch without
// congestion control, against a hand reasoning of the XOFF/XON logic (switch defaults: XOFF at 256 KiB held
// from one ingress port on priority 3, XON at 192 KiB, pause quanta 65535):
// - only the senders' ports are paused (h1..h4, their ingress accounts fill); h0 sends only ACKs: never;
// - an ingress account fills no faster than its 400G link: the first XOFF comes no earlier than
//   262144 x 8 / 400 Gb/s = 5.24 us after the first packet could arrive;
// - an XOFF lasts until the account drains from >= 262144 to <= 196608 bytes, through the one egress port
//   (to h0, 400 Gb/s) at most: every closed interval is >= 65536 x 8 / 400 Gb/s = 1310.72 ns;
// - intervals of one port never overlap; the log is complete (far below its limit);
// - the paused NIC's own accounting (its `paused_us`, kept by the receiver of the pause frames) matches
//   the switch's intervals, up to the pause frame's trip (MAC FIFO of 4 frames + cable) at each edge;
// - pause frames sent on a port: one XOFF per interval, one XON per closed one, plus the refreshes every
//   half pause time (65535 x 512 bit / 400 Gb/s / 2 = 41.94 us) while asserted.
TEST(ux, pfc_pause_timeline_matches_the_xoff_xon_reasoning_and_is_plotted) {
  const std::string dir = testing::TempDir() + "ux_pfc";
  const std::string report = dir + ".json";
  run_result r = fabricsim("run " + source_dir + "/tests/cli/incast_dcqcn_tiny.yaml --set nic.cc=none "
                           "--set run.duration_us=60 --json " + report + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& fab = j.at("fabric");
  const nlohmann::json& log = fab.at("pfc_pause_intervals");
  EXPECT_EQ(log.at("limit").get<uint64_t>(), 4096u);
  EXPECT_TRUE(log.at("complete_until_ns").is_null()) << log.dump();
  const nlohmann::json& ivs = log.at("intervals");
  ASSERT_GE(ivs.size(), 4u) << log.dump();
  EXPECT_EQ(log.at("recorded").get<size_t>(), ivs.size());
  const double sim_end = j.at("simulated_time_ns").get<double>();
  const double refresh_ns = 65535.0 * 512 / 400.0 / 2;
  std::map<std::string, double> paused_ns, last_end;
  std::map<std::string, uint64_t> frames_expected;
  double prev_start = 0;
  for (const auto& iv : ivs) {
    const std::string link = iv.at("link").get<std::string>();
    const double start = iv.at("start_ns").get<double>();
    EXPECT_TRUE(link == "sw0_to_h1" || link == "sw0_to_h2" || link == "sw0_to_h3" || link == "sw0_to_h4") << link;
    EXPECT_EQ(iv.at("priority").get<int>(), 3);
    EXPECT_GE(start, 262144 * 8 / 400.0) << link;
    EXPECT_GE(start, prev_start);  // in start order
    prev_start = start;
    EXPECT_GE(start, last_end[link]) << link << ": overlapping intervals";
    const bool closed = !iv.at("end_ns").is_null();
    const double end = closed ? iv.at("end_ns").get<double>() : sim_end;
    if (closed) {
      EXPECT_GE(end - start, 65536 * 8 / 400.0) << link << " at " << start;
    }
    last_end[link] = end;
    paused_ns[link] += end - start;
    frames_expected[link] += 1 + (closed ? 1 : 0) + uint64_t((end - start) / refresh_ns);
  }
  EXPECT_EQ(paused_ns.size(), 4u) << log.dump();  // every sender was paused
  for (const auto& [link, ns] : paused_ns) {
    const std::string host = link.substr(link.find("_to_") + 4);
    const double nic_us = j.at("stats").at(host + "_nic").at("paused_us").at("value").get<double>();
    size_t n = 0;
    for (const auto& iv : ivs) n += iv.at("link") == link;
    // Each edge moves by the pause frame's trip: up to 4 frames of 4178 B ahead of it in the MAC FIFO
    // (334 ns at 400G), its own 64 B, cable and FEC (about 110 ns); both edges of an interval move alike, so
    // an interval's length changes by less than one trip: 500 ns.
    EXPECT_NEAR(nic_us * 1e3, ns, 500.0 * double(n)) << link;
  }
  for (const auto& p : fab.at("pfc_pauses_by_port")) {
    const std::string link = p.at("link").get<std::string>();
    ASSERT_TRUE(frames_expected.count(link)) << link << " sent pause frames but has no interval";
    EXPECT_EQ(p.at("pause_frames_sent").get<uint64_t>(), frames_expected[link]) << link;
  }

  if (!have_matplotlib()) GTEST_SKIP() << "python3-matplotlib is not installed (scripts/setup installs it)";
  r = fabricsim("plot " + report + " --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(is_png(dir + "/pfc_timeline.png")) << r.output;
  EXPECT_NE(r.output.find("pfc_timeline.png"), std::string::npos) << r.output;
}

// Past its bound the log keeps the run's first 4096 XOFFs and says from when it is incomplete: the same
// incast run for 16 ms (about 5000 XOFFs at the 4:1 incast's one per port every ~8.5 us, the rate the
// 60 us run above shows) fills it.
TEST(ux, pfc_pause_log_past_its_bound_keeps_the_first_intervals_and_says_where_it_stops) {
  const std::string report = testing::TempDir() + "ux_pfc_bound.json";
  const run_result r = fabricsim("run " + source_dir + "/tests/cli/incast_dcqcn_tiny.yaml --set nic.cc=none "
                                 "--set run.duration_us=16000 --set workload.message_bytes=268435456 --json " +
                                 report + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& log = j.at("fabric").at("pfc_pause_intervals");
  const nlohmann::json& ivs = log.at("intervals");
  ASSERT_EQ(ivs.size(), 4096u);
  EXPECT_EQ(log.at("recorded").get<size_t>(), 4096u);
  ASSERT_FALSE(log.at("complete_until_ns").is_null());
  const double cut = log.at("complete_until_ns").get<double>();
  EXPECT_LT(cut, j.at("simulated_time_ns").get<double>());
  for (const auto& iv : ivs) EXPECT_LT(iv.at("start_ns").get<double>(), cut);
  // More XOFF than kept: every interval costs an XOFF and (closed) an XON frame; the frames sent say how many.
  uint64_t frames = 0;
  for (const auto& p : j.at("fabric").at("pfc_pauses_by_port")) frames += p.at("pause_frames_sent").get<uint64_t>();
  EXPECT_GT(frames, 2u * 4096u + 100u);
}

}  // namespace
