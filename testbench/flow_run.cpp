// One run of a flow workload (every workload kind but collective and training) in its stages: plan, wire,
// run, verify and report (testbench/simulation.h: run_flows).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <systemc>
#include <tuple>

#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/memory/payload_pattern.h"
#include "sc_models/memory/placement_scoreboard.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/nic/block_lockstep.h"
#include "sc_models/switch/switch_device.h"
#include "sc_models/topology/fabric.h"
#include "testbench/cluster_run.h"
#include "testbench/collective.h"
#include "testbench/congestion_report.h"
#include "testbench/fabric_setup.h"
#include "testbench/faults.h"
#include "testbench/fct_report.h"
#include "testbench/memory_guard.h"
#include "testbench/nvlink_run.h"
#include "testbench/progress.h"
#include "testbench/scale_out.h"
#include "testbench/simulation.h"
#include "testbench/tenants.h"
#include "testbench/training_run.h"
#include "testbench/workload.h"

namespace fabricsim::testbench {

namespace {

using core::picoseconds;

// One RDMA WRITE as planned, with where its bytes come from and go to.
struct planned_write : planned_flow {
  uint64_t src_addr = 0, dst_addr = 0;
  // Where its bytes come from and land: a WRITE's or SEND's from the requester to the responder, a READ's
  // the other way (the same two buffers).
  size_t from() const { return op == nic::rdma_op::read ? dst : src; }
  size_t to() const { return op == nic::rdma_op::read ? src : dst; }
  uint64_t from_addr() const { return op == nic::rdma_op::read ? dst_addr : src_addr; }
  uint64_t to_addr() const { return op == nic::rdma_op::read ? src_addr : dst_addr; }
};

std::string format_number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// The `fabric` object of the report (docs/report.md): what the fabric delivered in the measurement window,
// and its congestion counters.
nlohmann::json fabric_summary(core::sim_context& ctx, topology::fabric& fab, const std::vector<planned_write>& writes,
                              picoseconds window_start, picoseconds window_end, uint64_t placed_at_window_start,
                              const std::vector<double>& flow_throughputs) {
  std::vector<bool> sends(fab.hosts().size(), false);
  for (const planned_write& w : writes) sends[w.src] = true;
  uint64_t senders = 0;
  double sender_rate_bps = 0.0;  // sum of the senders' line rates
  for (size_t h = 0; h < sends.size(); ++h)
    if (sends[h]) {
      ++senders;
      sender_rate_bps += double(fab.hosts()[h].line_rate.value);
    }
  const uint64_t delivered = ctx.stats.counter_total("placed_bytes") - placed_at_window_start;
  const double window_s = double((window_end - window_start).value) * 1e-12;
  uint64_t max_queue = ctx.stats.counter_max("max_queue_bytes");
  if (max_queue == 0) max_queue = ctx.stats.counter_max("max_occupancy");  // the output-queued switch

  nlohmann::json j;
  j["window_start_ns"] = window_start.ns();
  j["window_end_ns"] = window_end.ns();
  j["delivered_payload_bytes"] = delivered;
  j["senders"] = senders;
  j["effective_throughput"] =
      window_s > 0 && sender_rate_bps > 0 ? double(delivered) * 8.0 / (sender_rate_bps * window_s) : 0.0;
  j["drops"] = ctx.stats.counter_total("dropped");
  j["ecn_marked"] = ctx.stats.counter_total("ecn_marked");
  j["pfc_pause_frames"] = ctx.stats.counter_total("pause_frames_sent");
  j["injected_drops"] = ctx.stats.counter_total("dropped_injected");
  j["retransmissions"] = ctx.stats.counter_total("tx_retransmitted");
  j["read_reissues"] = ctx.stats.counter_total("read_reissues");
  j["rnr_naks"] = ctx.stats.counter_total("tx_rnr_nak");
  j["out_of_order_packets"] = ctx.stats.counter_total("rx_out_of_order");
  j["reorder_peak_packets"] = ctx.stats.counter_max("reorder_peak_packets");
  j["max_queue_bytes"] = max_queue;
  j["data_packet_latency_ns"] = latency_summary_ns(ctx.data_latency);
  j["completed_flows"] = flow_throughputs.size();
  j["incomplete_flows"] = writes.size() - flow_throughputs.size();
  if (flow_throughputs.empty()) {
    j["mean_flow_throughput"] = nullptr;
    j["min_flow_throughput"] = nullptr;
  } else {
    double sum = 0.0;
    for (double t : flow_throughputs) sum += t;
    j["mean_flow_throughput"] = sum / double(flow_throughputs.size());
    j["min_flow_throughput"] = *std::min_element(flow_throughputs.begin(), flow_throughputs.end());
  }
  return j;
}

constexpr uint64_t page = 4096;
uint64_t round_up(uint64_t v) { return (v + page - 1) / page * page; }

}  // namespace

namespace {

// One run of a flow workload (every workload kind but collective), in its stages: plan (checks, the
// operations and the memory they need), wire (the fabric, buffers, queue pairs, posting), run (the loop of
// sc_start stops: warm-up, samples, progress), verify (completions and bytes) and report.
class flow_run {
 public:
  flow_run(const scenario& s, const run_options& opts) : m_s(s), m_opts(opts) {}
  void plan();
  void wire();
  void run();
  void verify();
  nlohmann::json report();
  // The lockstep pairs' divergence, if one stopped run().
  const core::lockstep_sink& lockstep() const { return m_setup->ctx.lockstep; }

 private:
  // Completions and what the responders placed, per operation.
  struct outcome {
    const nic::completion* requester = nullptr;
    const nic::placed_message* responder = nullptr;
  };
  void post_writes();
  void find_bottleneck();
  void open_window();
  void take_sample();
  picoseconds next_stop(picoseconds end, picoseconds next_sample);
  void report_progress(std::chrono::steady_clock::time_point slice_wall0);
  void collect_outcomes();
  void collect_byte_checks();
  void verify_flows();
  nlohmann::json pcie_report();
  scale_out& so() { return m_setup->so; }
  topology::fabric& fab() { return m_setup->fab(); }

  const scenario& m_s;
  const run_options& m_opts;
  size_t m_hosts = 0;
  double m_run_end_us = 0.0;
  std::vector<planned_write> m_writes;
  std::vector<uint64_t> m_mem_bytes;
  std::optional<fabric_setup> m_setup;
  bool m_data_checked = false, m_any_placement = false;
  std::vector<bool> m_beside_host;  // hosts of run_options::beside
  bool m_generated = false;         // workload.memory generated: sources generated, payloads checked and not stored
  std::optional<memory::payload_pattern> m_pattern;
  std::optional<memory::placement_scoreboard> m_scoreboard;  // when bytes are checked
  std::vector<sender_qp> m_senders;
  // The run loop.
  std::chrono::steady_clock::time_point m_wall0;
  sc_core::sc_starvation_policy m_policy = sc_core::SC_EXIT_ON_STARVATION;
  picoseconds m_sample_period;
  uint64_t m_placed_at_window_start = 0;
  std::vector<delivered_sample> m_delivered;
  // Readers of registry probes (sc_models/core/stats.h). The port the report calls the bottleneck (the
  // last hop to the one destination): its queue integral; every port of this rank's switches: its queue;
  // per sender, the port towards its destination: its queue (null: not built here, or no such probe).
  using probe_fn = const std::function<double()>*;
  probe_fn m_bottleneck = nullptr;
  double m_queue_byte_ps_at_window_start = 0.0;
  std::vector<probe_fn> m_port_queues;
  std::vector<probe_fn> m_dst_queues;
  std::vector<qp_sample> m_samples;
  std::vector<uint64_t> m_last_placed;
  std::optional<progress_reporter> m_progress;
  uint64_t m_progress_slice_ps = 1000000;  // 1 us to start with
  // After the run.
  double m_peak_rss_mib = 0.0, m_wall_s = 0.0;
  picoseconds m_sim_end, m_window_start;
  std::vector<outcome> m_results;
  // Per operation: bytes that differed (as they landed, or read back at the end), distinct bytes compared
  // as they landed, bytes that landed twice, bytes that ran past its end; and bytes that landed nowhere.
  std::vector<uint64_t> m_mismatches, m_checked, m_duplicates, m_past_end;
  uint64_t m_stray_bytes = 0, m_duplicate_bytes_total = 0, m_past_end_total = 0, m_missing_total = 0;
  nlohmann::json m_flows = nlohmann::json::array();
  std::vector<double> m_flow_throughputs;
  bool m_verified = false;
  uint64_t m_completed = 0, m_failed = 0, m_mismatched_bytes_total = 0, m_checked_bytes_total = 0;
  std::map<std::string, uint64_t> m_op_counts;  // operations per kind (report: op_counts)
};

void flow_run::plan() {
  check_run_basics(m_s);
  const scenario& s = m_s;
  m_hosts = s.topology.host_count();
  m_run_end_us = s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us;
  if (s.run.warmup_us > 0 && s.run.warmup_us >= m_run_end_us)
    throw core::config_error(s.source + ": run.warmup_us " + format_number(s.run.warmup_us) +
                             " leaves no measurement "
                             "window: it must be below run." +
                             (s.run.duration_us > 0 ? "duration_us " : "limit_us ") + format_number(m_run_end_us));
  if (!s.run.timeseries_csv.empty() && s.run.sample_us <= 0)
    throw core::config_error(s.source + ": run.timeseries_csv " + s.run.timeseries_csv +
                             " needs a sampling period: set run.sample_us above 0");
  // HPCC acts on the switches' telemetry records: without them its window would never move.
  bool hpcc = s.nic.cc == "hpcc";
  for (const auto& [name, params] : s.nic_overrides) hpcc = hpcc || params.cc == "hpcc";
  if (hpcc && !s.switch_.telemetry)
    throw core::config_error(s.source +
                             ": nic.cc hpcc needs in-band telemetry from the switches: set "
                             "switch.telemetry: true (docs/hpcc.md)");
  for (const planned_flow& f : m_opts.workload ? *m_opts.workload : plan_workload(s)) m_writes.push_back({f});
  m_mem_bytes.assign(m_hosts, 0);
  for (const planned_write& w : m_writes) {
    m_mem_bytes[w.src] += round_up(w.bytes);
    m_mem_bytes[w.dst] += round_up(w.bytes);
  }
  m_beside_host.assign(m_hosts, false);
  for (co_workload* c : m_opts.beside) {
    c->add_memory(m_mem_bytes);
    for (size_t h : c->hosts()) m_beside_host[h] = true;
  }
  m_generated = resolve_memory_mode(s);
  check_memory_budget(s, m_mem_bytes, any_nic_places_data(s) && !m_generated, "workload: the hosts' buffers",
                      " (source and destination of every WRITE)",
                      "use smaller writes (workload.message_bytes, writes[].bytes), fewer hosts, workload.memory: "
                      "generated (payloads checked as they land, not stored), or nic.place_data: false for a "
                      "timing-only run");
}

void flow_run::wire() {
  m_setup.emplace(m_s, m_opts);
  // Bytes are compared only where every NIC placed them (nic.place_data); otherwise the run is timing only,
  // and neither the source fill nor the memory behind the buffers is needed. An elaboration check touches
  // no payload: the memory stays unmapped and the sources unfilled.
  m_data_checked = every_nic_places_data(m_s);
  m_any_placement = any_nic_places_data(m_s) && !m_opts.elaborate_only;
  // Dense memory is faulted in and its payloads shipped between ranks; generated payloads touch no memory.
  m_setup->build(m_mem_bytes, m_s.pcie, m_any_placement && !m_generated);
  m_pattern.emplace(core::stream_seed(m_s.seed, "workload", "payload"));
  if (m_data_checked && !m_opts.elaborate_only) m_scoreboard.emplace(*m_pattern, m_hosts);
  for (co_workload* c : m_opts.beside) c->elaborate(*m_setup, m_any_placement);
  for (size_t h = 0; h < m_hosts; ++h) {
    topology::host& host = fab().hosts()[h];
    if (!host.built() || m_beside_host[h]) continue;  // the hosts of a workload beside the flows: its own
    if (m_generated) host.nic->set_generated_payloads(*m_pattern, uint32_t(h));
    if (m_scoreboard) host.nic->set_landing_observer(&m_scoreboard->observer(uint32_t(h)));
  }
  post_writes();
}

// Buffers: sources hold the payload pattern (filled only in dense memory), destinations zero, each destination
// a region of the NIC and of the placement scoreboard;
// one queue pair per pair of hosts, or per flow (workload.queue_pairs).
void flow_run::post_writes() {
  // (src, dst, qp_group) -> (src QPN, dst QPN)
  std::map<std::tuple<size_t, size_t, uint64_t>, std::pair<uint32_t, uint32_t>> qps;
  // Posted in time order (ties in plan order): a queue pair takes its work requests in order of post time,
  // and a flow list need not be sorted.
  std::vector<size_t> post_order(m_writes.size());
  for (size_t i = 0; i < m_writes.size(); ++i) post_order[i] = i;
  std::stable_sort(post_order.begin(), post_order.end(),
                   [&](size_t a, size_t b) { return m_writes[a].post_at < m_writes[b].post_at; });
  for (const size_t i : post_order) {
    planned_write& w = m_writes[i];
    topology::host& src = fab().hosts()[w.src];
    topology::host& dst = fab().hosts()[w.dst];
    w.src_addr = src.buffer().allocate(w.bytes);
    w.dst_addr = dst.buffer().allocate(w.bytes);
    // Dense memory: the host the bytes come from holds them (a scale-out rank fills only its own hosts').
    topology::host& from = fab().hosts()[w.from()];
    if (m_any_placement && !m_generated && from.built())
      m_pattern->fill(from.mem->data() + w.from_addr(), uint32_t(w.from()), w.from_addr(), w.bytes);
    const uint32_t rkey = m_setup->register_region(w.dst, w.dst_addr, w.bytes);
    auto it = qps.find({w.src, w.dst, w.qp_group});
    if (it == qps.end()) {
      const uint32_t sq = m_setup->create_qp(w.src), rq = m_setup->create_qp(w.dst);
      const uint32_t psn_a = m_setup->initial_psn(w.src), psn_b = m_setup->initial_psn(w.dst);
      const uint64_t mtu = m_setup->path_mtu(w.src, w.dst);
      if (src.built()) src.nic->connect_qp(sq, dst.ip, rq, psn_a, psn_b, mtu);
      if (dst.built()) dst.nic->connect_qp(rq, src.ip, sq, psn_b, psn_a, mtu);
      it = qps.emplace(std::make_tuple(w.src, w.dst, w.qp_group), std::make_pair(sq, rq)).first;
    }
    // A SEND lands in a receive buffer at the responder's destination address; a WRITE with immediate
    // consumes a receive (its bytes go where the RETH says). Receives are posted in the order they are used.
    if (w.op == nic::rdma_op::send || w.op == nic::rdma_op::send_imm || w.op == nic::rdma_op::write_imm)
      if (so().owns_host(w.dst))
        dst.nic->post_recv(it->second.second, i, w.dst_addr, w.op == nic::rdma_op::write_imm ? 0 : w.bytes);
    if (so().owns_host(w.src))
      src.nic->post(it->second.first, i, w.op, w.src_addr, w.dst_addr, rkey, w.bytes, w.post_at, uint32_t(i));
  }
  if (m_scoreboard)  // region i is operation i
    for (const planned_write& w : m_writes)
      m_scoreboard->add_region({uint32_t(w.to()), w.to_addr(), uint32_t(w.from()), w.from_addr(), w.bytes});
  for (const auto& [key, qpns] : qps) {
    sender_qp q;
    q.src = std::get<0>(key);
    q.dst = std::get<1>(key);
    q.sq = qpns.first;
    q.rq = qpns.second;
    for (const planned_write& w : m_writes)
      if (w.src == q.src && w.dst == q.dst && w.qp_group == std::get<2>(key))
        q.first_post = std::min(q.first_post, w.post_at);
    m_senders.push_back(q);
  }
}

// The bottleneck port (the last hop to the one destination of every sender), and the switches whose queues
// a sample reads; under mpirun, on the ranks that simulate them.
void flow_run::find_bottleneck() {
  std::vector<bool> is_dst(m_hosts, false);
  size_t dsts = 0, target = 0;
  for (const sender_qp& q : m_senders)
    if (!is_dst[q.dst]) {
      is_dst[q.dst] = true;
      ++dsts;
      target = q.dst;
    }
  const core::stats_registry& stats = m_setup->ctx.stats;
  auto reader = [&](const nlohmann::json& port, const char* what) -> probe_fn {
    return port.is_string() && stats.has_probe(port.get<std::string>(), what)
               ? &stats.probe_reader(port.get<std::string>(), what)
               : nullptr;
  };
  if (dsts == 1 && so().owns_switch(fab().hosts()[target].leaf))  // under mpirun: on the leaf's rank only
    m_bottleneck = reader(leaf_port_towards(m_setup->ctx, fab(), target), "queue_byte_ps");
  for (size_t i = 0; i < fab().switches().size(); ++i) {
    const sw::switch_device* sw = fab().switches()[i].get();
    if (!so().owns_switch(i) || !sw || !stats.has_probe(sw->device_name(), "egress_ports")) continue;
    for (const nlohmann::json& p : stats.probe_record_value(sw->device_name(), "egress_ports"))
      if (!p.is_null()) m_port_queues.push_back(reader(p[0], "queued_bytes"));
  }
  std::map<size_t, nlohmann::json> leaf_records;  // each leaf's egress_ports record, read once
  for (const sender_qp& q : m_senders)
    m_dst_queues.push_back(so().owns_switch(fab().hosts()[q.dst].leaf)
                               ? reader(leaf_port_towards(m_setup->ctx, fab(), q.dst, &leaf_records), "queued_bytes")
                               : nullptr);
}

// Every rank opens the window at the same stop. Under mpirun each reads only what it simulates (the
// responders' placed bytes, its NICs' `placed_bytes` counters, the bottleneck's integral on the leaf's rank)
// and the sums over the ranks are the one-process values.
void flow_run::open_window() {
  core::sim_context& ctx = m_setup->ctx;
  m_placed_at_window_start = ctx.stats.counter_total("placed_bytes");
  ctx.data_latency = core::fine_histogram{};  // packets received in the window only
  for (sender_qp& q : m_senders)
    q.placed_at_window_start = so().owns_host(q.dst) ? fab().hosts()[q.dst].nic->qp_state(q.rq).placed_bytes : 0;
  if (m_bottleneck) m_queue_byte_ps_at_window_start = (*m_bottleneck)();
  if (!so().distributed()) return;
  std::vector<uint64_t> v{m_placed_at_window_start};
  for (const sender_qp& q : m_senders) v.push_back(q.placed_at_window_start);
  so().sum(v);
  m_placed_at_window_start = v[0];
  for (size_t k = 0; k < m_senders.size(); ++k) m_senders[k].placed_at_window_start = v[k + 1];
  m_queue_byte_ps_at_window_start = so().from_owner(m_queue_byte_ps_at_window_start);
}

// Sampling reads state between sc_start calls: read-only accessors, no model event.
// Under mpirun every rank stops at every sample time and reads only what it simulates: a requester's QP
// state on the source host's rank, the placed bytes on the destination's, the destination port's queue on
// its leaf's rank, the largest queue of its own switches; the rows are then merged (a sum where one rank
// holds the value, a maximum for the largest queue), so every rank holds the one-process samples.
void flow_run::take_sample() {
  const picoseconds t = core::now();
  // Under mpirun each rank counts its own NICs' placed bytes: the fabric's total is their sum.
  if (!m_setup->faults().empty())
    m_delivered.push_back({t, so().sum(m_setup->ctx.stats.counter_total("placed_bytes"))});
  if (m_s.run.sample_us <= 0) return;  // sampling only for the faults report
  uint64_t max_queue = 0;
  for (probe_fn queued : m_port_queues)
    if (queued) max_queue = std::max(max_queue, uint64_t((*queued)()));
  const size_t first = m_samples.size();
  for (size_t k = 0; k < m_senders.size(); ++k) {
    const sender_qp& q = m_senders[k];
    qp_sample smp{};
    smp.t = t;
    smp.sender = k;
    if (so().owns_host(q.src)) smp.st = fab().hosts()[q.src].nic->qp_state(q.sq);
    // Delivered at the responder.
    smp.st.placed_bytes = so().owns_host(q.dst) ? fab().hosts()[q.dst].nic->qp_state(q.rq).placed_bytes : 0;
    smp.dst_port_queue_bytes = m_dst_queues[k] ? uint64_t((*m_dst_queues[k])()) : 0;
    smp.max_queue_bytes = max_queue;
    m_samples.push_back(smp);
  }
  if (so().distributed()) merge_samples(so(), m_samples, first);
  for (size_t k = 0; k < m_senders.size(); ++k) {
    qp_sample& smp = m_samples[first + k];
    smp.active = t >= m_senders[k].first_post && smp.st.outstanding > 0;
    smp.goodput_mbps = double(smp.st.placed_bytes - m_last_placed[k]) * 8.0 / double(m_sample_period.value) * 1e6;
    m_last_placed[k] = smp.st.placed_bytes;
  }
}

// With a duration, run to it; without, until the fabric is idle (every operation done, or nothing left that
// could finish one). A warm-up splits the run in two sc_start calls, to read the delivered payload at the
// window's start: no event is added to the models. Stops: every sample time, the end of the warm-up and the
// end of the run. Without a duration a call may stop at the last event before its end (the kernel does not
// advance an idle clock): continue only if anything is left to happen.
void flow_run::run() {
  const scenario& s = m_s;
  m_wall0 = std::chrono::steady_clock::now();
  m_policy = s.run.duration_us > 0 ? sc_core::SC_RUN_TO_TIME : sc_core::SC_EXIT_ON_STARVATION;
  const picoseconds warmup_end = picoseconds::from_ns(s.run.warmup_us * 1e3);
  // A run with faults samples delivered payload (time to recover) even when run.sample_us is 0.
  m_sample_period = picoseconds::from_ns(
      (s.run.sample_us > 0 || m_setup->faults().empty() ? s.run.sample_us : s.fault.sample_us) * 1e3);
  find_bottleneck();
  // What the run may add: packets in flight, the report, and the time series (one sample per sending QP).
  const uint64_t samples =
      m_sample_period.value > 0 ? uint64_t(m_run_end_us * 1e6 / double(m_sample_period.value)) + 1 : 0;
  memory_guard::check_run(
      s, fab(), report_entries(so(), m_setup->ctx.stats),
      {{"the time series of " + std::to_string(m_senders.size()) + " sending queue pairs",
        s.run.sample_us > 0 ? "run.sample_us" : "fault.sample_us", samples * m_senders.size() * sizeof(qp_sample)}});
  m_last_placed.assign(m_senders.size(), 0);
  bool window_open = s.run.warmup_us == 0;
  picoseconds next_sample = m_sample_period.value > 0 ? m_sample_period : picoseconds{UINT64_MAX};
  const picoseconds end = picoseconds::from_ns(m_run_end_us * 1e3);
  // Progress: slices of simulated time sized to about progress_interval_s of wall time each (doubled or
  // halved after each slice), so the line is redrawn a few times a second. A slice is one more stop like a
  // sample's: no model event.
  if (m_opts.progress && !so().distributed())
    m_progress.emplace(*m_opts.progress, m_opts.progress_interval_s, m_opts.progress_delay_s);
  for (bool first = true;; first = false) {
    const picoseconds now = core::now();
    if (now >= end) break;
    if (!first && s.run.duration_us == 0 && !so().pending()) break;
    picoseconds stop = next_stop(end, next_sample);
    if (!window_open) stop = std::min(stop, warmup_end);
    const auto slice_wall0 = std::chrono::steady_clock::now();
    // sc_start to `stop`; starving, the kernel leaves the clock short of `stop` when the next event lies
    // beyond it: while anything is pending, it is moved on to `stop` (no event is added) so that the stop
    // happens at its time. Under mpirun the ranks advance in lookahead windows (testbench/scale_out.h).
    so().start(stop, m_policy);
    if (m_progress) report_progress(slice_wall0);
    const bool reached = core::now() >= stop;
    if (!window_open && reached && stop == warmup_end) {
      open_window();
      window_open = true;
    }
    if (reached && stop == next_sample) {
      take_sample();
      next_sample = next_sample + m_sample_period;
    }
    if (!reached) {
      if (!window_open) {  // went idle before the warm-up ended
        open_window();
        window_open = true;
      }
      if (!so().pending()) break;
    }
  }
  // The loop's wall time (docs/report.md `wall_time_s`): the merge, the RTL log and the CSV are not in it.
  m_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_wall0).count();
  if (m_progress) m_progress->finish();
  // Host memory, before the report (and, under mpirun, the merge) add the whole fabric's statistics.
  m_peak_rss_mib = scale_out::peak_rss_mib();
  so().merge_statistics();  // under mpirun: every rank's counters, the whole fabric's on rank 0
  m_setup->flush_rtl_log();
  if (!s.run.timeseries_csv.empty()) write_timeseries_csv(s, so(), fab(), m_senders, m_samples);
  m_sim_end = core::now();
  m_window_start = std::min(picoseconds::from_ns(s.run.warmup_us * 1e3), m_sim_end);
}

// The next stop of the run loop, the warm-up's end aside: the end, the next sample, or a progress slice's end.
picoseconds flow_run::next_stop(picoseconds end, picoseconds next_sample) {
  const picoseconds now = core::now();
  picoseconds stop = std::min(end, next_sample);
  if (!m_progress) return stop;
  // Running until the work is done, the kernel does not advance an idle clock to the end of a slice: a
  // slice shorter than the gap to the next event would stop where it started, forever. Reach that event.
  uint64_t slice = m_progress_slice_ps;
  if (m_policy == sc_core::SC_EXIT_ON_STARVATION) {
    const sc_core::sc_time gap = sc_core::sc_time_to_pending_activity();
    if (gap < sc_core::sc_max_time()) slice = std::max<uint64_t>(slice, core::from_sc_time(gap).value);
  }
  if (slice < end.value - now.value) stop = std::min(stop, picoseconds{now.value + slice});
  return stop;
}

void flow_run::report_progress(std::chrono::steady_clock::time_point slice_wall0) {
  const auto wall = std::chrono::steady_clock::now();
  const double slice_s = std::chrono::duration<double>(wall - slice_wall0).count();
  if (slice_s < m_opts.progress_interval_s / 2 && m_progress_slice_ps < UINT64_MAX / 4)
    m_progress_slice_ps *= 2;
  else if (slice_s > m_opts.progress_interval_s && m_progress_slice_ps > 1000)
    m_progress_slice_ps /= 2;
  progress_state st;
  st.simulated_ns = core::now().ns();
  st.planned_ns = m_run_end_us * 1e3;
  st.until_done = m_s.run.duration_us == 0;
  st.wall_s = std::chrono::duration<double>(wall - m_wall0).count();
  st.packet_hops = m_setup->ctx.packet_hops;
  m_progress->update(st);
}

// Completions and byte-exact verification of every completed operation: after a WRITE or SEND the
// responder's buffer equals the requester's source, after a READ the requester's buffer equals the
// responder's source (the same two buffers compared).
void flow_run::verify() {
  collect_outcomes();
  verify_flows();
}

void flow_run::collect_outcomes() {
  m_results.assign(m_writes.size(), {});
  for (size_t k = 0; k < fab().hosts().size(); ++k) {
    topology::host& h = fab().hosts()[k];
    if (!h.built() || m_beside_host[k]) continue;  // another rank's (merged below), or not a flow's
    for (const nic::completion& c : h.nic->completions()) m_results.at(c.wr_id).requester = &c;
  }
  std::map<std::pair<size_t, uint64_t>, const nic::placed_message*> placed;  // (host, address) -> message
  for (size_t h = 0; h < fab().hosts().size(); ++h)
    if (fab().hosts()[h].built())
      for (const nic::placed_message& m : fab().hosts()[h].nic->placed()) placed[{h, m.va}] = &m;
  for (size_t i = 0; i < m_writes.size(); ++i) {
    auto it = placed.find({m_writes[i].dst, m_writes[i].dst_addr});
    if (it != placed.end() && it->second->bytes == m_writes[i].bytes) m_results[i].responder = it->second;
  }
  if (so().distributed()) {  // the requester's completion from its rank, the responder's record from its
    std::vector<std::pair<size_t, size_t>> ends;
    std::vector<const nic::completion*> req;
    std::vector<const nic::placed_message*> resp;
    for (size_t i = 0; i < m_writes.size(); ++i) {
      ends.push_back({m_writes[i].src, m_writes[i].dst});
      req.push_back(m_results[i].requester);
      resp.push_back(m_results[i].responder);
    }
    so().merge_outcomes(ends, req, resp);
    for (size_t i = 0; i < m_writes.size(); ++i) m_results[i] = {req[i], resp[i]};
  }
  collect_byte_checks();
}

// Bytes compared as they landed (a READ's at the requester), by the rank that simulated that host; in dense
// memory, a completed operation's buffer read back as well (a byte wrong there counts once, at the larger).
void flow_run::collect_byte_checks() {
  const size_t n = m_writes.size();
  m_mismatches.assign(n, 0);
  m_checked.assign(n, 0);
  m_duplicates.assign(n, 0);
  m_past_end.assign(n, 0);
  std::vector<uint64_t> stray(1, 0);
  if (m_scoreboard) {
    for (size_t i = 0; i < n; ++i) {
      const memory::region_check& c = m_scoreboard->check(i);
      m_mismatches[i] = c.mismatched;
      m_checked[i] = c.checked;
      m_duplicates[i] = c.duplicate;
      m_past_end[i] = c.past_end;
    }
    stray[0] = m_scoreboard->stray_bytes();
  }
  for (size_t i = 0; i < n && m_scoreboard && !m_generated; ++i) {
    const planned_write& w = m_writes[i];
    if (m_results[i].requester == nullptr || !so().owns_host(w.to())) continue;
    const uint64_t wrong = m_pattern->mismatches(fab().hosts()[w.to()].mem->data() + w.to_addr(), uint32_t(w.from()),
                                                 w.from_addr(), w.bytes);
    m_mismatches[i] = std::max(m_mismatches[i], wrong);
  }
  if (so().distributed()) {
    so().sum(m_mismatches);
    so().sum(m_checked);
    so().sum(m_duplicates);
    so().sum(m_past_end);
    so().sum(stray);
  }
  m_stray_bytes = stray[0];
}

// The `flows` array and the verdict. A run cut off at run.duration_us leaves long operations unfinished by
// design: those are neither compared nor held against the verdict, which then covers the operations that
// completed; a run that compared no byte at all is not verified (docs/report.md, "How `verified` is decided").
void flow_run::verify_flows() {
  // nic.placement pcie: when each operation's message reached GPU memory (ps + 1; 0: not there), from the
  // destination's tray on the rank that simulates it.
  std::vector<uint64_t> gpu_landed(m_writes.size(), 0);
  {
    std::map<std::pair<size_t, uint64_t>, const pcie::landed_message*> by_address;
    for (size_t h = 0; h < fab().hosts().size(); ++h)
      if (fab().hosts()[h].tray)
        for (const pcie::landed_message& m : fab().hosts()[h].tray->landed()) by_address[{h, m.va}] = &m;
    for (size_t i = 0; i < m_writes.size(); ++i) {
      auto it = by_address.find({m_writes[i].to(), m_writes[i].to_addr()});
      if (it != by_address.end()) gpu_landed[i] = it->second->landed_at.value + 1;
    }
    so().sum(gpu_landed);  // under mpirun: each destination's rank fills its own
  }
  m_verified = m_data_checked;
  const bool time_limited = m_s.run.duration_us > 0;
  for (size_t i = 0; i < m_writes.size(); ++i) {
    const planned_write& w = m_writes[i];
    const nic::completion* c = m_results[i].requester;
    const bool finished = c != nullptr;  // successfully or in error
    const uint64_t mismatched = m_mismatches[i];
    m_mismatched_bytes_total += mismatched;
    m_checked_bytes_total += m_checked[i];
    m_duplicate_bytes_total += m_duplicates[i];
    m_past_end_total += m_past_end[i];
    const bool clean = mismatched == 0 && m_past_end[i] == 0;  // of what landed, finished or not
    const bool done = finished && c->status == nic::completion_status::success;
    // A completed operation's bytes that never landed: what its buffer would hold of its source is not there.
    const uint64_t missing = done && m_data_checked ? w.bytes - std::min(w.bytes, m_checked[i]) : 0;
    m_missing_total += missing;
    m_completed += done;
    m_failed += finished && !done;
    // A READ is placed at the requester: its completion is the proof of placement.
    const bool placed_ok = m_results[i].responder != nullptr || w.op == nic::rdma_op::read;
    const bool ok = m_data_checked && done && placed_ok && m_checked[i] == w.bytes && clean;
    ++m_op_counts[nic::to_string(w.op)];
    // A run cut short holds unfinished operations against the verdict only for what of them landed wrong.
    m_verified = m_verified && (ok || (time_limited && !finished && clean));
    nlohmann::json f;
    f["id"] = i;
    f["src"] = fab().hosts()[w.src].name;
    f["dst"] = fab().hosts()[w.dst].name;
    f["bytes"] = w.bytes;
    f["op"] = nic::to_string(w.op);
    f["posted_ns"] = w.post_at.ns();
    f["completed"] = done;
    f["status"] = finished ? nic::to_string(c->status) : "incomplete";
    if (finished) f["retransmitted_packets"] = c->retransmitted_packets;
    if (done) {
      const double fct_ns = (c->completed_at - w.post_at).ns();
      f["completed_ns"] = c->completed_at.ns();
      f["fct_ns"] = fct_ns;
      f["goodput_gbps"] = fct_ns > 0 ? double(w.bytes) * 8.0 / fct_ns : 0.0;
      // A flow's throughput is a fraction of its requester's line rate.
      const double line_bps = double(fab().hosts()[w.src].line_rate.value);
      const double throughput = fct_ns > 0 ? double(w.bytes) * 8.0 / (fct_ns * 1e-9) / line_bps : 0.0;
      f["throughput"] = throughput;
      m_flow_throughputs.push_back(throughput);
    }
    if (m_results[i].responder) f["placed_ns"] = m_results[i].responder->placed_at.ns();
    // nic.placement pcie: when the last byte reached GPU memory (bounce: when its copy finished).
    if (gpu_landed[i] != 0) f["gpu_landed_ns"] = core::picoseconds(gpu_landed[i] - 1).ns();
    f["checked_bytes"] = m_checked[i];
    f["mismatched_bytes"] = mismatched;
    f["duplicate_bytes"] = m_duplicates[i];
    f["past_end_bytes"] = m_past_end[i];
    f["missing_bytes"] = missing;
    f["verified"] = ok;
    m_flows.push_back(std::move(f));
  }
  m_verified = m_verified && m_stray_bytes == 0 && m_checked_bytes_total > 0;
}

// nic.placement pcie: per host with a tray, what reached GPU memory and how fast (docs/report.md, `pcie`).
// Under mpirun each rank reports the trays it simulates, and the entries are put back in host order.
nlohmann::json flow_run::pcie_report() {
  topology::fabric& fabric = fab();
  nlohmann::json mine = nlohmann::json::array();  // [host index, entry] of this rank's trays
  for (size_t h = 0; h < fabric.hosts().size(); ++h) {
    const topology::host& host = fabric.hosts()[h];
    if (!host.tray) continue;
    const auto& landed = host.tray->landed();
    uint64_t bytes = 0;
    core::picoseconds last{};
    for (const pcie::landed_message& m : landed) {
      bytes += m.bytes;
      last = std::max(last, m.landed_at);
    }
    // From the first operation towards this host being posted to its last byte in GPU memory.
    core::picoseconds first{UINT64_MAX};
    for (const planned_write& w : m_writes)
      if (w.to() == h) first = std::min(first, w.post_at);
    const double span_ns = landed.empty() || last < first ? 0.0 : (last - first).ns();
    nlohmann::json t;
    t["host"] = host.name;
    t["data_path"] = m_s.pcie.data_path;
    t["messages_landed"] = landed.size();
    t["bytes_landed"] = bytes;
    t["first_posted_ns"] = landed.empty() ? 0.0 : first.ns();
    t["last_landed_ns"] = last.ns();
    t["gpu_goodput_gbps"] = span_ns > 0 ? double(bytes) * 8.0 / span_ns : 0.0;
    // Sustained: the bytes of every message after the first over the time between the first's landing and
    // the last's (the pipeline's fill and the first message's latency left out).
    const double between_ns = landed.size() > 1 ? (last - landed.front().landed_at).ns() : 0.0;
    t["gpu_sustained_gbps"] = between_ns > 0 ? double(bytes - landed.front().bytes) * 8.0 / between_ns : 0.0;
    t["first_message_latency_ns"] = landed.empty() ? 0.0 : (landed.front().landed_at - landed.front().issued_at).ns();
    t["peak_in_flight_bytes"] = host.tray->peak_in_flight();
    t["rx_buffer_drops"] = m_setup->ctx.stats.counter_value(host.nic->name(), "rx_buffer_drops");
    t["cpu_link_down_payload_bytes"] = host.tray->pcie().port("cpu").down.payload_bytes();
    t["cpu_link_up_payload_bytes"] = host.tray->pcie().port("cpu").up.payload_bytes();
    t["host_memory_bytes"] = host.tray->root().host_memory.bytes_written() + host.tray->root().host_memory.bytes_read();
    t["nic_read_bytes"] = host.tray->nic_read_bytes();
    t["send_copy_bytes"] = host.tray->send_copy_bytes();
    t["cpu_link_down_tlps"] = host.tray->pcie().port("cpu").down.tlps();
    t["cpu_link_up_tlps"] = host.tray->pcie().port("cpu").up.tlps();
    mine.push_back({h, std::move(t)});
  }
  std::map<size_t, nlohmann::json> by_host;
  for (nlohmann::json& rank : so().gather(mine))
    for (nlohmann::json& e : rank) by_host[e[0].get<size_t>()] = std::move(e[1]);
  nlohmann::json out;
  for (auto& [h, t] : by_host) out.push_back(std::move(t));
  return out;
}

nlohmann::json flow_run::report() {
  const scenario& s = m_s;
  core::sim_context& ctx = m_setup->ctx;
  // The whole fabric's statistics are on rank 0 only (scale_out::merge_statistics), which writes the report.
  const bool writes_report = so().rank() == 0;
  nlohmann::json ports = writes_report ? link_ports_report(fab(), ctx, m_sim_end) : nlohmann::json::array();

  nlohmann::json r;
  add_run_header(r, s, m_opts, ctx, m_sim_end, m_wall_s);
  r["peak_rss_mib"] = m_peak_rss_mib;
  r["operations"] = m_writes.size();
  r["op_counts"] = m_op_counts;
  r["completed"] = m_completed;
  r["failed"] = m_failed;
  r["verified"] = m_verified;
  nlohmann::json trays = pcie_report();
  if (!trays.is_null()) r["pcie"] = std::move(trays);
  r["time_limited"] = s.run.duration_us > 0;
  r["data_checked"] = m_data_checked;
  r["mismatched_bytes"] = m_mismatched_bytes_total;
  r["checked_bytes"] = m_checked_bytes_total;
  r["duplicate_bytes"] = m_duplicate_bytes_total;
  r["past_end_bytes"] = m_past_end_total;
  r["missing_bytes"] = m_missing_total;
  r["stray_bytes"] = m_stray_bytes;
  r["memory"] = m_generated ? "generated" : "dense";
  {
    // Every counter is registered by now (under mpirun: merged, on rank 0): the figures are sums and maxima
    // over the instances that have each counter (stats_registry::counter_total, counter_max).
    // Every NIC's `placed_bytes` counter (under mpirun merged over the ranks): payload the responders placed,
    // and the requesters' READ responses, whether or not their operation completed.
    r["placed_bytes"] = ctx.stats.counter_total("placed_bytes");
    r["dropped_packets"] = ctx.stats.counter_total("dropped");
    r["fabric"] =
        fabric_summary(ctx, fab(), m_writes, m_window_start, m_sim_end, m_placed_at_window_start, m_flow_throughputs);
    const size_t convergence_samples =
        s.run.sample_us > 0 ? std::max<size_t>(1, size_t(std::llround(s.run.convergence_window_us / s.run.sample_us)))
                            : 0;
    // What each sender delivered and the bottleneck's queue integral, from the rank that simulated the
    // responder (one process: this one).
    std::vector<double> at_end(m_senders.size() + 1, 0.0);
    for (size_t k = 0; k < m_senders.size(); ++k)
      if (so().owns_host(m_senders[k].dst))
        at_end[k] = double(fab().hosts()[m_senders[k].dst].nic->qp_state(m_senders[k].rq).placed_bytes);
    if (m_bottleneck) at_end.back() = (*m_bottleneck)();  // at m_sim_end (now), where its leaf is built
    if (so().distributed()) so().sum(at_end);
    for (size_t k = 0; k < m_senders.size(); ++k) m_senders[k].placed_at_end = uint64_t(at_end[k]);
    congestion_figures(r["fabric"], ctx, fab(), so(), m_senders, m_samples, m_window_start, m_sim_end,
                       m_queue_byte_ps_at_window_start, at_end.back(), convergence_samples);
    fault_set& faults = m_setup->faults();
    if (!faults.empty()) faults.merge(so());  // under mpirun: every rank's fault counters (a collective)
    if (!faults.empty())
      r["faults"] = faults.report(m_sim_end, m_delivered, ctx.stats.counter_total("tx_retransmitted"));
  }
  r["flows"] = std::move(m_flows);
  add_fct_report(s, r);  // flows[].ideal_fct_ns and slowdown, and the `fct` object (testbench/fct_report.h)
  r["ports"] = std::move(ports);
  r["stats"] = writes_report ? ctx.stats.to_json() : nlohmann::json::object();
  r["stat_descriptions"] = writes_report ? ctx.stats.descriptions_json() : nlohmann::json::object();
  r["packets_in_use_at_end"] = so().distributed() ? so().sum(ctx.pool.in_use()) : ctx.pool.in_use();
  if (so().distributed()) r["scale_out"] = so().report();
  m_setup->taps().close();
  r["taps"] = m_setup->taps().to_json();
  for (co_workload* c : m_opts.beside) c->finish(*m_setup, m_sim_end);
  return r;
}

}  // namespace

nlohmann::json run_flows(const scenario& s, const run_options& opts) {
  flow_run run(s, opts);
  run.plan();
  // The phases around the loop, on a terminal: a line while each runs, kept when it took seconds (the loop
  // draws its own progress line).
  std::ostream* phases = phase_stream(opts);
  const double delay_s = opts.progress_delay_s;
  {
    phase_progress p(phases,
                     fmt::format("set-up: {} hosts, {} switch{}", s.topology.host_count(), s.topology.switch_count(),
                                 s.topology.switch_count() == 1 ? "" : "es"),
                     delay_s);
    run.wire();
  }
  if (opts.elaborate_only) return nlohmann::json::object();
  try {
    run.run();
  } catch (...) {
    nic::rethrow_rtl_divergence(run.lockstep());  // a lockstep pair stopped the run: say so, by type
    throw;
  }
  {
    phase_progress p(phases, "verification", delay_s);
    run.verify();
  }
  phase_progress p(phases, "report", delay_s);
  return run.report();
}

}  // namespace fabricsim::testbench
