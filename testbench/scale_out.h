// One scenario run across several processes (docs/scale_out.md): what a run needs from the MPI layer
// (sc_models/mpi) -- which features can be cut yet, which hosts this rank simulates, the windowed kernel
// drive, and the merge of every rank's results so that each rank holds the report one process would write.
// In a plain run (one process) every call is the single-process behaviour: own everything, sc_start.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "sc_models/core/sim_context.h"
#include "sc_models/mpi/link_exchange.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/mpi/partition.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

struct run_options;

// Throws core::config_error when this process is one of several ranks and the scenario uses something not
// cut across processes yet (collectives, PCIe trays, faults, taps, sampling, warm-up,
// RTL recording); a single-process run passes.
void check_scale_out_supported(const scenario& s, const run_options& opts);

class scale_out {
 public:
  // After the fabric is built, before the workload is posted. `ship_payload`: payload bytes travel with
  // frames between ranks (data is placed).
  scale_out(topology::fabric& fab, core::sim_context& ctx, bool ship_payload);

  bool distributed() const { return m_world.distributed(); }
  int rank() const { return m_world.rank(); }
  // The hosts whose NIC this rank simulates (posts work to, reads results of).
  bool owns_host(size_t h) const { return m_part.host_rank(h) == m_world.rank(); }
  // The switches this rank simulates (fabric::switches() index).
  bool owns_switch(size_t s) const { return m_part.switch_rank(s) == m_world.rank(); }

  // The kernel drive (link_exchange::start / pending): sc_start and sc_pending_activity in one process.
  void start(core::picoseconds stop, sc_core::sc_starvation_policy policy) { m_exchange.start(stop, policy); }
  bool pending() { return m_exchange.pending(); }

  // After the run: every statistic (counters, histograms, gauges), the hop and event counts, merged from the
  // rank that simulated each block (links: summed over both ends), written into this rank's registry.
  void merge_statistics();
  // After the run: every Spectrum switch's PFC pause log (report only) as the rank that simulated it
  // recorded it, so that the report's `fabric.pfc_pause_intervals` is the one-process list.
  void merge_pause_logs(topology::fabric& fab);
  // Element-wise sums over the ranks: each rank contributes what it owns, zero elsewhere.
  void sum(std::vector<uint64_t>& v) { m_world.sum(v.data(), v.size()); }
  void sum(std::vector<double>& v) { m_world.sum(v.data(), v.size()); }
  uint64_t sum(uint64_t v) {
    m_world.sum(&v, 1);
    return v;
  }
  // Every rank's `mine`, in rank order, on every rank (one process: just `mine`). For report fragments that
  // only the owning rank can fill.
  std::vector<nlohmann::json> gather_json(const nlohmann::json& mine);
  // Each operation's requester completion (on the rank of `hosts[i].first`, the requester) and responder
  // record (`hosts[i].second`), gathered so that every rank holds both; the pointers then refer to copies
  // kept here.
  void merge_outcomes(const std::vector<std::pair<size_t, size_t>>& hosts, std::vector<const nic::completion*>& req,
                      std::vector<const nic::placed_message*>& resp);

  // The report's `scale_out` object (docs/report.md): ranks, partition, lookahead, windows, exchange volume
  // and where the wall time went (rank 0's view, plus the slowest rank's waiting share).
  nlohmann::json report();

 private:
  mpi::world& m_world;
  mpi::partition m_part;
  core::sim_context& m_ctx;
  mpi::link_exchange m_exchange;
  std::vector<uint64_t> m_counter_base;  // every counter before the run, in registry order
  std::deque<nic::completion> m_completions;
  std::deque<nic::placed_message> m_placed;
};

}  // namespace fabricsim::testbench
