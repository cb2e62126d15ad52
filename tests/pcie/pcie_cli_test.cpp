// `fabricsim pcie-bench` from the command line: the example in its help runs and writes its JSON, and bad
// flags are errors that name the field.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

namespace fabricsim::test {
namespace {

TEST(pcie_cli, help_example_runs_and_writes_json) {
  const run_result h = fabricsim("pcie-bench --help");
  ASSERT_EQ(h.exit_code, 0) << h.output;
  const std::string marker = "Example: fabricsim ";
  const size_t at = h.output.find(marker);
  ASSERT_NE(at, std::string::npos) << h.output;
  std::string example = h.output.substr(at + marker.size(), h.output.find('\n', at) - at - marker.size());
  const std::string out = testing::TempDir() + "pcie.json";
  const size_t j = example.find("pcie.json");
  ASSERT_NE(j, std::string::npos) << example;
  example.replace(j, 9, out);
  const run_result r = fabricsim(example);
  ASSERT_EQ(r.exit_code, 0) << example << "\n" << r.output;
  EXPECT_NE(r.output.find("gpudirect receive: 64-byte WRITE (last bit in to placed) latency"), std::string::npos) << r.output;
  std::ifstream f(out);
  const nlohmann::json doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc.at("runs").size(), 1u);
  const auto& points = doc.at("runs")[0].at("points");
  EXPECT_EQ(points.size(), 17u);  // 64 B .. 4 MiB
  for (const auto& p : points) EXPECT_TRUE(p.at("verified").get<bool>()) << p.dump();
}

TEST(pcie_cli, runs_are_deterministic) {
  const std::string a = testing::TempDir() + "pcie_a.json", b = testing::TempDir() + "pcie_b.json";
  const std::string args = "pcie-bench --max-size 16384 --point-bytes 65536 --json ";
  ASSERT_EQ(fabricsim(args + a).exit_code, 0);
  ASSERT_EQ(fabricsim(args + b).exit_code, 0);
  std::ifstream fa(a), fb(b);
  EXPECT_EQ(nlohmann::json::parse(fa), nlohmann::json::parse(fb));
}

TEST(pcie_cli, bad_flags_name_the_field) {
  run_result r = fabricsim("pcie-bench --mps 384");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tlp.max_payload_bytes 384 is not a power of two"), std::string::npos) << r.output;
  r = fabricsim("pcie-bench --p2p sometimes");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("peer_to_peer: \"sometimes\" is not one of: direct, via_root_complex"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace fabricsim::test
