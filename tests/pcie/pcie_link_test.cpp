// PCIe link efficiency against bounds worked out by hand from the encodings, and credit throttling against
// the credit round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/support/pcie_rig.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace pcie_link_test {

// Streams `total` bytes of posted writes (DMA requests of 64 KiB) from src to dst and returns the payload
// throughput of the dst port's downstream link in GB/s (payload bytes over first start to last end).
// `src_link` is the source port's link (default: the same as the measured one).
double posted_write_gbytes_per_s(const pcie::pcie_link_params& link, uint64_t mps, uint64_t total = 1u << 20,
                                 const pcie::pcie_link_params* src_link = nullptr) {
  const child_result c = run_in_child([&] {
    pcie::pcie_switch_params sp;
    sp.tlp.max_payload_bytes = mps;
    pcie_two_port_rig rig(sp, src_link ? *src_link : link, {}, 8u << 20, &link);
    const uint64_t req = 64 * 1024;
    for (uint64_t off = 0; off < total; off += req)
      rig.dma.write(pcie_two_port_rig::dst_base + off, rig.src.data() + off, uint32_t(req), off);
    sc_core::sc_start();
    const pcie::pcie_link& l = rig.sw.port("dst").down;
    if (rig.log.done.size() != total / req || rig.log.errors) return std::string("incomplete");
    if (std::memcmp(rig.mem.data(), rig.src.data(), total) != 0) return std::string("data differs");
    const double secs = double((l.last_end() - l.first_start()).value) * 1e-12;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", double(l.payload_bytes()) / secs / 1e9);
    return std::string(buf);
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return std::atof(c.output.c_str());
}

// Gen6 x16, flit mode. Raw: 64 GT/s x 16 lanes = 1024 Gb/s = 128 GB/s each way (PAM4 carries 2 bits per
// unit interval at 32 GBd: 64 Gb/s per lane, no line code). Every 256-byte flit has 236 bytes for TLPs
// (6 DLP, 8 CRC, 6 FEC), DLLPs ride in the DLP, and TLPs pack back to back across flits. A memory write with
// a 64-bit address has a 4 DW (16-byte) header in flit mode and no LCRC or framing token. So
//   goodput = 128 GB/s * 236/256 * MPS / (MPS + 16).
TEST(pcie_link, gen6_x16_posted_write_efficiency_per_mps_matches_the_flit_bound) {
  pcie::pcie_link_params link;
  link.generation = 6;
  link.lanes = 16;
  for (uint64_t mps : {128, 256, 512, 1024, 2048, 4096}) {
    const double bound = 128.0 * 236.0 / 256.0 * double(mps) / double(mps + 16);
    const double got = posted_write_gbytes_per_s(link, mps);
    EXPECT_NEAR(got / bound, 1.0, 0.03) << "MPS " << mps << ": " << got << " GB/s against " << bound;
    EXPECT_LE(got, bound * 1.001) << "MPS " << mps << " beats the bound";
    std::printf("MPS %4llu: %.2f GB/s, bound %.2f GB/s (%.2f%%)\n", (unsigned long long)mps, got, bound,
                100.0 * got / bound);
  }
}

// Gen5 x16, 128b/130b. Raw: 32 GT/s x 16 = 512 Gb/s = 64 GB/s; 128 of every 130 bits are data; each lane
// sends one SKP ordered set block after 370 data blocks (370/371). Each TLP carries a 4-byte STP token
// (with the sequence number), the 16-byte header and a 4-byte LCRC: MPS + 24 bytes. Acks and UpdateFCs
// travel on the opposite direction. So
//   goodput = 64 GB/s * 128/130 * 370/371 * MPS / (MPS + 24).
TEST(pcie_link, gen5_x16_posted_write_efficiency_per_mps_matches_the_128b130b_bound) {
  pcie::pcie_link_params link;
  link.generation = 5;
  link.lanes = 16;
  for (uint64_t mps : {128, 256, 512, 1024, 2048, 4096}) {
    const double bound = 64.0 * 128.0 / 130.0 * 370.0 / 371.0 * double(mps) / double(mps + 24);
    const double got = posted_write_gbytes_per_s(link, mps);
    EXPECT_NEAR(got / bound, 1.0, 0.03) << "MPS " << mps << ": " << got << " GB/s against " << bound;
    EXPECT_LE(got, bound * 1.001) << "MPS " << mps << " beats the bound";
    std::printf("MPS %4llu: %.2f GB/s, bound %.2f GB/s (%.2f%%)\n", (unsigned long long)mps, got, bound,
                100.0 * got / bound);
  }
}

// A narrower link scales with its lanes: Gen5 x4 at MPS 256 is a quarter of x16.
TEST(pcie_link, gen5_x4_is_a_quarter_of_x16) {
  pcie::pcie_link_params link;
  link.generation = 5;
  link.lanes = 4;
  const double bound = 16.0 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 280.0;
  EXPECT_NEAR(posted_write_gbytes_per_s(link, 256, 256 * 1024) / bound, 1.0, 0.03);
}

// A small receive buffer: 32 posted data credits (512 bytes) on a link with 50 ns of propagation. Each credit
// comes back one round trip after it was spent: the TLP's serialization (280 bytes at 64 GB/s * 128/130:
// 4.44 ns), the way there (50 ns), the receiver's UpdateFC latency (10 ns), the UpdateFC DLLP (8 bytes:
// 0.13 ns) and the way back (50 ns). So at most 512 bytes per 114.57 ns: 4.469 GB/s, far below the link.
TEST(pcie_link, small_receive_buffer_throttles_to_credits_over_round_trip) {
  pcie::pcie_link_params link;
  link.generation = 5;
  link.lanes = 16;
  link.propagation_ns = 50;
  link.update_fc_latency_ns = 10;
  link.posted_data_credits = 32;
  const double ser_ns = 280.0 * 8.0 / 512.0 * 130.0 / 128.0;
  const double dllp_ns = 8.0 * 8.0 / 512.0 * 130.0 / 128.0;
  const double rtt_ns = ser_ns + 50 + 10 + dllp_ns + 50;
  const double predicted = 32.0 * 16.0 / rtt_ns;  // bytes per ns = GB/s
  pcie::pcie_link_params src = link;  // the source's own link is short and well provisioned
  src.propagation_ns = 2;
  src.posted_data_credits = 2048;
  const double got = posted_write_gbytes_per_s(link, 256, 256 * 1024, &src);
  EXPECT_NEAR(got / predicted, 1.0, 0.03) << got << " GB/s against " << predicted;
  std::printf("credit-limited: %.3f GB/s, predicted %.3f GB/s\n", got, predicted);
  // And with credits for 8 round trips' worth the link runs free again.
  link.posted_data_credits = 4096;
  const double free_bound = 64.0 * 128.0 / 130.0 * 370.0 / 371.0 * 256.0 / 280.0;
  EXPECT_NEAR(posted_write_gbytes_per_s(link, 256, 256 * 1024) / free_bound, 1.0, 0.03);
}

// The same in flit mode: the UpdateFC rides in the DLP of the next flit on the way back (ends one flit
// after the first flit boundary past the release) and the receiver decodes each flit (2 ns) before using it.
TEST(pcie_link, gen6_credit_round_trip_includes_flit_decode_and_dlp) {
  pcie::pcie_link_params link;
  link.generation = 6;
  link.lanes = 16;
  link.propagation_ns = 50;
  link.update_fc_latency_ns = 10;
  link.flit_decode_latency_ns = 2;
  link.posted_data_credits = 32;  // 512 bytes: two 256-byte TLPs
  // Two TLPs of 272 bytes fill flits 0..2 (544 bytes over 236-byte areas: the second ends in flit 2), each
  // flit 2 ns. The first TLP ends with flit 1 (t = 4 ns) and is at the receiver at 4 + 50 + 2 = 56 ns; the
  // memory takes it at once, UpdateFC is due at 66 ns, rides in the flit from 66 to 68 ns, is back at
  // 68 + 50 + 2 = 120 ns. The second TLP's credits (ends with flit 2: 6 ns) are back one flit later, 122 ns.
  // From then on two TLPs per 120 ns round trip (the pattern repeats shifted by 120 ns, flit-aligned).
  const double predicted = 512.0 / 120.0;
  pcie::pcie_link_params src = link;
  src.propagation_ns = 2;
  src.posted_data_credits = 2048;
  const double got = posted_write_gbytes_per_s(link, 256, 256 * 1024, &src);
  std::printf("credit-limited: %.3f GB/s, predicted %.3f GB/s\n", got, predicted);
  EXPECT_NEAR(got / predicted, 1.0, 0.03) << got << " GB/s against " << predicted;
}

}  // namespace pcie_link_test
}  // namespace fabricsim::test
