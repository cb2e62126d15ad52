// The SuperNIC's payload DMA (sc_models/nic/payload_dma.h) on its own, against cases worked out by hand:
// DMI placement copies bytes at their address (a planted misplacement moves exactly one write); generated
// payloads land as the pattern's words and are not stored; with PCIe, path MTU 1024 and a read-ahead of two
// buffers, a 2500-byte WRITE at 0x1000 is read as 1024 + 1024 + 452 bytes at 0x1000, 0x1400, 0x1800, the third
// read only once the first packet has left the wire; a bounce copy holds the work request until it is staged.
#include "sc_models/nic/payload_dma.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::nic {
namespace payload_dma_test {

using core::packet;
using core::picoseconds;

constexpr picoseconds never = payload_dma::never;

struct fake_host final : payload_dma_host {
  send_queue sq;
  core::ring<read_job> responses{4};
  bool live = true;
  std::vector<picoseconds> wakes;
  bool dma_qp_live(size_t) const override { return live; }
  send_queue& dma_send_queue(size_t) override { return sq; }
  core::ring<read_job>& dma_responses(size_t) override { return responses; }
  void dma_wake(picoseconds at) override { wakes.push_back(at); }
};

struct read_call {
  uint64_t va;
  uint8_t* dst;
  uint64_t length, cookie;
};

struct fake_tray final : placement_target {
  std::vector<read_call> reads;
  std::vector<uint64_t> stage_cookies;
  std::vector<std::pair<uint64_t, uint64_t>> writes, issued;
  bool bounce = false;
  void post_write(uint64_t va, const uint8_t*, uint64_t length) override { writes.push_back({va, length}); }
  uint64_t bytes_in_flight() const override { return 0; }
  void message_issued(uint64_t va, uint64_t bytes) override { issued.push_back({va, bytes}); }
  void post_read(uint64_t va, uint8_t* dst, uint64_t length, uint64_t cookie) override {
    reads.push_back({va, dst, length, cookie});
  }
  bool stage_send(uint64_t, uint64_t, picoseconds, uint64_t cookie) override {
    if (bounce) stage_cookies.push_back(cookie);
    return bounce;
  }
  void complete(uint64_t cookie) { m_on_read(cookie); }
  void staged(uint64_t cookie) { m_on_staged(cookie); }
};

struct observer final : memory::landing_observer {
  std::vector<uint64_t> va;
  std::vector<std::vector<uint8_t>> bytes;
  void landed(uint64_t a, const uint8_t* b, uint64_t length) override {
    va.push_back(a);
    bytes.emplace_back(b, b + length);
  }
};

work_request write_wr(uint64_t local, uint64_t length, uint32_t first_psn, uint32_t packets) {
  work_request wr;
  wr.local_addr = local;
  wr.length = length;
  wr.first_psn = first_psn;
  wr.packets = packets;
  return wr;
}

TEST(payload_dma, dmi_copies_at_the_address_and_a_planted_fault_moves_one_write) {
  fake_host host;
  payload_dma dma(host, false, 32, picoseconds{0}, true, "nic");
  std::vector<uint8_t> mem(4096, 0);
  dma.set_memory(mem.data(), mem.size());
  observer seen;
  dma.set_landing_observer(&seen);
  dma.misplace_fault().arm(1, 64);  // the second write goes 64 bytes further
  const uint8_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  packet p{};
  p.payload = a;
  p.payload_bytes = 4;
  dma.write(100, &p);
  p.payload = b;
  dma.write(200, &p);
  dma.write(300, &p);
  EXPECT_EQ(std::memcmp(mem.data() + 100, a, 4), 0);
  EXPECT_EQ(std::memcmp(mem.data() + 264, b, 4), 0);  // 200 + 64
  EXPECT_EQ(mem[200], 0);
  EXPECT_EQ(std::memcmp(mem.data() + 300, b, 4), 0);
  EXPECT_EQ(seen.va, (std::vector<uint64_t>{100, 264, 300}));
  EXPECT_TRUE(dma.misplace_fault().fired());

  // A packet refers to its source bytes where they lie.
  packet out{};
  dma.attach(0, &out, 1000, 4, true, false);
  EXPECT_EQ(out.payload, mem.data() + 1000);
  EXPECT_EQ(dma.buffers_free_at(), never);
}

TEST(payload_dma, generated_payloads_land_as_the_pattern_and_are_not_stored) {
  fake_host host;
  payload_dma dma(host, false, 32, picoseconds{0}, true, "nic");
  std::vector<uint8_t> mem(4096, 0);
  dma.set_memory(mem.data(), mem.size());
  const memory::payload_pattern pattern(7);
  dma.set_generated(pattern, 3);
  observer seen;
  dma.set_landing_observer(&seen);
  packet out{};
  dma.attach(0, &out, 512, 16, true, false);  // a reference (host 3, address 512), no pointer
  EXPECT_EQ(out.payload, nullptr);
  EXPECT_EQ(out.payload_host, 3u);
  EXPECT_EQ(out.payload_va, 512u);
  out.payload_bytes = 16;
  dma.write(2048, &out);
  ASSERT_EQ(seen.bytes.size(), 1u);
  EXPECT_EQ(seen.va[0], 2048u);
  // Bytes 512 .. 527 of host 3's memory: words 64 and 65, little-endian.
  for (uint64_t w = 0; w < 2; ++w) {
    uint64_t got = 0;
    std::memcpy(&got, seen.bytes[0].data() + 8 * w, 8);
    EXPECT_EQ(got, pattern.word(3, 64 + w));
  }
  EXPECT_EQ(std::count(mem.begin(), mem.end(), 0), 4096);  // memory untouched
  // Without the pattern, a generated payload is refused with the NIC's name.
  payload_dma plain(host, false, 32, picoseconds{0}, true, "nic7");
  plain.set_memory(mem.data(), mem.size());
  EXPECT_THROW(plain.write(0, &out), core::config_error);
}

TEST(payload_dma, pcie_reads_ahead_two_buffers_and_a_packet_waits_for_its_read) {
  fake_host host;
  fake_tray tray;
  payload_dma dma(host, true, 2, picoseconds{0}, true, "nic");
  std::vector<uint8_t> mem(1 << 16, 0);
  dma.set_memory(mem.data(), mem.size());
  dma.set_placement(tray);
  dma.add_qp(4096);
  dma.connect(0, 100, 1024);
  host.sq.wqes.push_back(write_wr(0x1000, 2500, 100, 3));  // 1024 + 1024 + 452 bytes, PSNs 100 .. 102
  host.sq.post_psn = 103;
  const work_request& wr = host.sq.wqes[0];

  dma.tick(picoseconds{0});
  ASSERT_EQ(tray.reads.size(), 2u);  // two buffers: PSNs 100 and 101
  EXPECT_EQ(tray.reads[0].va, 0x1000u);
  EXPECT_EQ(tray.reads[0].length, 1024u);
  EXPECT_EQ(tray.reads[1].va, 0x1400u);
  EXPECT_EQ(tray.reads[1].length, 1024u);
  EXPECT_FALSE(dma.data_ready(0, 100, wr));  // its read is in flight
  tray.complete(tray.reads[1].cookie);
  EXPECT_FALSE(dma.data_ready(0, 101, wr));  // in, but PSN 100 goes first
  tray.complete(tray.reads[0].cookie);
  EXPECT_TRUE(dma.data_ready(0, 100, wr));
  EXPECT_EQ(host.wakes.size(), 2u);  // each completion wakes the transmitter

  packet p{};
  dma.attach(0, &p, 0x1000, 1024, true, false);
  EXPECT_EQ(p.payload, tray.reads[0].dst);  // the bytes the read brought in
  dma.committed(picoseconds{5000});         // PSN 100 leaves the wire at 5 ns: its buffer frees then
  EXPECT_TRUE(dma.data_ready(0, 101, wr));
  dma.tick(picoseconds{4999});
  EXPECT_EQ(tray.reads.size(), 2u);  // both buffers still taken
  EXPECT_EQ(dma.buffers_free_at(), picoseconds{5000});
  dma.tick(picoseconds{5000});
  ASSERT_EQ(tray.reads.size(), 3u);
  EXPECT_EQ(tray.reads[2].va, 0x1800u);
  EXPECT_EQ(tray.reads[2].length, 452u);  // 2500 - 2048
  // A resend of PSN 100 takes the same buffer without a read.
  packet again{};
  dma.attach(0, &again, 0x1000, 1024, false, false);
  EXPECT_EQ(again.payload, tray.reads[0].dst);
  dma.committed(picoseconds{6000});
  EXPECT_EQ(dma.buffers_free_at(), never);  // nothing new was held: two buffers in use (101, 102), none leaving
}

TEST(payload_dma, a_failed_qp_frees_its_read_buffers) {
  fake_host host;
  fake_tray tray;
  payload_dma dma(host, true, 2, picoseconds{0}, true, "nic");
  std::vector<uint8_t> mem(1 << 16, 0);
  dma.set_memory(mem.data(), mem.size());
  dma.set_placement(tray);
  dma.add_qp(1024);
  dma.connect(0, 0, 1024);
  host.sq.wqes.push_back(write_wr(0, 4096, 0, 4));
  host.sq.post_psn = 4;
  dma.tick(picoseconds{0});
  ASSERT_EQ(tray.reads.size(), 2u);
  tray.complete(tray.reads[0].cookie);
  host.live = false;
  host.sq.wqes.clear();  // flushed
  dma.qp_failed(0);      // the completed read's buffer frees now, the one in flight when it completes
  host.live = true;
  host.sq.wqes.push_back(write_wr(8192, 1024, 4, 1));
  host.sq.post_psn = 5;
  dma.tick(picoseconds{0});
  ASSERT_EQ(tray.reads.size(), 3u);  // one buffer free: PSN 4's read
  EXPECT_EQ(tray.reads[2].va, 8192u);
  tray.complete(tray.reads[1].cookie);  // the dropped read lands: its buffer frees
  dma.tick(picoseconds{0});
  EXPECT_EQ(tray.reads.size(), 3u);  // nothing more to read
  EXPECT_FALSE(dma.data_ready(0, 4, host.sq.wqes[0]));
  tray.complete(tray.reads[2].cookie);
  EXPECT_TRUE(dma.data_ready(0, 4, host.sq.wqes[0]));
}

TEST(payload_dma, a_bounce_copy_holds_the_work_request_until_it_is_staged) {
  fake_host host;
  fake_tray tray;
  tray.bounce = true;
  payload_dma dma(host, true, 4, picoseconds{200'000}, true, "nic");  // nic.wqe_latency_ns 200
  std::vector<uint8_t> mem(1 << 16, 0);
  dma.set_memory(mem.data(), mem.size());
  dma.set_placement(tray);
  dma.add_qp(1024);
  dma.connect(0, 0, 1024);
  EXPECT_EQ(dma.staged_at(3, 0, 1024, picoseconds{10}), never);
  EXPECT_EQ(tray.stage_cookies.back(), 6u);  // QP 3, a send: 3 << 1
  EXPECT_EQ(dma.response_staged(3, 0, 1024, picoseconds{10}), never);
  EXPECT_EQ(tray.stage_cookies.back(), 7u);                                   // a READ response: (3 << 1) | 1
  EXPECT_EQ(dma.response_staged(3, 0, 0, picoseconds{10}), picoseconds{10});  // no data: no copy

  work_request wr = write_wr(0, 1024, 0, 1);
  wr.staged_at = never;
  host.sq.wqes.push_back(wr);
  host.sq.post_psn = 1;
  dma.tick(picoseconds{0});
  EXPECT_TRUE(tray.reads.empty());  // not visible to the NIC yet
  tray.staged(0);                   // QP 0's copy is done at time 0
  EXPECT_EQ(host.sq.wqes[0].staged_at, picoseconds{0});
  ASSERT_EQ(host.wakes.size(), 1u);
  EXPECT_EQ(host.wakes[0], picoseconds{200'000});  // seen a work-request latency later

  host.responses.push_back({0, 1, 0, 0x2000, 512, never});
  tray.staged(1);  // QP 0's READ response data is in host memory
  EXPECT_EQ(host.responses[0].ready, picoseconds{0});
}

TEST(payload_dma, message_issued_reaches_the_tray_only_when_data_is_placed) {
  fake_host host;
  fake_tray tray;
  payload_dma placed(host, true, 4, picoseconds{0}, true, "nic");
  placed.set_placement(tray);
  placed.message_issued(64, 128);
  payload_dma timing_only(host, true, 4, picoseconds{0}, false, "nic");
  timing_only.set_placement(tray);
  timing_only.message_issued(256, 128);
  EXPECT_EQ(tray.issued, (std::vector<std::pair<uint64_t, uint64_t>>{{64, 128}}));
}

}  // namespace payload_dma_test
}  // namespace fabricsim::nic
