// Tests of the comparison plumbing (testbench/compare): the --compare option and what a forked child's end
// looks like to the parent (result, configuration error, other error, crash). Whole comparisons run through
// the CLI in tests/cli.
#include "testbench/compare.h"
#include "tests/support/error_of.h"

#include <csignal>
#include <cstdlib>
#include <functional>

#include <gtest/gtest.h>

namespace fabricsim::testbench {
namespace compare_test {

using test::error_of;

TEST(compare, option_parses_key_and_values) {
  const compare_params c = parse_compare_option("nic.path_entropy=fixed,per_packet");
  EXPECT_EQ(c.key, "nic.path_entropy");
  EXPECT_EQ(c.values, (std::vector<std::string>{"fixed", "per_packet"}));
  EXPECT_EQ(parse_compare_option("seed=3").values, (std::vector<std::string>{"3"}));
}

TEST(compare, option_errors) {
  EXPECT_EQ(error_of([] { parse_compare_option("seed"); }),
            "--compare seed: no '=' (expected KEY=V1,V2,..., e.g. --compare nic.path_entropy=fixed,per_packet)");
  EXPECT_EQ(error_of([] { parse_compare_option("=1"); }),
            "--compare =1: empty key (expected KEY=V1,V2,..., e.g. --compare nic.path_entropy=fixed,per_packet)");
  EXPECT_EQ(error_of([] { parse_compare_option("seed=1,,2"); }),
            "--compare seed=1,,2: empty value (expected KEY=V1,V2,..., e.g. --compare nic.path_entropy=fixed,"
            "per_packet)");
}

TEST(compare, forked_child_outcomes) {
  child_outcome c = run_forked([] { return std::string("result"); });
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.signal, 0);
  EXPECT_EQ(c.output, "result");
  c = run_forked([]() -> std::string { throw core::config_error("t.yaml:3: bad"); });
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.output, "t.yaml:3: bad");
  c = run_forked([]() -> std::string { throw std::logic_error("broken"); });
  EXPECT_EQ(c.exit_code, 3);
  EXPECT_EQ(c.output, "broken");
  c = run_forked([]() -> std::string {
    std::signal(SIGABRT, SIG_DFL);
    std::abort();
  });
  EXPECT_EQ(c.signal, SIGABRT);
  // Large results arrive whole through the pipe.
  c = run_forked([] { return std::string(1 << 20, 'x'); });
  EXPECT_EQ(c.output.size(), size_t(1) << 20);
}

TEST(compare, a_failing_run_names_the_value) {
  // Scenarios the children cannot plan: a workload with no operation fails in the elaboration check.
  compare_params c{"seed", {"1", "2"}};
  std::vector<scenario> runs(2);
  runs[0].source = runs[1].source = "t.yaml";
  EXPECT_EQ(error_of([&] { run_comparison(c, runs, {}, "--compare"); }),
            "--compare seed=1: t.yaml: the workload posts no RDMA operation");
}

}  // namespace compare_test
}  // namespace fabricsim::testbench
