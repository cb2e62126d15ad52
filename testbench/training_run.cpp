// One training step on the modelled fabric: the executor and the `training` report.
#include "testbench/training_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <systemc>
#include <tuple>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "sc_models/topology/gpu_cluster.h"
#include "testbench/fabric_setup.h"
#include "testbench/memory_guard.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/training_chakra.h"
#include "testbench/training_cluster.h"
#include "testbench/training_comm.h"
#include "testbench/training_graph.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

// Named, not anonymous: the step's pimpl below holds these types, and in a unity build (FABRICSIM_UNITY) a
// class with linkage holding an anonymous namespace's type draws -Wsubobject-linkage.
namespace training_run_detail {

// Runs the graph: a task starts when its dependencies have ended; a GPU runs its compute tasks one at a time
// in graph order (one compute stream), a communication task goes to the backend at once (its communicator
// queues it behind the one it is running).
class training_executor {
 public:
  training_executor(const training_graph& g, double flops_per_s, comm_backend& comm, timer_service& timers)
      : m_g(g), m_flops_per_s(flops_per_s), m_comm(comm), m_timers(timers) {
    const size_t n = g.tasks.size();
    m_deps.resize(n);
    m_next.resize(n);
    m_start.assign(n, picoseconds{});
    m_end.assign(n, picoseconds{});
    m_ready.assign(n, false);
    m_stream.resize(g.gpus);
    for (uint32_t i = 0; i < n; ++i) {
      m_deps[i] = uint32_t(g.tasks[i].deps.size());
      for (uint32_t d : g.tasks[i].deps) m_next[d].push_back(i);
      if (g.tasks[i].compute) m_stream[g.tasks[i].rank].push_back(i);
    }
    m_pos.assign(g.gpus, 0);
    m_busy.assign(g.gpus, false);
  }

  void start() {
    for (uint32_t i = 0; i < m_g.tasks.size(); ++i)
      if (m_deps[i] == 0) ready(i);
  }

  size_t done() const { return m_done; }
  const std::vector<picoseconds>& starts() const { return m_start; }
  const std::vector<picoseconds>& ends() const { return m_end; }

 private:
  void ready(uint32_t i) {
    const training_task& t = m_g.tasks[i];
    m_ready[i] = true;
    if (t.compute) {
      try_gpu(t.rank);
      return;
    }
    m_start[i] = core::now();
    m_comm.run(m_g.groups[t.group].op, t.group, t.bytes, i, [this, i] { finish(i); });
  }

  void try_gpu(uint32_t r) {
    if (m_busy[r] || m_pos[r] >= m_stream[r].size()) return;
    const uint32_t i = m_stream[r][m_pos[r]];
    if (!m_ready[i]) return;
    m_busy[r] = true;
    m_start[i] = core::now();
    const picoseconds dur = picoseconds::from_ns(task_seconds(m_g.tasks[i], m_flops_per_s) * 1e9);
    m_timers.at(
        m_start[i] + dur, [this, i] { finish(i); }, i);
  }

  void finish(uint32_t i) {
    const training_task& t = m_g.tasks[i];
    m_end[i] = core::now();
    ++m_done;
    if (t.compute) {
      m_busy[t.rank] = false;
      ++m_pos[t.rank];
    }
    for (uint32_t nx : m_next[i])
      if (--m_deps[nx] == 0) ready(nx);
    if (t.compute) try_gpu(t.rank);
  }

  const training_graph& m_g;
  double m_flops_per_s;
  comm_backend& m_comm;
  timer_service& m_timers;
  std::vector<uint32_t> m_deps;
  std::vector<std::vector<uint32_t>> m_next, m_stream;
  std::vector<picoseconds> m_start, m_end;
  std::vector<bool> m_ready, m_busy;
  std::vector<size_t> m_pos;
  size_t m_done = 0;
};

// How long each communication task held up the compute that waited for it: for every compute task that
// depends on it, its end past the later of its own start and everything else that compute task waited for
// (its other dependencies, the GPU's previous task); for one nothing waits for (the last gradient buckets),
// its end past the last compute of its group. The largest such delay counts.
std::vector<double> exposed_ps(const training_graph& g, const std::vector<picoseconds>& start,
                               const std::vector<picoseconds>& end) {
  std::vector<double> out(g.tasks.size(), 0.0);
  std::vector<bool> waited(g.tasks.size(), false);
  std::vector<uint64_t> prev_end(g.gpus, 0), last_compute(g.gpus, 0);
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const training_task& t = g.tasks[i];
    if (!t.compute) continue;
    for (uint32_t k : t.deps) {
      if (g.tasks[k].compute) continue;
      waited[k] = true;
      uint64_t other = prev_end[t.rank];
      for (uint32_t o : t.deps)
        if (o != k) other = std::max(other, end[o].value);
      const uint64_t from = std::max(other, start[k].value);
      if (end[k].value > from) out[k] = std::max(out[k], double(end[k].value - from));
    }
    prev_end[t.rank] = end[i].value;
    last_compute[t.rank] = std::max(last_compute[t.rank], end[i].value);
  }
  for (uint32_t k = 0; k < g.tasks.size(); ++k) {
    if (g.tasks[k].compute || waited[k]) continue;
    uint64_t last = 0;
    for (uint32_t r : g.groups[g.tasks[k].group].ranks) last = std::max(last, last_compute[r]);
    const uint64_t from = std::max(last, start[k].value);
    if (end[k].value > from) out[k] = double(end[k].value - from);
  }
  return out;
}

nlohmann::json collective_table(const training_graph& g, const std::vector<picoseconds>& start,
                                const std::vector<picoseconds>& end) {
  const std::vector<double> exposed = exposed_ps(g, start, end);
  struct row {
    uint64_t count = 0;
    double total_ps = 0.0, exposed_ps = 0.0;
  };
  std::map<std::tuple<std::string, std::string, uint64_t>, row> rows;
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const training_task& t = g.tasks[i];
    if (t.compute) continue;
    const comm_group& grp = g.groups[t.group];
    row& r = rows[{grp.name.empty() ? group_kind_name(grp.kind) : grp.name, grp.op, t.bytes}];
    ++r.count;
    r.total_ps += double((end[i] - start[i]).value);
    r.exposed_ps += exposed[i];
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [k, r] : rows)
    out.push_back({{"group", std::get<0>(k)},
                   {"op", std::get<1>(k)},
                   {"bytes", std::get<2>(k)},
                   {"count", r.count},
                   {"total_us", r.total_ps * 1e-6},
                   {"exposed_us", r.exposed_ps * 1e-6}});
  return out;
}

// Every task of the first `gpus` GPUs as a bar: [gpu, kind, start_us, end_us], kind 0 compute (the GPU's
// compute stream), the others a communication kind ("tp allreduce", a trace's "world allreduce") drawn on
// the GPU's communication row, once for each of the first GPUs in its group. At most k_max_bars bars.
nlohmann::json timeline(const training_graph& g, const training_executor& ex, uint64_t gpus) {
  constexpr size_t k_max_bars = 200000;
  nlohmann::json kinds = nlohmann::json::array({"compute"}), bars = nlohmann::json::array();
  std::map<std::string, size_t> kind_of;
  bool truncated = false;
  const auto bar = [&](uint32_t gpu, size_t kind, uint32_t i) {
    if (bars.size() >= k_max_bars) {
      truncated = true;
      return;
    }
    bars.push_back({gpu, kind, ex.starts()[i].us(), ex.ends()[i].us()});
  };
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const training_task& t = g.tasks[i];
    if (t.compute) {
      if (t.rank < gpus) bar(t.rank, 0, i);
      continue;
    }
    const comm_group& grp = g.groups[t.group];
    const std::string name = (grp.name.empty() ? group_kind_name(grp.kind) : grp.name) + (" " + grp.op);
    auto it = kind_of.find(name);
    if (it == kind_of.end()) {
      it = kind_of.emplace(name, kinds.size()).first;
      kinds.push_back(name);
    }
    for (uint32_t r : grp.ranks)
      if (r < gpus) bar(r, it->second, i);
  }
  return {{"gpus", std::min<uint64_t>(gpus, g.gpus)}, {"kinds", kinds}, {"bars", bars}, {"truncated", truncated}};
}

// What the step came from: the model (parallelism, parameters, memory) or the Chakra traces.
void describe_source(nlohmann::json& t, const training_model* m, const std::vector<std::string>& files) {
  if (!m) {
    // The files' names: where they lie depends on the checkout and the working directory, so the report keeps
    // it out (the scenario's training.chakra says where, relative to the scenario file).
    nlohmann::json names = nlohmann::json::array();
    for (const std::string& f : files) names.push_back(std::filesystem::path(f).filename().string());
    t["chakra"] = std::move(names);
    return;
  }
  t["parallelism"] = {{"tensor", m->tp}, {"pipeline", m->pp}, {"data", m->dp}, {"expert", m->ep}};
  t["schedule"] = m->p.schedule;
  t["micro_batches"] = m->micro_batches;
  t["parameters"] = m->total_params;
  t["memory_per_gpu_bytes"] = {{"weights", m->memory.weights},
                               {"gradients", m->memory.gradients},
                               {"optimizer", m->memory.optimizer},
                               {"activations", m->memory.activations},
                               {"total", m->memory.total()}};
}

nlohmann::json training_object(const training_params& p, const training_model* m, const std::vector<std::string>& files,
                               const training_graph& g, const training_executor& ex, double flops_per_s,
                               double wall_s) {
  const compute_only_times bound = compute_only(g, flops_per_s);
  picoseconds step{};
  for (picoseconds e : ex.ends()) step = core::max(step, e);
  const double step_us = step.us(), compute_us = bound.step_s * 1e6;
  const double exposed_us = std::max(0.0, step_us - compute_us);
  nlohmann::json t;
  t["completed"] = ex.done() == g.tasks.size();
  t["gpus"] = g.gpus;
  describe_source(t, m, files);
  t["tasks"] = g.tasks.size();
  t["compute_tasks"] = std::count_if(g.tasks.begin(), g.tasks.end(), [](const training_task& k) { return k.compute; });
  t["communicators"] = g.groups.size();
  t["step_time_us"] = step_us;
  t["compute_time_us"] = compute_us;
  t["max_gpu_busy_us"] = *std::max_element(bound.busy_s.begin(), bound.busy_s.end()) * 1e6;
  t["exposed_communication_us"] = exposed_us;
  t["communication_share"] = step_us > 0 ? exposed_us / step_us : 0.0;
  t["collectives"] = collective_table(g, ex.starts(), ex.ends());
  if (p.timeline_gpus > 0) t["timeline"] = timeline(g, ex, p.timeline_gpus);
  t["wall_time_s"] = wall_s;
  return t;
}

// The step's graph: from the Chakra traces when training.chakra names them, else from the model.
struct step_source {
  std::optional<training_model> model;
  std::vector<std::string> files;
  training_graph graph;
  double flops_per_s = 0.0;
};

// `where` starts the model's errors; training.chakra is relative to the scenario file (s.source).
step_source step_graph(const scenario& s, const training_params& tp, size_t hosts, const std::string& where) {
  step_source out;
  if (tp.chakra.empty()) {
    out.model = make_training_model(tp, hosts, where);
    out.graph = build_training_graph(*out.model);
    out.flops_per_s = out.model->flops_per_s;
    return out;
  }
  out.files = chakra_files(tp.chakra, s.source);
  const uint64_t gpus = tp.gpus ? tp.gpus : hosts;
  if (gpus > hosts)
    throw config_error(
        fmt::format("{}: training.gpus: {} GPUs but the fabric has {} hosts (one GPU per host)", where, gpus, hosts));
  if (out.files.size() != gpus)
    throw config_error(
        fmt::format("{}: training.chakra: {} trace files ({} .. {}) but the run has {} GPUs "
                    "(training.gpus {}; 0: every host, {} here): one trace per GPU",
                    where, out.files.size(), out.files.front(), out.files.back(), gpus, tp.gpus, hosts));
  out.flops_per_s = tp.gpu_tflops * 1e12 * tp.compute_efficiency;
  out.graph = load_chakra_graph(out.files, out.flops_per_s);
  return out;
}

// The step on a system preset's cluster (testbench/training_cluster.h): the GPUs' NVLink domains and their
// SuperNICs on the rails, in place of the flat fabric.
nlohmann::json run_training_cluster(const scenario& s, const run_options& opts) {
  const training_params tp = cluster_training_params(s);
  const size_t gpus = s.nvlink.domains * s.nvlink.gpus_per_domain;
  const step_source src = step_graph(s, tp, gpus, s.source);
  const training_graph& graph = src.graph;
  std::vector<size_t> rank_host(graph.gpus);
  for (size_t r = 0; r < rank_host.size(); ++r) rank_host[r] = r;  // GPU rank r is GPU r of the cluster
  cluster_backend comm(s);
  std::vector<uint64_t> unused;
  comm.plan(graph.groups, rank_host, unused);
  // Ties between task ends go by task: under mpirun a collective's end is learnt at a window's end.
  timer_service timers("training_timers", true);
  comm.build(timers);
  training_executor ex(graph, src.flops_per_s, comm, timers);
  if (opts.elaborate_only) return nlohmann::json::object();
  timers.at(picoseconds{}, [&ex] { ex.start(); });
  const auto wall0 = std::chrono::steady_clock::now();
  const double end_us = s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us;
  scale_out& so = comm.so();
  so.start(picoseconds::from_ns(end_us * 1e3), sc_core::SC_EXIT_ON_STARVATION);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  so.merge_statistics();  // under mpirun: every rank's counters, the whole fabric's on rank 0
  const picoseconds sim_end = core::now();
  core::sim_context& ctx = comm.ctx();
  nlohmann::json r;
  add_run_header(r, s, opts, ctx, sim_end, wall_s);
  // The step's RDMA WRITEs from every NIC's completion queue, the NVLink transfers, and the data check (under
  // mpirun each process's own, summed; the graph's executor ran alike on every process).
  const cluster_backend::check_result chk = comm.checked();
  std::vector<uint64_t> counts{comm.writes_posted(), 0, 0, comm.nvlink_transfers(), chk.bytes, chk.wrong};
  for (topology::host& h : comm.cluster().scale_out().hosts())
    if (h.built())
      for (const nic::completion& c : h.nic->completions())
        ++counts[c.status == nic::completion_status::success ? 1 : 2];
  if (so.distributed()) so.sum(counts);
  const uint64_t completed = counts[1], failed = counts[2];
  const bool data = s.nic.place_data;
  const bool writes_report = so.rank() == 0;  // the whole fabric's statistics are on rank 0 only
  r["operations"] = counts[0];                // RDMA WRITEs (NVLink transfers: training.nvlink_transfers)
  r["completed"] = completed;
  r["failed"] = failed;
  r["time_limited"] = false;
  r["data_checked"] = data;
  r["verified"] = data && ex.done() == graph.tasks.size() && counts[5] == 0 && failed == 0;
  r["placed_bytes"] = ctx.stats.counter_total("placed_bytes");
  r["dropped_packets"] = ctx.stats.counter_total("dropped");
  r["training"] = training_object(tp, src.model ? &*src.model : nullptr, src.files, graph, ex, src.flops_per_s, wall_s);
  r["training"]["comm_backend"] = "cluster";
  r["training"]["rdma_writes"] = counts[0];
  r["training"]["nvlink_transfers"] = counts[3];
  r["training"]["data_check"] = {
      {"collectives", chk.collectives}, {"result_bytes", counts[4]}, {"wrong_elements", counts[5]}};
  std::map<std::string, uint64_t> algos;
  for (const std::string& a : comm.algorithms()) ++algos[a];
  r["training"]["communicators_by_algorithm"] = algos;
  r["flows"] = nlohmann::json::array();
  r["ports"] = writes_report ? link_ports_report(comm.cluster().scale_out(), ctx, sim_end) : nlohmann::json::array();
  r["stats"] = writes_report ? ctx.stats.to_json() : nlohmann::json::object();
  r["stat_descriptions"] = writes_report ? ctx.stats.descriptions_json() : nlohmann::json::object();
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

}  // namespace training_run_detail
using namespace training_run_detail;

struct training_step::impl {
  impl(const scenario& s, const training_params& p, std::vector<size_t> h, const std::string& where)
      : tp(p), hosts(std::move(h)), src(step_graph(s, p, hosts.size(), where)) {
    comm = make_comm_backend(tp.comm_backend, s);
  }
  training_params tp;
  std::vector<size_t> hosts;
  step_source src;
  std::unique_ptr<comm_backend> comm;
  std::unique_ptr<timer_service> timers;
  std::unique_ptr<training_executor> ex;
};

training_step::training_step(const scenario& s, const training_params& tp, std::vector<size_t> hosts,
                             const std::string& where)
    : m(std::make_unique<impl>(s, tp, std::move(hosts), where)) {}

training_step::~training_step() = default;

void training_step::plan(std::vector<uint64_t>& mem_bytes) {
  std::vector<size_t> rank_host(m->src.graph.gpus);
  for (size_t r = 0; r < rank_host.size(); ++r) rank_host[r] = m->hosts[r];  // GPU r on the step's r-th host
  m->comm->plan(m->src.graph.groups, rank_host, mem_bytes);
}

void training_step::elaborate(fabric_setup& setup, const std::string& timer_name) {
  // Ties between task ends go by task (the same order in every partition: docs/scale_out.md).
  m->timers = std::make_unique<timer_service>(timer_name.c_str(), true);
  m->comm->elaborate(setup, *m->timers);
  m->ex = std::make_unique<training_executor>(m->src.graph, m->src.flops_per_s, *m->comm, *m->timers);
  training_executor* ex = m->ex.get();
  m->timers->at(picoseconds{}, [ex] { ex->start(); });
}

nlohmann::json training_step::report(double wall_s) const {
  return training_object(m->tp, m->src.model ? &*m->src.model : nullptr, m->src.files, m->src.graph, *m->ex,
                         m->src.flops_per_s, wall_s);
}

uint64_t training_step::writes_posted() const { return m->comm->writes_posted(); }

std::vector<std::pair<size_t, size_t>> training_step::staged_host_pairs() const { return m->comm->staged_host_pairs(); }

nlohmann::json run_training(const scenario& s, const run_options& opts) {
  check_run_basics(s);
  if (s.system.preset != "none") return run_training_cluster(s, opts);
  if (s.training.tp_algo != "nvlink_ring")
    throw config_error(s.source + ": training.tp_algo " + s.training.tp_algo +
                       ": NVLink SHARP runs in the switch chips of a system preset's NVLink domains (set "
                       "system.preset, or leave training.tp_algo nvlink_ring)");
  const size_t hosts = s.topology.host_count();
  std::vector<size_t> all(hosts);
  for (size_t h = 0; h < hosts; ++h) all[h] = h;  // GPU r on host r
  training_step step(s, s.training, all, s.source);
  std::vector<uint64_t> mem_bytes(hosts, 4096);
  step.plan(mem_bytes);
  const bool placing = any_nic_places_data(s) && !opts.elaborate_only;
  check_memory_budget(s, mem_bytes, placing, "training: the communicators' buffers", "",
                      "set nic.place_data: false (the step's timing does not depend on the bytes)");
  fabric_setup setup(s, opts);
  scale_out& so = setup.so;
  // Under mpirun a collective's end is learnt at a window's end, and a reducing connection's slot credits on
  // the far rank then too.
  check_collective_lookahead(s, so, step.staged_host_pairs(),
                             "a training step's collective ends when its last WRITE is placed on any process");
  setup.build(mem_bytes, {}, placing);
  if (so.distributed() && !so.windowed())
    throw config_error(s.source + ": training: no link crosses between the " + std::to_string(so.ranks()) +
                       " MPI ranks of this partition, so they cannot keep in step: run it in one process");
  step.elaborate(setup, "training_timers");
  if (opts.elaborate_only) return nlohmann::json::object();
  memory_guard::check_run(s, setup.fab(), report_entries(so, setup.ctx.stats));
  const auto wall0 = std::chrono::steady_clock::now();
  const double end_us = s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us;
  setup.so.start(picoseconds::from_ns(end_us * 1e3), sc_core::SC_EXIT_ON_STARVATION);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  setup.flush_rtl_log();
  so.merge_statistics();  // under mpirun: every rank's counters, the whole fabric's on rank 0
  const picoseconds sim_end = core::now();
  core::sim_context& ctx = setup.ctx;
  nlohmann::json r;
  add_run_header(r, s, opts, ctx, sim_end, wall_s);
  // The step's WRITEs, from every NIC's completion queue (under mpirun each rank's NICs, summed); the graph's
  // executor ran alike on every rank.
  std::vector<uint64_t> counts{step.writes_posted(), 0, 0};
  for (topology::host& h : setup.fab().hosts())
    if (h.built())
      for (const nic::completion& c : h.nic->completions())
        ++counts[c.status == nic::completion_status::success ? 1 : 2];
  if (so.distributed()) so.sum(counts);
  const uint64_t completed = counts[1], failed = counts[2];
  const bool writes_report = so.rank() == 0;  // the whole fabric's statistics are on rank 0 only
  r["operations"] = counts[0];
  r["completed"] = completed;
  r["failed"] = failed;
  r["time_limited"] = false;
  r["verified"] = false;  // timing only: the step's WRITEs carry no checked data
  r["data_checked"] = false;
  r["placed_bytes"] = ctx.stats.counter_total("placed_bytes");
  r["dropped_packets"] = ctx.stats.counter_total("dropped");
  r["training"] = step.report(wall_s);
  r["flows"] = nlohmann::json::array();
  r["ports"] = writes_report ? link_ports_report(setup.fab(), ctx, sim_end) : nlohmann::json::array();
  r["stats"] = writes_report ? ctx.stats.to_json() : nlohmann::json::object();
  // each statistic's unit and description, once
  r["stat_descriptions"] = writes_report ? ctx.stats.descriptions_json() : nlohmann::json::object();
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

std::string format_training_table(const nlohmann::json& r) {
  const auto& t = r.at("training");
  std::string out =
      fmt::format("scenario {} (seed {})\n", r.at("scenario").get<std::string>(), r.at("seed").get<uint64_t>());
  if (!r.at("description").get<std::string>().empty())
    out += fmt::format("  {}\n", r.at("description").get<std::string>());
  if (t.contains("chakra")) {
    const auto& files = t.at("chakra");
    out += fmt::format("# training step from Chakra traces: {} GPUs, {} .. {}, {} tasks ({} compute)\n",
                       t.at("gpus").get<uint64_t>(), files.front().get<std::string>(), files.back().get<std::string>(),
                       t.at("tasks").get<uint64_t>(), t.at("compute_tasks").get<uint64_t>());
  } else {
    const auto& par = t.at("parallelism");
    out += fmt::format(
        "# training step: {} GPUs, tensor {} x pipeline {} x data {} (expert {}), {} schedule, {} "
        "micro-batches, {:.3f} B parameters, {:.2f} GiB per GPU\n",
        t.at("gpus").get<uint64_t>(), par.at("tensor").get<uint64_t>(), par.at("pipeline").get<uint64_t>(),
        par.at("data").get<uint64_t>(), par.at("expert").get<uint64_t>(), t.at("schedule").get<std::string>(),
        t.at("micro_batches").get<uint64_t>(), t.at("parameters").get<uint64_t>() / 1e9,
        double(t.at("memory_per_gpu_bytes").at("total").get<uint64_t>()) / double(1ull << 30));
  }
  out += fmt::format("# {:>6} {:>10} {:>14} {:>7} {:>12} {:>12}\n", "group", "op", "bytes", "count", "total (us)",
                     "exposed (us)");
  for (const auto& c : t.at("collectives"))
    out += fmt::format("  {:>6} {:>10} {:>14} {:>7} {:>12.2f} {:>12.2f}\n", c.at("group").get<std::string>(),
                       c.at("op").get<std::string>(), c.at("bytes").get<uint64_t>(), c.at("count").get<uint64_t>(),
                       c.at("total_us").get<double>(), c.at("exposed_us").get<double>());
  out += fmt::format(
      "step {:.2f} us: compute {:.2f} us (compute-only step, bubbles included; busiest GPU {:.2f} "
      "us), exposed communication {:.2f} us, communication share {:.1f} %{}\n",
      t.at("step_time_us").get<double>(), t.at("compute_time_us").get<double>(), t.at("max_gpu_busy_us").get<double>(),
      t.at("exposed_communication_us").get<double>(), 100.0 * t.at("communication_share").get<double>(),
      t.at("completed").get<bool>() ? "" : " (INCOMPLETE: run.limit_us reached)");
  out += fmt::format("simulated {:.3f} us in {:.3f} s wall: {} packet-hops; {} WRITEs\n",
                     r.at("simulated_time_ns").get<double>() / 1000.0, r.at("wall_time_s").get<double>(),
                     r.at("packet_hops").get<uint64_t>(), r.at("operations").get<uint64_t>());
  return out;
}

}  // namespace fabricsim::testbench
