// A two-NIC bench for the SuperNIC's operations (WRITE, WRITE with immediate, SEND, READ): like
// nic_bench.h, but with a middlebox in each direction (A -> B carries requests, B -> A READ responses and
// ACKs), receive buffers posted at B (some of them late, for RNR), and a JSON summary of what each box saw
// and what each NIC completed. Used inside a forked child (sc_fork.h).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "tests/support/nic_bench.h"

namespace fabricsim::test {

// Records what passes (with the fields the ops tests check) and hands it to the reordering box behind it.
class ops_recorder : public core::packet_sink {
 public:
  explicit ops_recorder(core::packet_sink& next) : m_next(next) {}
  void receive(core::packet* p, unsigned port) override {
    seen.push_back({{"t_ns", core::now().ns()}, {"opcode", int(p->bth.opcode)}, {"psn", p->bth.psn},
                    {"payload", p->payload_bytes}, {"reth", p->has_reth}, {"dma_length", p->reth.dma_length},
                    {"va", p->reth.va}, {"aeth", p->has_aeth}, {"syndrome", p->aeth.syndrome},
                    {"imm", p->has_immediate}, {"imm_value", p->immediate}, {"pad", p->bth.pad_count},
                    {"src_port", p->udp.src_port}});
    m_next.receive(p, port);
  }
  nlohmann::json seen = nlohmann::json::array();

 private:
  core::packet_sink& m_next;
};

struct ops_bench_op {
  nic::rdma_op op = nic::rdma_op::write;
  uint64_t bytes = 0;
  double post_ns = 0.0;
  uint32_t imm = 0;
};

struct ops_bench_config {
  nic::supernic_params a, b;
  core::link_params link;
  box_faults forward_faults, reverse_faults;  // A -> B and B -> A
  reorder_box::order forward_order = reorder_box::order::keep, reverse_order = reorder_box::order::keep;
  size_t forward_batch = 64, reverse_batch = 64;
  // Packets after which a box flushes what it holds whatever the batch (the last batch of a run).
  uint64_t forward_expected = UINT64_MAX, reverse_expected = UINT64_MAX;
  uint64_t seed = 1;
  std::vector<ops_bench_op> ops;           // posted at A in this order
  std::vector<uint64_t> receives;          // receive buffers (bytes) posted at B at time 0, wr_id 100, 101, ...
  double late_receive_ns = -1;             // >= 0: one more receive (late_receive_bytes) posted at B then
  uint64_t late_receive_bytes = 0;
};

inline void fixed_psns(ops_bench_config& cfg, uint32_t psn, uint64_t mtu) {
  for (nic::supernic_params* p : {&cfg.a, &cfg.b}) {
    p->random_initial_psn = false;
    p->initial_psn = psn;
    p->mtu_bytes = mtu;
  }
}

// Runs the bench; returns {forward: [...], reverse: [...], completions: [...], recv_completions: [...],
// mismatched: [per op], recv_mismatched, counters}.
inline nlohmann::json run_ops_bench(const ops_bench_config& cfg) {
  using nic::rdma_op;
  core::sim_context ctx;
  ctx.seed = cfg.seed;
  uint64_t total = 1 << 16;
  for (const auto& o : cfg.ops) total += (o.bytes + 4095) / 4096 * 4096 + 4096;
  for (uint64_t r : cfg.receives) total += (r + 4095) / 4096 * 4096 + 4096;
  total += cfg.late_receive_bytes + 4096;
  memory::host_memory mem_a("mem_a", total), mem_b("mem_b", total);
  nic::supernic a("nic_a", cfg.a, core::ip_address::v4(0x0a000001), 0x020000000001, ctx);
  nic::supernic b("nic_b", cfg.b, core::ip_address::v4(0x0a000002), 0x020000000002, ctx);
  a.dma.bind(mem_a.socket);
  b.dma.bind(mem_b.socket);
  core::link a_to_box("a_to_box", cfg.link, ctx), box_to_b("box_to_b", cfg.link, ctx);
  core::link b_to_box("b_to_box", cfg.link, ctx), box_to_a("box_to_a", cfg.link, ctx);
  reorder_box fwd(box_to_b, cfg.forward_order, cfg.forward_batch, cfg.forward_expected, cfg.seed, ctx,
                  cfg.forward_faults);
  reorder_box rev(box_to_a, cfg.reverse_order, cfg.reverse_batch, cfg.reverse_expected, cfg.seed + 1, ctx,
                  cfg.reverse_faults);
  ops_recorder fwd_rec(fwd), rev_rec(rev);
  a.connect(a_to_box);
  a_to_box.bind(fwd_rec, 0);
  box_to_b.bind(b, 0);
  b.connect(b_to_box);
  b_to_box.bind(rev_rec, 0);
  box_to_a.bind(a, 0);

  const uint32_t qa = a.create_qp(), qb = b.create_qp();
  const uint32_t psn_a = a.draw_initial_psn(), psn_b = b.draw_initial_psn();
  a.connect_qp(qa, core::ip_address::v4(0x0a000002), qb, psn_a, psn_b);
  b.connect_qp(qb, core::ip_address::v4(0x0a000001), qa, psn_b, psn_a);
  core::rng_stream fill(cfg.seed * 7919 + 1);
  struct buf {
    uint64_t a, b;
  };
  std::vector<buf> bufs;
  // Receives first: SEND payloads land in them in order.
  std::vector<buf> recvs;
  for (size_t i = 0; i < cfg.receives.size(); ++i) {
    const uint64_t addr = mem_b.allocate(std::max<uint64_t>(1, cfg.receives[i]));
    b.post_recv(qb, 100 + i, addr, cfg.receives[i]);
    recvs.push_back({0, addr});
  }
  uint64_t late_addr = 0;
  if (cfg.late_receive_ns >= 0) late_addr = mem_b.allocate(std::max<uint64_t>(1, cfg.late_receive_bytes));
  size_t next_recv = 0;
  std::vector<size_t> recv_of(cfg.ops.size(), SIZE_MAX);
  for (size_t i = 0; i < cfg.ops.size(); ++i) {
    const ops_bench_op& o = cfg.ops[i];
    const uint64_t la = mem_a.allocate(std::max<uint64_t>(1, o.bytes)), lb = mem_b.allocate(std::max<uint64_t>(1, o.bytes));
    uint8_t* src = o.op == rdma_op::read ? mem_b.data() + lb : mem_a.data() + la;
    for (uint64_t k = 0; k < o.bytes; ++k) src[k] = uint8_t(fill());
    const uint32_t rkey = b.register_region(lb, o.bytes);
    if (o.op == rdma_op::send || o.op == rdma_op::send_imm) {
      recv_of[i] = next_recv++;
      bufs.push_back({la, recv_of[i] < recvs.size() ? recvs[recv_of[i]].b : late_addr});
    } else {
      if (o.op == rdma_op::write_imm) ++next_recv;
      bufs.push_back({la, lb});
    }
    a.post(qa, i, o.op, la, lb, rkey, o.bytes, core::picoseconds::from_ns(o.post_ns), o.imm);
  }
  if (cfg.late_receive_ns >= 0) {
    sc_core::sc_start(sc_core::sc_time(cfg.late_receive_ns, sc_core::SC_NS));
    b.post_recv(qb, 100 + cfg.receives.size(), late_addr, cfg.late_receive_bytes);
  }
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);

  nlohmann::json r;
  r["forward"] = fwd_rec.seen;
  r["reverse"] = rev_rec.seen;
  r["completions"] = nlohmann::json::array();
  for (const nic::completion& c : a.completions())
    r["completions"].push_back({{"wr_id", c.wr_id}, {"op", nic::to_string(c.op)}, {"status", nic::to_string(c.status)},
                                {"bytes", c.bytes}, {"t_ns", c.completed_at.ns()},
                                {"retransmitted", c.retransmitted_packets}});
  r["recv_completions"] = nlohmann::json::array();
  for (const nic::recv_completion& c : b.recv_completions())
    r["recv_completions"].push_back({{"wr_id", c.wr_id}, {"op", nic::to_string(c.op)},
                                     {"status", nic::to_string(c.status)}, {"bytes", c.bytes}, {"imm", c.imm},
                                     {"t_ns", c.completed_at.ns()}});
  r["mismatched"] = nlohmann::json::array();
  for (size_t i = 0; i < cfg.ops.size(); ++i) {
    uint64_t bad = 0;
    for (uint64_t k = 0; k < cfg.ops[i].bytes; ++k) bad += mem_a.data()[bufs[i].a + k] != mem_b.data()[bufs[i].b + k];
    r["mismatched"].push_back(bad);
  }
  for (const char* c : {"tx_data_packets", "tx_retransmitted", "tx_read_requests", "rx_read_responses",
                        "rx_duplicate_responses", "read_reissues", "rx_nak", "rx_rnr_nak", "timeouts", "qp_errors",
                        "flowlets", "rx_sacks", "sack_lost"})
    r["a"][c] = ctx.stats.counter_value("nic_a", c);
  for (const char* c : {"tx_read_responses", "rx_duplicate", "rx_out_of_order", "rx_deferred", "tx_nak",
                        "tx_rnr_nak", "recv_consumed", "reorder_peak_packets", "tx_acks", "rx_access_errors",
                        "tx_sacks"})
    r["b"][c] = ctx.stats.counter_value("nic_b", c);
  r["forward_dropped"] = fwd.dropped;
  r["reverse_dropped"] = rev.dropped;
  r["forward_duplicated"] = fwd.duplicated;
  r["packets_in_use"] = ctx.pool.in_use();
  r["end_ns"] = core::now().ns();
  return r;
}

}  // namespace fabricsim::test
