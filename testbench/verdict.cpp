// What a run's report says about its data: exit status and summary wording.
#include "testbench/verdict.h"

#include <fmt/format.h>

namespace fabricsim::testbench {

namespace {

uint64_t u64(const nlohmann::json& r, const char* key) { return r.at(key).get<uint64_t>(); }

// "within run.duration_us=120": the run's fixed length, which is its simulated time.
std::string duration_words(const nlohmann::json& r) {
  return fmt::format("run.duration_us={}", r.at("simulated_time_ns").get<double>() / 1000.0);
}

// "; 100 bytes landed past their operation's end; 8 bytes landed outside every operation; 4,096 bytes of
// completed operations never landed" (each part only when not 0; a report without the fields, a
// collective's, says nothing).
std::string misplaced_words(const nlohmann::json& r) {
  std::string out;
  const uint64_t past = r.value("past_end_bytes", uint64_t(0)), stray = r.value("stray_bytes", uint64_t(0));
  if (past > 0) out += fmt::format("; {} bytes landed past their operation's end", group_digits(past));
  if (stray > 0) out += fmt::format("; {} bytes landed outside every operation", group_digits(stray));
  if (const uint64_t missing = r.value("missing_bytes", uint64_t(0)); missing > 0)
    out += fmt::format("; {} bytes of completed operations never landed", group_digits(missing));
  return out;
}

}  // namespace

std::string group_digits(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int report_status(const nlohmann::json& r) {
  const bool time_limited = r.at("time_limited").get<bool>();
  if (!r.at("data_checked").get<bool>())  // timing only: a run to completion must complete
    return !time_limited && r.at("completed") != r.at("operations") ? exit_not_verified : exit_verified;
  if (r.at("verified").get<bool>()) return exit_verified;
  // Nothing compared and nothing wrong: only a run of fixed length may end so (no payload landed yet); a run
  // to completion that compared nothing left its operations unfinished, a failure.
  if (time_limited && u64(r, "checked_bytes") == 0 && u64(r, "failed") == 0 && u64(r, "mismatched_bytes") == 0 &&
      r.value("past_end_bytes", uint64_t(0)) == 0 && r.value("stray_bytes", uint64_t(0)) == 0)
    return exit_nothing_checked;
  return exit_not_verified;
}

int worse_status(int a, int b) {
  auto rank = [](int s) { return s == exit_verified ? 0 : s == exit_nothing_checked ? 1 : s == 1 ? 2 : 2 + s; };
  return rank(a) >= rank(b) ? a : b;
}

std::string status_reason(const nlohmann::json& r) {
  const int status = report_status(r);
  if (status == exit_verified) return "";
  std::string ops = fmt::format("{} of {} operations completed", u64(r, "completed"), u64(r, "operations"));
  if (!r.at("data_checked").get<bool>()) return ops;
  if (status == exit_nothing_checked)
    return fmt::format(
        "NOTHING CHECKED: no payload landed within {}, so no byte was compared ({} bytes "
        "placed); lengthen run.duration_us",
        duration_words(r), group_digits(u64(r, "placed_bytes")));
  std::string out = fmt::format("data placement NOT verified: {}, {} of {} checked bytes differ from their source", ops,
                                group_digits(u64(r, "mismatched_bytes")), group_digits(u64(r, "checked_bytes")));
  out += misplaced_words(r);
  if (u64(r, "failed") > 0)
    out += fmt::format(
        "; {} completed in error (a queue pair ran out of nic.retry_count retries: see "
        "flows[].status and the NICs' \"qp_errors\" counters)",
        u64(r, "failed"));
  const uint64_t lost = u64(r, "dropped_packets") + r.at("fabric").at("injected_drops").get<uint64_t>();
  if (lost > 0)
    out += fmt::format(
        "; {} packets were lost (switch \"dropped\" and link \"dropped_injected\" counters), {} "
        "retransmitted",
        lost, r.at("fabric").at("retransmissions").get<uint64_t>());
  return out;
}

std::string data_verdict(const nlohmann::json& r) {
  const std::string placed = group_digits(u64(r, "placed_bytes")), checked = group_digits(u64(r, "checked_bytes"));
  if (!r.at("data_checked").get<bool>())
    return fmt::format("not checked (nic.place_data is false): {} bytes placed, none compared", placed);
  if (r.at("verified").get<bool>())
    return fmt::format("VERIFIED: {} of {} placed bytes checked byte for byte", checked, placed);
  if (report_status(r) == exit_nothing_checked)
    return fmt::format("NOTHING CHECKED: no payload landed within {}; {} bytes placed, 0 checked", duration_words(r),
                       placed);
  std::string out = fmt::format("NOT VERIFIED: {} of {} checked bytes differ from their source ({} placed)",
                                group_digits(u64(r, "mismatched_bytes")), checked, placed);
  out += misplaced_words(r);
  if (u64(r, "failed") > 0) out += fmt::format("; {} operations completed in error", u64(r, "failed"));
  const uint64_t unfinished = u64(r, "operations") - u64(r, "completed") - u64(r, "failed");
  if (!r.at("time_limited").get<bool>() && unfinished > 0)
    out += fmt::format("; {} operations did not complete", unfinished);
  return out;
}

}  // namespace fabricsim::testbench
