// One scenario run across several processes.
#include "testbench/scale_out.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sc_models/core/params.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "testbench/nvlink_run.h"
#include "testbench/simulation.h"

namespace fabricsim::testbench {

namespace {
// The program's start, as near as a static initialiser gets to it: a rank's set-up time counts from here.
const std::chrono::steady_clock::time_point k_program_start = std::chrono::steady_clock::now();

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

double scale_out::thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

void check_scale_out_supported(const scenario& s, const run_options& /*opts*/) {
  mpi::world& w = mpi::world::get();
  if (!w.distributed()) return;
  const std::string ranks = std::to_string(w.size());
  auto refuse = [&](const std::string& what) {
    throw core::config_error(s.source + ": " + what + " is not cut across processes yet: run it in one process, "
                             "not " + ranks + " MPI ranks (docs/scale_out.md)");
  };
  // Collectives are cut on Spectrum and Quantum fabrics, SHARP's aggregation trees included (docs/scale_out.md).
  // A training step is cut on a flat fabric (training.comm_backend fabric) and on a system preset (the cluster
  // backend: phase ends summed at window ends, testbench/training_cluster.h).
  // On a system preset the NVLink domain is the unit of partition (testbench/cluster_part.h): the hierarchical
  // allreduce (a ring or SHARP across the rails) and the hierarchical alltoall are cut. A collective inside the
  // NVLink domains alone runs each rank's domains apart (nothing crosses; testbench/nvlink_run.cpp): every rank
  // needs a domain.
  if (runs_in_nvlink_domains(s) && s.nvlink.domains < uint64_t(w.size())) {
    std::string key = "nvlink.domains";  // topology.kind nvl72; on a preset, its count of racks or nodes
    if (s.topology.kind != "nvl72")
      key = s.system.preset.find("nvl72") != std::string::npos ? "system.racks" : "system.nodes";
    throw core::config_error(fmt::format(
        "{}: {} {}: a collective inside the NVLink domains alone (collective.algo {}) is cut across MPI ranks with "
        "the domain as the unit, and no link joins two domains, so {} ranks would leave {} of them with nothing to "
        "simulate: run it on at most {} rank{} (mpirun -n, --ranks), or set {} to at least {} (docs/scale_out.md)",
        s.source, key, s.nvlink.domains, s.collective.algo, w.size(), uint64_t(w.size()) - s.nvlink.domains,
        s.nvlink.domains, s.nvlink.domains == 1 ? "" : "s", key, w.size()));
  }
  if (s.switch_model.name != "spectrum4" && s.switch_model.name != "quantum_x800")
    refuse("switch.model " + s.switch_model.name);
  // A credit update crossing ranks must arrive beyond the lookahead (the shortest crossing cable): the cable's
  // latency plus a positive update latency is.
  if (s.switch_model.name == "quantum_x800" && !(s.quantum.credit.update_latency_ns > 0))
    throw core::config_error(s.source + ": quantum.credit_update_latency_ns is 0: under " + ranks +
                             " MPI ranks a credit update must take longer than the cable it crosses (set it "
                             "above 0, or run in one process; docs/scale_out.md)");
  if (!s.partition.empty() && s.partition.size() != size_t(w.size()))
    throw core::config_error(s.source + ": partition lists " + std::to_string(s.partition.size()) +
                             " ranks, but this run has " + ranks + " MPI ranks: run it with mpirun -n " +
                             std::to_string(s.partition.size()) + " (or --ranks " +
                             std::to_string(s.partition.size()) + "), or change the partition");
  // --tap, run.sample_us, run.timeseries_csv and run.warmup_us are cut (docs/scale_out.md).
}

void check_collective_lookahead(const scenario& s, scale_out& so, const std::vector<std::pair<size_t, size_t>>& staged,
                                const std::string& barrier_why) {
  if (!so.distributed()) return;
  const core::picoseconds look = so.lookahead();
  if (look.value == UINT64_MAX) return;  // nothing crosses: the runs refuse that once the fabric is built
  auto too_short = [&](const char* key, double ns, const std::string& why) {
    throw core::config_error(
        fmt::format("{}: collective.{} {} ns is below the {} ns lookahead of this {}-rank "
                    "partition ({}): set collective.{} to at least {} (docs/scale_out.md), or "
                    "run it in one process",
                    s.source, key, ns, look.ns(), so.ranks(), why, key, look.ns()));
  };
  if (core::picoseconds::from_ns(s.collective.barrier_ns) < look)
    too_short("barrier_ns", s.collective.barrier_ns, barrier_why);
  bool crossing = false;
  for (const auto& [src_host, dst_host] : staged)
    crossing = crossing || so.host_rank(src_host) != so.host_rank(dst_host);
  if (crossing && core::picoseconds::from_ns(s.collective.credit_ns) < look)
    too_short("credit_ns", s.collective.credit_ns, "a reducing connection's slot credits cross processes");
}

link_filter scale_out::tap_filter() const {
  if (!distributed()) return {};
  // A frame leaves a link (link::transmit, where the tap observes it) only on its transmitter's rank; a
  // crossing link hands it to the receiving rank's copy after that, through link::inject, which no observer
  // sees.
  std::vector<bool> here(m_part.ends().size());
  for (size_t k = 0; k < here.size(); ++k) here[k] = m_part.tx_rank(k) == rank();
  return [here](size_t link) { return here.at(link); };
}

double scale_out::from_owner(double v) {
  std::vector<double> one{v};
  from_owner(one);
  return one[0];
}

void scale_out::from_owner(std::vector<double>& v) {
  if (!distributed()) return;
  std::vector<uint64_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));  // +0.0 is all zero bits
  sum(bits);
  std::memcpy(v.data(), bits.data(), v.size() * sizeof(double));
}

scale_out::scale_out(const topology::fabric_layout& layout, const std::vector<std::vector<std::string>>& placed)
    : m_world(mpi::world::get()), m_part(layout, m_world.size(), placed) {}

std::vector<bool> scale_out::built() const {
  return distributed() ? m_part.built_by(rank()) : std::vector<bool>{};
}

scale_out::attachment scale_out::attach(topology::fabric& fab, core::sim_context& ctx, bool ship_payload) {
  m_ctx = &ctx;
  m_exchange = std::make_unique<mpi::link_exchange>(m_world, m_part, fab, ctx, ship_payload);
  m_merge.take_bases(ctx.stats, m_part);
  return attachment(*this);
}

void scale_out::attach_apart(core::sim_context& ctx) {
  m_ctx = &ctx;
  m_merge.take_bases(ctx.stats, m_part);
}

void scale_out::run_apart(core::picoseconds stop, sc_core::sc_starvation_policy policy) {
  if (!m_loop_begun) {
    m_loop_begin = std::chrono::steady_clock::now();
    m_loop_begin_cpu_s = thread_cpu_s();
  }
  m_loop_begun = true;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  if (stop > core::now()) sc_core::sc_start(core::to_sc_time(stop - core::now()), policy);
  if (!distributed()) return;
  const auto t1 = std::chrono::steady_clock::now();
  m_apart.busy_s += seconds(t1 - t0);
  m_apart.busy_cpu_s += thread_cpu_s() - cpu0;
  // Starving, one kernel stops at the last event of any domain (running to a time, at `stop` on every rank).
  const uint64_t until = m_world.max(core::now().value);
  m_apart.wait_s += seconds(std::chrono::steady_clock::now() - t1);
  if (until > core::now().value)
    sc_core::sc_start(core::to_sc_time(core::picoseconds(until) - core::now()), sc_core::SC_RUN_TO_TIME);
  ++m_apart.windows;
  ++m_apart.collectives;
  m_apart.loop_s += seconds(std::chrono::steady_clock::now() - t0);
}

std::vector<nlohmann::json> scale_out::gather(const nlohmann::json& mine) {
  if (!distributed()) return {mine};
  const std::string text = mine.dump();
  std::vector<nlohmann::json> all;
  for (const auto& b : m_world.all_gather_v(std::vector<uint8_t>(text.begin(), text.end())))
    all.push_back(nlohmann::json::parse(b.begin(), b.end()));
  return all;
}

double scale_out::peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // "VmHWM:   123456 kB"
  return 0.0;
}

void scale_out::merge_statistics() {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_s();
  m_peak_rss_mib = peak_rss_mib();
  m_local_hops = m_ctx->packet_hops;
  m_local_events = m_ctx->events;
  if (!distributed()) return;
  // Only rank 0 writes the report: the whole fabric's statistics are gathered there alone, so that the
  // other ranks' memory stays their share of the fabric (their own entries keep their own values).
  const std::vector<std::vector<uint8_t>> records = m_world.gather_v(m_merge.pack(m_ctx->stats, m_part, rank()));
  if (rank() == 0) m_adopted = m_merge.merge(m_ctx->stats, records);
  // Hops and kernel wake-ups: every rank counts its own (a time at which several ranks have arrivals wakes
  // each of them, so `events` is the sum of the ranks' wake-ups).
  m_ctx->packet_hops = sum(m_ctx->packet_hops);
  m_ctx->events = sum(m_ctx->events);
  m_merge_end = std::chrono::steady_clock::now();
  m_merge_s = seconds(m_merge_end - t0);
  m_merge_end_cpu_s = thread_cpu_s();
  m_merge_cpu_s = m_merge_end_cpu_s - cpu0;
  m_peak_rss_after_merge_mib = peak_rss_mib();
}

void scale_out::merge_outcomes(const std::vector<std::pair<size_t, size_t>>& hosts,
                               std::vector<const nic::completion*>& req,
                               std::vector<const nic::placed_message*>& resp) {
  if (!distributed()) return;
  // Per operation: present, then the fields, as integers; only the owning rank fills its half.
  constexpr size_t k_req = 9, k_resp = 6, k_row = k_req + k_resp;
  std::vector<uint64_t> rows(hosts.size() * k_row, 0);
  for (size_t i = 0; i < hosts.size(); ++i) {
    uint64_t* row = &rows[i * k_row];
    if (owns_host(hosts[i].first) && req[i]) {
      const nic::completion& c = *req[i];
      const uint64_t v[k_req] = {1, c.wr_id, c.qpn, c.bytes, c.posted_at.value, c.completed_at.value,
                                 uint64_t(c.status), c.retransmitted_packets, uint64_t(c.op)};
      std::memcpy(row, v, sizeof v);
    }
    if (owns_host(hosts[i].second) && resp[i]) {
      const nic::placed_message& m = *resp[i];
      const uint64_t v[k_resp] = {1, m.qpn, m.va, m.bytes, m.first_arrival.value, m.placed_at.value};
      std::memcpy(row + k_req, v, sizeof v);
    }
  }
  sum(rows);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const uint64_t* row = &rows[i * k_row];
    req[i] = nullptr;
    resp[i] = nullptr;
    if (row[0]) {
      nic::completion c{};
      c.wr_id = row[1];
      c.qpn = uint32_t(row[2]);
      c.bytes = row[3];
      c.posted_at = core::picoseconds(row[4]);
      c.completed_at = core::picoseconds(row[5]);
      c.status = nic::completion_status(row[6]);
      c.retransmitted_packets = row[7];
      c.op = nic::rdma_op(row[8]);
      m_completions.push_back(c);
      req[i] = &m_completions.back();
    }
    if (row[k_req]) {
      const uint64_t* m = row + k_req;
      m_placed.push_back({uint32_t(m[1]), m[2], m[3], core::picoseconds(m[4]), core::picoseconds(m[5])});
      resp[i] = &m_placed.back();
    }
  }
}

nlohmann::json scale_out::report() {
  const double report_s = seconds(std::chrono::steady_clock::now() - m_merge_end);
  const double report_cpu_s = thread_cpu_s() - m_merge_end_cpu_s;
  nlohmann::json j;
  j["ranks"] = m_world.size();
  j["cross_links"] = m_part.cross_links();
  j["lookahead_ns"] = m_part.cross_links() ? nlohmann::json(m_part.lookahead().ns()) : nlohmann::json(nullptr);
  j["hosts_per_rank"] = m_part.hosts_per_rank();
  j["switches_per_rank"] = m_part.switches_per_rank();
  const mpi::link_exchange::rank_profile& p = m_exchange ? m_exchange->profile() : m_apart;
  j["windows"] = p.windows;
  j["frames_exchanged"] = sum(p.frames_sent);
  j["bytes_exchanged"] = sum(p.bytes_sent);
  j["credits_exchanged"] = sum(p.credits_sent);
  // Per window, summed over the ranks: messages (one from every rank to every other) and bytes; and the
  // protocol's calls every rank made (each a meeting of the ranks).
  const double windows = double(std::max<uint64_t>(p.windows, 1));
  j["messages_per_window"] = double(sum(p.messages_sent)) / windows;
  j["bytes_per_window"] = double(j["bytes_exchanged"].get<uint64_t>()) / windows;
  j["collectives_per_window"] = double(p.collectives) / windows;
  // Where each rank's time went (wall-clock figures differ run to run and with the machine's load;
  // busy_cpu_s and the counts do not), every rank's value in rank order.
  const size_t n = size_t(m_world.size());
  auto each_d = [&](double v) {
    std::vector<double> a(n, 0.0);
    a[size_t(rank())] = v;
    sum(a);
    return a;
  };
  auto each_u = [&](uint64_t v) {
    std::vector<uint64_t> a(n, 0);
    a[size_t(rank())] = v;
    sum(a);
    return a;
  };
  nlohmann::json t;
  // Around the loop (wall time, and this thread's CPU time, which a shared machine does not inflate; a rank
  // waiting for another at a collective spins, which counts as CPU time).
  t["setup_s"] = each_d(seconds(m_loop_begin - k_program_start));
  t["setup_cpu_s"] = each_d(m_loop_begin_cpu_s);
  t["loop_s"] = each_d(p.loop_s);
  t["merge_s"] = each_d(m_merge_s);
  t["merge_cpu_s"] = each_d(m_merge_cpu_s);
  t["report_s"] = each_d(report_s);
  t["report_cpu_s"] = each_d(report_cpu_s);
  t["busy_s"] = each_d(p.busy_s);
  t["busy_cpu_s"] = each_d(p.busy_cpu_s);
  t["pack_s"] = each_d(p.pack_s);
  t["wait_s"] = each_d(p.wait_s);
  t["exchange_s"] = each_d(p.exchange_s);
  t["unpack_s"] = each_d(p.unpack_s);
  t["unpack_cpu_s"] = each_d(p.unpack_cpu_s);
  t["hook_s"] = each_d(p.hook_s);
  t["frames_sent"] = each_u(p.frames_sent);
  t["frames_received"] = each_u(p.frames_received);
  t["bytes_sent"] = each_u(p.bytes_sent);
  t["bytes_received"] = each_u(p.bytes_received);
  t["packet_hops"] = each_u(m_local_hops);
  t["events"] = each_u(m_local_events);
  j["per_rank"] = t;
  // The share of each rank's loop not spent simulating (waiting and exchanging at window ends).
  std::vector<double> wait = t["loop_s"].get<std::vector<double>>();
  const std::vector<double> busy = t["busy_s"].get<std::vector<double>>();
  for (size_t r = 0; r < n; ++r) wait[r] = wait[r] > 0 ? (wait[r] - busy[r]) / wait[r] : 0.0;
  j["wait_share_per_rank"] = wait;
  j["peak_rss_mib_per_rank"] = each_d(m_peak_rss_mib);
  j["peak_rss_after_merge_mib_per_rank"] = each_d(m_peak_rss_after_merge_mib);
  j["statistics_adopted"] = m_adopted;  // rank 0: entries of blocks other ranks simulated
  return j;
}

std::string scale_out_lines(const nlohmann::json& report) {
  if (!report.contains("scale_out")) return {};
  const nlohmann::json& so = report["scale_out"];
  const nlohmann::json& t = so["per_rank"];
  std::string out = fmt::format(
      "scale-out: {} ranks, {} crossing links, lookahead {} ns, {} windows, {:.1f} messages, {:.0f} bytes and {:.1f} "
      "collectives per window\n",
      so["ranks"].get<int>(), so["cross_links"].get<uint64_t>(), so["lookahead_ns"].dump(),
      so["windows"].get<uint64_t>(), so["messages_per_window"].get<double>(), so["bytes_per_window"].get<double>(),
      so["collectives_per_window"].get<double>());
  out += fmt::format("{:>5} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>11} {:>11} {:>11} {:>8} {:>8} {:>8}\n",
                     "rank", "busy_cpu_s", "busy_s", "pack_s", "wait_s", "exch_s", "unpack_s", "hook_s", "loop_s",
                     "packet_hops", "frames_out", "frames_in", "setup_s", "merge_s", "report_s");
  for (size_t r = 0; r < so["hosts_per_rank"].size(); ++r)
    out += fmt::format(
        "{:>5} {:>10.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>11} {:>11} {:>11} {:>8.3f} "
        "{:>8.3f} {:>8.3f}\n",
        r, t["busy_cpu_s"][r].get<double>(), t["busy_s"][r].get<double>(), t["pack_s"][r].get<double>(),
        t["wait_s"][r].get<double>(), t["exchange_s"][r].get<double>(), t["unpack_s"][r].get<double>(),
        t["hook_s"][r].get<double>(), t["loop_s"][r].get<double>(), t["packet_hops"][r].get<uint64_t>(),
        t["frames_sent"][r].get<uint64_t>(), t["frames_received"][r].get<uint64_t>(), t["setup_s"][r].get<double>(),
        t["merge_s"][r].get<double>(), t["report_s"][r].get<double>());
  return out;
}

}  // namespace fabricsim::testbench
