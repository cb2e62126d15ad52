// The terminal layout of a collective run's report.
#include "testbench/collective_report.h"

#include <fmt/format.h>

#include "testbench/verdict.h"

namespace fabricsim::testbench {

namespace {

// The data line of a collective's table: the bytes compared at placement and in the results, and the verdict.
std::string collective_data_verdict(const nlohmann::json& r) {
  const auto& c = r.at("collective");
  const std::string placed = group_digits(r.at("placed_bytes").get<uint64_t>());
  const std::string at_placement = group_digits(c.at("placement_checked_bytes").get<uint64_t>());
  const std::string results = group_digits(c.at("result_checked_bytes").get<uint64_t>());
  if (!r.at("data_checked").get<bool>())
    return fmt::format("not checked (nic.place_data is false): {} bytes placed, none compared", placed);
  if (r.at("verified").get<bool>() && c.contains("sharp"))
    return fmt::format(
        "every result VERIFIED against a software reduction (int32 exact, floats within {:.3g} of "
        "sum|x|; largest relative error seen {:.3g}): {} result bytes checked",
        c.at("sharp").at("float_tolerance").get<double>(), c.at("sharp").at("max_relative_error").get<double>(),
        results);
  if (r.at("verified").get<bool>())
    return fmt::format(
        "VERIFIED: {} of {} placed bytes checked byte for byte at placement, {} result bytes equal "
        "to the reference",
        at_placement, placed, results);
  uint64_t wrong = 0;
  for (const auto& row : c.at("rows"))
    if (!row.at("wrong").is_null()) wrong += row.at("wrong").get<uint64_t>();
  return fmt::format(
      "NOT VERIFIED: {} of {} bytes checked at placement differ from their source ({} placed), {} "
      "result bytes checked with {} wrong elements, {} WRITEs failed, {} unexpected placements",
      group_digits(r.at("mismatched_bytes").get<uint64_t>()), at_placement, placed, results, wrong,
      r.at("failed").get<uint64_t>(), c.at("unexpected_placements").get<uint64_t>());
}

// The phases of a collective on a cluster, per size (rows with phases_us only). Alltoall: NVLink and rails at
// once, each from the start to its last block landed.
std::string phase_table(const nlohmann::json& rows) {
  std::string out;
  for (const auto& row : rows) {
    if (!row.contains("phases_us")) continue;
    if (row.at("phases_us").contains("nvlink")) {
      if (out.empty())
        out = fmt::format("# phases (us): {:>10} {:>12} {:>12}\n", "size (B)", "nvlink_done", "rail_done");
      out += fmt::format("#               {:>10} {:>12.2f} {:>12.2f}\n", row.at("size").get<uint64_t>(),
                         row.at("phases_us").at("nvlink").get<double>(), row.at("phases_us").at("rail").get<double>());
      continue;
    }
    if (out.empty())
      out = fmt::format("# phases (us): {:>10} {:>14} {:>12} {:>10}\n", "size (B)", "reduce_scatter", "inter_domain",
                        "allgather");
    const auto& ph = row.at("phases_us");
    out += fmt::format("#               {:>10} {:>14.2f} {:>12.2f} {:>10.2f}\n", row.at("size").get<uint64_t>(),
                       ph.at("reduce_scatter").get<double>(), ph.at("inter_domain").get<double>(),
                       ph.at("allgather").get<double>());
  }
  return out;
}

}  // namespace

std::string format_collective_table(const nlohmann::json& r) {
  const auto& c = r.at("collective");
  std::string out =
      fmt::format("scenario {} (seed {})\n", r.at("scenario").get<std::string>(), r.at("seed").get<uint64_t>());
  if (!r.at("description").get<std::string>().empty())
    out += fmt::format("  {}\n", r.at("description").get<std::string>());
  std::string hosts;
  for (const auto& h : c.at("rank_hosts")) hosts += (hosts.empty() ? "" : " ") + h.get<std::string>();
  const bool sharp = c.contains("sharp");  // SHARP chunks are one packet each: the NIC's MTU
  out += fmt::format(
      "# collective {} algo {}: {} ranks ({} placement: {}), {} Gb/s links, chunk {} bytes, "
      "warmup iters {} iters {}\n",
      c.at("op").get<std::string>(), c.at("algo").get<std::string>(), c.at("ranks").get<uint64_t>(),
      c.at("placement").get<std::string>(), hosts, c.at("link_gbps").get<double>(),
      sharp ? c.at("sharp").at("chunk_bytes").get<uint64_t>() : c.at("chunk_bytes").get<uint64_t>(),
      c.at("warmup_iterations").get<uint64_t>(), c.at("iterations").get<uint64_t>());
  if (sharp) {
    const auto& sh = c.at("sharp");
    out += fmt::format("# SHARP tree rooted at {}: {} TFLOPS, {} ns, {} slots per switch\n",
                       sh.at("root").get<std::string>(), sh.at("tflops").get<double>(),
                       sh.at("latency_ns").get<double>(), sh.at("slots").get<uint64_t>());
    for (const auto& sw : sh.at("switches"))
      out += fmt::format(
          "#   {:<10} depth {} children {:>3}: {} chunks aggregated, {} bytes reduced, {} slot waits "
          "({:.3f} us), max {} slots in use\n",
          sw.at("switch").get<std::string>(), sw.at("depth").get<uint64_t>(), sw.at("children").get<uint64_t>(),
          sw.at("ops").get<uint64_t>(), sw.at("bytes_reduced").get<uint64_t>(), sw.at("slot_waits").get<uint64_t>(),
          sw.at("slot_wait_us").get<double>(), sw.at("max_slots_used").get<uint64_t>());
  }
  out += fmt::format("#\n# {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "", "", "",
                     "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& row : c.at("rows")) {
    const bool timed = !row.at("time_us").is_null();
    out += fmt::format(
        "  {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", row.at("size").get<uint64_t>(),
        row.at("count").get<uint64_t>(), row.at("type").get<std::string>(), row.at("redop").get<std::string>(),
        row.at("root").get<int64_t>(), timed ? fmt::format("{:.2f}", row.at("time_us").get<double>()) : "-",
        timed ? fmt::format("{:.2f}", row.at("algbw_gbps").get<double>()) : "-",
        timed ? fmt::format("{:.2f}", row.at("busbw_gbps").get<double>()) : "-",
        row.at("wrong").is_null() ? std::string("N/A") : std::to_string(row.at("wrong").get<uint64_t>()));
  }
  out += phase_table(c.at("rows"));
  out += fmt::format("# Avg bus bandwidth    : {}\n",
                     c.at("avg_busbw_gbps").is_null() ? std::string("-")
                                                      : fmt::format("{:.3f}", c.at("avg_busbw_gbps").get<double>()));
  out += fmt::format(
      "#\nsimulated {:.3f} us in {:.3f} s wall: {} packet-hops, {:.2f} M packet-hops/s; {} WRITEs, {} "
      "completed, {} failed; drops {}, ECN marked {}, PFC pauses {}, max queue {} bytes\n",
      r.at("simulated_time_ns").get<double>() / 1000.0, r.at("wall_time_s").get<double>(),
      r.at("packet_hops").get<uint64_t>(), r.at("packet_hops_per_s").get<double>() / 1e6,
      r.at("operations").get<uint64_t>(), r.at("completed").get<uint64_t>(), r.at("failed").get<uint64_t>(),
      r.at("fabric").at("drops").get<uint64_t>(), r.at("fabric").at("ecn_marked").get<uint64_t>(),
      r.at("fabric").at("pfc_pause_frames").get<uint64_t>(), r.at("fabric").at("max_queue_bytes").get<uint64_t>());
  out += "data: " + collective_data_verdict(r) +
         (c.at("completed").get<bool>() ? "" : " (the sweep did not finish: see collective.stopped_at)") + "\n";
  return out;
}

std::string format_collective_compare(const nlohmann::json& comparison) {
  const auto& runs = comparison.at("runs");
  std::string out = "busbw (GB/s) by size and " + comparison.at("compare").get<std::string>() + "\n";
  out += fmt::format("{:>12}", "size (B)");
  for (const auto& run : runs) out += fmt::format(" {:>12}", run.at("value").get<std::string>());
  out += "\n";
  const auto& first = runs.at(0).at("report").at("collective").at("rows");
  for (size_t i = 0; i < first.size(); ++i) {
    out += fmt::format("{:>12}", first[i].at("size").get<uint64_t>());
    for (const auto& run : runs) {
      const auto& rows = run.at("report").at("collective").at("rows");
      const bool has = i < rows.size() && !rows[i].at("busbw_gbps").is_null();
      out += fmt::format(" {:>12}", has ? fmt::format("{:.2f}", rows[i].at("busbw_gbps").get<double>()) : "-");
    }
    out += "\n";
  }
  out += fmt::format("{:>12}", "avg");
  for (const auto& run : runs) {
    const auto& avg = run.at("report").at("collective").at("avg_busbw_gbps");
    out += fmt::format(" {:>12}", avg.is_null() ? std::string("-") : fmt::format("{:.2f}", avg.get<double>()));
  }
  out += "\n";
  out += fmt::format("{:>12}", "verified");
  for (const auto& run : runs)
    out += fmt::format(" {:>12}", !run.at("report").at("data_checked").get<bool>() ? "unchecked"
                                  : run.at("report").at("verified").get<bool>()    ? "yes"
                                                                                   : "NO");
  out += "\n";
  return out;
}

}  // namespace fabricsim::testbench
