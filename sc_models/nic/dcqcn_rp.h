// DCQCN reaction point of a RoCEv2 NIC: the per-flow rate engine that cuts the send rate on a CNP and
// recovers it on timers and a byte counter (Zhu et al., SIGCOMM 2015; NVIDIA ConnectX firmware knobs).
//
// State machine (one flow; every number below is fixed point, formats further down):
//   reset(now)       current = target = line rate, alpha = initial_alpha, counters 0, alpha timer armed at
//                    now + dce_tcp_rtt, rate-increase timer disarmed (nothing to recover).
//   CNP at t         if a rate cut happened less than rate_reduce_monitor_period ago, the CNP is suppressed:
//                    only alpha rises and the alpha timer restarts. Otherwise (a cut):
//                      target  <- current
//                      current <- current - current * alpha / 2     (alpha / 2^(rpg_gd - 10) in general)
//                                 not below current * rpg_min_dec_fac / 100, not below rpg_min_rate
//                      alpha   <- (1 - g) alpha + g,  g = (1024 - dce_tcp_g) / 1024   (alpha increase)
//                      timer count, byte count and byte accumulator <- 0;
//                      rate-increase timer re-armed at t + rpg_time_reset, alpha timer at t + dce_tcp_rtt.
//   alpha timer      expires dce_tcp_rtt after the last CNP (then periodically) without a CNP:
//                      alpha <- (1 - g) alpha; disarmed once alpha reaches 0.
//   rate timer       expires every rpg_time_reset while current < line rate: timer count += 1, increase event.
//   byte counter     sent(bytes) adds to the accumulator; when it reaches rpg_byte_reset: byte count += 1,
//                    accumulator -= rpg_byte_reset, increase event. At most one per sent(): the remainder is
//                    kept up to rpg_byte_reset - 1, so a single sent() of more than twice rpg_byte_reset
//                    loses events (NIC frames are at most ~4.2 KB, below any realistic rpg_byte_reset).
//   increase event   with F = rpg_threshold and the counts after the increment:
//                      max(timer, byte) <= F       fast recovery   target unchanged
//                      min(timer, byte) >  F       hyper increase  target += rpg_hai_rate (capped at line)
//                      otherwise                   additive        target += rpg_ai_rate  (capped at line)
//                    then current <- ceil((target + current) / 2). Rounding up lets current reach target
//                    (and line rate, where the rate timer disarms) instead of stopping one unit short.
//   ordering         a transaction at time t first fires every timer due at or before t, earliest deadline
//                    first (alpha before rate on a tie), each from its own deadline; then applies the CNP or
//                    the sent bytes. A CNP in the cycle a timer expires therefore sees the timer's effect.
//
// Fixed point (widths shared with rtl/dcqcn_rp.sv through dcqcn_widths; the two agree bit for bit):
//   rates   unsigned kb/s, 32 bit (up to 4.29 Tb/s); parameters in Mb/s are converted once at reset.
//   alpha   unsigned Q0.16 (alpha = a / 65536, a <= 65535); initial_alpha and dce_tcp_g are in 1024ths
//           as in NVIDIA firmware; the alpha increase rounds down and cannot reach 1.0.
//   time    free-running cycle count, 64 bit, at clock_mhz; timer periods 32 bit in cycles.
//   bytes   sent() takes at most 65535 bytes; accumulator 32 bit; counters saturate at 255.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

// Rate-engine knobs, mlxconfig names where NVIDIA has one (units: the suffix; alpha values in 1024ths).
struct dcqcn_params {
  uint64_t line_rate_mbps = 400000;             // port rate, the ceiling of current and target
  uint64_t rpg_time_reset_us = 300;             // RPG_TIME_RESET: rate-increase timer period
  uint64_t rpg_byte_reset = 32767;              // RPG_BYTE_RESET: bytes per byte-counter event
  uint64_t rpg_threshold = 1;                   // RPG_THRESHOLD: fast-recovery stages (F)
  uint64_t rpg_ai_rate_mbps = 5;                // RPG_AI_RATE: additive increase step of target
  uint64_t rpg_hai_rate_mbps = 50;              // RPG_HAI_RATE: hyper increase step of target
  uint64_t rpg_gd = 11;                         // RPG_GD: cut = current * alpha_1024 / 2^rpg_gd (11: alpha/2)
  uint64_t rpg_min_dec_fac = 50;                // RPG_MIN_DEC_FAC: a cut keeps at least this % of current
  uint64_t rpg_min_rate_mbps = 1;               // RPG_MIN_RATE: floor of current
  uint64_t dce_tcp_g = 1019;                    // DCE_TCP_G: 1 - g in 1024ths (1019: g = 5/1024)
  uint64_t dce_tcp_rtt_us = 1;                  // DCE_TCP_RTT: alpha update (decay) period
  uint64_t initial_alpha = 1023;                // INITIAL_ALPHA_VALUE: alpha after reset, in 1024ths
  uint64_t rate_reduce_monitor_period_us = 4;   // RATE_REDUCE_MONITOR_PERIOD: at most one cut per period
  uint64_t clock_mhz = 1000;                    // clock of the free-running cycle count (time input)
  void visit(core::param_visitor& v);
};

// "paper" (Zhu et al. 2015 defaults) or "nvidia" (ConnectX firmware defaults); sources in docs/dcqcn.md.
// Throws core::config_error naming the known presets for any other name.
dcqcn_params dcqcn_preset(const std::string& name);
std::vector<std::string> dcqcn_preset_names();

// Declared widths of the fixed-point datapath; rtl/CMakeLists.txt Verilates rtl/dcqcn_rp.sv with the same
// values, and the adapter checks them at compile time.
namespace dcqcn_widths {
inline constexpr unsigned rate = 32;    // RateW: kb/s
inline constexpr unsigned alpha = 16;   // AlphaW: Q0.16
inline constexpr unsigned time = 64;    // TimeW: cycles
inline constexpr unsigned period = 32;  // PeriodW: timer periods in cycles
inline constexpr unsigned bytes = 16;   // BytesW: bytes per sent()
inline constexpr unsigned acc = 32;     // AccW: byte accumulator and rpg_byte_reset
inline constexpr unsigned count = 8;    // CountW: timer and byte-counter event counts (saturating)
}  // namespace dcqcn_widths

inline constexpr uint64_t dcqcn_never = std::numeric_limits<uint64_t>::max();  // next_deadline(): no timer
inline constexpr uint32_t dcqcn_max_sent_bytes = (1u << dcqcn_widths::bytes) - 1;

// What happened during the last transaction (OR of every step it took); an output port of the RTL too.
enum dcqcn_event : uint32_t {
  dcqcn_ev_cut = 1u << 0,             // a CNP cut the rate
  dcqcn_ev_cnp_suppressed = 1u << 1,  // a CNP inside the monitor period: alpha only
  dcqcn_ev_alpha_decay = 1u << 2,     // the alpha timer fired
  dcqcn_ev_timer = 1u << 3,           // the rate-increase timer fired
  dcqcn_ev_byte = 1u << 4,            // the byte counter fired
  dcqcn_ev_fast_recovery = 1u << 5,   // an increase event in fast recovery
  dcqcn_ev_additive = 1u << 6,        // an increase event in additive increase
  dcqcn_ev_hyper = 1u << 7,           // an increase event in hyper increase
  dcqcn_ev_min_dec_clamp = 1u << 8,   // a cut was limited by rpg_min_dec_fac
  dcqcn_ev_min_rate_clamp = 1u << 9,  // a cut was limited by rpg_min_rate
};
inline constexpr unsigned dcqcn_event_bits = 10;

// The parameters as the datapath takes them (the RTL's cfg_* ports), converted once from dcqcn_params.
struct dcqcn_config {
  uint32_t line_rate_kbps = 0;
  uint32_t min_rate_kbps = 0;
  uint32_t ai_rate_kbps = 0;
  uint32_t hai_rate_kbps = 0;
  uint32_t min_dec_q10 = 0;        // rpg_min_dec_fac as a Q0.10 fraction, 0..1024 (rounded)
  uint32_t cut_shift = 0;          // alpha_q16 * current >> cut_shift: 16 + rpg_gd - 10
  uint32_t alpha_keep_q10 = 0;     // dce_tcp_g, 0..1023
  uint32_t initial_alpha_q16 = 0;  // initial_alpha << 6
  uint32_t threshold = 0;          // rpg_threshold
  uint32_t byte_reset = 0;         // rpg_byte_reset
  uint32_t alpha_period = 0;       // cycles
  uint32_t increase_period = 0;    // cycles
  uint32_t monitor_period = 0;     // cycles
};

// Validates (core::config_error naming `instance`, the field and its range) and converts.
dcqcn_config dcqcn_encode(const dcqcn_params& params, const std::string& instance = "dcqcn");

// Every output of the engine after a transaction; the differential bench compares these.
struct dcqcn_outputs {
  uint32_t rate_kbps = 0;
  uint32_t target_kbps = 0;
  uint32_t alpha_q16 = 0;
  uint64_t next_deadline = dcqcn_never;
  uint32_t timer_count = 0;  // rate-timer events since the last cut (saturating)
  uint32_t byte_count = 0;   // byte-counter events since the last cut (saturating)
  uint32_t events = 0;       // dcqcn_event bits of the last transaction

  friend bool operator==(const dcqcn_outputs& a, const dcqcn_outputs& b) {
    return a.rate_kbps == b.rate_kbps && a.target_kbps == b.target_kbps && a.alpha_q16 == b.alpha_q16 &&
           a.next_deadline == b.next_deadline && a.timer_count == b.timer_count &&
           a.byte_count == b.byte_count && a.events == b.events;
  }
  friend bool operator!=(const dcqcn_outputs& a, const dcqcn_outputs& b) { return !(a == b); }
};
std::string to_string(const dcqcn_outputs& out);

// The transaction-level interface the NIC drives, one instance per flow. Time is an input: a free-running
// cycle count that never decreases between calls (std::invalid_argument otherwise). The NIC schedules one
// timed event at next_deadline() and calls advance() there; between events nothing needs to run.
class dcqcn_rate_engine {
 public:
  virtual ~dcqcn_rate_engine() = default;
  // Loads the parameters (validated: core::config_error) and restarts the flow at time now_cycles.
  virtual void reset(const dcqcn_params& params, uint64_t now_cycles = 0) = 0;
  // A CNP arrived for this flow.
  virtual void cnp(uint64_t now_cycles) = 0;
  // The flow put `bytes` (at most dcqcn_max_sent_bytes, std::invalid_argument otherwise) on the wire.
  virtual void sent(uint32_t bytes, uint64_t now_cycles) = 0;
  // Fires every timer due at or before now_cycles.
  virtual void advance(uint64_t now_cycles) = 0;

  virtual const dcqcn_outputs& outputs() const = 0;
  virtual const char* kind() const = 0;  // "rtl" or "ref"
  // Clock cycles the last transaction took: the RTL's edges, and for the reference model the same by the RTL's
  // cycle timing rule (1 for an init, k + 2 for a request that found k timers due).
  virtual uint64_t last_cycles() const = 0;

  double rate_mbps() const { return outputs().rate_kbps / 1000.0; }
  double target_mbps() const { return outputs().target_kbps / 1000.0; }
  uint32_t alpha() const { return outputs().alpha_q16; }  // Q0.16
  uint64_t next_deadline() const { return outputs().next_deadline; }  // dcqcn_never: no timer armed
};

// kind "rtl" (Verilated rtl/dcqcn_rp.sv) or "ref" (C++ reference model), reset with `params` at time 0.
// Throws core::config_error for an unknown kind ("dcqcn.kind ... allowed: rtl, ref") or bad parameters.
std::unique_ptr<dcqcn_rate_engine> make_dcqcn_rate_engine(const std::string& kind, const dcqcn_params& params);

}  // namespace fabricsim::nic
