// Reachability for InfiniBand rerouting: for every port of every switch, whether the switch at its far end
// can still deliver to each LID over links that are not known down. The fabric computes it from the fault
// schedule whenever a link's known state changes and gives each quantum_switch its rows
// (quantum_switch::set_reachability), so that routing reads a table the switch holds instead of asking the
// neighbouring switch at run time (docs/faults.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/switch/equal_cost_group.h"

namespace fabricsim::sw {

struct reach_inputs {
  static constexpr size_t no_switch = SIZE_MAX;
  std::vector<std::vector<size_t>> peer;  // [switch][port]: the switch at the far end, or no_switch (a host, unwired)
  uint16_t lids = 0;                      // LIDs 0 .. lids - 1 are tabled
  // The equal-cost ports of the switch's route to `dlid` (count 0: no route).
  std::function<equal_cost_group(size_t sw, uint16_t dlid)> group;
  // Whether the link leaving the switch through `port` is known down (at the time the table is for).
  std::function<bool(size_t sw, unsigned port)> down;
};

// [port][dlid] of one switch: for a port facing a switch, whether that switch reaches dlid; an empty row for
// a port facing a host (or unwired): nothing beyond it to check.
using reach_rows = std::vector<std::vector<bool>>;

// Every switch's rows. A switch reaches a LID when it has a route to it and some port of the route's group
// is not known down and faces a host or a switch that reaches it (up/down routes are loop-free; a loop in a
// hand-made table counts as reachable, as a hop bound would).
std::vector<reach_rows> reach_beyond(const reach_inputs& in);

// A switch whose routing reads the fabric's reachability table (Quantum-X800): what the fabric needs to
// compute its rows and give them to it. The run set-up reaches it through switch_device::reachability(),
// not through the switch's class.
class reachability_user {
 public:
  virtual ~reachability_user() = default;
  virtual int lft(uint16_t dlid) const = 0;  // the LFT port for `dlid`, or -1
  virtual equal_cost_group ar_group(uint16_t dlid) const = 0;
  // The rows (reach_beyond) in force from `from` until the next table's `from`.
  virtual void set_reachability(core::picoseconds from, reach_rows rows) = 0;
  // true: a subnet manager reroutes every switch at detection (InfiniBand); false: the switches away from a
  // failure learn of it from a notification, fault.notification_us later (Ethernet adaptive routing).
  virtual bool subnet_managed() const = 0;
};

}  // namespace fabricsim::sw
