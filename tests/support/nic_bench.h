// A two-NIC bench for the SuperNIC: A's packets to B pass through a middlebox that can record them, reorder
// them, lose them and duplicate them (seeded); B's packets go straight back to A over a link that may lose
// them too (link loss injection). Used inside a forked child (sc_fork.h).
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "sc_models/core/link.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/memory/host_memory.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::test {

// What the middlebox saw of each packet, in arrival order.
struct seen_packet {
  core::bth_opcode opcode;
  uint32_t psn;
  uint32_t payload_bytes;
  bool has_reth;
  uint32_t dma_length;
  bool ack_req;
  uint8_t pad_count;
  uint16_t src_port;
};

// What the middlebox does to packets besides reordering them.
struct box_faults {
  double drop_probability = 0.0;       // each packet lost with this chance (seeded)
  double duplicate_probability = 0.0;  // each packet passed on twice with this chance
  std::map<uint32_t, unsigned> drop_psns;  // PSN -> how many of its copies to lose (the first ones to pass)
};

// Records every packet and releases them in batches of `batch`, each batch in a seeded random order (or
// reversed), so that later packets overtake earlier ones, FIRST packets included. Losses and duplicates
// (`faults`) are decided as packets arrive, from a stream of their own, so they do not change the order.
class reorder_box : public core::packet_sink {
 public:
  enum class order { keep, reverse, shuffle };
  reorder_box(core::link& out, order o, size_t batch, uint64_t expected_packets, uint64_t seed, core::sim_context& ctx,
              box_faults faults = {})
      : m_out(out),
        m_order(o),
        m_batch(batch),
        m_expected(expected_packets),
        m_rng(seed),
        m_fault_rng(seed * 0x9e3779b97f4a7c15ull + 17),
        m_ctx(ctx),
        m_faults(std::move(faults)) {}

  void receive(core::packet* p, unsigned) override {
    seen.push_back({p->bth.opcode, p->bth.psn, p->payload_bytes, p->has_reth, p->reth.dma_length, p->bth.ack_req,
                    p->bth.pad_count, p->udp.src_port});
    ++m_received;
    auto it = m_faults.drop_psns.find(p->bth.psn);
    const double u = double(m_fault_rng() >> 11) * 0x1.0p-53;
    if ((it != m_faults.drop_psns.end() && it->second > 0) || u < m_faults.drop_probability) {
      if (it != m_faults.drop_psns.end() && it->second > 0) --it->second;
      ++dropped;
      m_ctx.pool.release(p);
    } else {
      m_held.push_back(p);
      if (double(m_fault_rng() >> 11) * 0x1.0p-53 < m_faults.duplicate_probability) {
        core::packet* copy = m_ctx.pool.acquire();
        const uint64_t id = copy->id;
        *copy = *p;
        copy->id = id;
        m_held.push_back(copy);
        ++duplicated;
      }
    }
    if (m_order == order::keep || m_held.size() >= m_batch || m_received >= m_expected) flush();
  }
  std::vector<seen_packet> seen;
  uint64_t dropped = 0, duplicated = 0;

 private:
  void flush() {
    if (m_order == order::reverse) std::reverse(m_held.begin(), m_held.end());
    if (m_order == order::shuffle) std::shuffle(m_held.begin(), m_held.end(), m_rng);
    for (core::packet* p : m_held) m_out.transmit(p, core::max(core::now(), m_out.wire_free_at()));
    m_held.clear();
  }
  core::link& m_out;
  order m_order;
  size_t m_batch;
  uint64_t m_expected, m_received = 0;
  core::rng_stream m_rng;
  core::rng_stream m_fault_rng;
  core::sim_context& m_ctx;
  box_faults m_faults;
  std::vector<core::packet*> m_held;
};

struct nic_bench_config {
  nic::supernic_params a, b;
  core::link_params link;
  double reverse_drop_probability = 0.0;  // loss injection on B's link back to A (ACKs and NAKs)
  box_faults faults;                      // the middlebox on A's way to B
  reorder_box::order order = reorder_box::order::keep;
  size_t batch = 64;
  uint64_t seed = 1;
  std::vector<uint64_t> message_bytes;  // WRITEs A -> B, posted at time 0 back to back
  std::vector<std::string> b_counters;  // nic_b's counters to return (nic_bench_result::b_counters)
};

struct nic_bench_result {
  std::vector<seen_packet> seen;
  std::vector<nic::completion> completions;
  uint64_t box_dropped = 0, box_duplicated = 0, reverse_dropped = 0;
  uint64_t tx_data_packets = 0, tx_retransmitted = 0, rx_nak = 0, tx_nak = 0, timeouts = 0, qp_errors = 0;
  std::vector<nic::placed_message> placed;
  bool memory_equal = true;
  uint64_t mismatched_bytes = 0;
  uint64_t rx_out_of_order = 0, rx_out_of_window = 0, rx_deferred = 0, rx_duplicate = 0;
  uint64_t packets_in_use = 0;
  double end_ns = 0;
  std::map<std::string, uint64_t> b_counters;  // the ones nic_bench_config::b_counters names
};

inline nic_bench_result run_nic_bench(const nic_bench_config& cfg) {
  core::sim_context ctx;
  ctx.seed = cfg.seed;
  uint64_t total = 0, packets = 0;
  for (uint64_t m : cfg.message_bytes) {
    total += (m + 4095) / 4096 * 4096;
    packets += std::max<uint64_t>(1, (m + cfg.a.mtu_bytes - 1) / cfg.a.mtu_bytes);
  }
  memory::host_memory mem_a("mem_a", total + 4096), mem_b("mem_b", total + 4096);
  nic::supernic a("nic_a", cfg.a, core::ip_address::v4(0x0a000001), 0x020000000001, ctx);
  nic::supernic b("nic_b", cfg.b, core::ip_address::v4(0x0a000002), 0x020000000002, ctx);
  a.dma.bind(mem_a.socket);
  b.dma.bind(mem_b.socket);
  core::link_params reverse = cfg.link;
  reverse.drop_probability = cfg.reverse_drop_probability;
  core::link a_to_box("a_to_box", cfg.link, ctx), box_to_b("box_to_b", cfg.link, ctx), b_to_a("b_to_a", reverse, ctx);
  reorder_box box(box_to_b, cfg.order, cfg.batch, packets, cfg.seed, ctx, cfg.faults);
  a.connect(a_to_box);
  a_to_box.bind(box, 0);
  box_to_b.bind(b, 0);
  b.connect(b_to_a);
  b_to_a.bind(a, 0);

  const uint32_t qa = a.create_qp(), qb = b.create_qp();
  const uint32_t psn_a = a.draw_initial_psn(), psn_b = b.draw_initial_psn();
  a.connect_qp(qa, core::ip_address::v4(0x0a000002), qb, psn_a, psn_b);
  b.connect_qp(qb, core::ip_address::v4(0x0a000001), qa, psn_b, psn_a);
  core::rng_stream fill(cfg.seed * 7919 + 1);
  std::vector<std::pair<uint64_t, uint64_t>> bufs;
  for (size_t i = 0; i < cfg.message_bytes.size(); ++i) {
    const uint64_t n = cfg.message_bytes[i];
    const uint64_t src = mem_a.allocate(n), dst = mem_b.allocate(n);
    for (uint64_t k = 0; k < n; ++k) mem_a.data()[src + k] = uint8_t(fill());
    const uint32_t rkey = b.register_region(dst, n);
    a.post_write(qa, i, src, dst, rkey, n, core::picoseconds{});
    bufs.push_back({src, dst});
  }
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);

  nic_bench_result r;
  r.seen = box.seen;
  r.completions = a.completions();
  r.placed = b.placed();
  for (size_t i = 0; i < bufs.size(); ++i) {
    for (uint64_t k = 0; k < cfg.message_bytes[i]; ++k)
      r.mismatched_bytes += mem_a.data()[bufs[i].first + k] != mem_b.data()[bufs[i].second + k];
  }
  r.memory_equal = r.mismatched_bytes == 0;
  r.rx_out_of_order = ctx.stats.counter_value("nic_b", "rx_out_of_order");
  r.rx_out_of_window = ctx.stats.counter_value("nic_b", "rx_out_of_window");
  r.rx_deferred = ctx.stats.counter_value("nic_b", "rx_deferred");
  r.rx_duplicate = ctx.stats.counter_value("nic_b", "rx_duplicate");
  r.box_dropped = box.dropped;
  r.box_duplicated = box.duplicated;
  r.reverse_dropped = b_to_a.dropped_injected();
  r.tx_data_packets = ctx.stats.counter_value("nic_a", "tx_data_packets");
  r.tx_retransmitted = ctx.stats.counter_value("nic_a", "tx_retransmitted");
  r.rx_nak = ctx.stats.counter_value("nic_a", "rx_nak");
  r.tx_nak = ctx.stats.counter_value("nic_b", "tx_nak");
  r.timeouts = ctx.stats.counter_value("nic_a", "timeouts");
  r.qp_errors = ctx.stats.counter_value("nic_a", "qp_errors");
  for (const std::string& name : cfg.b_counters) r.b_counters[name] = ctx.stats.counter_value("nic_b", name);
  r.packets_in_use = ctx.pool.in_use();
  r.end_ns = core::now().ns();
  return r;
}

}  // namespace fabricsim::test
