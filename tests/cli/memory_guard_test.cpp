// The memory guard's check before the first event (testbench/memory_guard.h): what the traffic can hold in
// flight and what the report will take, projected from the keys, against run.memory_limit_mib. Through the
// binary, as a user meets it; the peak resident memory of a whole run comes from the kernel (wait4).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "sc_models/core/packet.h"
#include "tests/support/run_cli.h"

namespace memory_guard_test {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string scenarios = std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/";

// The guard projects what a build without sanitizers holds. Under AddressSanitizer every allocation carries
// redzones and freed blocks wait in a quarantine, so the kernel's peak for the same run is larger by an amount
// that belongs to the sanitizer (the report's 50,465 statistics took 38 MiB there against 16 MiB in release):
// the tests that compare the projection with a measured peak run in the release build only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

// Runs the binary in a child of its own and returns, with its exit status and output, the child's peak
// resident memory in MiB as the kernel counts it (ru_maxrss of that one process, report included).
struct measured_run {
  int exit_code = -1;
  std::string output;
  double peak_mib = 0.0;
};
measured_run run_measured(const std::string& args) {
  const std::string out = testing::TempDir() + "memory_guard_test.out";
  const std::string cmd = "exec " + std::string(FABRICSIM_BINARY) + " " + args + " >" + out + " 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  measured_run r;
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) return r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.peak_mib = double(ru.ru_maxrss) / 1024.0;  // KiB on Linux
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

// The figure in MiB that precedes `after` ("123 MiB held once set up"), or -1.
double mib_before(const std::string& text, const std::string& after) {
  std::smatch m;
  return std::regex_search(text, m, std::regex("([0-9]+) MiB " + after)) ? std::stod(m[1]) : -1.0;
}
double mib_after(const std::string& text, const std::string& before) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(before + " ([0-9]+) MiB")) ? std::stod(m[1]) : -1.0;
}

// What one descriptor in flight costs, as memory_guard.h defines it: the descriptor, a free-list pointer and a
// 24-byte queue slot, the last two twice over (vectors and rings double).
constexpr uint64_t per_descriptor = sizeof(fabricsim::core::packet) + 2 * 8 + 2 * 24;

// One switch (default.yaml: single_switch, two hosts) whose shared buffer is set to 4 GiB. Once set up the
// run holds a few tens of MiB, far below a limit of the switch's projected in-flight memory, so the set-up
// check passes; the buffer's packets are what the projection adds, and they are refused, naming the key.
TEST(memory_guard, in_flight_packets_past_the_limit_are_refused_naming_the_key) {
  const uint64_t buffer = uint64_t(1) << 32;
  // The smallest full data frame of the scenario's 4096-byte MTU: Ethernet 14, IPv4 20, UDP 8, BTH 12, the
  // payload, ICRC 4, FCS 4 (IBTA annex A17, IEEE 802.3).
  const uint64_t frame = 4096 + 14 + 20 + 8 + 12 + 4 + 4;
  const uint64_t frames = (buffer + frame - 1) / frame;
  const uint64_t descriptors = frames + (frames + 15) / 16;  // one ACK per nic.ack_every_packets (16) frames
  const uint64_t expected_mib = (descriptors * per_descriptor) >> 20;
  const std::string run =
      "run " + scenarios + "default.yaml --quiet --set switch.buffer_bytes=" + std::to_string(buffer);

  const run_result r = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(expected_mib));
  ASSERT_EQ(r.exit_code, 2) << r.output;
  const std::string term = std::to_string(expected_mib) + " MiB for packets in the shared buffers of 1 switch of " +
                           std::to_string(frame) + "-byte frames (switch.buffer_bytes)";
  EXPECT_NE(r.output.find(term), std::string::npos) << "expected: " << term << "\n" << r.output;
  EXPECT_NE(r.output.find("default.yaml: the run of 2 hosts (topology.hosts) would need up to "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the largest term is switch.buffer_bytes: lower it"), std::string::npos) << r.output;
  const double held = mib_before(r.output, "held once set up");
  const double total = mib_after(r.output, "would need up to");
  ASSERT_GT(held, 0) << r.output;
  EXPECT_LT(held, double(expected_mib)) << "the set-up alone is under the limit";
  EXPECT_GE(total, held + double(expected_mib)) << r.output;

  // A limit just below the projected total is refused; one above it runs (the set-up holds the same memory).
  const run_result below = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(int(total) - 4));
  EXPECT_EQ(below.exit_code, 2) << below.output;
  EXPECT_NE(below.output.find("(switch.buffer_bytes)"), std::string::npos) << below.output;
  const run_result above = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(int(total) + 16));
  EXPECT_EQ(above.exit_code, 0) << above.output;
}

// A normal run (bench/scale_4096.yaml cut to 256 hosts, 20 us of its permutation): the projected total is at
// least the peak resident memory the kernel measures for the same run done whole (report included), and not
// far above it (1.34 times when this test was written: 70 MiB against 52). The projection is read from the
// refusal at a limit a little above what the set-up holds, which the first refusal says.
TEST(memory_guard, a_normal_runs_projection_bounds_its_measured_peak) {
  if (sanitized) GTEST_SKIP() << "peak memory under AddressSanitizer is not what the guard projects";
  const std::string run = "run " + std::string(FABRICSIM_SOURCE_DIR) +
                          "/bench/scale_4096.yaml --set topology.leaves=4 --set topology.spines=4 "
                          "--set run.duration_us=20 --quiet";
  const run_result set_up = fabricsim(run + " --set run.memory_limit_mib=1");
  ASSERT_EQ(set_up.exit_code, 2) << set_up.output;
  const double held = mib_after(set_up.output, "took");
  ASSERT_GT(held, 0) << set_up.output;
  // 8 MiB above it, as projection() below and for the same reason: the set-up's resident memory varies from run to
  // run (35-37 MiB here; at 2 MiB a fresh clone's run beside an ASan build was refused at its set-up instead).
  const run_result projected = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(int(held) + 8));
  ASSERT_EQ(projected.exit_code, 2) << projected.output;
  const double total = mib_after(projected.output, "would need up to");
  ASSERT_GT(total, 0) << projected.output;
  EXPECT_NE(projected.output.find("for the report of "), std::string::npos) << projected.output;
  EXPECT_NE(projected.output.find("(run.duration_us)"), std::string::npos) << projected.output;
  const measured_run whole = run_measured(run);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;  // the bytes landed within the 20 us are checked
  EXPECT_GE(total, whole.peak_mib) << projected.output;
  EXPECT_LE(total, 2.0 * whole.peak_mib) << projected.output;
}

// The projection of `run` read from its refusal at a limit a little above what its set-up holds (the first
// refusal, at 1 MiB, says that); empty when either refusal is missing. The margin, 8 MiB, is for the set-up's own
// resident memory, which varies from run to run by a few MiB on a loaded machine and more under AddressSanitizer
// (at 2 MiB the second run was once refused at its set-up instead, in a parallel ASan run); every run here
// projects at least 20 MiB past its set-up.
std::string projection(const std::string& run) {
  const run_result set_up = fabricsim(run + " --set run.memory_limit_mib=1");
  const double held = mib_after(set_up.output, "took");
  if (set_up.exit_code != 2 || held <= 0) return "";
  const run_result projected = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(int(held) + 8));
  return projected.exit_code == 2 && projected.output.find("would need up to") != std::string::npos ? projected.output
                                                                                                    : "";
}

// bench/scale_4096.yaml cut to 256 hosts (4 leaves of 64, 4 spines): a random permutation, one 8 MiB WRITE from
// every host to one behind another leaf, so 256 queue pairs send, one per host.
const std::string bench_256 = "run " + std::string(FABRICSIM_SOURCE_DIR) +
                              "/bench/scale_4096.yaml --set topology.leaves=4 --set topology.spines=4 --quiet";
constexpr uint64_t bench_256_senders = 256;

// With a send window no PSN is sent twice in a run shorter than the retransmission timeout (nic.rto_us,
// 65.536 us), so the data frames alive are at most the sending queue pairs times the window. 50 us of the
// 256-host permutation with a window of 256 PSNs (no wider than the NAK threshold, min(2048, reorder_window
// 1024 / 2)): the term is 256 x 256 packets and their ACKs, smaller than the line rate's (about 600 frames per
// host in 50 us) and the buffers'. The projection bounds the peak the
// kernel measures for the run done whole, within twice it (1.37 times when this test was written: 68 MiB
// against 49.5; 1.95 with the line rate's bound alone).
TEST(memory_guard, the_send_window_bounds_a_runs_packets_in_flight) {
  if (sanitized) GTEST_SKIP() << "peak memory under AddressSanitizer is not what the guard projects";
  const std::string run = bench_256 + " --set run.duration_us=50 --set nic.send_window_packets=256";
  // Each queue pair's 256 packets draw one ACK per 16 (nic.ack_every_packets) and one per message end among
  // them: its one message, 8 MiB in packets of 4,096 bytes, is 2,048 packets long, so one at most.
  const uint64_t descriptors = bench_256_senders * (256 + 256 / 16 + 1);
  const uint64_t expected_mib = (descriptors * per_descriptor) >> 20;
  const std::string out = projection(run);
  ASSERT_FALSE(out.empty()) << "no refusal at a limit just above the set-up";
  const std::string term = std::to_string(expected_mib) +
                           " MiB for unacknowledged packets of 256 sending queue pairs (send window 256 PSNs) and "
                           "their ACKs (nic.send_window_packets)";
  EXPECT_NE(out.find(term), std::string::npos) << "expected: " << term << "\n" << out;
  EXPECT_NE(out.find("the largest term is nic.send_window_packets"), std::string::npos) << out;
  EXPECT_EQ(out.find("(run.duration_us)"), std::string::npos) << "the line rate's bound is the larger\n" << out;
  const double total = mib_after(out, "would need up to");
  const measured_run whole = run_measured(run);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_GE(total, whole.peak_mib) << out;
  EXPECT_LE(total, 2.0 * whole.peak_mib) << out;
}

// The window's argument needs a run shorter than the retransmission timeout: at 70 us (past 65.536) a timeout
// could send a PSN again, so the guard keeps the other bounds; so it does with a window wider than the NAK
// threshold (520 > 512: a NAK could), with sack and a window wider than nic.sack_reorder_packets (128), and with
// no window. In the first three the window's term (256 x 256 or 256 x 520 packets) would be below the line
// rate's, so its absence is the condition's doing.
TEST(memory_guard, the_send_windows_term_is_left_out_where_a_psn_could_be_sent_twice) {
  for (const char* set : {" --set run.duration_us=70 --set nic.send_window_packets=256",
                          " --set run.duration_us=50 --set nic.send_window_packets=520",
                          " --set run.duration_us=50 --set nic.retransmission=sack --set nic.send_window_packets=256",
                          " --set run.duration_us=50"}) {
    const std::string out = projection(bench_256 + set);
    ASSERT_FALSE(out.empty()) << set;
    EXPECT_EQ(out.find("nic.send_window_packets"), std::string::npos) << set << "\n" << out;
    EXPECT_NE(out.find("(run.duration_us)"), std::string::npos) << set << "\n" << out;
  }
}

// The window's argument holds for RDMA WRITEs only (a READ's responses are the responder's and may take more
// PSNs at once). A flow list of the 256-host permutation's shape (host i writes 8 MiB to host i + 64, behind the
// next leaf) gets the term; the same list with its first row a READ does not.
TEST(memory_guard, the_send_windows_term_needs_every_operation_a_write) {
  for (const std::string first_op : {"write", "read"}) {
    const std::string csv = testing::TempDir() + "memory_guard_flows_" + first_op + ".csv";
    {
      std::ofstream out(csv);
      out << "src,dst,bytes,start_ns,op\n";
      for (int i = 0; i < 256; ++i)
        out << i << "," << (i + 64) % 256 << ",8388608,0," << (i == 0 ? first_op : "write") << "\n";
    }
    const std::string out = projection(bench_256 + " --set workload.kind=flows --set workload.flow_file=" + csv +
                                       " --set run.duration_us=50 --set nic.send_window_packets=256");
    ASSERT_FALSE(out.empty()) << first_op;
    EXPECT_EQ(out.find("(nic.send_window_packets)") != std::string::npos, first_op == "write") << out;
  }
}

// With every work request posted before the first event (a flow run), a reorder stash fills only at the peer of
// a queue pair that sends: 256 stashes of nic.reorder_window (1,024) packets, not 512 (the receivers' queue
// pairs send only ACKs, so their peers' stashes stay empty). A run of 20 ms, where the line rate's bound is past
// the buffers'.
TEST(memory_guard, only_the_peers_of_sending_queue_pairs_count_a_reorder_stash) {
  const std::string out = projection(bench_256 + " --set run.duration_us=20000");
  ASSERT_FALSE(out.empty());
  const uint64_t frames = bench_256_senders * 1024;
  const uint64_t expected_mib = ((frames + frames / 16) * per_descriptor) >> 20;
  const std::string term = std::to_string(expected_mib) +
                           " MiB for packets in the reorder stashes of the peers of 256 sending queue pairs "
                           "(nic.reorder_window)";
  EXPECT_NE(out.find(term), std::string::npos) << "expected: " << term << "\n" << out;
}

// The report's term against what the report really takes: the whole process's peak (wait4) less its peak when
// the loop ended (the report's `peak_rss_mib`, read before the report is built), on a fabric shaped like the
// 4,096-NIC benchmark's, cut to 512 NICs and 16 switches of 128 ports (2,048 ports). When this test was
// written the term was 24 MiB (50,465 statistics) against 16 MiB measured (85 MiB whole, 69 at the loop's end).
TEST(memory_guard, the_report_term_bounds_what_the_report_takes) {
  if (sanitized) GTEST_SKIP() << "peak memory under AddressSanitizer is not what the guard projects";
  const std::string run = "run " + std::string(FABRICSIM_SOURCE_DIR) +
                          "/bench/scale_4096.yaml --set topology.leaves=8 --set topology.spines=8 "
                          "--set run.duration_us=5 --quiet";
  const std::string json = testing::TempDir() + "memory_guard_report.json";
  const measured_run whole = run_measured(run + " --json " + json);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  std::ifstream in(json);
  const double loop_end = nlohmann::json::parse(in)["peak_rss_mib"].get<double>();
  const double report = whole.peak_mib - loop_end;
  ASSERT_GT(report, 1.0) << whole.peak_mib << " " << loop_end;
  // A limit at the loop's end: above the set-up, below set-up, traffic and report together.
  const run_result projected = fabricsim(run + " --set run.memory_limit_mib=" + std::to_string(int(loop_end)));
  ASSERT_EQ(projected.exit_code, 2) << projected.output;
  const double term = mib_before(projected.output, "for the report of ");
  EXPECT_GE(term, report) << projected.output;
  EXPECT_LE(term, 3.0 * report) << projected.output;
}

}  // namespace memory_guard_test
