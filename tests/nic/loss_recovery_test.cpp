// Loss recovery (sc_models/nic/loss_recovery.h): the factory, and for each scheme which PSNs are sent again
// after a NAK, a SACK with given holes and a timeout, worked out by hand from the rules in the headers, on a
// send queue built here: two WRITEs of 10 packets each, PSNs 100..109 and 110..119, all sent (snd_max 120).
#include "sc_models/nic/loss_recovery.h"

#include <gtest/gtest.h>

#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace loss_recovery_test {

using core::picoseconds;

// The NIC's side, as supernic does it: a failed QP is forgotten by its scheme.
struct fake_host final : recovery_host {
  std::vector<send_queue> queues;
  std::vector<size_t> failed;
  std::vector<picoseconds> wakes;
  int idles = 0;
  loss_recovery* lr = nullptr;
  send_queue& recovery_sender(size_t q) override { return queues[q]; }
  void recovery_failed(size_t q) override {
    failed.push_back(q);
    lr->forget(q);
  }
  void recovery_wake(picoseconds at) override { wakes.push_back(at); }
  void recovery_idle() override { ++idles; }
};

work_request wr(uint32_t first_psn, uint32_t packets, rdma_op op = rdma_op::write) {
  work_request w;
  w.first_psn = first_psn;
  w.packets = packets;
  w.length = uint64_t(packets) * 4096;
  w.op = op;
  if (op == rdma_op::read) w.got.assign(packets, 0);
  return w;
}

send_queue two_writes() {
  send_queue s;
  s.wqes.push_back(wr(100, 10));
  s.wqes.push_back(wr(110, 10));
  s.una = s.acked = 100;
  s.next_psn = s.snd_max = s.post_psn = 120;
  s.tx_index = 2;
  return s;
}

picoseconds us(double v) { return picoseconds::from_ns(v * 1000.0); }

struct bench {
  fake_host host;
  core::stats_registry stats;
  std::unique_ptr<loss_recovery> lr;
  explicit bench(const std::string& scheme, uint64_t retry_count = 7, uint64_t sack_reorder = 4) {
    supernic_params p;
    p.rto_us = 50;
    p.retry_count = retry_count;
    p.sack_reorder_packets = sack_reorder;
    p.reorder_window = 16;  // the sack scoreboard covers 2 x 16 PSNs from una
    host.queues.push_back(two_writes());
    lr = make_loss_recovery(scheme, p, host, "nic0", &stats);
    host.lr = lr.get();
    lr->add_qp();
  }
  send_queue& s() { return host.queues[0]; }
  // Every PSN next_resend gives, in order (draining the queue).
  std::vector<uint32_t> resends() {
    std::vector<uint32_t> v;
    uint32_t psn = 0;
    size_t w = 0;
    while (lr->next_resend(0, &psn, &w)) {
      EXPECT_EQ(w, psn < 110 ? 0u : 1u) << psn;  // the work request that holds it
      v.push_back(psn);
    }
    return v;
  }
  uint64_t counter(const char* name) const { return stats.counter_value("nic0", name); }
};

using psns = std::vector<uint32_t>;

TEST(loss_recovery, factory_names_and_unknown_name) {
  const std::vector<std::string> expected = {"go_back_n", "selective", "sack"};
  EXPECT_EQ(loss_recovery_names(), expected);
  for (const std::string& n : expected) EXPECT_STREQ(bench(n).lr->name(), n.c_str());
  fake_host host;
  try {
    make_loss_recovery("tcp_reno", supernic_params{}, host, "nic0", nullptr);
    FAIL() << "no error for an unknown name";
  } catch (const core::config_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nic0: nic.retransmission \"tcp_reno\""), std::string::npos) << what;
    EXPECT_NE(what.find("go_back_n, selective, sack"), std::string::npos) << what;
  }
}

TEST(loss_recovery, scheme_properties) {
  EXPECT_TRUE(bench("go_back_n").lr->whole_read());
  EXPECT_FALSE(bench("selective").lr->whole_read());
  EXPECT_FALSE(bench("sack").lr->whole_read());
  EXPECT_FALSE(bench("go_back_n").lr->sacks());
  EXPECT_FALSE(bench("selective").lr->sacks());
  EXPECT_TRUE(bench("sack").lr->sacks());
}

// The NIC has acknowledged 100..104 (the NAK's implicit ACK): una 105, and the NAK names 105.
TEST(loss_recovery, nak_go_back_n_rewinds_to_the_named_psn) {
  bench b("go_back_n");
  b.s().una = b.s().acked = 105;
  b.lr->on_nak(0, 105, us(1));
  EXPECT_EQ(b.s().next_psn, 105u);  // 105..119 go again, in order
  EXPECT_EQ(b.s().tx_index, 0u);
  EXPECT_EQ(b.resends(), psns{});
  EXPECT_EQ(b.lr->retries(0), 1u);
  EXPECT_EQ(b.host.wakes, std::vector<picoseconds>{us(1)});
  // A NAK for a PSN the segmentation path has not reached again does not move it forward.
  b.s().next_psn = 107;
  b.s().tx_index = 0;
  b.lr->on_nak(0, 112, us(2));
  EXPECT_EQ(b.s().next_psn, 107u);
}

TEST(loss_recovery, nak_selective_and_sack_resend_only_the_named_psn_once) {
  for (const char* scheme : {"selective", "sack"}) {
    bench b(scheme);
    b.s().una = b.s().acked = 105;
    b.lr->on_nak(0, 105, us(1));
    b.lr->on_nak(0, 105, us(1));  // asked for twice before it went: queued once
    b.lr->on_nak(0, 113, us(1));
    EXPECT_TRUE(b.lr->resend_queued(0));
    EXPECT_EQ(b.resends(), (psns{105, 113})) << scheme;
    EXPECT_FALSE(b.lr->resend_queued(0));
    EXPECT_EQ(b.s().next_psn, 120u) << scheme;  // new data goes on from where it was
    EXPECT_EQ(b.lr->retries(0), 3u) << scheme;
  }
}

TEST(loss_recovery, stale_or_bogus_nak_asks_for_nothing) {
  for (const char* scheme : {"go_back_n", "selective", "sack"}) {
    bench b(scheme);
    b.s().una = 105;
    b.lr->on_nak(0, 104, us(1));  // acknowledged already
    b.lr->on_nak(0, 120, us(1));  // never sent
    EXPECT_EQ(b.resends(), psns{}) << scheme;
    EXPECT_EQ(b.s().next_psn, 120u) << scheme;
    EXPECT_EQ(b.lr->retries(0), 0u) << scheme;
    EXPECT_TRUE(b.host.wakes.empty()) << scheme;
  }
}

TEST(loss_recovery, a_psn_acknowledged_after_it_was_queued_is_not_resent) {
  bench b("selective");
  b.lr->on_nak(0, 102, us(1));
  b.lr->on_nak(0, 111, us(1));
  b.s().una = 105;  // an ACK for 100..104 came meanwhile
  EXPECT_EQ(b.resends(), psns{111});
}

// Timer: sent at 10 us with rto 50 us, due at 60 us.
TEST(loss_recovery, timeout_go_back_n_rewinds_to_una) {
  bench b("go_back_n");
  b.lr->sent(0, us(10));
  EXPECT_EQ(b.lr->deadline(0), us(60));
  EXPECT_EQ(b.lr->wake_at(), us(60));
  b.lr->expire(us(59));  // not due
  EXPECT_EQ(b.counter("timeouts"), 0u);
  EXPECT_EQ(b.lr->wake_at(), us(60));
  b.lr->expire(us(60));
  EXPECT_EQ(b.counter("timeouts"), 1u);
  EXPECT_EQ(b.s().next_psn, 100u);
  EXPECT_EQ(b.s().tx_index, 0u);
  EXPECT_EQ(b.resends(), psns{});
  EXPECT_EQ(b.lr->deadline(0), us(110));  // the next timeout one RTO on
  EXPECT_EQ(b.lr->wake_at(), us(110));
}

TEST(loss_recovery, timeout_selective_resends_una_and_the_tail_probe) {
  bench b("selective");
  b.lr->sent(0, us(10));
  b.lr->expire(us(60));
  EXPECT_EQ(b.resends(), (psns{100, 119}));  // una and the highest PSN sent
  EXPECT_EQ(b.s().next_psn, 120u);
  EXPECT_EQ(b.lr->deadline(0), us(110));
}

// sack_reorder_packets 4: a PSN is lost once one 4 beyond it has been SACKed.
TEST(loss_recovery, sack_resends_the_holes_four_below_the_highest_sack) {
  bench b("sack");
  EXPECT_TRUE(b.lr->on_sack(0, 102, us(1)));
  EXPECT_TRUE(b.lr->on_sack(0, 103, us(1)));
  EXPECT_EQ(b.resends(), psns{});  // 103 - 100 = 3 < 4: could be reordering
  EXPECT_TRUE(b.lr->on_sack(0, 105, us(2)));
  // 105 - 4 + 1 = 102: the unmarked PSNs before 102 are lost.
  EXPECT_EQ(b.resends(), (psns{100, 101}));
  EXPECT_EQ(b.host.wakes, std::vector<picoseconds>{us(2)});
  EXPECT_TRUE(b.lr->on_sack(0, 108, us(3)));
  // Up to 108 - 3 = 105: 102 and 103 are held, 104 is not; 100 and 101 were queued once already.
  EXPECT_EQ(b.resends(), psns{104});
  EXPECT_EQ(b.counter("rx_sacks"), 4u);
  EXPECT_EQ(b.counter("sack_lost"), 3u);
  // A NAK-style request for a PSN the responder holds is skipped.
  b.lr->on_nak(0, 105, us(4));
  EXPECT_EQ(b.resends(), psns{});
}

TEST(loss_recovery, sack_across_two_work_requests) {
  bench b("sack");
  for (uint32_t psn : {108u, 109u, 110u, 112u, 113u, 114u, 115u}) b.lr->on_sack(0, psn, us(1));
  // Highest 115: lost if unmarked below 112: 100..107 and 111 (108..110 held).
  EXPECT_EQ(b.resends(), (psns{100, 101, 102, 103, 104, 105, 106, 107, 111}));
}

TEST(loss_recovery, sack_stale_bogus_and_beyond_the_scoreboard) {
  bench b("sack");
  b.s().una = 101;
  EXPECT_TRUE(b.lr->on_sack(0, 100, us(1)));  // acknowledged already: ignored
  EXPECT_TRUE(b.lr->on_sack(0, 125, us(1)));  // never sent: ignored
  EXPECT_EQ(b.counter("rx_sacks"), 2u);
  b.s().snd_max = b.s().next_psn = 140;
  b.s().wqes.push_back(wr(120, 20));
  EXPECT_FALSE(b.lr->on_sack(0, 133, us(1)));   // 133 - 101 = 32: beyond the 2 x 16 PSN scoreboard
  EXPECT_TRUE(b.lr->on_sack(0, 132, us(1)));    // 31: the last slot
  EXPECT_EQ(b.counter("sack_lost"), 32u - 4u);  // 101 .. 128 are lost (132 - 4 + 1 = 129)
}

TEST(loss_recovery, sack_scoreboard_forgets_what_is_acknowledged) {
  bench b("sack");
  b.lr->on_sack(0, 101, us(1));
  b.lr->progress(0, 102, us(2));  // una 100 -> 102: slots 100 and 101 are cleared
  b.s().una = b.s().acked = 102;
  b.lr->on_sack(0, 107, us(3));  // 107 - 4 + 1 = 104: 102 and 103 are lost
  EXPECT_EQ(b.resends(), (psns{102, 103}));
}

// The timeout resends una and the tail probe, then searches every hole again from una: una, a hole too, is
// queued a second time (the search does not look at the queue).
TEST(loss_recovery, sack_timeout_resends_una_the_tail_probe_and_every_hole_again) {
  bench b("sack");
  for (uint32_t psn : {102u, 103u, 104u, 105u}) b.lr->on_sack(0, psn, us(1));
  EXPECT_EQ(b.resends(), (psns{100, 101}));  // 105 - 4 + 1 = 102
  b.lr->sent(0, us(10));
  b.lr->expire(us(60));
  EXPECT_EQ(b.resends(), (psns{100, 119, 100, 101}));
}

TEST(loss_recovery, retries_run_out_after_retry_count_and_the_qp_fails) {
  for (const char* scheme : {"go_back_n", "selective", "sack"}) {
    bench b(scheme, 2);
    b.lr->sent(0, us(0));
    b.lr->on_nak(0, 105, us(1));
    b.lr->expire(us(50));  // a timeout counts a retry as a NAK does
    EXPECT_TRUE(b.host.failed.empty()) << scheme;
    EXPECT_EQ(b.lr->retries(0), 2u);
    b.resends();
    b.lr->on_nak(0, 106, us(60));  // third retry without progress: retry_count 2 is exhausted
    EXPECT_EQ(b.host.failed, std::vector<size_t>{0}) << scheme;
    EXPECT_EQ(b.lr->deadline(0), loss_recovery::never) << scheme;
    EXPECT_EQ(b.resends(), psns{}) << scheme;  // nothing is resent for a failed QP
    EXPECT_EQ(b.host.idles, 1) << scheme;      // its timer was the last one running
  }
}

TEST(loss_recovery, progress_restarts_the_retry_count_and_the_timer) {
  bench b("selective", 1);
  b.lr->sent(0, us(0));
  b.lr->on_nak(0, 105, us(1));
  b.lr->progress(0, 106, us(5));
  EXPECT_EQ(b.lr->retries(0), 0u);
  EXPECT_EQ(b.lr->deadline(0), us(55));
  b.s().una = 106;
  b.lr->on_nak(0, 107, us(6));  // one retry again: within retry_count 1
  EXPECT_TRUE(b.host.failed.empty());
  b.lr->progress(0, 120, us(7));  // everything acknowledged: the timer stops
  EXPECT_EQ(b.lr->deadline(0), loss_recovery::never);
  EXPECT_EQ(b.lr->wake_at(), loss_recovery::never);
  EXPECT_EQ(b.host.idles, 1);
}

TEST(loss_recovery, one_wake_up_for_the_earliest_of_several_timers) {
  bench b("go_back_n");
  b.host.queues.push_back(two_writes());
  b.lr->add_qp();
  b.lr->sent(0, us(10));  // due 60
  b.lr->sent(1, us(20));  // due 70: later, no new wake-up
  b.lr->sent(0, us(30));  // running already: unchanged
  EXPECT_EQ(b.host.wakes, std::vector<picoseconds>{us(60)});
  EXPECT_EQ(b.lr->deadline(0), us(60));
  b.lr->progress(0, 120, us(40));  // QP 0 done: QP 1's timer still runs, so no withdrawal
  EXPECT_EQ(b.host.idles, 0);
  b.lr->expire(us(60));  // the wake-up finds none expired and re-arms for the new earliest
  EXPECT_EQ(b.counter("timeouts"), 0u);
  EXPECT_EQ(b.lr->wake_at(), us(70));
  b.lr->expire(us(70));
  EXPECT_EQ(b.counter("timeouts"), 1u);
  EXPECT_EQ(b.lr->wake_at(), us(120));
}

TEST(loss_recovery, rnr_hold_drops_queued_resends_and_defers_the_timeout) {
  bench b("selective");
  b.lr->on_nak(0, 105, us(1));
  b.lr->hold(0, us(20));
  EXPECT_EQ(b.resends(), psns{});
  EXPECT_EQ(b.lr->deadline(0), us(70));  // no timeout before the wait plus one RTO
}

TEST(loss_recovery, read_response_restarts_only_a_running_timer) {
  bench b("selective");
  b.lr->answered(0, us(5));
  EXPECT_EQ(b.lr->deadline(0), loss_recovery::never);
  b.lr->sent(0, us(0));
  b.lr->on_nak(0, 105, us(1));
  b.lr->answered(0, us(5));
  EXPECT_EQ(b.lr->retries(0), 0u);
  EXPECT_EQ(b.lr->deadline(0), us(55));
}

// A READ of 10 responses at PSNs 100..109, the first in (una 101), the sixth (105) in as well.
send_queue one_read() {
  send_queue s;
  s.wqes.push_back(wr(100, 10, rdma_op::read));
  s.wqes[0].got[0] = s.wqes[0].got[5] = 1;
  s.wqes[0].rd_done = 1;
  s.una = 101;
  s.acked = 100;
  s.next_psn = s.snd_max = s.post_psn = 110;
  s.tx_index = 1;
  return s;
}

TEST(loss_recovery, read_reissue_once_per_missing_psn) {
  bench g("go_back_n");
  g.s() = one_read();
  g.lr->reissue_read(0, us(1));
  EXPECT_EQ(g.s().next_psn, 101u);  // the READ request again, from 101 (for the rest of the message)
  EXPECT_EQ(g.lr->retries(0), 1u);
  g.lr->reissue_read(0, us(2));  // the same gap: not again
  EXPECT_EQ(g.lr->retries(0), 1u);

  bench s("selective");
  s.s() = one_read();
  s.lr->reissue_read(0, us(1));
  s.lr->on_nak(0, 105, us(1));  // 105's response has come: not asked for again
  uint32_t psn = 0;
  size_t w = 9;
  ASSERT_TRUE(s.lr->next_resend(0, &psn, &w));
  EXPECT_EQ(psn, 101u);
  EXPECT_EQ(w, 0u);
  EXPECT_FALSE(s.lr->next_resend(0, &psn, &w));
  s.s().una = 102;  // 101 came: a new gap at 102 is re-issued again
  s.lr->reissue_read(0, us(3));
  ASSERT_TRUE(s.lr->next_resend(0, &psn, &w));
  EXPECT_EQ(psn, 102u);
}

}  // namespace loss_recovery_test
}  // namespace fabricsim::nic
