// One scenario run across several processes (docs/scale_out.md): what a run needs from the MPI layer
// (sc_models/mpi) -- which features can be cut yet, which hosts this rank simulates, the windowed kernel
// drive, and the merge of every rank's results so that each rank holds the report one process would write.
// In a plain run (one process) every call is the single-process behaviour: own everything, sc_start.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/mpi/link_exchange.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/mpi/partition.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/scale_out_merge.h"
#include "testbench/scenario.h"
#include "testbench/taps.h"

namespace fabricsim::testbench {

struct run_options;

// Throws core::config_error when this process is one of several ranks and the scenario uses something not
// cut across processes yet (a training step on a system preset, a switch model other than Spectrum-4 and
// Quantum-X800); a single-process run passes.
void check_scale_out_supported(const scenario& s, const run_options& opts);

class scale_out;
// Under mpirun, steps of a collective that need every rank's state are taken at window ends, which is exact
// only if they take at least a lookahead: collective.barrier_ns (`barrier_why`: what ends with it), and
// collective.credit_ns when a connection whose WRITEs are reduced on arrival (`staged`: its source and
// destination hosts) joins two processes. config_error naming the key, the figure and the lookahead.
void check_collective_lookahead(const scenario& s, scale_out& so, const std::vector<std::pair<size_t, size_t>>& staged,
                                const std::string& barrier_why);

// The lines printed after the table under mpirun: where each rank's time went (the report's `scale_out`
// object); empty for a one-process report.
std::string scale_out_lines(const nlohmann::json& report);

class scale_out {
 public:
  // Before the fabric is built: how its layout is cut over the ranks of this run (one process: one rank),
  // with the devices the scenario's `partition` places by hand (checked by check_scale_out_supported).
  scale_out(const topology::fabric_layout& layout, const std::vector<std::vector<std::string>>& placed);
  // The devices this rank builds, for fabric's constructor: empty in one process (everything).
  std::vector<bool> built() const;
  // After the fabric is built, before the workload is posted. `ship_payload`: payload bytes travel with
  // frames between ranks (data is placed).
  // The partition outlives the fabric (it is made first): the returned guard releases the fabric's links when
  // it goes, so declare it after the fabric.
  class attachment {
   public:
    explicit attachment(scale_out& so) : m_so(&so) {}
    attachment(attachment&& o) noexcept : m_so(o.m_so) { o.m_so = nullptr; }
    attachment(const attachment&) = delete;
    attachment& operator=(const attachment&) = delete;
    attachment& operator=(attachment&&) = delete;
    ~attachment() {
      if (m_so) m_so->m_exchange.reset();
    }

   private:
    scale_out* m_so;
  };
  [[nodiscard]] attachment attach(topology::fabric& fab, core::sim_context& ctx, bool ship_payload);
  // Instead of attach(), for devices in no layout that no link joins across ranks (the NVLink domains alone,
  // each rank its own; testbench/nvlink_run.cpp): after they are built, the statistics merge and the report
  // without a link exchange; the run then goes through run_apart, not start().
  void attach_apart(core::sim_context& ctx);
  // sc_start(stop - now, policy) as one kernel with every rank's devices would run it, when nothing crosses:
  // each rank runs on its own, then every clock moves to the latest of any rank (where one kernel would be:
  // at `stop`, or starving at the last event anywhere). A collective call under mpirun (one meeting, counted
  // as a window in the report); sc_start alone in one process.
  void run_apart(core::picoseconds stop, sc_core::sc_starvation_policy policy);

  bool distributed() const { return m_world.distributed(); }
  int rank() const { return m_world.rank(); }
  int ranks() const { return m_world.size(); }
  // The hosts whose NIC this rank simulates (posts work to, reads results of), and the switches.
  bool owns_host(size_t h) const { return m_part.host_rank(h) == m_world.rank(); }
  bool owns_switch(size_t s) const { return m_part.switch_rank(s) == m_world.rank(); }
  // The links whose --tap this process writes (tap_set): under mpirun those whose transmitter it simulates;
  // in one process every link (an empty filter).
  link_filter tap_filter() const;

  // The kernel drive (link_exchange::start / pending): sc_start and sc_pending_activity in one process.
  void start(core::picoseconds stop, sc_core::sc_starvation_policy policy) {
    if (!m_loop_begun) {
      m_loop_begin = std::chrono::steady_clock::now();
      m_loop_begin_cpu_s = thread_cpu_s();
    }
    m_loop_begun = true;
    m_exchange->start(stop, policy);
  }
  bool pending() { return m_exchange->pending(); }
  // Work done on every rank at the end of every window (link_exchange::on_window_end); under mpirun only.
  void on_window_end(std::function<void()> hook) { m_exchange->on_window_end(std::move(hook)); }
  bool windowed() const { return m_exchange && m_exchange->windowed(); }
  // After attach(): link `link`'s destroyed frames arriving from another rank go to `l` (link_exchange).
  void on_arrival_loss(size_t link, core::wire_loss_listener* l) {
    if (m_exchange) m_exchange->on_arrival_loss(link, l);
  }
  // Payload spaces besides the hosts' memories (link_exchange::add_payload_space, add_payload_mirror: a SHARP
  // unit's partial results); nothing to do in one process.
  void add_payload_space(uint32_t id, const uint8_t* base, uint64_t size) {
    if (m_exchange && m_exchange->windowed()) m_exchange->add_payload_space(id, base, size);
  }
  void add_payload_mirror(uint32_t id, uint8_t* base, uint64_t size) {
    if (m_exchange && m_exchange->windowed()) m_exchange->add_payload_mirror(id, base, size);
  }
  // The rank that simulates host h (switch s), and the lookahead of the windows (UINT64_MAX ps when nothing crosses).
  int host_rank(size_t h) const { return m_part.host_rank(h); }
  int switch_rank(size_t s) const { return m_part.switch_rank(s); }
  core::picoseconds lookahead() const { return m_part.lookahead(); }
  // out[r] to rank r; returns what each rank sent here, in rank order (mpi::world::all_to_all).
  std::vector<std::vector<uint8_t>> all_to_all(const std::vector<std::vector<uint8_t>>& out) {
    return m_world.all_to_all(out);
  }
  uint64_t max(uint64_t v) { return m_world.max(v); }

  // After the run: every statistic (counters, histograms, gauges) merged from the rank that simulated each
  // block (links: summed over both ends) into rank 0's registry, which then also lists the blocks of devices
  // other ranks simulated (the other ranks keep their own values: only rank 0's report is written); the hop
  // and event counts summed on every rank.
  void merge_statistics();
  // This process's peak resident memory so far (VmHWM), MiB: taken by merge_statistics, before the merge
  // and the merge adds the whole fabric's statistics to rank 0.
  static double peak_rss_mib();
  // This thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID), s.
  static double thread_cpu_s();
  // What every rank contributes (`mine`), in rank order, on every rank; one process: {mine}.
  std::vector<nlohmann::json> gather(const nlohmann::json& mine);
  // Every rank's bytes in rank order on rank 0 (empty elsewhere); one process: {mine}.
  std::vector<std::vector<uint8_t>> gather_bytes(const std::vector<uint8_t>& mine) {
    return distributed() ? m_world.gather_v(mine) : std::vector<std::vector<uint8_t>>{mine};
  }
  // Element-wise sums over the ranks: each rank contributes what it owns, zero elsewhere.
  void sum(std::vector<uint64_t>& v) { m_world.sum(v.data(), v.size()); }
  void sum(std::vector<double>& v) { m_world.sum(v.data(), v.size()); }
  uint64_t sum(uint64_t v) {
    m_world.sum(&v, 1);
    return v;
  }
  // Element-wise maxima over the ranks.
  void max(std::vector<uint64_t>& v) { m_world.max(v.data(), v.size()); }
  // A double that one rank holds and the others hold as 0.0, on every rank, bit for bit (its bits are summed
  // as an integer: -0.0, infinities and NaN survive, which a floating-point sum would not promise).
  double from_owner(double v);
  // The same for a vector: element i from the one rank that holds it.
  void from_owner(std::vector<double>& v);
  // An error met by one rank only (a file rank 0 alone writes), on every rank (mpi::world::first_message).
  std::string first_message(const std::string& mine) { return m_world.first_message(mine); }
  // Each operation's requester completion (on the rank of `hosts[i].first`, the requester) and responder
  // record (`hosts[i].second`), gathered so that every rank holds both; the pointers then refer to copies
  // kept here.
  void merge_outcomes(const std::vector<std::pair<size_t, size_t>>& hosts, std::vector<const nic::completion*>& req,
                      std::vector<const nic::placed_message*>& resp);

  // The report's `scale_out` object (docs/report.md): ranks, partition, lookahead, windows, exchange volume
  // and where the wall time went (rank 0's view, plus the slowest rank's waiting share): per rank the set-up
  // (from the program's start to the first window), the loop, the merge and the report (from the merge's end
  // to this call, which the report makes last).
  nlohmann::json report();

 private:
  mpi::world& m_world;
  mpi::partition m_part;
  core::sim_context* m_ctx = nullptr;
  std::unique_ptr<mpi::link_exchange> m_exchange;
  mpi::link_exchange::rank_profile m_apart;  // run_apart's, when there is no link exchange
  stats_merge m_merge;  // holds the values of the entries rank 0 adopts: declared before nothing that reads them
  size_t m_adopted = 0;
  double m_peak_rss_mib = 0.0;  // before the merge
  bool m_loop_begun = false;
  std::chrono::steady_clock::time_point m_loop_begin, m_merge_end;
  double m_merge_s = 0.0, m_merge_cpu_s = 0.0, m_merge_end_cpu_s = 0.0, m_loop_begin_cpu_s = 0.0;
  double m_peak_rss_after_merge_mib = 0.0;
  uint64_t m_local_hops = 0, m_local_events = 0;  // this rank's own, before the merge sums them
  std::deque<nic::completion> m_completions;
  std::deque<nic::placed_message> m_placed;
};

}  // namespace fabricsim::testbench
