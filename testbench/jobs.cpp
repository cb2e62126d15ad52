// The `jobs` list: loading and checks (testbench/jobs.h).
#include "testbench/jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "sc_models/core/params.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::testbench {

using core::config_error;

const std::vector<std::string>& job_workload_kinds() {
  static const std::vector<std::string> kinds = {"collective", "permutation", "all_to_all",
                                                 "incast",     "generated",   "training"};
  return kinds;
}

namespace {

// One item of `hosts`: "h3" or "h0-h7" -> its indices, appended to `out`.
void parse_host_item(const std::string& item, size_t host_count, const std::string& where, std::vector<size_t>& out) {
  auto index = [&](const std::string& name) {
    const std::optional<size_t> i = topology::host_index(name, host_count);
    if (!i)
      throw config_error(where + ": no host '" + name + "' in this fabric (hosts " + topology::host_names(host_count) +
                         ")");
    return *i;
  };
  const size_t dash = item.find('-');
  if (dash == std::string::npos) {
    out.push_back(index(item));
    return;
  }
  const size_t first = index(item.substr(0, dash)), last = index(item.substr(dash + 1));
  if (last < first)
    throw config_error(where + ": range '" + item + "' runs backwards (write the lower host first, e.g. h0-h7)");
  for (size_t h = first; h <= last; ++h) out.push_back(h);
}

}  // namespace

std::vector<size_t> parse_job_hosts(const YAML::Node& node, size_t host_count, const std::string& where) {
  std::vector<size_t> out;
  if (node.IsScalar()) {
    parse_host_item(node.Scalar(), host_count, where, out);
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      if (!node[i].IsScalar())
        throw config_error(where + "." + std::to_string(i) + ": expected a host name or range such as h0-h7, got " +
                           yaml_kind(node[i]));
      parse_host_item(node[i].Scalar(), host_count, where + "." + std::to_string(i), out);
    }
  } else {
    throw config_error(where + ": expected a host range such as h0-h7 or a list such as [h0-h3, h8], got " +
                       yaml_kind(node));
  }
  if (out.empty()) throw config_error(where + ": a job needs at least one host, the list is empty");
  std::vector<size_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) throw config_error(where + ": host h" + std::to_string(*dup) + " is listed twice");
  return out;
}

namespace {

// A training job: one step on the job's hosts, its collectives as WRITEs on the flat fabric (training_comm.h's
// `fabric` backend); a system preset's cluster of NVLink domains is one step over the whole system.
void check_training_job(const job_params& j, const YAML::Node& entry, const yaml_source& source,
                        const std::string& path) {
  const YAML::Node t = entry["training"];
  const YAML::Mark at = t ? t.Mark() : entry["workload"].Mark();
  if (j.training.comm_backend != "fabric")
    throw config_error(source.message(join_key(path, "training.comm_backend"), at,
                                      "a training job's collectives run on the fabric between its hosts: only "
                                      "comm_backend fabric, got " +
                                          j.training.comm_backend));
  if (j.training.gpus > j.hosts.size())
    throw config_error(source.message(join_key(path, "training.gpus"), at,
                                      "the job has " + std::to_string(j.hosts.size()) +
                                          " hosts (one GPU per host), got " + std::to_string(j.training.gpus)));
}

// The checks of one job that need only its own keys.
void check_job(const job_params& j, const YAML::Node& entry, const yaml_source& source, const std::string& path) {
  const std::vector<std::string>& kinds = job_workload_kinds();
  if (std::find(kinds.begin(), kinds.end(), j.workload.kind) == kinds.end())
    throw config_error(source.message(join_key(path, "workload.kind"), entry["workload"].Mark(),
                                      "a job cannot run workload.kind " + j.workload.kind + " (a job runs one of " +
                                          fmt::format("{}", fmt::join(kinds, ", ")) + ")"));
  if (j.workload.kind != "collective" && j.workload.kind != "training" && entry["collective"])
    throw config_error(source.message(
        join_key(path, "collective"), entry["collective"].Mark(),
        "applies to workload.kind collective or training only (this job's kind is " + j.workload.kind + ")"));
  if (j.workload.kind != "training" && entry["training"])
    throw config_error(
        source.message(join_key(path, "training"), entry["training"].Mark(),
                       "applies to workload.kind training only (this job's kind is " + j.workload.kind + ")"));
  if (j.workload.kind == "training") return check_training_job(j, entry, source, path);
  if (j.workload.kind != "collective") return;
  const size_t n = j.hosts.size();
  if (n < 2)
    throw config_error(source.message(join_key(path, "hosts"), entry["hosts"].Mark(),
                                      "a collective job needs at least 2 hosts (its ranks), got 1"));
  if (j.collective.ranks != 0 && j.collective.ranks != n)
    throw config_error(source.message(join_key(path, "collective.ranks"), entry["collective"].Mark(),
                                      "a job's ranks are its hosts: leave it at 0 or set " + std::to_string(n) +
                                          ", got " + std::to_string(j.collective.ranks)));
  if (j.collective.placement != "linear")
    throw config_error(source.message(join_key(path, "collective.placement"), entry["collective"].Mark(),
                                      "a job places rank i on its i-th host (linear); list the hosts in the order "
                                      "wanted instead of " +
                                          j.collective.placement));
}

}  // namespace

void load_jobs(const YAML::Node& top, const yaml_source& source, scenario& s) {
  const YAML::Node node = top["jobs"];
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence() || node.size() == 0)
    throw config_error(source.message("jobs", node.Mark(),
                                      "expected a non-empty sequence of jobs, e.g. [{name: train, hosts: h0-h7, "
                                      "workload: {kind: collective}}], got " +
                                          yaml_kind(node)));
  for (const char* key : {"workload", "writes", "training"})
    if (top[key])
      throw config_error(source.message(key, top[key].Mark(),
                                        "not used beside jobs: each job has its own workload (jobs.N.workload, "
                                        "jobs.N.collective, jobs.N.training); move it into a job"));
  for (size_t i = 0; i < node.size(); ++i)
    if (s.system.preset != "none" && node[i].IsMap() && node[i]["workload"].IsMap() &&
        node[i]["workload"]["kind"].IsScalar() && node[i]["workload"]["kind"].Scalar() == "training")
      throw config_error(source.message("system.preset", top["system"] ? top["system"].Mark() : node.Mark(),
                                        "a training job (jobs." + std::to_string(i) +
                                            ") runs on a flat scale-out fabric; system.preset " + s.system.preset +
                                            " builds a cluster of NVLink domains for one step over the whole system "
                                            "(remove the preset, or run that step alone with workload.kind training)"));
  if (s.topology.kind == "nvl72")
    throw config_error(source.message("jobs", node.Mark(), "jobs run on a scale-out fabric, not topology.kind nvl72"));
  const size_t host_count = s.topology.host_count();
  std::map<std::string, size_t> by_name;
  std::map<size_t, size_t> owner;  // host -> job index
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string path = "jobs." + std::to_string(i);
    if (!entry.IsMap())
      throw config_error(source.message(path, entry.Mark(),
                                        "expected a mapping with name, hosts and workload, got " + yaml_kind(entry)));
    for (const auto& pair : entry) {
      const std::string key = pair.first.Scalar();
      if (key != "name" && key != "hosts" && key != "workload" && key != "collective" && key != "training")
        throw config_error(
            source.message(join_key(path, key), pair.first.Mark(),
                           "unknown key. Known keys of a job: name, hosts, workload, collective, training"));
    }
    for (const char* key : {"name", "hosts", "workload"})
      if (!entry[key])
        throw config_error(source.message(path, entry.Mark(),
                                          std::string("missing required key ") + key +
                                              " (a job needs name, hosts "
                                              "and workload)"));
    job_params j;
    if (!entry["name"].IsScalar() || entry["name"].Scalar().empty())
      throw config_error(source.message(join_key(path, "name"), entry["name"].Mark(),
                                        "expected a non-empty name, got " + yaml_kind(entry["name"])));
    j.name = entry["name"].Scalar();
    if (by_name.count(j.name))
      throw config_error(source.message(
          join_key(path, "name"), entry["name"].Mark(),
          "job name '" + j.name + "' is repeated (jobs." + std::to_string(by_name[j.name]) + " has it already)"));
    by_name[j.name] = i;
    j.hosts = parse_job_hosts(entry["hosts"], host_count,
                              source.where(join_key(path, "hosts"), entry["hosts"].Mark()) + ": " + path + ".hosts");
    for (size_t h : j.hosts) {
      auto [it, fresh] = owner.emplace(h, i);
      if (!fresh)
        throw config_error(source.message(join_key(path, "hosts"), entry["hosts"].Mark(),
                                          "host h" + std::to_string(h) + " is claimed by job '" +
                                              s.jobs[it->second].name + "' (jobs." + std::to_string(it->second) +
                                              ") and by job '" + j.name + "' (" + path + "); a host runs one job"));
    }
    j.workload.incast_target = "h" + std::to_string(j.hosts.front());  // an incast's default: the job's first host
    apply_yaml(entry["workload"], visitor_of(j.workload), source, join_key(path, "workload"));
    // The payloads' memory is one choice for the whole run (the top-level workload.memory), not per job.
    if (entry["workload"]["memory"])
      throw config_error(source.message(join_key(path, "workload.memory"), entry["workload"]["memory"].Mark(),
                                        "not per job: the payloads' memory is one choice for the whole run "
                                        "(--set workload.memory=dense changes it for every job); remove it "
                                        "from the job"));
    if (entry["collective"])
      apply_yaml(entry["collective"], visitor_of(j.collective), source, join_key(path, "collective"));
    if (entry["training"]) apply_yaml(entry["training"], visitor_of(j.training), source, join_key(path, "training"));
    check_job(j, entry, source, path);
    s.jobs.push_back(std::move(j));
  }
}

std::string jobs_keys_markdown() {
  return "\n### `jobs`\n\n"
         "Several jobs on one fabric, all run at once ([workloads.md](workloads.md#tenants-several-jobs-on-one-"
         "fabric)): a sequence of mappings, each with `name` (required, unique), `hosts` (required: a range such "
         "as `h0-h7`, both ends included, a single host, or a list of those such as `[h0-h3, h8]`; no host in two "
         "jobs), `workload` (required: a `workload` section of its own, starting from the defaults above, with "
         "`kind` one of " +
         fmt::format("{}", fmt::join(job_workload_kinds(), ", ")) +
         "; host names in it, such as `incast_target`, are the fabric's), for a collective `collective` (a "
         "`collective` section of its own; rank i sits on the job's i-th host) and for a training step `training` "
         "(a `training` section of its own: GPU rank r on the job's r-th host, `comm_backend` fabric, no "
         "`system.preset`; its figure is the step time). The report gives each job's "
         "figures and its slowdown against the same job run alone on the same fabric with the same seed "
         "(`jobs.<name>` in [report.md](report.md)). Beside `jobs`, the top-level `workload`, `writes` and "
         "`training` are refused. Example: `jobs: [{name: train, hosts: h0-h7, workload: {kind: collective}, "
         "collective: {min_bytes: 4194304, max_bytes: 4194304}}, {name: noisy, hosts: h8-h15, workload: {kind: "
         "incast, incast_senders: 7, incast_target: h8}}]`.\n";
}

}  // namespace fabricsim::testbench
