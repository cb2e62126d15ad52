// One scenario run across several processes.
#include "testbench/scale_out.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "sc_models/core/params.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "testbench/simulation.h"

namespace fabricsim::testbench {

void check_scale_out_supported(const scenario& s, const run_options& opts) {
  mpi::world& w = mpi::world::get();
  if (!w.distributed()) return;
  const std::string ranks = std::to_string(w.size());
  auto refuse = [&](const std::string& what) {
    throw core::config_error(s.source + ": " + what + " is not cut across processes yet: run it in one process, "
                             "not " + ranks + " MPI ranks (docs/scale_out.md)");
  };
  if (s.workload.kind == "collective") refuse("workload.kind collective");
  if (s.switch_.model != "spectrum4" && s.switch_.model != "quantum_x800") refuse("switch.model " + s.switch_.model);
  // A credit update crossing ranks must arrive beyond the lookahead (the shortest crossing cable): the cable's
  // latency plus a positive update latency is.
  if (s.switch_.model == "quantum_x800" && !(s.quantum.credit.update_latency_ns > 0))
    throw core::config_error(s.source + ": quantum.credit_update_latency_ns is 0: under " + ranks +
                             " MPI ranks a credit update must take longer than the cable it crosses (set it "
                             "above 0, or run in one process; docs/scale_out.md)");
  bool pcie = s.nic.placement == "pcie";
  for (const auto& [name, params] : s.nic_overrides) pcie = pcie || params.placement == "pcie";
  if (pcie) refuse("nic.placement pcie (the PCIe trays)");
  if (!s.faults.empty()) refuse("faults");
  if (!opts.taps.empty()) refuse("--tap");
  if (s.run.sample_us > 0) refuse("run.sample_us (time-series sampling)");
  if (!s.run.timeseries_csv.empty()) refuse("run.timeseries_csv");
  if (s.run.warmup_us > 0) refuse("run.warmup_us (a measurement window)");
  if (!s.run.record_rtl_dir.empty()) refuse("run.record_rtl_dir");
}

scale_out::scale_out(topology::fabric& fab, core::sim_context& ctx, bool ship_payload)
    : m_world(mpi::world::get()),
      m_part(fab, m_world.size()),
      m_ctx(ctx),
      m_exchange(m_world, m_part, fab, ctx, ship_payload) {
  ctx.stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    if (e.counter) m_counter_base.push_back(*e.counter);
  });
}

std::vector<nlohmann::json> scale_out::gather_json(const nlohmann::json& mine) {
  if (!distributed()) return {mine};
  const std::string text = mine.dump();
  // all_gather takes equal sizes: every rank pads to the longest.
  std::vector<uint64_t> sizes(size_t(m_world.size()), 0);
  sizes[size_t(rank())] = text.size();
  sum(sizes);
  const size_t longest = size_t(*std::max_element(sizes.begin(), sizes.end()));
  std::vector<uint8_t> bytes(longest, 0);
  std::memcpy(bytes.data(), text.data(), text.size());
  const std::vector<uint8_t> all = m_world.all_gather(bytes);
  std::vector<nlohmann::json> out;
  for (size_t r = 0; r < sizes.size(); ++r) {
    const char* at = reinterpret_cast<const char*>(all.data() + r * longest);
    out.push_back(nlohmann::json::parse(at, at + sizes[r]));
  }
  return out;
}

void scale_out::merge_pause_logs(topology::fabric& fab) {
  if (!distributed()) return;
  // This rank's switches: index, complete-until, count, then (port, priority, start, end) per interval.
  std::vector<uint64_t> mine;
  for (size_t s = 0; s < fab.switches().size(); ++s) {
    auto* sw = dynamic_cast<sw::spectrum_switch*>(fab.switches()[s].get());
    if (!sw || m_part.switch_rank(s) != rank()) continue;
    mine.push_back(s);
    mine.push_back(sw->pause_log_complete_until().value);
    mine.push_back(sw->pause_log().size());
    for (const auto& iv : sw->pause_log())
      for (uint64_t v : {uint64_t(iv.port), uint64_t(iv.prio), iv.start.value, iv.end.value}) mine.push_back(v);
  }
  // all_gather takes equal sizes: every rank pads to the longest.
  std::vector<uint64_t> sizes(size_t(m_world.size()), 0);
  sizes[size_t(rank())] = mine.size();
  sum(sizes);
  const uint64_t longest = *std::max_element(sizes.begin(), sizes.end());
  mine.resize(longest, 0);
  std::vector<uint8_t> bytes(mine.size() * sizeof(uint64_t));
  std::memcpy(bytes.data(), mine.data(), bytes.size());
  const std::vector<uint8_t> all = m_world.all_gather(bytes);
  for (size_t r = 0; r < sizes.size(); ++r) {
    if (int(r) == rank()) continue;
    const uint8_t* base = all.data() + r * longest * sizeof(uint64_t);
    auto at = [&](size_t i) {
      uint64_t v;
      std::memcpy(&v, base + i * sizeof(uint64_t), sizeof v);
      return v;
    };
    for (size_t i = 0; i < sizes[r];) {
      auto* sw = dynamic_cast<sw::spectrum_switch*>(fab.switches().at(size_t(at(i))).get());
      const core::picoseconds complete_until{at(i + 1)};
      const size_t n = size_t(at(i + 2));
      i += 3;
      std::vector<sw::spectrum_switch::pause_interval> log(n);
      for (size_t k = 0; k < n; ++k, i += 4)
        log[k] = {uint32_t(at(i)), uint8_t(at(i + 1)), core::picoseconds{at(i + 2)}, core::picoseconds{at(i + 3)}};
      if (sw) sw->replace_pause_log(std::move(log), complete_until);
    }
  }
}

void scale_out::merge_statistics() {
  if (!distributed()) return;
  // Every rank built the same blocks, so the registries list the same entries in the same order; check it
  // (a mismatch would merge unrelated values).
  uint64_t names = 0xcbf29ce484222325ull;
  m_ctx.stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    for (const std::string* s : {&e.instance, &e.name})
      for (char c : *s) names = (names ^ uint8_t(c)) * 0x100000001b3ull;
  });
  if (m_world.min(names) != m_world.max(names))
    throw std::logic_error("scale_out: the ranks registered different statistics");

  // A block's values come from the rank that simulated it; a link's (its transmitter counts on one rank, its
  // receiver's drops on the other) and anything not tied to one device are summed over the ranks as changes
  // since the run started, on top of the value before it.
  std::vector<uint64_t> counters;
  std::vector<double> gauges;
  std::vector<uint8_t> hists;
  size_t c = 0;
  m_ctx.stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    const int owner = m_part.instance_rank(e.instance);
    if (e.counter) {
      const uint64_t base = m_counter_base[c++];
      counters.push_back(owner < 0 ? *e.counter - base + (rank() == 0 ? base : 0)
                                   : owner == rank() ? *e.counter : 0);
    } else if (e.gauge) {
      gauges.push_back((owner < 0 ? rank() == 0 : owner == rank()) ? (*e.gauge)() : 0.0);
    } else if (e.hist) {
      // A histogram nobody else fills is empty on the other ranks, and empty ones merge to nothing.
      const core::histogram empty;
      const core::histogram& mine = owner < 0 || owner == rank() ? *e.hist : empty;
      const auto* b = reinterpret_cast<const uint8_t*>(&mine);
      hists.insert(hists.end(), b, b + sizeof(core::histogram));
    }
  });
  sum(counters);
  sum(gauges);
  const std::vector<uint8_t> all_hists = m_world.all_gather(hists);
  size_t ci = 0, gi = 0, hi = 0;
  m_ctx.stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    if (e.counter) {
      *e.counter = counters[ci++];
    } else if (e.gauge) {
      const double v = gauges[gi++];
      *e.gauge = [v] { return v; };
    } else if (e.hist) {
      core::histogram merged;
      for (int r = 0; r < m_world.size(); ++r) {
        core::histogram h;
        std::memcpy(static_cast<void*>(&h), all_hists.data() + size_t(r) * hists.size() + hi, sizeof h);
        merged.merge(h);
      }
      *e.hist = merged;
      hi += sizeof(core::histogram);
    }
  });
  // Hops and kernel wake-ups: every rank counts its own (a time at which several ranks have arrivals wakes
  // each of them, so `events` is the sum of the ranks' wake-ups).
  m_ctx.packet_hops = sum(m_ctx.packet_hops);
  m_ctx.events = sum(m_ctx.events);
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
  nlohmann::json j;
  j["ranks"] = m_world.size();
  j["cross_links"] = m_part.cross_links();
  j["lookahead_ns"] = m_part.cross_links() ? nlohmann::json(m_part.lookahead().ns()) : nlohmann::json(nullptr);
  j["hosts_per_rank"] = m_part.hosts_per_rank();
  j["switches_per_rank"] = m_part.switches_per_rank();
  j["windows"] = m_exchange.windows();
  j["frames_exchanged"] = sum(m_exchange.frames_sent());
  j["bytes_exchanged"] = sum(m_exchange.bytes_sent());
  j["credits_exchanged"] = sum(m_exchange.credits_sent());
  // Wall-clock figures (differ run to run): the share of each rank's loop time spent at window ends.
  const double total = m_exchange.run_s() + m_exchange.wait_s();
  std::vector<double> wait(size_t(m_world.size()), 0.0);
  wait[size_t(rank())] = total > 0 ? m_exchange.wait_s() / total : 0.0;
  sum(wait);
  j["wait_share_per_rank"] = wait;
  return j;
}

}  // namespace fabricsim::testbench
