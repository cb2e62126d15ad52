// The SuperNIC requester (sc_models/nic/requester.h) on its own, with selective loss recovery and no congestion
// control, against cases worked out by hand: path MTU 1024, nic.wqe_latency_ns 100, nic.rnr_timer_us 10, one
// QP (QPN 2) whose first send PSN is 500.
#include "sc_models/nic/requester.h"

#include <gtest/gtest.h>

#include "sc_models/nic/ack_engine.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace requester_test {

using core::bth_opcode;
using core::packet;
using core::picoseconds;

picoseconds ns(uint64_t v) { return picoseconds(v * 1000); }

struct fake_tx_host final : requester_host {
  core::packet_pool* pool = nullptr;
  std::vector<uint64_t> payload_va, placed_va;
  std::vector<picoseconds> wakes;
  std::vector<uint64_t> retired;
  bool bounce = false;
  size_t failed = 0;
  packet* data_packet(size_t, picoseconds) override { return pool->acquire(); }
  void attach_payload(size_t, packet*, uint64_t va, uint64_t, bool) override { payload_va.push_back(va); }
  bool payload_ready(size_t, uint32_t, const work_request&) override { return true; }
  picoseconds staged_at(size_t, uint64_t, uint64_t, picoseconds post_at) override {
    return bounce ? requester::never : post_at;
  }
  void place_response(uint64_t va, const packet*) override { placed_va.push_back(va); }
  void work_retired(size_t, const work_request& wr) override { retired.push_back(wr.wr_id); }
  void qp_failed(size_t) override { ++failed; }
  void requester_wake(picoseconds at) override { wakes.push_back(at); }
};

struct sender_of final : recovery_host {
  requester* tx = nullptr;
  send_queue& recovery_sender(size_t q) override { return tx->queue(q); }
  void recovery_failed(size_t q) override { tx->fail(q, completion_status::retry_exceeded, picoseconds(0)); }
  void recovery_wake(picoseconds) override {}
  void recovery_idle() override {}
};

struct bench {
  fake_tx_host host;
  sender_of senders;
  core::packet_pool pool;
  core::stats_registry stats;
  shared_counters shared;
  std::unique_ptr<loss_recovery> lr;
  std::unique_ptr<congestion_control> cc;
  std::unique_ptr<requester> tx;
  std::vector<packet*> sent;
  explicit bench(uint32_t sq_psn = 500, uint64_t max_rd_atomic = 16, uint64_t rnr_retry_count = 7) {
    supernic_params p;
    p.wqe_latency_ns = 100;
    p.rnr_timer_us = 10;
    p.max_rd_atomic = max_rd_atomic;
    p.rnr_retry_count = rnr_retry_count;
    host.pool = &pool;
    lr = make_loss_recovery("selective", p, senders, "nic0", &stats);
    cc = make_congestion_control("none", p, {"nic0", nullptr, nullptr, 1000.0, nullptr});
    tx = std::make_unique<requester>(p, *lr, *cc, host, pool, shared, "nic0", &stats);
    senders.tx = tx.get();
    lr->add_qp();
    cc->add_qp("", 400'000'000'000ull, picoseconds(0));
    tx->add_qp(2);
    tx->connect(0, sq_psn, 1024);
  }
  ~bench() {
    for (packet* p : sent) pool.release(p);
  }
  void post(uint64_t wr_id, rdma_op op, uint64_t length, picoseconds at) {
    work_request wr;
    wr.wr_id = wr_id;
    wr.op = op;
    wr.local_addr = 0x1000;
    wr.remote_addr = 0x9000;
    wr.rkey = 3;
    wr.length = length;
    wr.post_at = wr.staged_at = at;
    tx->post(0, wr, at);
  }
  packet* next(picoseconds t, picoseconds* ready = nullptr) {
    picoseconds r = requester::never;
    packet* p = tx->next_packet(0, t, &r);
    if (ready) *ready = r;
    if (p) sent.push_back(p);
    return p;
  }
  void ack(uint32_t psn, uint8_t syndrome, picoseconds t) {
    packet a;
    a.bth.opcode = bth_opcode::rc_acknowledge;
    a.bth.psn = psn;
    a.has_aeth = true;
    a.aeth.syndrome = syndrome;
    tx->on_ack(0, &a, t);
  }
  void response(uint32_t psn, uint32_t bytes, picoseconds t) {
    packet* r = pool.acquire();
    r->bth.psn = psn;
    r->payload_bytes = bytes;
    tx->on_read_response(0, r, 2048, t);
  }
  uint64_t counter(const char* name) const { return stats.counter_value("nic0", name); }
};

TEST(requester, a_write_is_cut_at_the_mtu_into_consecutive_psns_once_its_wqe_latency_has_passed) {
  bench b;
  b.post(7, rdma_op::write, 2500, ns(0));
  picoseconds ready;
  EXPECT_EQ(b.next(ns(50), &ready), nullptr);
  EXPECT_EQ(ready, ns(100));  // posted at 0 + wqe_latency
  packet* first = b.next(ns(100));
  packet* middle = b.next(ns(100));
  packet* last = b.next(ns(100));
  ASSERT_TRUE(first && middle && last);
  EXPECT_EQ(b.next(ns(100)), nullptr);
  EXPECT_EQ(first->bth.opcode, bth_opcode::rc_rdma_write_first);
  EXPECT_EQ(middle->bth.opcode, bth_opcode::rc_rdma_write_middle);
  EXPECT_EQ(last->bth.opcode, bth_opcode::rc_rdma_write_last);
  EXPECT_EQ(first->bth.psn, 500u);
  EXPECT_EQ(middle->bth.psn, 501u);
  EXPECT_EQ(last->bth.psn, 502u);
  EXPECT_EQ(first->payload_bytes, 1024u);
  EXPECT_EQ(last->payload_bytes, 452u);  // 2500 - 2 x 1024
  EXPECT_TRUE(first->has_reth);
  EXPECT_EQ(first->reth.va, 0x9000u);
  EXPECT_EQ(first->reth.dma_length, 2500u);
  EXPECT_FALSE(middle->has_reth);
  EXPECT_FALSE(first->bth.ack_req);
  EXPECT_TRUE(last->bth.ack_req);
  EXPECT_EQ(b.host.payload_va, (std::vector<uint64_t>{0x1000, 0x1400, 0x1800}));
  EXPECT_EQ(b.counter("tx_data_packets"), 3u);
  EXPECT_EQ(b.shared.tx_payload_bytes, 2500u);
}

TEST(requester, psns_wrap_at_two_to_the_24) {
  bench b(0xfffffe);
  b.post(1, rdma_op::send, 3000, ns(0));
  EXPECT_EQ(b.next(ns(100))->bth.psn, 0xfffffeu);
  EXPECT_EQ(b.next(ns(100))->bth.psn, 0xffffffu);
  packet* last = b.next(ns(100));
  EXPECT_EQ(last->bth.psn, 0u);
  EXPECT_EQ(last->bth.opcode, bth_opcode::rc_send_last);
}

TEST(requester, a_work_request_completes_when_an_ack_covers_its_last_psn) {
  bench b;
  b.post(7, rdma_op::write, 2500, ns(0));
  for (int k = 0; k < 3; ++k) b.next(ns(100));
  b.ack(501, ack_syndrome, ns(500));
  EXPECT_TRUE(b.tx->completions().empty());
  EXPECT_EQ(b.tx->queue(0).una, 502u);
  b.ack(502, ack_syndrome, ns(600));
  ASSERT_EQ(b.tx->completions().size(), 1u);
  EXPECT_EQ(b.tx->completions()[0].wr_id, 7u);
  EXPECT_EQ(b.tx->completions()[0].completed_at, ns(600));
  EXPECT_EQ(b.tx->completions()[0].status, completion_status::success);
  EXPECT_EQ(b.host.retired, std::vector<uint64_t>{7});
  EXPECT_EQ(b.tx->queue(0).una, 503u);
}

TEST(requester, a_read_takes_one_psn_per_response_and_completes_when_all_responses_are_in) {
  bench b;
  b.post(9, rdma_op::read, 3000, ns(0));  // 3 responses: PSNs 500..502
  b.post(10, rdma_op::write, 10, ns(0));  // PSN 503
  packet* req = b.next(ns(100));
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->bth.opcode, bth_opcode::rc_rdma_read_request);
  EXPECT_EQ(req->bth.psn, 500u);
  EXPECT_EQ(req->reth.dma_length, 3000u);
  EXPECT_EQ(b.next(ns(100))->bth.psn, 503u);
  b.response(502, 952, ns(300));  // any order: placed at its offset
  b.response(500, 1024, ns(310));
  EXPECT_TRUE(b.tx->completions().empty());
  b.response(501, 1024, ns(320));
  EXPECT_EQ(b.host.placed_va, (std::vector<uint64_t>{0x1800, 0x1000, 0x1400}));
  ASSERT_EQ(b.tx->completions().size(), 1u);
  EXPECT_EQ(b.tx->completions()[0].wr_id, 9u);
  EXPECT_EQ(b.tx->completions()[0].op, rdma_op::read);
  EXPECT_EQ(b.shared.placed_bytes, 3000u);
  b.response(501, 1024, ns(330));  // again: a duplicate
  EXPECT_EQ(b.counter("rx_duplicate_responses"), 1u);
}

TEST(requester, max_rd_atomic_holds_a_second_read_until_the_first_completes) {
  bench b(500, 1);
  b.post(1, rdma_op::read, 100, ns(0));
  b.post(2, rdma_op::read, 100, ns(0));
  EXPECT_NE(b.next(ns(100)), nullptr);
  EXPECT_EQ(b.next(ns(100)), nullptr);  // one READ outstanding at most
  b.host.wakes.clear();
  b.response(500, 100, ns(200));
  EXPECT_EQ(b.host.wakes, std::vector<picoseconds>{ns(200)});  // the stalled QP is woken
  packet* second = b.next(ns(200));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->bth.psn, 501u);
}

TEST(requester, a_nak_acknowledges_what_is_before_it_and_the_named_psn_is_resent) {
  bench b;
  b.post(7, rdma_op::write, 3072, ns(0));
  for (int k = 0; k < 3; ++k) b.next(ns(100));
  b.ack(501, nak_syndrome | nak_psn_sequence_error, ns(400));
  EXPECT_EQ(b.tx->queue(0).una, 501u);
  packet* again = b.next(ns(400));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->bth.psn, 501u);
  EXPECT_EQ(again->bth.opcode, bth_opcode::rc_rdma_write_middle);
  EXPECT_EQ(b.counter("rx_nak"), 1u);
  EXPECT_EQ(b.counter("tx_retransmitted"), 1u);
  EXPECT_EQ(b.next(ns(400)), nullptr);  // selective: only the PSN the NAK names
}

TEST(requester, an_rnr_nak_waits_the_rnr_timer_then_resends_from_its_psn) {
  bench b;
  b.post(7, rdma_op::send, 2048, ns(0));
  b.next(ns(100));
  b.next(ns(100));
  b.ack(500, rnr_syndrome | rnr_timer_code_10us, ns(1000));
  picoseconds ready;
  EXPECT_EQ(b.next(ns(1000), &ready), nullptr);
  EXPECT_EQ(ready, ns(11000));  // 1000 ns + rnr_timer_us 10
  packet* p = b.next(ns(11000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->bth.psn, 500u);
  EXPECT_EQ(b.next(ns(11000))->bth.psn, 501u);  // in order from there
}

TEST(requester, rnr_retries_run_out_and_the_qp_flushes_what_is_posted) {
  bench b(500, 16, 0);  // rnr_retry_count 0: the first RNR NAK fails the QP
  b.post(1, rdma_op::send, 10, ns(0));
  b.post(2, rdma_op::send, 10, ns(0));
  b.next(ns(100));
  b.ack(500, rnr_syndrome | rnr_timer_code_10us, ns(1000));
  ASSERT_EQ(b.tx->completions().size(), 2u);
  EXPECT_EQ(b.tx->completions()[0].status, completion_status::rnr_retry_exceeded);
  EXPECT_EQ(b.tx->completions()[1].status, completion_status::flushed);
  EXPECT_EQ(b.host.failed, 1u);
  EXPECT_EQ(b.counter("qp_errors"), 1u);
  b.post(3, rdma_op::write, 10, ns(2000));
  ASSERT_EQ(b.tx->completions().size(), 3u);
  EXPECT_EQ(b.tx->completions()[2].status, completion_status::flushed);
  EXPECT_EQ(b.next(ns(3000)), nullptr);
}

TEST(requester, a_work_request_waiting_for_its_bounce_copy_is_not_sent) {
  bench b;
  b.host.bounce = true;
  b.post(1, rdma_op::write, 10, ns(0));
  EXPECT_EQ(b.next(ns(1000)), nullptr);
  b.tx->queue(0).wqes.front().staged_at = ns(1000);  // what the NIC does when the copy is done
  EXPECT_EQ(b.next(ns(1100))->bth.psn, 500u);
}

}  // namespace requester_test
}  // namespace fabricsim::nic
