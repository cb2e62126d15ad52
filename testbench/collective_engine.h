// The collective engine: runs a collective's schedule (testbench/collective_schedule.h) on the ranks'
// SuperNICs. A rank posts the WRITE that depends on a slice the moment the slice has been placed in its
// memory (and reduced, at collective.reduce_gbps), learnt through the NIC's placed-message callback; staged
// WRITEs wait for a staging slot's credit; every WRITE is checked at placement and every result against a
// reference built from the send buffers. Under mpirun each process drives the ranks it simulates and trades
// posts and credits with the others at window ends. Documentation: docs/collectives.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "sc_models/core/units.h"
#include "testbench/collective_params.h"
#include "testbench/collective_schedule.h"

namespace fabricsim::nic {
struct placed_message;
}
namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

struct scenario;
class scale_out;
class fabric_setup;
class collective_sharp;

// One size's outcome.
struct size_result {
  uint64_t requested = 0, bytes = 0, count = 0;
  std::vector<core::picoseconds> times;  // one per timed iteration
  uint64_t wrong = 0;                    // elements of the result that differ from the reference
  uint64_t writes = 0;                   // WRITEs per iteration
  std::vector<uint64_t> sent_per_rank;   // payload bytes each rank sends per iteration
  bool done = false;
};

class collective_engine {
 public:
  collective_engine(const scenario& s, std::vector<size_t> rank_host, bool check_data);
  collective_engine(const collective_engine&) = delete;
  collective_engine& operator=(const collective_engine&) = delete;
  ~collective_engine();

  // Memory each host needs: send and receive buffers of the largest size, and staging slots per incoming
  // connection that is reduced on arrival.
  std::vector<uint64_t> memory_bytes(size_t hosts);
  // After the fabric exists: buffers, regions, queue pairs, source data, then iteration 0 of the first size.
  // Under mpirun (setup.so) this rank sets up and drives only the ranks (hosts) it simulates; the others' queue
  // pair numbers, R_Keys and PSNs come from their NICs' rules, their buffers are laid out in the mirrors.
  void elaborate(fabric_setup& setup, uint64_t seed, bool fill);

  std::function<void(const size_result&)> on_size_done;  // called as each size's last iteration ends

  bool finished() const { return m_size >= m_results.size(); }
  uint64_t writes_posted() const { return m_wr_id; }
  uint64_t mismatched_bytes() const { return m_mismatched; }
  // Bytes compared: placed WRITEs against their source at placement; the ranks' results against the
  // reference built from the send buffers (check_result).
  uint64_t placement_checked_bytes() const { return m_placement_checked; }
  uint64_t result_checked_bytes() const { return m_result_checked; }
  uint64_t unexpected() const { return m_unexpected; }
  const std::vector<size_result>& results() const { return m_results; }
  uint32_t ranks() const { return m_n; }
  const std::vector<rank_memory>& rank_memories() const { return m_ranks; }
  size_t current_size() const { return m_size; }
  uint64_t current_iteration() const { return m_iter; }
  uint64_t placed_in_iteration() const { return m_placed; }
  size_t transfers_in_iteration() const { return m_sched.transfers().size(); }

  // Under mpirun, at every window's end on every rank (scale_out::on_window_end): the records the other
  // ranks sent (their posts to our hosts, the slots our hosts freed for theirs), then the barrier: when
  // every rank's placements add up to the iteration's WRITEs, the iteration ended at the latest ready time
  // of any rank, and the next one starts barrier_ns after it. That is no earlier than this window's end when
  // barrier_ns is at least the lookahead (the last placement came after the window's start), so the posts
  // are at the times one process makes them.
  void window_end();
  // (source host, destination host) of every connection whose data is reduced on arrival (slot credits).
  std::vector<std::pair<size_t, size_t>> staged_host_pairs() const;
  // Sums over the ranks of what each counted for its own hosts (after the run).
  void merge_counts(scale_out& so);
  // SHARP: the `sharp` object of the report (collective_sharp::report); empty for the other algorithms.
  nlohmann::json sharp_report() const;

 private:
  static constexpr uint64_t page = 4096;
  static uint64_t round_up(uint64_t v) { return (v + page - 1) / page * page; }
  uint64_t slots_bytes() const { return m_p.buffer_slots * round_up(m_sched.slice_bytes()); }
  uint64_t total_iterations() const { return m_p.warmup_iterations + m_p.iterations; }

  // What one process learns from another at a window's end: a posted WRITE the receiver must match
  // (flight), or a staging slot freed for the sender (credit).
  struct record {
    enum kind_t : uint32_t { flight, credit } kind;
    uint32_t conn, xfer, slot;
    uint64_t value;  // flight: destination address; credit: when the slot is free at the sender (ps)
  };

  // The queue pairs of the schedule, connected, with their staging slots.
  void elaborate_connections(fabric_setup& setup);
  void start_size(size_t index, core::picoseconds at);
  void start_iteration(core::picoseconds at);
  void try_post(connection& k);
  // A WRITE of ours has been placed: check it, reduce it, free its slot, release what waited for it.
  void on_placed(size_t host, const nic::placed_message& m);
  // out = a + b, element by element, as unsigned integers of the element's width (exact, order-free).
  void reduce(uint8_t* out, const uint8_t* a, const uint8_t* b, uint64_t bytes) const;
  void end_iteration();
  uint8_t* mem(uint32_t r);
  // Bytes [off, off + len) of rank r's send buffer: in its memory, or under mpirun, for a rank another
  // process simulates, regenerated from its seeded stream (byte b is byte b % 8 of the stream's word b / 8,
  // as elaborate fills it) into a scratch buffer that the next call reuses.
  const uint8_t* send_range(uint32_t r, uint64_t off, uint64_t len);
  // Whether this process simulates rank r's host (always in one process).
  bool here(uint32_t r) const;
  void send_record(uint32_t to_rank, const record& rec);
  // Before the last iteration of a size: clear the receive buffers, so that the result check sees only what
  // this iteration wrote, and put each rank's own part where the op leaves it locally (no WRITE carries it).
  void prepare_check();
  // Elements of the ranks' results that differ from a reference built here from the send buffers alone.
  uint64_t check_result(uint64_t bytes);
  topology::fabric& fab() { return *m_fab_ptr; }

  collective_params m_p;
  topology::fabric* m_fab_ptr = nullptr;
  uint32_t m_n;
  bool m_check;
  bool m_sharp;
  core::picoseconds m_barrier, m_credit;
  collective_schedule m_sched;
  std::unique_ptr<collective_sharp> m_sharp_path;  // collective.algo sharp only
  scale_out* m_so = nullptr;                       // under mpirun only
  uint64_t m_seed = 0;
  std::vector<uint8_t> m_scratch;           // send_range's regenerated bytes
  std::vector<std::vector<uint8_t>> m_out;  // by MPI rank: records for it, this window
  uint64_t m_elt = 4, m_max_bytes = 0;
  double m_reduce_ps_per_byte = 0.0;
  std::vector<rank_memory> m_ranks;
  std::map<std::pair<size_t, uint32_t>, uint32_t> m_conn_by_rq;  // (dst host, responder QPN) -> connection
  std::vector<uint32_t> m_deps;                                  // per transfer: arrivals still awaited this iteration
  std::vector<core::picoseconds> m_ready_at;
  std::vector<uint32_t> m_group_count;
  std::vector<size_result> m_results;
  size_t m_size = 0;
  uint64_t m_iter = 0, m_placed = 0, m_wr_id = 0, m_mismatched = 0, m_unexpected = 0;
  uint64_t m_sharp_done = 0;  // SHARP: the ranks that have their result this iteration (on this process)
  uint64_t m_placement_checked = 0, m_result_checked = 0;
  core::picoseconds m_iter_start{}, m_iter_end{};
};

}  // namespace fabricsim::testbench
