// The ConnectX-8 PCIe switch: routing, read completions split at the RCB, peer-to-peer direct or through the
// root complex (ACS), an unchanged TLM-2.0 memory on a port, errors, and the small-write latency by hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "sc_models/memory/host_memory.h"
#include "tests/support/pcie_rig.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace pcie_switch_test {

std::string run_read_split(uint64_t rcb) {
  const child_result c = run_in_child([rcb] {
    pcie::pcie_switch_params sp;
    sp.tlp.max_payload_bytes = 256;
    sp.tlp.max_read_request_bytes = 4096;
    sp.tlp.read_completion_boundary_bytes = rcb;
    pcie::pcie_link_params link;
    pcie_two_port_rig rig(sp, link);
    for (uint64_t i = 0; i < 4096; ++i) rig.mem.data()[i] = uint8_t(i * 13 + 1);
    std::vector<uint8_t> buf(1024);
    rig.dma.read(pcie_two_port_rig::dst_base + 0x40, buf.data(), 1024, 7);
    sc_core::sc_start();
    const bool same = std::memcmp(buf.data(), rig.mem.data() + 0x40, 1024) == 0;
    return std::to_string(rig.sw.completions_sent()) + (same ? " same" : " differs") + " done=" +
           std::to_string(rig.log.done.size()) + " errors=" + std::to_string(rig.log.errors);
  });
  EXPECT_TRUE(c.ok) << c.output;
  return c.output;
}

// A 1024-byte read at 0x40 with MPS 256 and MRRS 4096 (one request). Each completion but the last ends on
// an RCB boundary and carries at most MPS bytes. RCB 128: the first ends at the last 128-aligned address
// within 0x40 + 256 = 0x140, i.e. 0x100 (192 bytes); then 256, 256, 256 up to 0x400 and 64 to 0x440: 5.
// RCB 64: 0x140 is 64-aligned, so 256 bytes each: 4.
TEST(pcie_switch, read_completions_split_at_the_read_completion_boundary) {
  EXPECT_EQ(run_read_split(128), "5 same done=1 errors=0");
  EXPECT_EQ(run_read_split(64), "4 same done=1 errors=0");
}

// MRRS 512 cuts the same read into requests [0x40, 0x200), [0x200, 0x400), [0x400, 0x440): completions
// 256 + 192, 256 + 256, 64 with RCB 64: 5.
TEST(pcie_switch, reads_are_cut_at_the_max_read_request_size) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    sp.tlp.max_read_request_bytes = 512;
    pcie_two_port_rig rig(sp, pcie::pcie_link_params{});
    std::vector<uint8_t> buf(1024);
    rig.dma.read(pcie_two_port_rig::dst_base + 0x40, buf.data(), 1024, 7);
    sc_core::sc_start();
    return std::to_string(rig.sw.completions_sent()) + " " + std::to_string(rig.sw.requests());
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "5 1");
}

struct p2p_result {
  std::string text;
  double first_done_ns = 0;
};

// The NIC writes 64 KiB into GPU memory; with ACS the writes go up to the root complex and back down.
p2p_result run_nic_to_gpu(const std::string& p2p) {
  p2p_result r;
  const child_result c = run_in_child([&] {
    pcie::pcie_switch_params sp;
    sp.peer_to_peer = p2p;
    pcie_tray_rig rig(sp);
    std::vector<uint8_t> src(65536);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i ^ 0x5a);
    rig.nic.write(pcie_tray_rig::gpu_base + 4096, src.data(), 64, 1);  // alone first: its latency
    sc_core::sc_start();
    const double first = rig.nic_log.done.at(0).second;
    rig.nic.write(pcie_tray_rig::gpu_base + 8192, src.data(), uint32_t(src.size()), 2);
    sc_core::sc_start();
    const bool same = std::memcmp(rig.gpu_mem.data() + 8192, src.data(), src.size()) == 0 &&
                      std::memcmp(rig.gpu_mem.data() + 4096, src.data(), 64) == 0;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s redirected=%llu turned=%llu cpu_down_bytes=%llu %.3f",
                  same ? "same" : "differs", (unsigned long long)rig.sw.redirected_to_root(),
                  (unsigned long long)rig.rc.turned_around(),
                  (unsigned long long)rig.sw.port("cpu").down.payload_bytes(), first);
    return std::string(buf);
  });
  EXPECT_TRUE(c.ok) << c.output;
  r.text = c.output.substr(0, c.output.rfind(' '));
  r.first_done_ns = std::atof(c.output.substr(c.output.rfind(' ') + 1).c_str());
  return r;
}

// Hand figure, direct: the NIC's 64-byte write is an 80-byte TLP (16-byte header) in flit 0 of the NIC's
// internal Gen6 x16 link (a flit is 256 B / 128 GB/s = 2 ns): at the switch at 2 + 2 (propagation) + 2
// (flit decode) = 6 ns; cut-through 100 ns: eligible at 106 ns, the start of flit 53 of the GPU link, which
// ends at 108 ns; at the GPU at 108 + 2 + 2 = 112 ns; the memory's channel (64 B at 8000 Gb/s: 0.064 ns)
// and its 300 ns latency: done at 412.064 ns.
// Through the root complex (ACS): the 64-byte TLP leaves the switch on the Gen5 x16 cpu link instead (80 +
// 8 framing bytes = 88 bytes at 64 GB/s * 128/130: 1.396 ns) from 106 ns, is at the root complex at
// 106 + 1.396 + 2 = 109.396 ns, leaves it 150 ns later (259.396), comes back over the cpu link (another
// 1.396 + 2 = 262.792 ns at the switch, header delivered for cut-through at 259.396 + (4 + 16 bytes: 0.317
// ns) + 2 = 261.713 ns), waits the cut-through latency (361.713 ns: flit boundary 362), and goes down the GPU
// link as before: 364 + 4 = 368 ns, + 300.064 = 668.064 ns.
TEST(pcie_switch, peer_to_peer_direct_or_through_the_root_complex) {
  const p2p_result direct = run_nic_to_gpu("direct");
  const p2p_result acs = run_nic_to_gpu("via_root_complex");
  EXPECT_EQ(direct.text, "same redirected=0 turned=0 cpu_down_bytes=0");
  // 1 + 64 KiB / 256 = 257 TLPs redirected, every byte over the cpu link once down (and once back up).
  EXPECT_EQ(acs.text, "same redirected=257 turned=257 cpu_down_bytes=65600");
  EXPECT_NEAR(direct.first_done_ns, 412.064, 0.01);
  EXPECT_NEAR(acs.first_done_ns, 668.064, 0.01);
}

// A NIC read of GPU memory with ACS: the request goes up to the root complex and back down; the GPU's
// completions go up to the root complex (the requester of the turned-around read) and its completions back
// down to the NIC, so the data crosses the cpu link twice: 4096 bytes each way.
TEST(pcie_switch, peer_to_peer_reads_through_the_root_complex_return_the_data) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    sp.peer_to_peer = "via_root_complex";
    pcie_tray_rig rig(sp);
    for (int i = 0; i < 4096; ++i) rig.gpu_mem.data()[i] = uint8_t(i * 5 + 1);
    std::vector<uint8_t> buf(4096);
    rig.nic.read(pcie_tray_rig::gpu_base, buf.data(), 4096, 1);
    sc_core::sc_start();
    return std::string(std::memcmp(buf.data(), rig.gpu_mem.data(), 4096) == 0 ? "same" : "differs") +
           " errors=" + std::to_string(rig.nic_log.errors) +
           " turned=" + std::to_string(rig.rc.turned_around()) +
           " down=" + std::to_string(rig.sw.port("cpu").down.payload_bytes()) +
           " up=" + std::to_string(rig.sw.port("cpu").up.payload_bytes());
  });
  ASSERT_TRUE(c.ok) << c.output;
  // MRRS 512: 8 read requests turned around.
  EXPECT_EQ(c.output, "same errors=0 turned=8 down=4096 up=4096");
}

// An existing TLM-2.0 memory that only implements b_transport plugs into a port unchanged (the simple
// target socket converts the AT phases to a blocking call).
TEST(pcie_switch, an_unchanged_blocking_tlm_memory_plugs_into_a_port) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    pcie::pcie_switch sw("sw", sp, two_ports(pcie::pcie_link_params{}, pcie::pcie_link_params{}));
    memory::host_memory mem("mem", 1 << 20);
    pcie::dma_engine dma("dma");
    pcie_done_log log;
    dma.set_handler(log);
    dma.socket.bind(sw.port("src").from_device);
    sw.port("dst").to_device.bind(mem.socket);
    std::vector<uint8_t> w(3000), r(3000);
    for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 31);
    dma.write((2ull << 40) + 100, w.data(), 3000, 1);
    sc_core::sc_start();
    dma.read((2ull << 40) + 100, r.data(), 3000, 2);
    sc_core::sc_start();
    return std::to_string(log.done.size()) + " " + std::to_string(log.errors) +
           (std::memcmp(mem.data() + 100, w.data(), 3000) == 0 ? " written" : " not_written") +
           (r == w ? " read_back" : " read_differs");
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "2 0 written read_back");
}

// A request no window claims (no root port here) and one to an empty port complete in error, and the run ends.
TEST(pcie_switch, unclaimed_and_unbound_requests_complete_in_error) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    pcie_two_port_rig rig(sp, pcie::pcie_link_params{});
    std::vector<uint8_t> b(512);
    rig.dma.write(5ull << 40, b.data(), 512, 1);          // nobody's window
    rig.dma.read((1ull << 40) + 64, b.data(), 512, 2);    // the src port's own window: points back: UR
    rig.dma.write(pcie_two_port_rig::dst_base, b.data(), 512, 3);  // fine
    sc_core::sc_start();
    return std::to_string(rig.log.done.size()) + " errors=" + std::to_string(rig.log.errors) +
           " ur=" + std::to_string(rig.sw.unsupported_requests());
  });
  ASSERT_TRUE(c.ok) << c.output;
  // 2 write TLPs (MPS 256) + 2 read TLPs (the read crosses the 512-byte MRRS boundary) unsupported.
  EXPECT_EQ(c.output, "3 errors=2 ur=4");
}

TEST(pcie_switch, bad_configurations_name_the_field) {
  const child_result c = run_in_child([] {
    std::string out;
    auto attempt = [&](auto fn) {
      try {
        fn();
        out += "no error|";
      } catch (const core::config_error& e) {
        out += std::string(e.what()) + "|";
      }
    };
    attempt([] {
      pcie::pcie_switch_params sp;
      sp.tlp.max_payload_bytes = 384;
      pcie::pcie_switch sw("a", sp);
    });
    attempt([] {
      auto ports = pcie::connectx8_gb300_ports();
      ports[2].link.lanes = 32;
      pcie::pcie_switch sw("b", pcie::pcie_switch_params{}, ports);
    });
    attempt([] {
      auto ports = pcie::connectx8_gb300_ports();
      ports[2].link.lanes = 16;  // 16 + 16 + 16 external lanes fit 48; one more x4 port does not
      ports.push_back(ports[2]);
      ports.back().name = "ssd2";
      ports.back().link.lanes = 4;
      pcie::pcie_switch sw("c", pcie::pcie_switch_params{}, ports);
    });
    attempt([] {
      pcie::pcie_switch_params sp;
      sp.peer_to_peer = "sometimes";
      pcie::pcie_switch sw("d", sp);
    });
    return out;
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_NE(c.output.find("a: tlp.max_payload_bytes 384 is not a power of two"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("b.ssd.up.lanes: 32 is out of range [1, 16] lanes"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("c: the ports use 52 lanes, more than lanes_total 48"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("d.peer_to_peer: \"sometimes\" is not one of: direct, via_root_complex"),
            std::string::npos)
      << c.output;
}

// The counters a report would read are registered under the blocks' names.
TEST(pcie_switch, statistics_are_registered_by_instance) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    pcie_two_port_rig rig(sp, pcie::pcie_link_params{});
    core::stats_registry stats;
    rig.sw.register_stats(stats);
    rig.dma.write(pcie_two_port_rig::dst_base, rig.src.data(), 1000, 1);  // 256 + 256 + 256 + 232
    sc_core::sc_start();
    return std::to_string(stats.counter_value("sw.dst.down", "tlps")) + " " +
           std::to_string(stats.counter_value("sw.dst.down", "payload_bytes")) + " " +
           std::to_string(stats.counter_value("sw", "requests"));
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "4 1000 1");
}

// Descriptors are pooled: streaming 4 MiB (16384 TLPs of 256 bytes) allocates no more than a few blocks.
TEST(pcie_switch, tlps_and_payloads_are_pooled) {
  const child_result c = run_in_child([] {
    pcie::pcie_switch_params sp;
    pcie_two_port_rig rig(sp, pcie::pcie_link_params{}, {}, 4u << 20);
    for (uint64_t off = 0; off < (4u << 20); off += 65536)
      rig.dma.write(pcie_two_port_rig::dst_base + off, rig.src.data() + off, 65536, off);
    sc_core::sc_start();
    return std::to_string(rig.sw.pooled_tlps());
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_LE(std::stoul(c.output), 1024u) << c.output;
}

}  // namespace pcie_switch_test
}  // namespace fabricsim::test
