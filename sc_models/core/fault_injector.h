// Faults of one direction of a cable: intervals with the carrier down (a link down, a flapping link, a failed
// switch port at either end), random frame loss and bit errors. The link asks the injector about every
// frame it puts on the wire; the switches at the ends ask whether the carrier is known to be down (the
// carrier state reaches them `detect_us` after it changes). Scenario keys and report: docs/faults.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/units.h"

namespace fabricsim::core {

// The `fault` section: what every injector shares.
struct fault_params {
  // Carrier changes reach the switch this long after they happen: the PHY's loss of lock or alignment, the
  // PCS local-fault signalling and the port-state interrupt to the switch's routing (estimate, not a
  // published figure; switches add a configurable link-down debounce on top of it).
  double detect_us = 10.0;
  // Ethernet (Spectrum) fabrics: the switches away from a failed cable stop routing towards it this long after
  // its ends detect the failure (an adaptive-routing fault notification sent back from the switch that lost
  // its way down, or a route withdrawal); an estimate (docs/faults.md). `remote_notification` false: only the
  // cable's ends ever learn (the model before notifications). InfiniBand's subnet manager reroutes at
  // detection and ignores both.
  bool remote_notification = true;
  double notification_us = 1.0;
  // Goodput sampling period for time to recover, used when run.sample_us is 0 (sampling adds no model event).
  double sample_us = 1.0;
  void visit(param_visitor& v);
};

// What a fault entry did, summed over the links it acts on (one direction for loss and bit errors, both
// directions of the cable for link down, flapping and a failed port).
struct fault_counters {
  uint64_t frames_lost = 0;       // serialized while the carrier was down, or lost at random
  uint64_t fcs_errors = 0;        // corrupted by bit errors and dropped by the receiver's FCS/ICRC check
  // The latest time one of those frames was put on the wire (0: none): a maximum, not the last judged, so
  // that it does not depend on the order in which links on different scale-out ranks judged their frames.
  picoseconds last_loss{};
  uint64_t frames_judged = 0;     // frames this entry could have hit (loss and bit errors)
};

// Told of every frame a fault destroys on the wire, when the frame is judged (as it is put on the wire). An
// InfiniBand link uses it to recover the flow-control credits of the lost blocks (sw::ib::wire_loss_recovery);
// Ethernet links have none.
class wire_loss_listener {
 public:
  virtual ~wire_loss_listener() = default;
  // `p` is lost (never arrives) or corrupted (arrives and fails its CRC check); its bits are on the wire in
  // [start, end).
  virtual void on_wire_loss(const packet& p, picoseconds start, picoseconds end) = 0;
};

class fault_injector {
 public:
  enum class verdict : uint8_t { pass, lost, corrupted };

  // `instance` names the link (for its random stream and errors); `counters[entry]` is where entry `entry`
  // counts what it did (the vector outlives the injector and does not grow after attachment).
  fault_injector(const std::string& instance, uint64_t seed, picoseconds detect,
                 std::vector<fault_counters>& counters);
  fault_injector(const fault_injector&) = delete;
  fault_injector& operator=(const fault_injector&) = delete;

  // The carrier is down in [from, until); until = picoseconds{UINT64_MAX}: for ever.
  void add_down(picoseconds from, picoseconds until, size_t entry);
  // Every frame starting in [from, until) lost with probability `p` (PFC frames too: the wire cannot tell
  // them apart). One loss setting per link.
  void set_loss(double p, size_t entry, picoseconds from, picoseconds until);
  // Bit error ratio in [from, until): a frame of n bits is corrupted with probability 1 - (1 - ber)^n.
  void set_ber(double ber, size_t entry, picoseconds from, picoseconds until);
  bool has_loss() const { return m_loss.p > 0.0; }
  // At most one listener; nullptr detaches.
  void set_listener(wire_loss_listener* l) { m_listener = l; }
  bool has_ber() const { return m_ber.p > 0.0; }

  // The fate of a frame whose bits are on the wire in [start, end): lost when the carrier is down at any
  // moment of it, else lost at random, else corrupted by a bit error, else it passes. One draw per loss
  // or bit-error setting per frame, from the link's own stream.
  verdict judge(const packet& p, picoseconds start, picoseconds end);
  bool down(picoseconds t) const;        // the carrier is down at t
  bool known_down(picoseconds t) const;  // the ends know it (detect after it went down, until detect after up)
  picoseconds detect() const { return m_detect; }
  // The first time at or after `t` when the carrier is up (picoseconds{UINT64_MAX}: never again).
  picoseconds up_at(picoseconds t) const;
  // The first time after `t` when known_down() may change (a down interval's start or end plus detect), or
  // picoseconds{UINT64_MAX}: what a switch port watching its link wakes up for.
  picoseconds next_known_change(picoseconds t) const;
  // Carrier-down time of entry `entry` on this link up to `end`.
  picoseconds down_time(size_t entry, picoseconds end) const;

  // Probability that a frame with `frame_bytes` (CRC-covered bytes: no preamble, no gap) has at least one
  // bit error at `ber`.
  static double frame_error_probability(double ber, uint64_t frame_bytes);

 private:
  struct interval {
    picoseconds from, until;
    size_t entry;
  };
  verdict decide(const packet& p, picoseconds start, picoseconds end);
  const interval* down_at(picoseconds a, picoseconds b) const;  // an interval meeting [a, b), or null
  static uint64_t threshold(double p) { return uint64_t(p * double(uint64_t(1) << 53)); }

  std::vector<interval> m_down;      // sorted by start
  std::vector<picoseconds> m_reach;  // [i]: the latest end among m_down[0..i]
  picoseconds m_detect;
  std::vector<fault_counters>& m_counters;
  struct random_fault {
    double p = 0.0;          // per-frame probability (loss), or the bit error ratio
    size_t entry = 0;
    picoseconds from{}, until{};
  };
  random_fault m_loss, m_ber;
  wire_loss_listener* m_listener = nullptr;
  rng_stream m_rng;
};

}  // namespace fabricsim::core
