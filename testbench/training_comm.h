// What carries a training step's collectives (comm_backend, chosen by training.comm_backend), and the timer
// that ends its compute tasks in simulated time. The `fabric` backend runs every collective as RDMA WRITEs
// between the SuperNICs of its group's hosts, on collective_schedule's ring (allreduce), chain (a pipeline
// send: broadcast from the first of two ranks) or all-pairs (alltoall) graph, posting each WRITE when the
// slice it carries has been placed (the collective engine's rule, testbench/collective_engine.h); several
// groups run at once, each communicator one collective at a time in the order they were asked for. On a
// system preset the `cluster` backend (testbench/training_cluster.h) runs them on the NVLink domains and rails.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sc_models/core/units.h"
#include "testbench/training_graph.h"

namespace fabricsim::testbench {

struct scenario;
class fabric_setup;

// Calls a function at a simulated time. Ties go in the order they were asked for, or, `keyed`, by the key
// given with each call first (then that order): under mpirun a rank learns some things at a window's end,
// later than one process does, so the order of asking differs while the keys (a task's index) do not.
class timer_service : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(timer_service);
  explicit timer_service(const sc_core::sc_module_name& name, bool keyed = false);
  void at(core::picoseconds t, std::function<void()> f, uint64_t key = 0);

 private:
  struct entry {
    core::picoseconds t;
    uint64_t key, seq;
    std::function<void()> f;
    bool operator>(const entry& o) const {
      if (t.value != o.t.value) return t.value > o.t.value;
      return key != o.key ? key > o.key : seq > o.seq;
    }
  };
  bool m_keyed;
  void fire();
  std::priority_queue<entry, std::vector<entry>, std::greater<entry>> m_q;
  sc_core::sc_event m_ev;
  uint64_t m_seq = 0;
};

class comm_backend {
 public:
  virtual ~comm_backend() = default;
  // Before the fabric is built: host memory each host needs for the communicators (`rank_host`: GPU rank
  // to host index), added to `mem_bytes`.
  virtual void plan(const std::vector<comm_group>& groups, const std::vector<size_t>& rank_host,
                    std::vector<uint64_t>& mem_bytes) = 0;
  // After the fabric exists: buffers, regions, queue pairs; `timers` ends what it runs in simulated time.
  virtual void elaborate(fabric_setup& setup, timer_service& timers) = 0;
  // Runs `op` of `bytes` on communicator `group` for the step's task `task` (the key of its end's timer);
  // `on_done` is called at the simulated time it ends.
  virtual void run(const std::string& op, uint32_t group, uint64_t bytes, uint32_t task,
                   std::function<void()> on_done) = 0;
  virtual uint64_t writes_posted() const = 0;
  // The (source, destination) hosts of every connection whose WRITEs are reduced on arrival (their slot
  // credits go back to the source): under mpirun a pair on two ranks needs collective.credit_ns at least the
  // lookahead.
  virtual std::vector<std::pair<size_t, size_t>> staged_host_pairs() const { return {}; }
};

// training.comm_backend by name: "fabric" ("cluster" is built by run_training on a system preset).
std::unique_ptr<comm_backend> make_comm_backend(const std::string& name, const scenario& s);

}  // namespace fabricsim::testbench
