// The `jobs` list of a scenario (docs/workloads.md, "Tenants"): several jobs, each with a name, the hosts it
// owns and its own workload, run at once on one fabric. This file loads and checks the list; the run is
// testbench/tenants.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "testbench/config_yaml.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// The workload kinds a job may run.
const std::vector<std::string>& job_workload_kinds();

// `hosts` of a job: "h0-h7" (a range, both ends included), "h3", or a sequence of those, e.g. [h0-h3, h8].
// Returns host indices in the order given. Throws core::config_error (prefixed by `where`) for a name that
// is not a host of a fabric of `host_count` hosts, a range that runs backwards, a host listed twice, or none.
std::vector<size_t> parse_job_hosts(const YAML::Node& node, size_t host_count, const std::string& where);

// Loads `top["jobs"]` into s.jobs. Throws core::config_error naming the file, line and key for: a list that
// is not a sequence of mappings, an unknown key, a missing or repeated name, a job with no hosts, a host
// outside the fabric, two jobs claiming one host (both jobs and the host named), a workload kind a job
// cannot run, a collective job whose ranks are not its hosts, and a scenario that sets the top-level
// `workload`, `writes` or `training` beside `jobs` (each job has its own).
void load_jobs(const YAML::Node& top, const yaml_source& source, scenario& s);

// The `jobs` section of docs/scenario.md.
std::string jobs_keys_markdown();

}  // namespace fabricsim::testbench
