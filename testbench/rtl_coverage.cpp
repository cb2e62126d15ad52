// verify-rtl coverage files.
#include "testbench/rtl_coverage.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

namespace {

rtl_coverage header(const verify_rtl_options& o, bool matched) {
  rtl_coverage c;
  c.block = o.block;
  c.design = !o.rtl.empty()  ? o.rtl + " (module " + (o.top.empty() ? o.block : o.top) + ")"
             : o.mutant != 0 ? "mutant " + std::to_string(o.mutant)
                             : "shipped";
  c.seed = o.seed;
  c.cycles = o.cycles;
  c.matched = matched;
  return c;
}

template <typename Bin, size_t N>
void add_bins(rtl_coverage& c, const std::array<uint64_t, N>& hits) {
  for (size_t b = 0; b < N; ++b) c.bins.emplace_back(to_string(static_cast<Bin>(b)), hits[b]);
}

// Text for HTML: the five characters that have a meaning there.
std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

}  // namespace

rtl_coverage coverage_of(const verify_rtl_options& o, const verify_rtl_result& r) {
  if (o.block == "dcqcn_rp") {
    rtl_coverage c = header(o, r.dcqcn_rp.matched);
    c.bins = r.dcqcn_rp.coverage;
    return c;
  }
  rtl_coverage c = header(o, r.reorder_tracker.matched);
  add_bins<nic::reorder_tracker_bin>(c, r.reorder_tracker.coverage);
  return c;
}

rtl_coverage coverage_of(const verify_rtl_options& o, const verify_rtl_cnp_gen_result& r) {
  rtl_coverage c = header(o, r.bench.matched);
  add_bins<nic::cnp_gen_bin>(c, r.bench.coverage);
  return c;
}

rtl_coverage coverage_of(const verify_rtl_options& o, const verify_user_rtl_result& r) {
  rtl_coverage c = o.block == "cnp_gen" ? coverage_of(o, r.cnp_gen) : coverage_of(o, r.run);
  c.matched = r.matched;
  return c;
}

nlohmann::json coverage_json(const rtl_coverage& c) {
  nlohmann::json bins = nlohmann::json::array(), not_hit = nlohmann::json::array();
  for (const auto& [name, hits] : c.bins) {
    bins.push_back({{"name", name}, {"hits", hits}});
    if (hits == 0) not_hit.push_back(name);
  }
  return {{"block", c.block},
          {"design", c.design},
          {"seed", c.seed},
          {"cycles", c.cycles},
          {"matched", c.matched},
          {"bins", bins},
          {"bins_total", c.bins.size()},
          {"bins_hit", c.bins.size() - not_hit.size()},
          {"closed", not_hit.empty()},
          {"not_hit", not_hit}};
}

std::string coverage_html(const rtl_coverage& c) {
  uint64_t most = 1;
  size_t hit = 0;
  for (const auto& [name, hits] : c.bins) {
    most = std::max(most, hits);
    hit += hits != 0;
  }
  std::string rows;
  for (const auto& [name, hits] : c.bins)
    rows += fmt::format(
        "<tr><td>{}</td><td class=n>{}</td><td><div class=bar style=\"width:{:.1f}%\"></div>{}</td></tr>\n",
        escaped(name), hits, 100.0 * double(hits) / double(most), hits == 0 ? "<span class=miss>NOT HIT</span>" : "");
  const std::string closure =
      hit == c.bins.size()
          ? fmt::format("closed: all {} bins hit", c.bins.size())
          : fmt::format("not closed: {} of {} bins hit (run more cycles or other seeds)", hit, c.bins.size());
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>coverage: {0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
      "td,th{{padding:2px 10px;text-align:left}}td.n{{text-align:right}}"
      ".bar{{display:inline-block;height:0.8em;background:#4a7;margin-right:6px}}.miss{{color:#c00;font-weight:bold}}"
      "</style></head><body>\n<h1>verify-rtl coverage: {0}</h1>\n<p>design {1}, seed {2}, {3} cycles{4}</p>\n"
      "<p><b>{5}</b></p>\n<table><tr><th>bin</th><th>hits</th><th></th></tr>\n{6}</table>\n</body></html>\n",
      escaped(c.block), escaped(c.design), c.seed, c.cycles,
      c.matched ? "" : "; the bench stopped at a MISMATCH, so the counts cover the run up to it", closure, rows);
}

void write_coverage(const rtl_coverage& c, const std::string& json_path, const std::string& html_path) {
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << coverage_json(c).dump(1) << '\n';
    if (!f) throw core::config_error("--coverage-json " + json_path + ": cannot write the file");
  }
  if (!html_path.empty()) {
    std::ofstream f(html_path);
    f << coverage_html(c);
    if (!f) throw core::config_error("--coverage-html " + html_path + ": cannot write the file");
  }
}

}  // namespace fabricsim::testbench
