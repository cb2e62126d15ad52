// Congestion control of the SuperNIC: one policy per NIC, chosen by nic.cc through make_congestion_control,
// owning the pacing of each queue pair's data packets and the per-QP state of its algorithm (the DCQCN
// reaction point, the HPCC window, ...). The NIC tells it what happens (a data packet left, a CNP or an ACK
// came, a CE-marked packet arrived) and asks it when a QP may send next; docs/extending_cc.md adds one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/transaction_log.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/block_timing.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

// What a policy is built with besides the NIC's parameters.
struct cc_context {
  std::string instance;                      // the NIC's name: errors name it
  core::transaction_log* rtl_log = nullptr;  // sim_context::rtl_log: RTL blocks record their transactions
  core::lockstep_sink* lockstep = nullptr;   // sim_context::lockstep: lockstep pairs report divergences here
  // The clock the CC blocks (CNP generator, reaction point) run at (nic.clock_mhz), and where their occupancy
  // statistics go (none: not registered).
  double clock_mhz = 1000.0;
  core::stats_registry* stats = nullptr;
};

class congestion_control {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  virtual ~congestion_control() = default;
  congestion_control(const congestion_control&) = delete;
  congestion_control& operator=(const congestion_control&) = delete;

  // A new queue pair, index `q` = the number of QPs added before it (create_qp order). `line_rate_bps` is
  // the NIC port's rate (0: no link connected yet; a paced policy refuses), `qp_name` its name in the RTL log
  // (empty without one), `t` the current time.
  void add_qp(const std::string& qp_name, uint64_t line_rate_bps, core::picoseconds t);
  size_t qps() const { return m_pace.size(); }

  // Pacing: the earliest start of QP q's next data packet (request, resend or READ response); never before
  // the policy's clocked block is free again (hold_sends_until).
  core::picoseconds next_send(size_t q) const { return std::max(m_pace[q].next_send, m_held_until); }
  // A data packet of q of `wire_bytes` (on the wire, framing included) is sent at `t`: the next one may start
  // once these bits have gone at the current rate, counted from `t` or from when this one was due if later.
  void sent(size_t q, uint64_t wire_bytes, core::picoseconds t);
  // Runs q's timers due by `t` (asked while q waits for its pace, so that a timer raising the rate is not
  // held up until the packet is due); returns the earliest timer left, `never` if none.
  virtual core::picoseconds timers(size_t /*q*/, core::picoseconds /*t*/) { return never; }
  // Window-based control: true when q's next new packet must wait (resends are not held back).
  virtual bool window_full(size_t /*q*/, uint64_t /*inflight_bytes*/) const { return false; }

  // Reaction point: a CNP for q arrived at `t`.
  virtual void on_cnp(size_t /*q*/, core::picoseconds /*t*/) {}
  // An ACK for q with `hops` telemetry records (null when none) acknowledging up to `ack_psn`, `snd_max` one
  // past the highest PSN sent, arriving at `t`. True: the transmitter must look again (the window may have room).
  virtual bool on_ack(size_t /*q*/, const core::int_record* /*records*/, unsigned /*hops*/, uint32_t /*ack_psn*/,
                      uint32_t /*snd_max*/, core::picoseconds /*t*/) {
    return false;
  }
  // Notification point (receiver): a CE-marked data packet for local QP `qpn` arrived at `t`. Returns when the
  // QP's peer is to be sent a CNP (the notification point's result cycle, at or after `t`), or `never`.
  virtual core::picoseconds marked_arrival(uint32_t /*qpn*/, core::picoseconds /*t*/) { return never; }

  // q's rate, window and congestion estimate for the report; `st` comes in at the line rate, unpaced.
  virtual void status(size_t /*q*/, qp_status& /*st*/) const {}
  // Data packets ask every switch for in-band telemetry and each asks for an ACK (HPCC acts per ACK).
  bool telemetry() const { return m_telemetry; }
  virtual const char* name() const = 0;

 protected:
  // `paced`: the policy sets a rate per QP (rate_kbps); `telemetry`: see telemetry().
  congestion_control(bool paced, bool telemetry) : m_paced(paced), m_telemetry(telemetry) {}
  virtual void on_add_qp(const std::string& /*qp_name*/, uint64_t /*line_rate_bps*/, core::picoseconds /*t*/) {}
  // q's rate: called for a paced policy only, after on_sent and whenever repace() is.
  virtual uint64_t rate_kbps(size_t /*q*/) const { return 0; }
  // The policy counts the bytes of a packet about to be paced (before its pace is set).
  virtual void on_sent(size_t /*q*/, uint64_t /*wire_bytes*/, core::picoseconds /*t*/) {}
  // q's rate changed: its next packet's start is re-evaluated from the last packet's gap at the new rate.
  void repace(size_t q);
  // No QP's next data packet starts before `t` (the policy's clocked block is busy until then).
  void hold_sends_until(core::picoseconds t) { m_held_until = std::max(m_held_until, t); }

 private:
  struct pacing {
    core::picoseconds next_send{};  // the earliest start of the QP's next data packet
    core::picoseconds pace_from{};  // when the last data packet's gap started
    uint64_t pace_bits = 0;         // that packet's wire bits (0: nothing sent yet)
  };
  std::vector<pacing> m_pace;
  core::picoseconds m_held_until{};
  const bool m_paced, m_telemetry;
};

// The policy named `name` (nic.cc) for the NIC `ctx.instance`; config_error naming nic.cc and the choices for an
// unknown name, or naming the NIC and the policy for a bad parameter.
std::unique_ptr<congestion_control> make_congestion_control(const std::string& name, const supernic_params& params,
                                                            const cc_context& ctx);
// The names make_congestion_control knows, in the order nic.cc lists them.
const std::vector<std::string>& congestion_control_names();

// Shared by the policies that react to CNPs: the receiver's notification point (cnp_gen, RTL, reference or
// lockstep by nic.cnp_model, a mutant by nic.rtl_mutant, moderated by nic.cnp_interval_ns and nic.cnp_mode,
// recorded when `ctx.rtl_log` is set) as clocked hardware at ctx.clock_mhz. rtl/cnp_gen.sv's cycle timing:
// a marked arrival is accepted at a rising edge where the block is ready (one per clock), its decision is on
// the outputs in the next cycle, and the CNP leaves then. Statistics: cnp_gen_* (block_timing.h).
class notification_point {
 public:
  notification_point(const supernic_params& params, const cc_context& ctx);
  // A CE-marked arrival of QP `qpn` at `t`, time-stamped `stamp_cycles` on the block's free-running time input:
  // when its CNP may leave, or congestion_control::never when the interval moderates it away.
  core::picoseconds arrival(uint32_t qpn, core::picoseconds t, uint64_t stamp_cycles);

 private:
  std::unique_ptr<cnp_gen> m_gen;
  block_timing m_clock;
};
// `t` as a count of cycles of a `clock_mhz` clock (the CC blocks' free-running time input).
inline uint64_t cycles_at(core::picoseconds t, uint64_t clock_mhz) {
  return uint64_t((unsigned __int128)t.value * clock_mhz / 1'000'000);
}

}  // namespace fabricsim::nic
