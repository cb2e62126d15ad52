// One training step (`workload.kind: training`) run in simulated time: the task graph of
// testbench/training_graph.h, compute tasks as timers on each GPU (one at a time, in graph order),
// communication tasks as collectives of the training.comm_backend (testbench/training_comm.h) on their group's
// hosts, each started when its dependencies end. The report's `training` object gives the step time, the
// compute-only step, exposed communication and its share, and a table per collective (docs/workloads.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fabricsim::testbench {

struct scenario;
struct run_options;

nlohmann::json run_training(const scenario& s, const run_options& opts);
// The terminal's table of a training report.
std::string format_training_table(const nlohmann::json& r);

}  // namespace fabricsim::testbench
