// One run of a collective: the fabric built, the engine run over it, the `collective` report.
#include "testbench/collective.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <systemc>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/block_lockstep.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_engine.h"
#include "testbench/fabric_setup.h"
#include "testbench/faults.h"
#include "testbench/memory_guard.h"
#include "testbench/progress.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/taps.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

namespace {

// The rows of the `collective` object, one per size (nccl-tests' columns), with the sum of wrong elements
// and the mean bus bandwidth over the sizes that completed.
struct size_rows {
  nlohmann::json rows = nlohmann::json::array();
  uint64_t wrong_total = 0;
  double busbw_sum = 0.0;
  size_t busbw_rows = 0;
};

size_rows collective_rows(const collective_params& p, const collective_engine& eng, bool checked) {
  size_rows out;
  const bool rooted = p.op == "broadcast";
  for (const size_result& res : eng.results()) {
    nlohmann::json row;
    row["size"] = res.bytes;
    row["requested_bytes"] = res.requested;
    row["count"] = res.count;
    row["type"] = p.dtype;
    row["redop"] = reduces(p.op) ? "sum" : "none";
    row["root"] = rooted ? int64_t(p.root) : int64_t(-1);
    row["completed"] = res.done;
    row["writes_per_iteration"] = res.writes;
    nlohmann::json sent = nlohmann::json::array();
    for (uint64_t b : res.sent_per_rank) sent.push_back(b);
    row["bytes_sent_per_rank"] = std::move(sent);
    if (res.done && !res.times.empty()) {
      double sum = 0.0;
      nlohmann::json iters = nlohmann::json::array();
      for (picoseconds t : res.times) {
        sum += t.us();
        iters.push_back(t.us());
      }
      const double time_us = sum / double(res.times.size());
      const double algbw = time_us > 0 ? double(res.bytes) / (time_us * 1e-6) / 1e9 : 0.0;  // GB/s
      row["time_us"] = time_us;
      row["iteration_times_us"] = std::move(iters);
      row["algbw_gbps"] = algbw;
      row["busbw_gbps"] = algbw * bus_factor(p.op, eng.ranks());
      out.busbw_sum += algbw * bus_factor(p.op, eng.ranks());
      ++out.busbw_rows;
    } else {
      row["time_us"] = nullptr;
      row["iteration_times_us"] = nlohmann::json::array();
      row["algbw_gbps"] = nullptr;
      row["busbw_gbps"] = nullptr;
    }
    row["wrong"] = checked ? nlohmann::json(res.wrong) : nlohmann::json(nullptr);
    out.wrong_total += res.wrong;
    out.rows.push_back(std::move(row));
  }
  return out;
}

// The `collective` object of the report (docs/collectives.md).
nlohmann::json collective_object(const scenario& s, collective_engine& eng, topology::fabric& fab,
                                 const std::vector<size_t>& rank_host, const std::vector<double>& rank_rate,
                                 size_rows rows) {
  const collective_params& p = s.collective;
  const bool finished = eng.finished();
  nlohmann::json c;
  c["op"] = p.op;
  c["algo"] = p.algo;
  c["dtype"] = p.dtype;
  c["ranks"] = eng.ranks();
  c["placement"] = p.placement;
  nlohmann::json placed_on = nlohmann::json::array();
  for (size_t h : rank_host) placed_on.push_back(fab.hosts()[h].name);
  c["rank_hosts"] = std::move(placed_on);
  c["iterations"] = p.iterations;
  c["warmup_iterations"] = p.warmup_iterations;
  c["chunk_bytes"] = p.chunk_bytes;
  c["buffer_slots"] = p.buffer_slots;
  c["reduce_gbps"] = p.reduce_gbps;
  c["bus_factor"] = bus_factor(p.op, eng.ranks());
  c["link_gbps"] = rank_rate[0] / 1e9;
  if (p.algo == "sharp") c["sharp"] = eng.sharp_report();
  c["completed"] = finished;
  c["unexpected_placements"] = eng.unexpected();
  c["placement_checked_bytes"] = eng.placement_checked_bytes();
  c["result_checked_bytes"] = eng.result_checked_bytes();
  c["avg_busbw_gbps"] =
      rows.busbw_rows ? nlohmann::json(rows.busbw_sum / double(rows.busbw_rows)) : nlohmann::json(nullptr);
  c["rows"] = std::move(rows.rows);
  if (!finished)
    c["stopped_at"] = {{"size_index", eng.current_size()},
                       {"iteration", eng.current_iteration()},
                       {"placed", eng.placed_in_iteration()},
                       {"writes", eng.transfers_in_iteration()}};
  return c;
}

// The `fabric` object of a collective run: the whole run is the window; the flow fields are empty. Every
// counter is registered by now (under mpirun: merged, on rank 0).
nlohmann::json collective_fabric(core::sim_context& ctx, picoseconds sim_end, const std::vector<double>& rank_rate,
                                 size_t ranks) {
  nlohmann::json fabric_j;
  const uint64_t delivered = ctx.stats.counter_total("placed_bytes");
  double rate_bps = 0.0;
  for (double rate : rank_rate) rate_bps += rate;
  const double window_s = double(sim_end.value) * 1e-12;
  uint64_t max_queue = ctx.stats.counter_max("max_queue_bytes");
  fabric_j["window_start_ns"] = 0.0;
  fabric_j["window_end_ns"] = sim_end.ns();
  fabric_j["delivered_payload_bytes"] = delivered;
  fabric_j["senders"] = ranks;
  fabric_j["effective_throughput"] = window_s > 0 ? double(delivered) * 8.0 / (rate_bps * window_s) : 0.0;
  fabric_j["drops"] = ctx.stats.counter_total("dropped");
  fabric_j["ecn_marked"] = ctx.stats.counter_total("ecn_marked");
  fabric_j["pfc_pause_frames"] = ctx.stats.counter_total("pause_frames_sent");
  fabric_j["injected_drops"] = ctx.stats.counter_total("dropped_injected");
  fabric_j["retransmissions"] = ctx.stats.counter_total("tx_retransmitted");
  fabric_j["max_queue_bytes"] = max_queue;
  fabric_j["completed_flows"] = 0;
  fabric_j["incomplete_flows"] = 0;
  fabric_j["mean_flow_throughput"] = nullptr;
  fabric_j["min_flow_throughput"] = nullptr;
  fabric_j["cnps_sent"] = ctx.stats.counter_total("tx_cnps");
  return fabric_j;
}

// A line per finished size on opts.progress, as nccl-tests prints its rows (testbench/progress.h).
void print_sizes_as_done(const scenario& s, const run_options& opts, collective_engine& eng,
                         std::chrono::steady_clock::time_point wall0, size_t& sizes_done) {
  eng.on_size_done = [&s, &opts, &eng, wall0, &sizes_done](const size_result& res) {
    std::vector<double> us;
    for (picoseconds t : res.times) us.push_back(t.us());
    std::string line = format_collective_size_done(
        res.bytes, us, bus_factor(s.collective.op, eng.ranks()), ++sizes_done, eng.results().size(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count());
    if (!opts.progress_label.empty()) line.insert(2, opts.progress_label + ": ");  // after "# "
    *opts.progress << line << std::flush;
  };
}

// The WRITEs that completed and those that failed, over every NIC (under mpirun summed over the ranks).
std::pair<uint64_t, uint64_t> write_completions(topology::fabric& fab, scale_out& so) {
  uint64_t completed = 0, failed = 0;
  for (topology::host& h : fab.hosts())
    if (h.built())
      for (const nic::completion& c : h.nic->completions()) {
        completed += c.status == nic::completion_status::success;
        failed += c.status != nic::completion_status::success;
      }
  if (so.distributed()) {
    completed = so.sum(completed);
    failed = so.sum(failed);
  }
  return {completed, failed};
}

// What a barrier below the lookahead would break (check_collective_lookahead's message).
std::string barrier_reason(const collective_params& p) {
  return p.algo == "sharp" ? "every iteration ends when the SHARP results reach every rank, learnt at a window end"
                           : "every iteration ends with a barrier across processes";
}

}  // namespace

nlohmann::json collective_job_report(const scenario& s, collective_engine& eng, topology::fabric& fab,
                                     const std::vector<size_t>& rank_host, bool checked) {
  std::vector<double> rank_rate;
  uint64_t failed = 0;
  for (size_t h : rank_host) {
    rank_rate.push_back(double(fab.hosts()[h].nic->out_link()->rate().value));
    for (const nic::completion& c : fab.hosts()[h].nic->completions())
      failed += c.status != nic::completion_status::success;
  }
  size_rows rows = collective_rows(s.collective, eng, checked);
  const uint64_t wrong_total = rows.wrong_total;
  nlohmann::json c = collective_object(s, eng, fab, rank_host, rank_rate, std::move(rows));
  c["checked_bytes"] = eng.placement_checked_bytes() + eng.result_checked_bytes();
  c["mismatched_bytes"] = eng.mismatched_bytes();
  c["failed"] = failed;
  c["verified"] = checked && c["checked_bytes"].get<uint64_t>() > 0 && eng.finished() && failed == 0 &&
                  eng.mismatched_bytes() == 0 && wrong_total == 0 && eng.unexpected() == 0;
  return c;
}

nlohmann::json run_collective(const scenario& s, const run_options& opts) {
  check_run_basics(s);
  const size_t hosts = s.topology.host_count();
  const std::vector<size_t> rank_host = place_ranks(s);
  // Bytes are checked only where every NIC places them; otherwise the run is timing only.
  const bool checked = every_nic_places_data(s);
  const bool placing = any_nic_places_data(s) && !opts.elaborate_only;
  collective_engine eng(s, rank_host, checked && !opts.elaborate_only);
  const std::vector<uint64_t> mem_bytes = eng.memory_bytes(hosts);
  check_memory_budget(s, mem_bytes, placing, "collective: the ranks' buffers", "",
                      "lower collective.max_bytes or the ranks, or set nic.place_data: false");
  // The switches `switch.model` names, the NICs for it, the RTL log, this rank's part of the fabric
  // (docs/scale_out.md; one process: all of it), as in a workload run (testbench/fabric_setup.h).
  std::optional<phase_progress> setting_up;  // a line on a terminal while the fabric is built (progress.h)
  setting_up.emplace(phase_stream(opts),
                     fmt::format("set-up: {} hosts, {} switch{}, {} ranks", hosts, s.topology.switch_count(),
                                 s.topology.switch_count() == 1 ? "" : "es", rank_host.size()),
                     opts.progress_delay_s);
  fabric_setup setup(s, opts);
  core::sim_context& ctx = setup.ctx;
  scale_out& so = setup.so;
  check_collective_lookahead(s, so, eng.staged_host_pairs(), barrier_reason(s.collective));
  setup.build(mem_bytes, {}, placing);  // no PCIe trays: a collective's buffers are host memory
  topology::fabric& fab = setup.fab();
  tap_set& taps = setup.taps();
  if (so.distributed() && !so.windowed())
    throw config_error(s.source + ": collective: no link crosses between the " + std::to_string(so.ranks()) +
                       " MPI ranks of this partition, so they cannot keep in step: run it in one process");
  eng.elaborate(setup, s.seed, placing);
  setting_up.reset();
  if (opts.elaborate_only) return nlohmann::json::object();
  memory_guard::check_run(s, fab, report_entries(so, ctx.stats));
  if (so.distributed()) so.on_window_end([&eng] { eng.window_end(); });

  // Until the sweep is over and the fabric idle (the last ACKs), or the time limit.
  const auto wall0 = std::chrono::steady_clock::now();
  size_t sizes_done = 0;
  if (opts.progress && so.rank() == 0) print_sizes_as_done(s, opts, eng, wall0, sizes_done);
  const double end_us = s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us;
  try {
    so.start(picoseconds::from_ns(end_us * 1e3), sc_core::SC_EXIT_ON_STARVATION);
  } catch (...) {
    nic::rethrow_rtl_divergence(ctx.lockstep);  // a lockstep pair stopped the run: say so, by type
    throw;
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  setup.flush_rtl_log();
  so.merge_statistics();  // under mpirun: every rank's counters, so that each holds the whole fabric's
  const picoseconds sim_end = core::now();

  const auto [completed, failed] = write_completions(fab, so);
  eng.merge_counts(so);
  // The ranks' link rates, each from the process that simulates its host.
  std::vector<double> rank_rate(rank_host.size(), 0.0);
  for (size_t i = 0; i < rank_host.size(); ++i)
    if (fab.hosts()[rank_host[i]].built())
      rank_rate[i] = double(fab.hosts()[rank_host[i]].nic->out_link()->rate().value);
  so.from_owner(rank_rate);
  const bool finished = eng.finished();
  size_rows rows = collective_rows(s.collective, eng, checked);
  const uint64_t wrong_total = rows.wrong_total;
  nlohmann::json c = collective_object(s, eng, fab, rank_host, rank_rate, std::move(rows));
  const uint64_t checked_bytes = eng.placement_checked_bytes() + eng.result_checked_bytes();
  const bool verified = checked && checked_bytes > 0 && finished && failed == 0 && eng.mismatched_bytes() == 0 &&
                        wrong_total == 0 && eng.unexpected() == 0;
  nlohmann::json fabric_j = collective_fabric(ctx, sim_end, rank_rate, rank_host.size());
  // The whole fabric's statistics are on rank 0 only (scale_out::merge_statistics), which writes the report.
  const bool writes_report = so.rank() == 0;
  nlohmann::json ports = writes_report ? link_ports_report(fab, ctx, sim_end) : nlohmann::json::array();
  nlohmann::json r;
  add_run_header(r, s, opts, ctx, sim_end, wall_s);
  r["operations"] = eng.writes_posted();
  r["completed"] = completed;
  r["failed"] = failed;
  r["verified"] = verified;
  r["time_limited"] = false;
  r["data_checked"] = checked;
  r["mismatched_bytes"] = eng.mismatched_bytes();
  r["checked_bytes"] = checked_bytes;
  // The whole run is the window: the run's placed bytes, drops and retransmissions are the fabric object's.
  r["placed_bytes"] = fabric_j.at("delivered_payload_bytes");
  r["dropped_packets"] = fabric_j.at("drops");
  const uint64_t retransmitted = fabric_j.at("retransmissions").get<uint64_t>();
  r["fabric"] = std::move(fabric_j);
  // Faults during a collective (docs/faults.md): what each did; no delivered-goodput samples, so no time to
  // recover (the per-size times show what the fault cost).
  fault_set& faults = setup.faults();
  if (!faults.empty()) faults.merge(so);  // under mpirun: every rank's fault counters (a collective)
  if (!faults.empty()) r["faults"] = faults.report(sim_end, {}, retransmitted);
  r["collective"] = std::move(c);
  r["flows"] = nlohmann::json::array();
  r["ports"] = std::move(ports);
  r["stats"] = writes_report ? ctx.stats.to_json() : nlohmann::json::object();
  r["stat_descriptions"] = writes_report ? ctx.stats.descriptions_json() : nlohmann::json::object();
  r["packets_in_use_at_end"] = so.distributed() ? so.sum(ctx.pool.in_use()) : ctx.pool.in_use();
  taps.close();
  r["taps"] = taps.to_json();
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

}  // namespace fabricsim::testbench
