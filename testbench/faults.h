// The scenario's `faults` list put on the fabric: one fault injector per affected link direction (and, for
// kind misplace, the placement fault of one NIC: sc_models/nic/placement_fault.h), and the
// `faults` object of the report (docs/faults.md). Under mpirun (docs/scale_out.md) every rank resolves the
// whole list against the fabric's layout (the same names, entries and errors everywhere), but attaches an
// injector only to the link directions whose transmitter it simulates: the verdicts are judged where the
// frame is put on the wire, and a switch learns of a carrier change from the injector of the link leaving
// it, which is on its own rank. The counters are summed over the ranks before the report.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "sc_models/core/fault_injector.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"
#include "sc_models/nic/placement_fault.h"
#include "sc_models/topology/fabric.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// Delivered payload over the whole fabric at one sampling instant (run.sample_us): what time to recover is
// measured on.
struct delivered_sample {
  core::picoseconds t;
  uint64_t placed_bytes;
};

class fault_set {
 public:
  // Attaches injectors for every entry of `s.faults`. Throws core::config_error naming the file, the entry
  // and the field: an unknown link (with the naming pattern and an example), an unknown switch or port.
  // `run_end` closes faults that last "for the rest of the run".
  fault_set(const scenario& s, topology::fabric& fab, core::sim_context& ctx, core::picoseconds run_end);
  ~fault_set();
  fault_set(const fault_set&) = delete;
  fault_set& operator=(const fault_set&) = delete;

  bool empty() const { return m_entries.empty(); }
  // Under mpirun, after the run and on every rank (a collective): each entry's counters summed over the
  // ranks (frames lost, FCS errors, frames exposed; the latest loss their maximum), so that report() gives
  // the one-process figures. One process: nothing to do.
  void merge(scale_out& so);
  // Under mpirun, once the exchange is attached: the InfiniBand receivers of this rank whose crossing links
  // lose frames on another rank learn of each loss as the frame arrives (scale_out::on_arrival_loss).
  void connect(scale_out& so) const {
    for (const auto& [link, listener] : m_arrival_losses) so.on_arrival_loss(link, listener);
  }
  // The `faults` object (docs/report.md): per entry what it did and how long the fabric took to recover.
  nlohmann::json report(core::picoseconds sim_end, const std::vector<delivered_sample>& delivered,
                        uint64_t retransmissions) const;

 private:
  struct entry {
    const fault_entry* cfg;
    std::string target;               // link name(s) or switch.port, for the report
    core::picoseconds start, end;     // the fault's span (end: the run's end for an open-ended one)
    std::vector<size_t> links;        // the link directions it acts on: indices into the fabric's layout
    nic::placement_fault* misplace;   // kind misplace: the NIC's fault, where this process builds the host
  };
  // A misplace entry's outcome, merged over the ranks (merge()).
  struct misplaced {
    bool fired = false;
    uint64_t va = 0, length = 0, offset = 0;
    core::picoseconds at{};
  };
  nlohmann::json misplace_report(size_t i) const;
  // Carrier faults: the switches' reachability tables (m_reach), on Quantum fabrics at detection, on Spectrum
  // fabrics fault.notification_us later (fault.remote_notification).
  void install_reachability(topology::fabric& fab);
  // The injector of link `k` (the layout's index), made on first use. It is attached to the link only when
  // this process simulates the link's transmitter; otherwise it stays detached (it holds the schedule the
  // report's time down is read from, and its verdicts are made on the transmitter's rank).
  core::fault_injector& injector_of(topology::fabric& fab, size_t k);

  const scenario& m_scenario;
  core::sim_context& m_ctx;
  core::picoseconds m_detect;
  std::vector<core::fault_counters> m_counters;  // one per entry, sized before any injector exists
  std::vector<entry> m_entries;
  std::vector<std::string> m_link_names;  // [k]: the layout's link names
  std::map<size_t, std::unique_ptr<core::fault_injector>> m_injectors;  // by link index
  std::map<size_t, misplaced> m_misplaced;                              // by entry, under mpirun after merge()
  // InfiniBand links: credit recovery for frames the faults destroy (sw::ib::wire_loss_recovery).
  std::vector<std::unique_ptr<sw::ib::wire_loss_recovery>> m_recoveries;
  std::vector<std::pair<size_t, core::wire_loss_listener*>> m_arrival_losses;  // crossing links into this rank
  // Carrier faults: the reachability tables the switches reroute by, recomputed ahead of every change of a
  // link's known state (faults.cpp).
  class fabric_reachability;
  std::unique_ptr<fabric_reachability> m_reach;
};

}  // namespace fabricsim::testbench
