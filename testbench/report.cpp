// Renders a run's report as plain-text tables.
#include "testbench/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "testbench/collective.h"
#include "testbench/fct_report.h"
#include "testbench/tenants.h"
#include "testbench/training_run.h"
#include "testbench/verdict.h"

namespace fabricsim::testbench {

namespace {
// A fraction as a percentage; "-" for null (nothing to measure).
std::string percent_or_dash(const nlohmann::json& v) {
  return v.is_null() ? std::string("-") : fmt::format("{:.1f}%", 100.0 * v.get<double>());
}

// Reordering seen by the responders, one line; empty when nothing arrived out of order: the out-of-order
// distance histograms of every NIC (stats.*.ooo_distance) merged, and the peak reorder-window occupancy.
std::string reorder_line(const nlohmann::json& r) {
  uint64_t count = 0, max = 0;
  double sum = 0;
  std::map<uint64_t, uint64_t> buckets;  // upper bound -> arrivals
  if (r.contains("stats") && r.at("stats").is_object())
    for (const auto& [inst, counters] : r.at("stats").items()) {
      if (!counters.is_object() || !counters.contains("ooo_distance")) continue;
      const auto& h = counters.at("ooo_distance");
      const uint64_t n = h.at("count").get<uint64_t>();
      if (n == 0) continue;
      count += n;
      sum += h.at("mean").get<double>() * double(n);
      max = std::max(max, h.at("max").get<uint64_t>());
      for (const auto& b : h.at("buckets")) buckets[b.at("below").get<uint64_t>()] += b.at("count").get<uint64_t>();
    }
  if (count == 0) return "";
  std::string hist;
  for (const auto& [below, n] : buckets) hist += fmt::format("{}<{}: {}", hist.empty() ? "" : ", ", below, n);
  return fmt::format("{} out-of-order arrivals, distance mean {:.1f} max {} PSNs (histogram {}), peak "
                     "reorder-window occupancy {} PSNs",
                     count, sum / double(count), max, hist,
                     r.at("fabric").at("reorder_peak_packets").get<uint64_t>());
}
}  // namespace

std::string format_table(const nlohmann::json& r, size_t max_rows) {
  if (r.contains("collective")) return format_collective_table(r);  // the nccl-tests layout
  if (r.contains("training")) return format_training_table(r);      // the step and its collectives
  if (r.contains("jobs")) return format_jobs_table(r);              // tenants: each job alone and shared
  std::string out;
  out += fmt::format("scenario {} (seed {})\n", r.at("scenario").get<std::string>(), r.at("seed").get<uint64_t>());
  if (!r.at("description").get<std::string>().empty())
    out += fmt::format("  {}\n", r.at("description").get<std::string>());
  out += fmt::format("simulated {:.3f} us in {:.3f} s wall: {} packet-hops, {:.2f} M packet-hops/s, "
                     "{:.2f} events per hop\n",
                     r.at("simulated_time_ns").get<double>() / 1000.0, r.at("wall_time_s").get<double>(),
                     r.at("packet_hops").get<uint64_t>(), r.at("packet_hops_per_s").get<double>() / 1e6,
                     r.at("events_per_packet_hop").get<double>());
  const auto& fab = r.at("fabric");
  // Loss recovery is shown only when there was loss to recover from, so a lossless run reads as before.
  const uint64_t injected = fab.at("injected_drops").get<uint64_t>(), failed = r.at("failed").get<uint64_t>();
  const std::string recovery =
      injected + fab.at("retransmissions").get<uint64_t>() + failed == 0
          ? std::string()
          : fmt::format(" (lost on links {}, retransmitted {}, failed {})", injected,
                        fab.at("retransmissions").get<uint64_t>(), failed);
  // A run of fixed length (run.duration_us) ends with operations in flight by design.
  const bool timed = r.at("time_limited").get<bool>() && r.at("completed") != r.at("operations");
  out += fmt::format("operations {}/{} completed{}, dropped packets {}{}\n", r.at("completed").get<uint64_t>(),
                     r.at("operations").get<uint64_t>(), timed ? " when run.duration_us ended the run" : "",
                     r.at("dropped_packets").get<uint64_t>(), recovery);
  out += "data: " + data_verdict(r) + "\n";

  out += fmt::format("fabric: effective throughput {:.1f}% of line rate, {} senders, window {:.3f} .. {:.3f} us\n",
                     100.0 * fab.at("effective_throughput").get<double>(), fab.at("senders").get<uint64_t>(),
                     fab.at("window_start_ns").get<double>() / 1000.0, fab.at("window_end_ns").get<double>() / 1000.0);
  out += fmt::format("        flow throughput mean {} min {} ({} incomplete); drops {}, ECN marked {}, PFC pauses {}, "
                     "max queue {} bytes\n\n",
                     percent_or_dash(fab.at("mean_flow_throughput")), percent_or_dash(fab.at("min_flow_throughput")),
                     fab.at("incomplete_flows").get<uint64_t>(), fab.at("drops").get<uint64_t>(),
                     fab.at("ecn_marked").get<uint64_t>(), fab.at("pfc_pause_frames").get<uint64_t>(),
                     fab.at("max_queue_bytes").get<uint64_t>());
  if (fab.contains("data_packet_latency_ns") && fab.at("data_packet_latency_ns").at("count").get<uint64_t>() > 0) {
    const auto& l = fab.at("data_packet_latency_ns");
    out.insert(out.size() - 1,  // before the blank line that ends the fabric block
               fmt::format("        data packet latency p50 {:.0f} ns, p99 {:.0f} ns, p99.9 {:.0f} ns, max {:.0f} ns "
                           "({} packets)\n",
                           l.at("p50").get<double>(), l.at("p99").get<double>(), l.at("p999").get<double>(),
                           l.at("max").get<double>(), l.at("count").get<uint64_t>()));
  }
  if (const std::string reorder = reorder_line(r); !reorder.empty()) out += "reordering: " + reorder + "\n\n";
  if (fab.contains("bottleneck") && fab.at("bottleneck").is_object() && fab.at("bottleneck").contains("port")) {
    const auto& b = fab.at("bottleneck");
    out += fmt::format("bottleneck {} ({}): utilization {:.1f}%, queue max {} mean {:.0f} bytes; Jain's index {}; "
                       "CNPs sent {}\n\n",
                       b.at("host").get<std::string>(), b.at("port").get<std::string>(),
                       100.0 * b.at("utilization").get<double>(), b.at("queue_max_bytes").get<uint64_t>(),
                       b.at("queue_mean_bytes").get<double>(),
                       fab.at("jain_fairness").is_null() ? std::string("-")
                                                         : fmt::format("{:.3f}", fab.at("jain_fairness").get<double>()),
                       fab.at("cnps_sent").get<uint64_t>());
  }

  out += format_fct_table(r);  // runs with enough completed flows: slowdown per size bucket
  const auto& flows = r.at("flows");
  out += fmt::format("{:>5} {:>6} {:>6} {:>12} {:>12} {:>12} {:>10} {:>11}\n", "flow", "src", "dst", "bytes",
                     "posted_ns", "fct_ns", "Gb/s", "verified");
  for (size_t i = 0; i < flows.size() && i < max_rows; ++i) {
    const auto& f = flows[i];
    const bool done = f.at("completed").get<bool>();
    out += fmt::format("{:>5} {:>6} {:>6} {:>12} {:>12.1f} {:>12} {:>10} {:>11}\n", f.at("id").get<uint64_t>(),
                       f.at("src").get<std::string>(), f.at("dst").get<std::string>(), f.at("bytes").get<uint64_t>(),
                       f.at("posted_ns").get<double>(),
                       done ? fmt::format("{:.1f}", f.at("fct_ns").get<double>()) : std::string("-"),
                       done ? fmt::format("{:.1f}", f.at("goodput_gbps").get<double>()) : std::string("-"),
                       !r.at("data_checked").get<bool>()            ? "not checked"  // timing only
                       : f.at("verified").get<bool>()               ? "yes"
                       : f.at("checked_bytes").get<uint64_t>() == 0 ? "-"  // still in flight: not compared
                                                                    : "NO");
  }
  if (flows.size() > max_rows) out += fmt::format("  ... {} more flows in the JSON report\n", flows.size() - max_rows);

  std::vector<const nlohmann::json*> ports;
  for (const auto& p : r.at("ports")) ports.push_back(&p);
  std::stable_sort(ports.begin(), ports.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return a->at("wire_bytes").get<uint64_t>() > b->at("wire_bytes").get<uint64_t>();
  });
  out += fmt::format("\n{:<28} {:>10} {:>14} {:>12}\n", "busiest links", "packets", "wire_bytes", "utilization");
  for (size_t i = 0; i < ports.size() && i < std::min<size_t>(max_rows, 8); ++i)
    out += fmt::format("{:<28} {:>10} {:>14} {:>11.1f}%\n", ports[i]->at("link").get<std::string>(),
                       ports[i]->at("packets").get<uint64_t>(), ports[i]->at("wire_bytes").get<uint64_t>(),
                       100.0 * ports[i]->at("utilization").get<double>());
  return out;
}

namespace {
// The report's incast bottleneck (fabric.bottleneck), or null when the run has none.
const nlohmann::json* bottleneck_of(const nlohmann::json& r) {
  const auto& fab = r.at("fabric");
  if (!fab.contains("bottleneck") || !fab.at("bottleneck").is_object() || !fab.at("bottleneck").contains("port"))
    return nullptr;
  return &fab.at("bottleneck");
}
}  // namespace

std::string format_compare_table(const nlohmann::json& c) {
  const auto& runs = c.at("runs");
  size_t width = std::max<size_t>(5, c.at("compare").get<std::string>().size());
  for (const auto& run : runs) width = std::max(width, run.at("value").get<std::string>().size());
  std::string out = fmt::format("comparison of {} over {} values", c.at("compare").get<std::string>(), runs.size());
  if (!runs.empty()) out += fmt::format(" (scenario {})", runs[0].at("report").at("scenario").get<std::string>());
  out += "\n";
  if (!runs.empty() && runs[0].at("report").contains("collective")) return out + format_collective_compare(c);
  // An incast's effective throughput is a fraction of every sender's line rate, small by construction: the
  // bottleneck's utilization and the fairness among senders say how well the one link into the target ran.
  bool incast = false;
  for (const auto& run : runs) incast = incast || bottleneck_of(run.at("report")) != nullptr;
  out += fmt::format("{:<{}} {:>9} {}{:>9} {:>9} {:>8} {:>10} {:>10} {:>12} {:>10} {:>11} {:>13}\n",
                     c.at("compare").get<std::string>(), width, "eff.thru",
                     incast ? fmt::format("{:>11} {:>6} ", "bottleneck", "Jain") : "", "mean flow", "min flow", "drops",
                     "ECN marked", "PFC pauses", "max queue B", "p99 lat ns", "completed", "packet-hops/s");
  for (const auto& run : runs) {
    const auto& r = run.at("report");
    const auto& fab = r.at("fabric");
    const nlohmann::json* b = bottleneck_of(r);
    const std::string fairness = fab.contains("jain_fairness") && !fab.at("jain_fairness").is_null()
                                     ? fmt::format("{:.3f}", fab.at("jain_fairness").get<double>())
                                     : "-";
    const nlohmann::json* lat = fab.contains("data_packet_latency_ns") ? &fab.at("data_packet_latency_ns") : nullptr;
    const std::string p99 =
        lat && !lat->at("p99").is_null() ? fmt::format("{:.0f}", lat->at("p99").get<double>()) : std::string("-");
    out += fmt::format(
        "{:<{}} {:>9} {}{:>9} {:>9} {:>8} {:>10} {:>10} {:>12} {:>10} {:>11} {:>13.3g}\n",
        run.at("value").get<std::string>(), width, percent_or_dash(fab.at("effective_throughput")),
        incast ? fmt::format("{:>11} {:>6} ", b ? percent_or_dash(b->at("utilization")) : "-", fairness) : "",
        percent_or_dash(fab.at("mean_flow_throughput")), percent_or_dash(fab.at("min_flow_throughput")),
        fab.at("drops").get<uint64_t>(), fab.at("ecn_marked").get<uint64_t>(),
        fab.at("pfc_pause_frames").get<uint64_t>(), fab.at("max_queue_bytes").get<uint64_t>(), p99,
        fmt::format("{}/{}", r.at("completed").get<uint64_t>(), r.at("operations").get<uint64_t>()),
        r.at("packet_hops_per_s").get<double>());
  }
  out +=
      "throughputs are fractions of the senders' line rate; p99 lat: one-way latency of data packets "
      "(docs/report.md, `fabric`)";
  out += incast ? "; bottleneck: payload utilization of the link into the incast target; Jain: fairness among "
                  "the senders (1 = equal shares)\n"
                : "\n";
  for (const auto& run : runs)
    out += fmt::format("data, {}: {}\n", run.at("value").get<std::string>(), data_verdict(run.at("report")));
  for (const auto& run : runs)
    if (const std::string reorder = reorder_line(run.at("report")); !reorder.empty())
      out += fmt::format("reordering, {}: {}\n", run.at("value").get<std::string>(), reorder);
  return out;
}

}  // namespace fabricsim::testbench
