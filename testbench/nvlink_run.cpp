// An allreduce sweep inside the NVLink domains of topology.kind nvl72.
#include "testbench/nvlink_run.h"

#include <fmt/format.h>

#include <array>
#include <chrono>

#include "sc_models/core/sim_context.h"
#include "sc_models/topology/nvlink_domain.h"
#include "testbench/collective_ops.h"
#include "testbench/nvlink_collective.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

double nvlink_ring_busbw_bound(const nvlink::nvlink_params& p) {
  return double(p.links_per_gpu) * p.link_gbytes_per_s * p.flit_efficiency();
}

double nvls_busbw_bound(const nvlink::nvlink_params& p) {
  const double n = double(p.gpus_per_domain);
  return 2.0 * (n - 1.0) / n * nvlink_ring_busbw_bound(p);
}

bool runs_in_nvlink_domains(const scenario& s) {
  if (s.topology.kind == "nvl72") return true;
  const std::string& a = s.collective.algo;
  return s.system.preset != "none" && s.workload.kind == "collective" && (a == "nvlink_ring" || a == "nvls");
}

std::string nvlink_fabric_line(const nvlink::nvlink_params& p) {
  return fmt::format(
      "fabric: nvl72, {} NVLink domain{} of {} GPUs and {} switch chips; {} links per GPU at {} GB/s per "
      "direction ({} GB/s per GPU), one switch hop between any two GPUs\n",
      p.domains, p.domains == 1 ? "" : "s", p.gpus_per_domain, p.switch_chips, p.links_per_gpu, p.link_gbytes_per_s,
      double(p.links_per_gpu) * p.link_gbytes_per_s);
}

sw::sharp_dtype nvlink_dtype(const scenario& s) {
  const std::string& d = s.collective.dtype;
  if (d == "float") return sw::sharp_dtype::fp32;
  if (d == "int32") return sw::sharp_dtype::int32;
  if (d == "bfloat16") return sw::sharp_dtype::bf16;
  throw config_error(s.source + ": collective.dtype " + d + ": the NVLink allreduce runs float, int32 or bfloat16");
}

domain_allreduce_config sweep_config(const scenario& s, uint64_t bytes) {
  domain_allreduce_config c = domain_allreduce_layout(bytes);
  c.slice_bytes = s.collective.chunk_bytes;
  c.dtype = nvlink_dtype(s);
  c.data = s.nic.place_data;
  return c;
}

void fill_sources(const scenario& s, topology::nvlink_domains& dom, const domain_allreduce_config& c) {
  if (!c.data) return;
  for (const auto& g : dom.gpus())
    if (g) fill_allreduce_source(g->hbm.data() + c.buffer_addr, c.bytes, c.dtype, s.seed, g->host());
}

namespace {

void check_nvlink_scenario(const scenario& s) {
  const collective_params& p = s.collective;
  const std::string& src = s.source;
  if (s.workload.kind != "collective")
    throw config_error(src + ": topology.kind nvl72 runs workload.kind collective only (workload.kind is " +
                       s.workload.kind + ")");
  if (p.algo != "nvlink_ring" && p.algo != "nvls")
    throw config_error(src + ": collective.algo " + p.algo + ": inside an NVLink domain use nvlink_ring or nvls");
  if (p.op != "allreduce")
    throw config_error(src + ": collective.op " + p.op + ": the NVLink domain runs allreduce (nvlink_ring, nvls)");
  if (p.ranks != 0 && p.ranks != s.nvlink.gpus_per_domain)
    throw config_error(src + ": collective.ranks " + std::to_string(p.ranks) +
                       ": the allreduce runs on every GPU "
                       "of each domain (0 or nvlink.gpus_per_domain = " +
                       std::to_string(s.nvlink.gpus_per_domain) + ")");
  if (!s.faults.empty()) throw config_error(src + ": faults: not supported on topology.kind nvl72");
  try {
    s.nvlink.validate("nvlink");
  } catch (const config_error& e) {
    throw config_error(src + ": " + e.what());
  }
}

// The rows of the nccl-tests table, one per size.
struct nvlink_rows {
  nlohmann::json rows = nlohmann::json::array();
  double busbw_sum = 0.0;
  uint64_t busbw_rows = 0, wrong_total = 0;
};

nvlink_rows rows_of(const scenario& s, const std::vector<sweep_row>& rows, uint64_t n) {
  const collective_params& p = s.collective;
  nvlink_rows out;
  for (const sweep_row& row : rows) {
    nlohmann::json j;
    j["size"] = row.bytes;
    j["requested_bytes"] = row.bytes;
    j["count"] = row.bytes / sw::sharp_dtype_bytes(nvlink_dtype(s));
    j["type"] = p.dtype;
    j["redop"] = p.op == "alltoall" ? "none" : "sum";
    j["root"] = int64_t(-1);
    j["completed"] = row.done;
    if (row.done && !row.times.empty()) {
      double sum = 0.0;
      nlohmann::json iters = nlohmann::json::array();
      for (picoseconds t : row.times) {
        sum += t.us();
        iters.push_back(t.us());
      }
      const double time_us = sum / double(row.times.size());
      const double algbw = time_us > 0 ? double(row.bytes) / (time_us * 1e-6) / 1e9 : 0.0;
      j["time_us"] = time_us;
      j["iteration_times_us"] = std::move(iters);
      j["algbw_gbps"] = algbw;
      j["busbw_gbps"] = algbw * bus_factor(p.op, n);
      out.busbw_sum += algbw * bus_factor(p.op, n);
      ++out.busbw_rows;
      if (!row.phases.empty()) {  // on a cluster: each phase's mean time
        std::array<double, 3> ph{};
        for (const auto& it : row.phases)
          for (size_t k = 0; k < 3; ++k) ph[k] += it[k].us() / double(row.phases.size());
        // Alltoall: from the start to the last NVLink block and to the last rail WRITE landed (they overlap).
        j["phases_us"] = p.op == "alltoall"
                             ? nlohmann::json{{"nvlink", ph[0]}, {"rail", ph[1]}}
                             : nlohmann::json{{"reduce_scatter", ph[0]}, {"inter_domain", ph[1]}, {"allgather", ph[2]}};
      }
    } else {
      j["time_us"] = nullptr;
      j["iteration_times_us"] = nlohmann::json::array();
      j["algbw_gbps"] = nullptr;
      j["busbw_gbps"] = nullptr;
    }
    j["wrong"] = s.nic.place_data ? nlohmann::json(row.wrong) : nlohmann::json(nullptr);
    out.wrong_total += row.wrong;
    out.rows.push_back(std::move(j));
  }
  return out;
}

}  // namespace

sweep_result run_sweep(const collective_params& p, const std::vector<uint64_t>& sizes,
                       const std::function<bool(uint64_t, bool, sweep_row&)>& iterate,
                       const std::function<void(uint64_t, sweep_row&)>& check) {
  sweep_result out;
  for (uint64_t bytes : sizes) {
    sweep_row row;
    row.bytes = bytes;
    for (uint64_t it = 0; it < p.warmup_iterations + p.iterations; ++it)
      if (!iterate(bytes, it >= p.warmup_iterations, row)) {
        row.done = out.all_done = false;
        break;
      }
    if (row.done) check(bytes, row);
    out.rows.push_back(std::move(row));
    if (!out.all_done) break;
  }
  return out;
}

nlohmann::json nvlink_report(const scenario& s, const run_options& opts, const core::sim_context& ctx,
                             topology::nvlink_domains& dom, const std::vector<sweep_row>& rows, uint64_t result_checked,
                             bool all_done, double wall_s, uint64_t n, scale_out* so) {
  const collective_params& p = s.collective;
  nlohmann::json r;
  add_run_header(r, s, opts, ctx, core::now(), wall_s);
  nlohmann::json c;
  c["op"] = p.op;
  c["algo"] = p.algo;
  c["dtype"] = p.dtype;
  c["ranks"] = n;
  c["placement"] = "nvl72";
  nlohmann::json hosts = nlohmann::json::array();
  for (unsigned i = 0; i < n; ++i)  // a GPU another process simulates by its name (topology/nvlink_domain.h)
    hosts.push_back(fmt::format("d{}_gpu{}", i / dom.gpus_per_domain(), i % dom.gpus_per_domain()));
  c["rank_hosts"] = std::move(hosts);
  c["iterations"] = p.iterations;
  c["warmup_iterations"] = p.warmup_iterations;
  c["chunk_bytes"] = p.algo == "nvls" ? s.nvlink.max_payload_bytes : p.chunk_bytes;
  c["bus_factor"] = bus_factor(p.op, n);
  c["link_gbps"] = double(s.nvlink.links_per_gpu) * s.nvlink.link_gbytes_per_s * 8.0;  // per GPU, one direction
  const nvlink_rows out = rows_of(s, rows, n);
  const uint64_t wrong_total = out.wrong_total;
  c["completed"] = all_done;
  c["unexpected_placements"] = 0;
  c["placement_checked_bytes"] = 0;
  c["result_checked_bytes"] = result_checked;
  c["avg_busbw_gbps"] =
      out.busbw_rows ? nlohmann::json(out.busbw_sum / double(out.busbw_rows)) : nlohmann::json(nullptr);
  c["rows"] = out.rows;
  uint64_t landed = 0, transfers = 0, max_used_flits = 0, stall_ps = 0, nvls_copies = 0, nvls_unexpected = 0;
  for (const auto& g : dom.gpus()) {
    if (!g) continue;  // another process simulates it: its figures are summed below
    landed += g->landed_bytes();
    transfers += ctx.stats.counter_value(g->name(), "transfers_landed");
    for (unsigned l = 0; l < g->links(); ++l) stall_ps += g->port(l).sender().stall_ps(0, core::now());
  }
  for (const auto& chip : dom.chips()) {
    if (!chip) continue;
    for (unsigned i = 0; i < chip->ports(); ++i)
      max_used_flits = std::max(max_used_flits, chip->receiver(i).max_used(0));
    nvls_copies += chip->nvls().counters().copies;
    nvls_unexpected += chip->nvls().counters().unexpected;
  }
  uint64_t overruns = dom.credit_overruns(), violations = dom.credit_violations(), in_use = ctx.pool.in_use();
  if (so && so->distributed()) {  // every rank's GPUs and chips
    std::vector<uint64_t> v{landed, transfers, stall_ps, nvls_copies, nvls_unexpected, overruns, violations, in_use};
    so->sum(v);
    landed = v[0], transfers = v[1], stall_ps = v[2], nvls_copies = v[3], nvls_unexpected = v[4];
    overruns = v[5], violations = v[6], in_use = v[7];
    max_used_flits = so->max(max_used_flits);
  }
  r["collective"] = std::move(c);
  r["nvlink"] = {{"domains", s.nvlink.domains},
                 {"gpus_per_domain", n},
                 {"switch_chips", s.nvlink.switch_chips},
                 {"links_per_gpu", s.nvlink.links_per_gpu},
                 {"link_gbytes_per_s", s.nvlink.link_gbytes_per_s},
                 {"flit_efficiency", s.nvlink.flit_efficiency()},
                 {"ring_busbw_bound_gbps", nvlink_ring_busbw_bound(s.nvlink)},
                 {"nvls_busbw_bound_gbps", nvls_busbw_bound(s.nvlink)},
                 {"credit_overruns", overruns},
                 {"credit_violations", violations},
                 {"credit_stall_us", double(stall_ps) / 1e6},
                 {"max_ingress_flits", max_used_flits},
                 {"ingress_limit_flits", s.nvlink.buffer_bytes_per_port / s.nvlink.flit_bytes},
                 {"nvls_result_copies", nvls_copies},
                 {"nvls_unexpected", nvls_unexpected}};
  r["time_limited"] = false;
  r["checked_bytes"] = result_checked;
  r["dropped_packets"] = 0;
  r["flows"] = nlohmann::json::array();
  r["ports"] = nlohmann::json::array();
  r["stats"] = ctx.stats.to_json();
  r["stat_descriptions"] = ctx.stats.descriptions_json();  // each statistic's unit and description, once
  r["packets_in_use_at_end"] = in_use;
  r["data_checked"] = s.nic.place_data;
  r["placed_bytes"] = landed;
  r["mismatched_bytes"] = 0;
  r["operations"] = transfers;
  r["completed"] = transfers;
  r["failed"] = 0;
  r["fabric"] = {{"drops", 0},
                 {"ecn_marked", 0},
                 {"pfc_pause_frames", 0},
                 {"max_queue_bytes", max_used_flits * s.nvlink.flit_bytes}};
  r["verified"] = s.nic.place_data && all_done && result_checked > 0 && wrong_total == 0 && overruns == 0 &&
                  violations == 0 && nvls_unexpected == 0;
  return r;
}

nlohmann::json run_nvlink_collective(const scenario& s, const run_options& opts) {
  check_nvlink_scenario(s);
  const collective_params& p = s.collective;
  const sw::sharp_dtype dtype = nvlink_dtype(s);
  const uint64_t n = s.nvlink.gpus_per_domain;
  std::vector<uint64_t> sizes;
  for (uint64_t b : collective_sizes(p)) sizes.push_back(effective_bytes(p, b, n));
  const uint64_t elt = sw::sharp_dtype_bytes(dtype);
  for (uint64_t b : sizes)
    if (b / elt < n)
      throw config_error(s.source + ": collective.min_bytes: " + std::to_string(b) + " bytes is fewer than one " +
                         p.dtype + " element per GPU (" + std::to_string(n) + " GPUs)");
  const bool data = s.nic.place_data;
  const auto wall0 = std::chrono::steady_clock::now();
  core::sim_context ctx;
  ctx.seed = s.seed;
  // Under mpirun each rank builds its own domains (domain d on rank d x ranks / domains, as a cluster is cut:
  // testbench/cluster_part.h) and runs them apart: no link joins two domains. The ranks meet where one kernel
  // would stop, at each iteration's end (scale_out::run_apart), to agree on the time and the domains finished.
  scale_out so(topology::fabric_layout{}, {});  // the domains are in no scale-out layout: nothing crosses
  std::vector<bool> built;
  for (uint64_t d = 0; so.distributed() && d < s.nvlink.domains; ++d)
    built.push_back(int(d * uint64_t(so.ranks()) / s.nvlink.domains) == so.rank());
  topology::nvlink_domains dom(s.nvlink, data ? domain_allreduce_hbm_bytes(sizes.back()) : 4096, ctx, built);
  for (const auto& g : dom.gpus())
    if (g) g->set_data(data);
  std::vector<std::unique_ptr<domain_allreduce>> algos;
  for (unsigned d = 0; d < dom.domains(); ++d)
    if (dom.built(d)) algos.push_back(make_domain_allreduce(p.algo, dom, d, ctx.calendar));
  so.attach_apart(ctx);
  if (opts.elaborate_only) return nlohmann::json::object();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration: the ports learn their credits
  const picoseconds limit = picoseconds::from_ns(s.run.limit_us * 1000.0);
  uint64_t result_checked = 0;
  auto iterate = [&](uint64_t bytes, bool timed, sweep_row& row) {
    const domain_allreduce_config c = sweep_config(s, bytes);
    fill_sources(s, dom, c);
    const picoseconds t0 = core::now();
    uint64_t finished = 0;
    picoseconds last = t0;
    for (auto& a : algos)
      a->start(c, [&](picoseconds t) {
        ++finished;
        last = std::max(last, t);
      });
    so.run_apart(limit, sc_core::SC_EXIT_ON_STARVATION);
    if (so.distributed()) {
      finished = so.sum(finished);
      last = picoseconds(so.max(last.value));
    }
    if (finished < dom.domains()) return false;
    if (timed) row.times.push_back(last - t0);
    return true;
  };
  auto check = [&](uint64_t bytes, sweep_row& row) {
    if (!data) return;
    for (unsigned d = 0; d < dom.domains(); ++d) {
      if (!dom.built(d)) continue;  // its rank checks it
      std::vector<uint32_t> members;
      for (unsigned i = 0; i < n; ++i) members.push_back(dom.gpu(d, i).host());
      const std::vector<uint8_t> ref = allreduce_reference(bytes, dtype, s.seed, members);
      for (unsigned i = 0; i < n; ++i) {
        const uint8_t* got = dom.gpu(d, i).hbm.data() + domain_allreduce_layout(bytes).buffer_addr;
        row.wrong += count_wrong_elements(got, ref.data(), bytes, dtype);
        result_checked += bytes;
      }
    }
  };
  sweep_result sw = run_sweep(p, sizes, iterate, check);
  so.merge_statistics();   // under mpirun: every rank's counters, the whole fabric's on rank 0
  if (so.distributed()) {  // each rank checked its own domains' GPUs
    std::vector<uint64_t> counts{result_checked};
    for (const sweep_row& row : sw.rows) counts.push_back(row.wrong);
    so.sum(counts);
    result_checked = counts[0];
    for (size_t i = 0; i < sw.rows.size(); ++i) sw.rows[i].wrong = counts[i + 1];
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  nlohmann::json r = nvlink_report(s, opts, ctx, dom, sw.rows, result_checked, sw.all_done, wall_s, n, &so);
  if (so.distributed()) {
    r["scale_out"] = so.report();
    std::vector<uint64_t> per_rank(size_t(so.ranks()), 0);
    for (unsigned d = 0; d < dom.domains(); ++d) per_rank[d * uint64_t(so.ranks()) / dom.domains()] += 1;
    r["scale_out"]["domains_per_rank"] = per_rank;
  }
  return r;
}

}  // namespace fabricsim::testbench
