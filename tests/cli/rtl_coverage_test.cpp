// verify-rtl --coverage-json / --coverage-html through the binary: the files hold the same bins and hits
// as the terminal table of the same run (parsed here), closure agrees with the bins marked NOT HIT, for
// each of the three shipped blocks; a short run is not closed and says which bins it missed; a path that
// cannot be written is refused before the bench runs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_cli.h"

namespace rtl_coverage_test {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;
using nlohmann::json;

// The rows after "coverage bins (hits" up to the first line that is not "  name  hits [NOT HIT]".
std::vector<std::pair<std::string, uint64_t>> table_bins(const std::string& out) {
  std::vector<std::pair<std::string, uint64_t>> bins;
  std::istringstream in(out.substr(out.find("coverage bins (hits")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name;
    uint64_t hits = 0;
    if (line.rfind("  ", 0) != 0 || !(row >> name >> hits)) break;
    bins.emplace_back(name, hits);
  }
  return bins;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct coverage_run {
  run_result run;
  json report;
  std::string html;
};

coverage_run verify_with_coverage(const std::string& name, const std::string& args) {
  const std::string js = testing::TempDir() + name + ".json", html = testing::TempDir() + name + ".html";
  std::remove(js.c_str());
  std::remove(html.c_str());
  coverage_run c{fabricsim("verify-rtl " + args + " --coverage-json " + js + " --coverage-html " + html), json(), ""};
  std::ifstream f(js);
  if (f) c.report = json::parse(f);
  c.html = slurp(html);
  return c;
}

void expect_files_match_table(const coverage_run& c, const std::string& block) {
  ASSERT_TRUE(c.report.is_object()) << c.run.output;
  const auto bins = table_bins(c.run.output);
  ASSERT_GT(bins.size(), 5u) << c.run.output;
  EXPECT_EQ(c.report["block"], block);
  ASSERT_EQ(c.report["bins"].size(), bins.size());
  std::vector<std::string> missed;
  for (size_t i = 0; i < bins.size(); ++i) {
    EXPECT_EQ(c.report["bins"][i]["name"], bins[i].first) << i;
    EXPECT_EQ(c.report["bins"][i]["hits"].get<uint64_t>(), bins[i].second) << bins[i].first;
    EXPECT_NE(c.html.find("<td>" + bins[i].first + "</td><td class=n>" + std::to_string(bins[i].second) + "</td>"),
              std::string::npos)
        << bins[i].first;
    if (bins[i].second == 0) missed.push_back(bins[i].first);
  }
  EXPECT_EQ(c.report["bins_total"].get<size_t>(), bins.size());
  EXPECT_EQ(c.report["bins_hit"].get<size_t>(), bins.size() - missed.size());
  EXPECT_EQ(c.report["closed"].get<bool>(), missed.empty());
  EXPECT_EQ(c.report["not_hit"].get<std::vector<std::string>>(), missed);
  EXPECT_TRUE(c.report["matched"].get<bool>());
  EXPECT_EQ(c.report["design"], "shipped");
}

TEST(rtl_coverage, files_hold_the_terminal_table_for_every_block) {
  coverage_run c = verify_with_coverage("cov_rt", "--block reorder_tracker --window 64 --cycles 20000 --seed 2");
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  expect_files_match_table(c, "reorder_tracker");
  EXPECT_EQ(c.report["seed"].get<uint64_t>(), 2u);
  EXPECT_EQ(c.report["cycles"].get<uint64_t>(), 20000u);
  c = verify_with_coverage("cov_cnp", "--block cnp_gen --cycles 20000");
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  expect_files_match_table(c, "cnp_gen");
  c = verify_with_coverage("cov_rp", "--block dcqcn_rp --cycles 2000");
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  expect_files_match_table(c, "dcqcn_rp");
}

TEST(rtl_coverage, a_short_run_is_not_closed_and_names_what_it_missed) {
  // 50 cycles: the head cannot wrap a 24-bit PSN space, nor the window fill, in so few arrivals.
  const coverage_run c = verify_with_coverage("cov_short", "--block reorder_tracker --window 64 --cycles 50");
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  expect_files_match_table(c, "reorder_tracker");
  EXPECT_FALSE(c.report["closed"].get<bool>());
  const auto not_hit = c.report["not_hit"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(not_hit.begin(), not_hit.end(), "head_wrap_crossed"), not_hit.end());
  EXPECT_NE(c.html.find("not closed: "), std::string::npos);
  EXPECT_NE(c.html.find("NOT HIT"), std::string::npos);
}

TEST(rtl_coverage, an_unwritable_path_is_refused_before_the_bench_runs) {
  const run_result r =
      fabricsim("verify-rtl --block reorder_tracker --cycles 100000000 --coverage-json /nonexistent/dir/c.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--coverage-json /nonexistent/dir/c.json: cannot open for writing"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("coverage bins"), std::string::npos) << r.output;  // the bench did not run
}

}  // namespace rtl_coverage_test
