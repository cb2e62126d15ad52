// Workload planning: scenario -> the list of RDMA WRITEs to post.
#include "testbench/workload.h"

#include <algorithm>
#include <filesystem>

#include "sc_models/core/rng.h"
#include "sc_models/topology/fabric.h"
#include "traces/flow_generator.h"
#include "traces/flow_list.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

std::string resolve_scenario_path(const std::string& source, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.is_absolute()) return path;
  const fs::path dir = fs::path(source).parent_path();
  return dir.empty() ? path : (dir / p).string();
}

std::vector<size_t> random_permutation(const topology::topology_params& topo, uint64_t seed,
                                       const std::string& where) {
  std::vector<size_t> leaf(topo.host_count());
  for (size_t i = 0; i < leaf.size(); ++i) leaf[i] = topology::leaf_of(topo, i);
  return random_permutation_of(leaf, seed, where);
}

std::vector<size_t> random_permutation_of(const std::vector<size_t>& leaf, uint64_t seed, const std::string& where) {
  const size_t n = leaf.size();
  if (n < 2)
    throw config_error(where + ": a permutation needs at least 2 hosts, the topology has " + std::to_string(n));
  // Hosts in one group may not send to each other: the hosts of a leaf when there are several leaves,
  // otherwise each host alone (a plain derangement).
  std::vector<size_t> group(n);
  std::vector<size_t> distinct = leaf;
  std::sort(distinct.begin(), distinct.end());
  const size_t groups = size_t(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  for (size_t i = 0; i < n; ++i) group[i] = leaf[i];
  if (groups < 2)
    for (size_t i = 0; i < n; ++i) group[i] = i;
  // Hall's condition: the hosts of a group need as many destinations outside it.
  std::vector<size_t> size(*std::max_element(group.begin(), group.end()) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++size[group[i]];
  const size_t largest = size_t(std::max_element(size.begin(), size.end()) - size.begin());
  if (2 * size[largest] > n)
    throw config_error(where + ": no permutation sends every host off its leaf: leaf " + std::to_string(largest) +
                       " holds " + std::to_string(size[largest]) + " of the " + std::to_string(n) + " hosts");

  core::rng_stream rng = core::make_stream(seed, "workload", "permutation");
  auto below = [&rng](size_t bound) { return size_t(rng() % bound); };  // bias below 2^-40 for any fabric size
  std::vector<size_t> dst(n);
  for (size_t i = 0; i < n; ++i) dst[i] = i;
  for (size_t i = n - 1; i > 0; --i) std::swap(dst[i], dst[below(i + 1)]);  // Fisher-Yates

  // Repair: a host whose destination shares its group swaps destinations with a host j outside that group
  // whose destination is outside it too. Such a j exists whenever Hall's condition holds (of the n - a hosts
  // outside a group of a, at most a - 1 send into it), and the swap leaves both hosts valid, so one pass
  // fixes every host. Random probes keep the result random; the scan guarantees termination.
  auto good = [&](size_t host, size_t to) { return group[host] != group[to]; };
  for (size_t i = 0; i < n; ++i) {
    if (good(i, dst[i])) continue;
    auto fits = [&](size_t j) { return good(i, dst[j]) && good(j, dst[i]); };
    size_t j = n;
    for (int probe = 0; probe < 64 && j == n; ++probe) {
      const size_t c = below(n);
      if (fits(c)) j = c;
    }
    for (size_t k = 0, start = below(n); k < n && j == n; ++k)
      if (fits((start + k) % n)) j = (start + k) % n;
    if (j == n) throw std::logic_error("random_permutation: no swap partner for host " + std::to_string(i));
    std::swap(dst[i], dst[j]);
  }
  return dst;
}

namespace {

std::vector<planned_flow> plan_writes(const scenario& s, size_t hosts) {
  std::vector<planned_flow> out;
  auto host_index = [&](const std::string& name, size_t i, const char* field) -> size_t {
    const std::optional<size_t> index = topology::host_index(name, hosts);
    if (!index)
      throw config_error(s.source + ": writes." + std::to_string(i) + "." + field + ": no host '" + name +
                         "' (hosts are " + topology::host_names(hosts) + ")");
    return *index;
  };
  for (size_t i = 0; i < s.writes.size(); ++i) {
    const write_op& w = s.writes[i];
    const size_t src = host_index(w.src, i, "src"), dst = host_index(w.dst, i, "dst");
    if (src == dst) throw config_error(s.source + ": writes." + std::to_string(i) + ": src and dst are both " + w.src);
    const std::optional<nic::rdma_op> op = parse_rdma_op(w.op);
    if (!op)  // the loader checks the choices; a --set that bypassed it still gets a clear error
      throw config_error(s.source + ": writes." + std::to_string(i) + ".op: unknown operation '" + w.op +
                         "' (expected write, write_imm, read, send or send_imm)");
    out.push_back({src, dst, w.bytes, picoseconds::from_ns(w.start_ns), *op});
  }
  return out;
}

// Every host of one leaf writes to a host of one other leaf: a seeded derangement of the leaves, and in each
// pair of leaves a seeded matching of their hosts. All the flows that meet on a spine's downlink then come
// from one leaf's uplinks, so collisions happen at one stage only: the case the ECMP load-balancing formula
// (1 - (1 - 1/n)^n of n uplinks carried) describes.
std::vector<size_t> leaf_pair_permutation(const std::vector<size_t>& leaf_of_host, uint64_t seed,
                                          const std::string& source) {
  const size_t hosts = leaf_of_host.size();
  std::vector<std::vector<size_t>> by_leaf;
  for (size_t i = 0; i < hosts; ++i) {
    const size_t leaf = leaf_of_host[i];
    if (leaf >= by_leaf.size()) by_leaf.resize(leaf + 1);
    by_leaf[leaf].push_back(i);
  }
  by_leaf.erase(std::remove_if(by_leaf.begin(), by_leaf.end(), [](const auto& g) { return g.empty(); }),
                by_leaf.end());
  if (by_leaf.size() < 2)
    throw config_error(source + ": workload.pattern leaf_pairs needs at least two leaves with hosts");
  for (const auto& g : by_leaf)
    if (g.size() != by_leaf[0].size())
      throw config_error(source + ": workload.pattern leaf_pairs needs the same number of hosts on every leaf");
  core::rng_stream rng = core::make_stream(seed, "workload", "leaf_pairs");
  const size_t leaves = by_leaf.size();
  // A random cyclic shift of a random order of the leaves is a derangement (no leaf maps to itself).
  std::vector<size_t> order(leaves);
  for (size_t l = 0; l < leaves; ++l) order[l] = l;
  std::shuffle(order.begin(), order.end(), rng);
  const size_t shift = 1 + size_t(rng() % (leaves - 1));
  std::vector<size_t> dst(hosts);
  for (size_t k = 0; k < leaves; ++k) {
    std::vector<size_t> to = by_leaf[order[(k + shift) % leaves]];
    std::shuffle(to.begin(), to.end(), rng);
    const std::vector<size_t>& from = by_leaf[order[k]];
    for (size_t j = 0; j < from.size(); ++j) dst[from[j]] = to[j];
  }
  return dst;
}

// The hosts a pattern runs on: the whole fabric, or a job's hosts (testbench/jobs.h). A pattern plans on
// local indices 0 .. n-1; host i of the view is fabric host global[i], behind leaf leaf[i].
struct host_view {
  std::vector<size_t> global, leaf;
  size_t size() const { return global.size(); }
};

host_view view_of(const scenario& s, std::vector<size_t> hosts) {
  host_view v;
  v.global = std::move(hosts);
  for (size_t h : v.global) v.leaf.push_back(topology::leaf_of(s.topology, h));
  return v;
}

std::vector<planned_flow> plan_permutation(const scenario& s, const workload_params& w, const host_view& view) {
  const size_t hosts = view.size();
  std::vector<size_t> dst(hosts);
  if (w.pattern == "shift") {
    if (w.offset % hosts == 0)
      throw config_error(s.source + ": workload.offset " + std::to_string(w.offset) +
                         " sends every host to itself with " + std::to_string(hosts) + " hosts");
    for (size_t i = 0; i < hosts; ++i) dst[i] = size_t((i + w.offset) % hosts);
  } else if (w.pattern == "leaf_pairs") {
    dst = leaf_pair_permutation(view.leaf, s.seed, s.source);
  } else {
    dst = random_permutation_of(view.leaf, s.seed, s.source + ": workload.kind permutation");
  }
  std::vector<planned_flow> out;
  for (uint64_t m = 0; m < w.messages; ++m)
    for (size_t i = 0; i < hosts; ++i) out.push_back({i, dst[i], w.message_bytes, picoseconds{}});
  return out;
}

std::vector<planned_flow> plan_all_to_all(const workload_params& w, size_t hosts) {
  std::vector<planned_flow> out;
  // Host i starts with i+1 and wraps, so that no host is everyone's first destination.
  for (uint64_t m = 0; m < w.messages; ++m)
    for (size_t i = 0; i < hosts; ++i)
      for (size_t k = 1; k < hosts; ++k) out.push_back({i, (i + k) % hosts, w.message_bytes, picoseconds{}});
  return out;
}

std::vector<planned_flow> plan_incast(const scenario& s, const workload_params& w, const host_view& view) {
  const size_t hosts = view.size();
  std::optional<size_t> target;  // its place in the view
  const std::optional<size_t> global = topology::host_index(w.incast_target, s.topology.host_count());
  for (size_t i = 0; global && i < hosts && !target; ++i)
    if (view.global[i] == *global) target = i;
  if (!target)
    throw config_error(s.source + ": workload.incast_target: no host '" + w.incast_target + "' (hosts are " +
                       (hosts == s.topology.host_count() ? topology::host_names(hosts) : "the job's") + ")");
  if (w.incast_senders > hosts - 1)
    throw config_error(s.source + ": workload.incast_senders: " + std::to_string(w.incast_senders) +
                       " senders need as many hosts besides the target; the topology has " + std::to_string(hosts) +
                       " hosts in all");
  std::vector<planned_flow> out;
  for (uint64_t m = 0; m < w.messages; ++m)
    for (uint64_t k = 1; k <= w.incast_senders; ++k)
      out.push_back({size_t((*target + k) % hosts), *target, w.message_bytes, picoseconds{}});
  return out;
}

std::vector<planned_flow> plan_flow_file(const scenario& s, size_t hosts) {
  if (s.workload.flow_file.empty())
    throw config_error(s.source + ": workload.flow_file: required with workload.kind flows (a CSV file with "
                                  "header src,dst,bytes,start_ns)");
  const std::string path = resolve_scenario_path(s.source, s.workload.flow_file);
  std::vector<planned_flow> out;
  for (const traces::flow_entry& f : traces::load_flow_list(path, hosts))
    out.push_back({f.src, f.dst, f.bytes, picoseconds::from_ns(f.start_ns), *parse_rdma_op(f.op)});
  return out;
}

// workload.kind generated: sizes from the distribution, Poisson arrivals per host at workload.load of the
// host's link rate (traces/flow_generator.h).
std::vector<planned_flow> plan_generated(const scenario& s, const workload_params& w, const host_view& view) {
  const size_t hosts = view.size();
  const std::string where = s.source + ": workload";
  std::optional<traces::flow_size_cdf> cdf;
  if (w.distribution == "websearch") cdf = traces::websearch_cdf();
  else if (w.distribution == "hadoop") cdf = traces::hadoop_cdf();
  else if (w.distribution.empty())
    throw config_error(where + ".distribution: expected websearch, hadoop or a CDF file name");
  else {
    const std::string path = resolve_scenario_path(s.source, w.distribution);
    if (!std::filesystem::exists(path))
      throw config_error(where + ".distribution: '" + w.distribution + "' is neither websearch, hadoop nor a CDF file (" +
                         path + " does not exist)");
    cdf = traces::load_cdf(path);
  }
  traces::flow_generator_params g;
  g.load = w.load;
  g.flow_count = w.flow_count;
  g.window_ns = w.arrival_window_us * 1e3;
  g.max_flow_bytes = w.max_flow_bytes;
  g.destinations = w.destinations;
  // Every host's link runs at topology.link_gbps (the host tier).
  const std::vector<double> rate(hosts, s.topology.link_gbps * 1e9);
  std::vector<planned_flow> out;
  for (const traces::flow_entry& f : traces::generate_flows(*cdf, g, rate, view.leaf, s.seed, where))
    out.push_back({f.src, f.dst, f.bytes, picoseconds::from_ns(f.start_ns)});
  return out;
}

}  // namespace

std::optional<nic::rdma_op> parse_rdma_op(const std::string& name) {
  for (nic::rdma_op op : {nic::rdma_op::write, nic::rdma_op::write_imm, nic::rdma_op::read, nic::rdma_op::send,
                          nic::rdma_op::send_imm})
    if (name == nic::to_string(op)) return op;
  return std::nullopt;
}

namespace {

// A generated pattern on the hosts of `view`, in its local indices.
std::vector<planned_flow> plan_pattern(const scenario& s, const workload_params& w, const host_view& view) {
  const std::string& kind = w.kind;
  if (kind == "permutation") return plan_permutation(s, w, view);
  if (kind == "all_to_all") return plan_all_to_all(w, view.size());
  if (kind == "incast") return plan_incast(s, w, view);
  if (kind == "generated") return plan_generated(s, w, view);
  throw std::logic_error("plan_pattern: workload.kind " + kind + " is not a pattern");
}

}  // namespace

std::vector<planned_flow> plan_job_workload(const scenario& s, const job_params& job) {
  scenario js = s;  // messages name the job: "FILE: jobs.N: workload.KEY: ..."
  size_t index = 0;
  while (index < s.jobs.size() && s.jobs[index].name != job.name) ++index;
  js.source = s.source + ": jobs." + std::to_string(index);
  const host_view view = view_of(s, job.hosts);
  std::vector<planned_flow> out = plan_pattern(js, job.workload, view);
  if (out.empty()) throw config_error(js.source + ": the job's workload posts no RDMA operation");
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].src = view.global[out[i].src];
    out[i].dst = view.global[out[i].dst];
    if (job.workload.queue_pairs == "per_flow") out[i].qp_group = i;
  }
  return out;
}

std::vector<planned_flow> plan_workload(const scenario& s) {
  const size_t hosts = s.topology.host_count();
  const std::string& kind = s.workload.kind;
  std::vector<planned_flow> out;
  std::vector<size_t> all(hosts);
  for (size_t h = 0; h < hosts; ++h) all[h] = h;
  if (kind == "writes")
    out = plan_writes(s, hosts);
  else if (kind == "flows") out = plan_flow_file(s, hosts);
  else if (kind == "permutation" || kind == "all_to_all" || kind == "incast" || kind == "generated")
    out = plan_pattern(s, s.workload, view_of(s, std::move(all)));
  else if (kind == "collective")
    throw config_error(s.source + ": workload.kind collective posts its WRITEs as the run goes (testbench/collective.h), "
                       "it has no static plan");
  else throw std::logic_error("plan_workload: workload.kind " + kind + " passed the loader but has no planner");
  if (out.empty()) throw config_error(s.source + ": the workload posts no RDMA operation");
  if (s.workload.queue_pairs == "per_flow")
    for (size_t i = 0; i < out.size(); ++i) out[i].qp_group = i;
  if (!s.workload.write_flow_file.empty()) {
    // The start times written are the planned ones, cut to the picosecond as the run posts them.
    std::vector<traces::flow_entry> rows;
    for (const planned_flow& f : out) rows.push_back({f.src, f.dst, f.bytes, f.post_at.ns()});
    traces::write_flow_list(s.workload.write_flow_file, rows);
  }
  return out;
}

}  // namespace fabricsim::testbench
