// `fabricsim pcie-bench`: 800G RDMA WRITE reception into GPU memory through the ConnectX-8 switch, GPUDirect
// RDMA against a bounce buffer, checked against figures worked out by hand from the parameters.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "testbench/pcie_bench.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace pcie_bench_test {

// Runs the bench in a child and returns "small_latency achieved stream host_busy verified" of the last size.
std::vector<double> bench(const testbench::pcie_bench_params& p) {
  const child_result c = run_in_child([&] {
    const auto runs = testbench::run_pcie_bench(p);
    const auto& r = runs.at(0);
    const auto& pt = r.points.back();
    char buf[256];
    std::snprintf(buf, sizeof buf, "%.4f %.4f %.4f %.4f %d %.4f", r.small_latency_ns, pt.achieved_gbps,
                  pt.stream_gbps, r.host_memory_busy, pt.verified ? 1 : 0, pt.offered_gbps);
    return std::string(buf);
  });
  EXPECT_TRUE(c.ok) << c.output;
  std::vector<double> v;
  const char* s = c.output.c_str();
  char* end;
  for (double x = std::strtod(s, &end); end != s; x = std::strtod(s, &end)) {
    v.push_back(x);
    s = end;
  }
  if (v.size() != 6) ADD_FAILURE() << c.output;
  v.resize(6);
  return v;
}

testbench::pcie_bench_params sized(const std::string& config, uint64_t size, uint64_t messages) {
  testbench::pcie_bench_params p;
  p.config = config;
  p.min_size_bytes = p.max_size_bytes = size;
  p.point_bytes = size * messages;
  return p;
}

// An isolated 64-byte WRITE arrives (last bit) at 162 wire bytes * 8 / 800 Gb/s = 1.62 ns.
// GPUDirect: its 80-byte TLP (16-byte header) goes in the first flit of the NIC's Gen6 x16 link starting after
// 1.62 ns: flit 1 (2..4 ns; a flit is 256 B at 128 GB/s = 2 ns); at the switch after 2 ns of propagation and
// 2 of flit decode: 8 ns; cut-through 100 ns: 108 ns, a flit boundary on the GPU link; that flit ends at
// 110 ns, + 4 = 114 ns at the GPU; HBM: 64 B at 8000 Gb/s (0.064 ns) + 300 ns = 414.064 ns. Latency
// 414.064 - 1.62 = 412.444 ns.
// Bounce: the same TLP leaves the switch at 108 ns on the Gen5 x16 cpu link (88 bytes with STP and LCRC:
// 1.397 ns), at the root complex at 111.397, + 150 = 261.397; host memory 64 B at 4000 Gb/s (0.128) + 120 =
// 381.525 ns: landed. Copy launch + 2000 = 2381.525. The GPU's 16-byte read request: flit 1191 (2382..2384),
// switch at 2388 (+4), 2488 (+100); cpu link 24 bytes (0.381): root complex at 2490.381, + 150 = 2640.381;
// memory 0.128 + 120 = 2760.509; root complex + 150 = 2910.509; completion (12-byte header + 64 + 8 = 84
// bytes) on the cpu link: header (16 bytes, 0.254 ns) at the switch at 2912.763 (+2), + 100 = 3012.763, next
// flit 1507 (3014..3016), at the GPU at 3020 ns. Latency 3020 - 1.62 = 3018.38 ns.
TEST(pcie_bench, small_write_latency_gpudirect_and_bounce_match_the_hand_figures) {
  EXPECT_NEAR(bench(sized("gpudirect", 4096, 16))[0], 412.444, 0.01);
  EXPECT_NEAR(bench(sized("bounce", 4096, 16))[0], 3018.38, 0.01);
}

// Large WRITEs with GPUDirect: the wire offers 800 Gb/s * 1 MiB / (1 MiB + 256 packets * 82 + 16 RETH) =
// 784.29 Gb/s of payload; the GPU's Gen6 x16 link takes MPS-256 writes at 111.06 GB/s = 888 Gb/s, so the
// placement keeps up with the wire.
TEST(pcie_bench, gpudirect_sustains_the_line_rate_for_large_writes) {
  const auto v = bench(sized("gpudirect", 1 << 20, 16));
  const double offered = 800.0 * 1048576.0 / (1048576.0 + 256 * 82 + 16);
  EXPECT_NEAR(v[5], offered, 0.01);
  EXPECT_NEAR(v[1] / offered, 1.0, 0.01) << v[1];
  EXPECT_EQ(v[4], 1.0) << "data not verified";
}

// Bounce buffer, large WRITEs: every byte crosses the Gen5 x16 cpu link twice, down as a posted write and up
// as a completion. Down carries per 256 bytes of message: the write TLP (256 + 16 header + 8 framing = 280),
// half a read request (MRRS 512: 24 / 2 = 12) and the Acks of the completions coming up (one 8-byte DLLP per
// 4 completions of 256: 2): 294 bytes. The link moves 64 GB/s * 128/130 * 370/371 = 62.845 GB/s, so
// 62.845 * 256 / 294 = 54.72 GB/s = 437.8 Gb/s: 56 % of what the wire offers. (Completions need no
// UpdateFC: the switch advertises infinite completion credits.)
TEST(pcie_bench, bounce_buffer_is_held_to_the_root_port_link) {
  const auto v = bench(sized("bounce", 1 << 20, 32));
  const double bound = 64.0 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 294.0 * 8.0;
  EXPECT_NEAR(v[1] / bound, 1.0, 0.03) << v[1] << " Gb/s against " << bound;
  EXPECT_LT(v[1], 0.6 * v[5]);
  EXPECT_EQ(v[4], 1.0) << "data not verified";
}

// GPUDirect with ACS redirect: every write goes down the cpu link to the root complex and back up. Down carries
// per 256 bytes the write (280), the UpdateFC for the write coming back up (8: the switch's posted credits are
// finite) and a quarter of an Ack (2): 62.845 GB/s * 256/290 = 55.48 GB/s = 443.8 Gb/s.
TEST(pcie_bench, gpudirect_through_the_root_complex_is_held_to_the_root_port_link) {
  testbench::pcie_bench_params p = sized("gpudirect", 1 << 20, 16);
  p.pcie_switch.peer_to_peer = "via_root_complex";
  const auto v = bench(p);
  const double bound = 64.0 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 290.0 * 8.0;
  EXPECT_NEAR(v[1] / bound, 1.0, 0.03) << v[1] << " Gb/s against " << bound;
  EXPECT_EQ(v[4], 1.0) << "data not verified";
}

// With host memory as the bottleneck (600 Gb/s left to PCIe) each placed byte is written and read once:
// at most 300 Gb/s over the stream, and the memory is busy most of the time.
TEST(pcie_bench, bounce_buffer_competes_for_host_memory_bandwidth) {
  testbench::pcie_bench_params p = sized("bounce", 1 << 20, 32);
  p.root_complex.memory.bandwidth_gbps = 600;
  const auto v = bench(p);
  EXPECT_LE(v[2], 300.0) << v[2];
  EXPECT_GT(v[2], 0.8 * 300.0) << v[2];
  EXPECT_GT(v[3], 0.8) << "host memory busy " << v[3];
}

// Small WRITEs through a bounce buffer: copies run one at a time on one stream, so each 64-byte message costs
// a whole read round trip from the GPU to host memory (2381.525 -> 3020 ns above: 638.5 ns, give or take a
// flit): 512 bits / 638.5 ns = 0.80 Gb/s.
TEST(pcie_bench, bounce_buffer_small_messages_pay_a_copy_round_trip_each) {
  const auto v = bench(sized("bounce", 64, 64));
  EXPECT_NEAR(v[1] / (512.0 / 638.475), 1.0, 0.03) << v[1];
}

testbench::pcie_bench_params send(const std::string& config, uint64_t size, uint64_t messages) {
  testbench::pcie_bench_params p = sized(config, size, messages);
  p.direction = "send";
  return p;
}

// Sending an isolated 64-byte message with GPUDirect: the NIC's read request (16-byte header) goes in flit 0
// of its Gen6 link (0..2 ns), is at the switch at 6 ns, 106 after cut-through, in flit 53 of the GPU link
// (106..108), at the GPU at 112; HBM 0.064 + 300: 412.064 ns. The completion (12 + 64 bytes) takes the next
// flit, 207 (414..416), at the switch at 420, 520 after cut-through, flit 260 of the NIC link (520..522), in
// the NIC at 526 ns; the 162-byte packet is out 1.62 ns later: 527.62 ns.
TEST(pcie_bench, send_latency_gpudirect_matches_the_hand_figure) {
  EXPECT_NEAR(bench(send("gpudirect", 4096, 16))[0], 527.62, 0.01);
}

// Small sends are held by the NIC's read-ahead: 32 packet buffers, each busy for a read round trip (526 ns
// above) plus the packet's 1.62 ns on the wire: 32 * 64 bytes per 527.62 ns = 31.05 Gb/s. Large sends keep
// up with the wire (784.29 Gb/s at 1 MiB): a 4 KiB read takes about 600 ns, and 32 of them in flight carry
// 32 * 4096 * 8 / 600 ns = 1748 Gb/s, twice the wire.
TEST(pcie_bench, gpudirect_sends_are_held_by_the_read_ahead_when_small_and_keep_up_when_large) {
  EXPECT_NEAR(bench(send("gpudirect", 64, 256))[1] / (32.0 * 512.0 / 527.62), 1.0, 0.03);
  const auto v = bench(send("gpudirect", 1 << 20, 16));
  EXPECT_NEAR(v[1] / v[5], 1.0, 0.01) << v[1];
  EXPECT_EQ(v[4], 1.0) << "sent bytes differ from GPU memory";
}

// Sending through a bounce buffer: the GPU's copy writes cross the cpu link down (280 bytes per 256), the
// NIC's read requests too (12 per 256 at MRRS 512) with the Acks of the completions coming up (2): the same
// 437.8 Gb/s bound as on receive.
TEST(pcie_bench, bounce_sends_are_held_to_the_root_port_link) {
  const auto v = bench(send("bounce", 1 << 20, 32));
  const double bound = 64.0 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 294.0 * 8.0;
  EXPECT_NEAR(v[1] / bound, 1.0, 0.03) << v[1] << " Gb/s against " << bound;
  EXPECT_EQ(v[4], 1.0) << "sent bytes differ from GPU memory";
}

TEST(pcie_bench, bad_parameters_are_named) {
  const child_result c = run_in_child([] {
    testbench::pcie_bench_params p;
    p.config = "sometimes";
    try {
      testbench::run_pcie_bench(p);
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  EXPECT_EQ(c.output, "pcie-bench.config: \"sometimes\" is not one of: gpudirect, bounce, both");
}

}  // namespace pcie_bench_test
}  // namespace fabricsim::test
