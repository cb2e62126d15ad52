// One direction of a PCIe link between two ports: Gen5 (32 GT/s, 128b/130b, framed TLPs with LCRC and DLLPs
// on the wire) or Gen6 (64 GT/s, flit mode: 256-byte flits of 236 TLP bytes, 6 DLP, 8 CRC, 6 FEC), with
// flow-control credits per type (posted, non-posted, completion; headers and 16-byte data units) that the
// receiver advertises and returns in UpdateFC DLLPs travelling back on the opposite direction.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/pcie/tlp.h"

namespace fabricsim::pcie {

struct pcie_link_params {
  uint64_t generation = 6;             // 5: 32 GT/s 128b/130b; 6: 64 GT/s PAM4 flit mode
  uint64_t lanes = 16;                 // x1, x2, x4, x8 or x16
  double propagation_ns = 2.0;         // trace + retimer-free channel, each way (estimate)
  bool ecrc = false;                   // TLP digest (4 bytes) on every TLP
  // Gen5 (non-flit mode) framing, PCIe 6.0 section 4.2.2.3: STP token (4, carries the sequence number),
  // LCRC (4); a DLLP is an SDP token (2) + 6 bytes. One SKP ordered set block per lane every
  // 370..375 data blocks (section 4.2.8.1).
  uint64_t stp_token_bytes = 4;
  uint64_t lcrc_bytes = 4;
  uint64_t dllp_bytes = 8;
  uint64_t skp_interval_blocks = 370;
  uint64_t ack_every_tlps = 4;         // Gen5: the receiver coalesces one Ack DLLP per this many TLPs
  // Gen6 flit mode, section 4.2.3: flit of flit_bytes with flit_tlp_bytes of TLP area; DLLPs (Ack,
  // UpdateFC) ride in the DLP bytes of every flit, so they cost no wire time.
  uint64_t flit_bytes = 256;
  uint64_t flit_tlp_bytes = 236;
  uint64_t skp_interval_flits = 0;     // one flit time of SKP ordered set per this many flits (0: none)
  double flit_decode_latency_ns = 2.0; // FEC decode + flit CRC check before a flit's TLPs are used
  // Flow control: credits the receiver advertises (0: infinite, as endpoints do for completions) and the
  // time from freeing a buffer to scheduling the UpdateFC that returns it.
  // Defaults cover a switch's cut-through latency at Gen6 x16 (128 GB/s x ~110 ns = 14 KB, 110 headers of
  // 128-byte TLPs) with room to spare; a small buffer is a scenario of its own.
  uint64_t posted_header_credits = 256;
  uint64_t posted_data_credits = 2048;      // 16-byte units: 32 KiB
  uint64_t non_posted_header_credits = 256;
  uint64_t non_posted_data_credits = 256;
  uint64_t completion_header_credits = 0;
  uint64_t completion_data_credits = 0;
  double update_fc_latency_ns = 10.0;       // receiver's UpdateFC scheduling latency (estimate)

  void visit(core::param_visitor& v);
  double gigatransfers_per_s() const { return generation == 5 ? 32.0 : 64.0; }
};

// Where a link delivers: the device or switch at its far end.
class tlp_receiver {
 public:
  virtual ~tlp_receiver() = default;
  // `t` has arrived whole (and, in flit mode, its last flit has been checked) at the far end.
  virtual void receive(tlp& t, pcie_link& from) = 0;
  // `t` has been committed to the wire of `on` (its sender may forget it: its credits are spent).
  virtual void committed(tlp& /*t*/, pcie_link& /*on*/) {}
};

class pcie_link : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(pcie_link);
  pcie_link(sc_core::sc_module_name name, const pcie_link_params& params, tlp_receiver& receiver);
  pcie_link(const pcie_link&) = delete;
  pcie_link& operator=(const pcie_link&) = delete;

  // The opposite direction of the same link, which carries this direction's Ack and UpdateFC DLLPs.
  void set_reverse(pcie_link& reverse) { m_reverse = &reverse; }
  // The far end forwards with cut-through (a switch): deliver each TLP when its header has arrived rather
  // than its last byte; t.last_byte_in still says when the last byte arrives.
  void set_cut_through_receiver(bool on) { m_deliver_at_header = on; }
  // Told when each TLP is committed to the wire (the sender's transmit queue no longer holds it).
  void set_commit_observer(tlp_receiver& observer) { m_commit_observer = &observer; }

  // Queues `t` at the transmitter; it starts no earlier than t.eligible_at, and no earlier than needed for its
  // last byte to leave after t.last_byte_in (so cut-through never outruns the ingress).
  void send(tlp& t);
  // The receiver has moved `t` out of its buffer: return its credits (UpdateFC).
  void release(const tlp& t);

  const pcie_link_params& params() const { return m_params; }
  // Raw signalling rate of the direction, bits per second (lanes x GT/s; both encodings carry 1 bit per
  // transfer per lane, PAM4 at half the symbol rate).
  double raw_bits_per_s() const { return m_params.gigatransfers_per_s() * 1e9 * double(m_params.lanes); }

  // Registers this direction's counters under its SystemC name.
  void register_stats(core::stats_registry& stats) const;

  // Statistics.
  uint64_t tlps() const { return m_tlps; }
  uint64_t payload_bytes() const { return m_payload_bytes; }
  uint64_t tlp_wire_bytes() const { return m_tlp_bytes; }
  uint64_t dllps() const { return m_dllps; }
  uint64_t credit_stalls() const { return m_credit_stalls; }  // times a head TLP waited for credits
  core::picoseconds first_start() const { return m_first_start; }
  core::picoseconds last_end() const { return m_last_end; }  // last byte of the latest TLP leaves
  core::picoseconds wire_free() const { return m_wire_free; }

 private:
  struct credit_pool {
    bool infinite = false;
    uint64_t header = 0, data = 0;
  };
  struct credit_return {
    core::picoseconds at;
    uint8_t cls;
    uint32_t data;
  };
  struct arrival {
    core::picoseconds at;
    tlp* t;
  };
  struct fifo {
    tlp* head = nullptr;
    tlp* tail = nullptr;
    // The TLPs queued at `stamp` follow `older` (nullptr: from the head), in src_port order.
    core::picoseconds stamp{UINT64_MAX};
    tlp* older = nullptr;
  };

  void on_wake();
  void transmit_ready();
  core::picoseconds ready_at() const;  // earliest start of the next TLP on this wire
  uint64_t wire_bytes(const tlp& t) const;
  uint64_t gen5_ps(uint64_t bytes) const;
  bool has_credits(const tlp& t) const;
  // Commits `t` at the earliest start allowed; returns when its last byte reaches the far end's receiver.
  core::picoseconds commit(tlp& t);
  // A DLLP on this direction's wire (Gen5) or in its next flit's DLP (Gen6), to leave no earlier than `at`;
  // returns when it has been received at the far end.
  core::picoseconds send_dllp(core::picoseconds at);
  void reschedule();

  pcie_link_params m_params;
  tlp_receiver& m_receiver;
  tlp_receiver* m_commit_observer = nullptr;
  pcie_link* m_reverse = nullptr;
  bool m_deliver_at_header = false;
  sc_core::sc_event m_wake;

  fifo m_queue[fc_classes];
  unsigned m_rr = 0;
  credit_pool m_credits[fc_classes];
  core::ring<arrival> m_in_flight;
  core::ring<credit_return> m_returns;

  // Timing: Gen5 a byte clock; Gen6 a flit clock and the fill state of the last flit holding TLP bytes.
  uint64_t m_byte_num = 0, m_byte_den = 1;  // Gen5: wire time of one byte on all lanes = num/den ps (130/128)
  uint64_t m_flit_ps = 0;      // Gen6: one flit time
  core::picoseconds m_wire_free{};
  uint64_t m_fill_flit = 0;    // Gen6: index of the flit being filled
  uint64_t m_fill_bytes = 0;   // TLP bytes already in it (flit_tlp_bytes: full)
  bool m_any_flit = false;
  uint64_t m_bytes_since_skp = 0;
  uint64_t m_skp_every_bytes = 0;
  core::picoseconds m_skp_ps{};
  uint64_t m_received_since_ack = 0;
  uint64_t m_prop_ps = 0, m_decode_ps = 0, m_update_fc_ps = 0;

  uint64_t m_tlps = 0, m_payload_bytes = 0, m_tlp_bytes = 0, m_dllps = 0, m_credit_stalls = 0;
  core::picoseconds m_first_start{}, m_last_end{};
  bool m_stalled = false;
};

}  // namespace fabricsim::pcie
