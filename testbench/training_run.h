// One training step (`workload.kind: training`) run in simulated time: the task graph of
// testbench/training_graph.h, compute tasks as timers on each GPU (one at a time, in graph order),
// communication tasks as collectives of the training.comm_backend (testbench/training_comm.h) on their group's
// hosts, each started when its dependencies end. The report's `training` object gives the step time, the
// compute-only step, exposed communication and its share, and a table per collective (docs/workloads.md).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::testbench {

struct scenario;
struct run_options;
struct training_params;
class fabric_setup;

// One training step on chosen hosts of a flat fabric, its collectives on training.comm_backend (fabric):
// the step's graph, its communicators on those hosts, its executor. run_training runs one on the first hosts
// of the fabric; a training job (testbench/tenants.h) runs one on its own hosts beside other jobs.
class training_step {
 public:
  // GPU rank r runs on hosts[r]. `s` (its collective section, the source that training.chakra is relative to)
  // must outlive the step; `where` starts the step's configuration errors ("file.yaml" or "file.yaml:
  // jobs.1"). Throws core::config_error for a step that cannot be built on these hosts.
  training_step(const scenario& s, const training_params& tp, std::vector<size_t> hosts, const std::string& where);
  ~training_step();
  // Before the fabric is built: the communicators' buffers, added to mem_bytes (indexed by host).
  void plan(std::vector<uint64_t>& mem_bytes);
  // After it is built: buffers, queue pairs, and a timer (an sc_module named `timer_name`) that starts the
  // step at simulated time 0.
  void elaborate(fabric_setup& setup, const std::string& timer_name);
  // The report's `training` object (step time, compute, exposed communication, per-collective table).
  nlohmann::json report(double wall_s) const;
  uint64_t writes_posted() const;
  // After plan: the (sender, receiver) hosts of the connections whose slot credits come back to the sender
  // (comm_backend::staged_host_pairs), for the lookahead check under mpirun.
  std::vector<std::pair<size_t, size_t>> staged_host_pairs() const;

 private:
  struct impl;
  std::unique_ptr<impl> m;
};

nlohmann::json run_training(const scenario& s, const run_options& opts);
// The terminal's table of a training report.
std::string format_training_table(const nlohmann::json& r);

}  // namespace fabricsim::testbench
