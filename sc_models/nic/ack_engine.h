// The SuperNIC responder's acknowledgements: which ACK, NAK (PSN sequence error), RNR NAK or SACK each queue
// pair owes and when, coalesced and built as they leave so that each carries the newest placed PSN; and the
// CNPs the notification point owes (cc dcqcn, ecn_only). The NIC tells it what arrives and how the tracker's
// head moves, and asks it for the next acknowledgement due; it turns the answer into a packet.
//
// An acknowledgement covers only placed PSNs: the head passes a PSN when it arrives, the PSN is placed
// nic.rx_latency_ns later. The engine keeps the heads of the last rx_latency, each with the time it is placed;
// an ACK built late (held behind the transmit FIFO, or coalescing triggers that came after it was queued)
// carries the head as of rx_latency before it leaves, never more.
//
// The NAK rule (the receiver places out of order, so a gap is not an error at once): a NAK naming the expected
// PSN goes out when the furthest PSN seen is at least nic.nak_threshold_packets (capped at half the window)
// beyond it, once per expected PSN. Once a gap has been NAKed, or a duplicate has shown that the requester is
// resending, the QP is recovering: every gap the head stops at is NAKed at once until the head catches up with
// the furthest PSN seen. With SACKs (nic.retransmission sack) there is no NAK: every out-of-order arrival gets
// an ACK of its own naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"

namespace fabricsim::nic {

struct supernic_params;

// AETH syndromes (IBTA 9.7.5.1): bits 7:5 say what it is, bits 4:0 a code.
inline constexpr uint8_t ack_syndrome = 0x1f;         // ACK, credit count "invalid" (no end-to-end credits)
inline constexpr uint8_t nak_syndrome_mask = 0xe0;    // 000 ACK, 001 RNR NAK, 011 NAK
inline constexpr uint8_t nak_syndrome = 0x60;         // NAK; bits 4:0 the NAK code
inline constexpr uint8_t nak_psn_sequence_error = 0;  // NAK code 0: PSN sequence error
inline constexpr uint8_t rnr_syndrome = 0x20;         // RNR NAK; bits 4:0 the responder's RNR timer code
inline constexpr uint8_t rnr_timer_code_10us = 0x01;  // IBTA table 45: code 1 is 0.01 ms (informative here:
                                                      // the requester waits nic.rnr_timer_us)
// sack: out-of-order arrivals a QP may have waiting to be SACKed; beyond it the oldest is not SACKed (at
// worst the requester resends that PSN needlessly).
inline constexpr size_t sack_queue_depth = 64;

// What the engine asks of its NIC.
class ack_host {
 public:
  virtual ~ack_host() = default;
  virtual uint32_t ack_head(size_t q) const = 0;  // QP q's expected PSN (the reorder tracker's head)
  // An acknowledgement is due at `ready`: the transmitter looks again then (or once the wire is free).
  virtual void ack_wake(core::picoseconds ready) = 0;
};

// One acknowledgement to send: its BTH PSN and AETH syndrome, and (sack) the out-of-order PSN it names.
struct ack_frame {
  size_t q = 0;
  uint32_t psn = 0;  // ACK: the newest placed PSN; NAK: the expected PSN; RNR NAK: the PSN not accepted
  uint8_t syndrome = ack_syndrome;
  bool sack = false;
  uint32_t sack_psn = 0;
};

class ack_engine {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  // `sacks`: the responder SACKs out-of-order arrivals and sends no NAK (loss_recovery::sacks()).
  ack_engine(const supernic_params& params, bool sacks, ack_host& host, const std::string& instance,
             core::stats_registry* stats);
  ack_engine(const ack_engine&) = delete;
  ack_engine& operator=(const ack_engine&) = delete;

  void add_qp();  // index q = the number added before it
  // QP q is connected: the first PSN expected is `psn` (the furthest seen and the placed head too).
  void connect(size_t q, uint32_t psn);

  // The head moved at `t` (forward, or back to an RNR PSN): it counts as placed at t + rx_latency.
  void head_moved(size_t q, core::picoseconds t);
  // A data packet up to `psn` arrived (or was dropped beyond the window): extends the furthest PSN seen, then
  // NAKs a gap if the rule says so.
  void arrival(size_t q, uint32_t psn, core::picoseconds t);
  // A duplicate arrived while the head stood at `head_before` (re-acknowledged by the NIC through request()):
  // the requester is resending, so a gap at the head is a loss.
  void duplicate(size_t q, uint32_t head_before, core::picoseconds t);
  // The head passed `packets` new PSNs; `now`: a message ended or the packet asked for an ACK. One ACK per
  // nic.ack_every_packets, or at once.
  void advanced(size_t q, uint64_t packets, bool now, core::picoseconds t);
  // An ACK is owed at `t` + rx_latency (a queued one takes the trigger: it is built when it leaves).
  void request(size_t q, core::picoseconds t);
  // sack: an out-of-order arrival at `psn` gets an ACK of its own. False: the QP's SACK queue was full and
  // its oldest is not SACKed (the NIC counts sack_overflow).
  bool sack(size_t q, uint32_t psn, core::picoseconds t);
  // Receiver not ready at `psn` (the head is back at it): nothing owed but an RNR NAK naming it.
  void rnr(size_t q, uint32_t psn, core::picoseconds t);

  // The next acknowledgement due by `t`, if any (an RNR NAK or NAK waits until the head's last move is placed).
  bool next(core::picoseconds t, ack_frame* out);
  core::picoseconds next_due() const { return m_acks.empty() ? never : m_acks.front().ready; }
  // nic.nak_threshold_packets capped at half the reorder window (the requester's READ re-issue rule uses it too).
  uint32_t nak_threshold() const { return m_nak_threshold; }

  // Notification point: a CNP for QP q may leave at `ready` (the generator's result cycle).
  void cnp(size_t q, core::picoseconds ready) { m_cnps.push_back({q, ready}); }
  // The oldest CNP owed, if due by `t` (one generator: results come in arrival order).
  bool next_cnp(core::picoseconds t, size_t* q);
  core::picoseconds cnp_due() const { return m_cnps.empty() ? never : m_cnps.front().ready; }

 private:
  struct head_mark {
    core::picoseconds placed_at;
    uint32_t head;
  };
  struct qp_acks {
    uint32_t rx_max = 0;            // one past the highest PSN seen (any verdict but duplicate)
    uint64_t since_ack = 0;         // PSNs the head passed since the last ACK was asked for
    bool queued = false;            // an entry of the ACK queue stands for this QP
    core::picoseconds due{};        // the latest ready time an ACK was asked for (coalesced into a queued one)
    core::ring<uint32_t> sacks{8};  // sack: out-of-order arrivals still to be SACKed, one ACK each
    uint32_t nak_psn = 0;           // the expected PSN the last NAK named (one NAK per gap)
    bool nak_sent = false;
    bool nak_pending = false;  // the queued acknowledgement is a NAK, if the gap is still there when it leaves
    bool recovering = false;   // a loss is known: NAK each gap at once (until the head reaches rx_max)
    bool rnr_pending = false;  // the queued acknowledgement is an RNR NAK for rnr_psn
    uint32_t rnr_psn = 0;
    core::ring<head_mark> placing{8};  // the heads of the last rx_latency, oldest first
    uint32_t placed_head = 0;          // the head as of rx_latency ago
  };
  uint32_t placed_by(qp_acks& a, core::picoseconds t);  // the head as of `t - rx_latency` (`t` never goes back)
  void requeue(size_t q, core::picoseconds ready);      // an ACK entry due at `ready`

  ack_host& m_host;
  const core::picoseconds m_rx_latency;
  const uint64_t m_ack_every;
  const uint32_t m_nak_threshold;  // nak_threshold_packets, capped at half the reorder window
  const bool m_sacks;
  std::vector<qp_acks> m_qps;
  struct pending_ack {
    core::picoseconds ready;
    size_t q;
  };
  core::ring<pending_ack> m_acks;  // in time order: its front is the next due
  struct owed_cnp {
    size_t q;
    core::picoseconds ready;
  };
  core::ring<owed_cnp> m_cnps;  // oldest first
  uint64_t m_tx_acks = 0, m_tx_nak = 0, m_tx_rnr_nak = 0, m_tx_sacks = 0, m_tx_cnps = 0;
};

}  // namespace fabricsim::nic
