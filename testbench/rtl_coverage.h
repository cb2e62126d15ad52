// The functional coverage of one `fabricsim verify-rtl` run as a file: JSON for scripts and CI, and a small
// self-contained HTML page for a reader (bins, hits, closure). Written with --coverage-json / --coverage-html.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "testbench/verify_rtl.h"

namespace fabricsim::testbench {

struct rtl_coverage {
  std::string block;   // reorder_tracker, cnp_gen, dcqcn_rp
  std::string design;  // "shipped", "mutant N", or the user's file and top module
  uint64_t seed = 0;
  uint64_t cycles = 0;  // --cycles asked for
  bool matched = true;  // false: the bench stopped at a mismatch, so the counts cover the run up to it
  std::vector<std::pair<std::string, uint64_t>> bins;  // named bins and their hits, in the bench's order
};

rtl_coverage coverage_of(const verify_rtl_options& o, const verify_rtl_result& r);
rtl_coverage coverage_of(const verify_rtl_options& o, const verify_rtl_cnp_gen_result& r);
rtl_coverage coverage_of(const verify_rtl_options& o, const verify_user_rtl_result& r);

// {"block", "design", "seed", "cycles", "matched", "bins": [{"name", "hits"}], "bins_hit", "bins_total",
//  "closed" (every bin hit), "not_hit": [names]}
nlohmann::json coverage_json(const rtl_coverage& c);
// One page: a table of bins (hits, a bar scaled to the largest, NOT HIT in red) and the closure line.
std::string coverage_html(const rtl_coverage& c);
// Writes either file when its path is not empty; config_error naming the option when one cannot be written.
void write_coverage(const rtl_coverage& c, const std::string& json_path, const std::string& html_path);

}  // namespace fabricsim::testbench
