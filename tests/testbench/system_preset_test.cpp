// System presets (testbench/system_preset.h): what each preset sets, against the published figures in
// docs/calibration.md (written out here, not read from the code); that the file's keys override it and
// `fabricsim explain` names the preset as the origin of the rest; and the refusals naming the keys.
#include "testbench/system_preset.h"

#include <gtest/gtest.h>

#include <string>

#include "testbench/explain.h"
#include "testbench/scenario.h"
#include "tests/support/error_of.h"

namespace fabricsim::testbench {
namespace system_preset_test {

using test::error_of;

scenario load(const std::string& yaml, const std::vector<std::string>& set = {}) {
  return load_scenario_text(yaml, "sys.yaml", set);
}

// A cluster's expected shape, from the public figures: NVL72 = 72 GPUs, 18 NVLink switch chips (nine trays
// of two); HGX = 8 GPUs, 2 chips (8 x 18 links = 144 ports = two 72-port chips); every GPU 18 links.
struct expected {
  const char* preset;
  const char* count_key;
  uint64_t gpus, chips, nic_gbps, pcie_gen;
};

class each_preset : public ::testing::TestWithParam<expected> {};

TEST_P(each_preset, sets_the_published_figures_and_a_rail_per_gpu) {
  const expected& e = GetParam();
  const scenario s =
      load(std::string("system: {preset: ") + e.preset + ", " + e.count_key + ": 3, scale_out: quantum_x800}\n");
  EXPECT_EQ(s.nvlink.gpus_per_domain, e.gpus);
  EXPECT_EQ(s.nvlink.switch_chips, e.chips);
  EXPECT_EQ(s.nvlink.links_per_gpu, 18u);
  EXPECT_EQ(s.nvlink.domains, 3u);
  EXPECT_EQ(s.topology.kind, "rail_optimized");
  EXPECT_EQ(s.topology.rails, e.gpus);
  EXPECT_EQ(s.topology.groups * s.topology.hosts_per_leaf, 3u);
  EXPECT_EQ(s.topology.host_count(), 3 * e.gpus);  // one NIC per GPU
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, double(e.nic_gbps));
  EXPECT_EQ(s.nic.placement, "pcie");
  EXPECT_EQ(s.pcie.nic_generation, e.pcie_gen);
  EXPECT_EQ(s.switch_model.name, "quantum_x800");
  EXPECT_EQ(s.key_sources.at("nvlink.domains"), std::string("system.preset ") + e.preset);
}

INSTANTIATE_TEST_SUITE_P(presets, each_preset,
                         ::testing::Values(expected{"gb200_nvl72", "racks", 72, 18, 400, 5},
                                           expected{"gb300_nvl72", "racks", 72, 18, 800, 6},
                                           expected{"hgx_b200", "nodes", 8, 2, 400, 5},
                                           expected{"hgx_b300", "nodes", 8, 2, 800, 6}));

TEST(system_preset, spectrum_x_is_spectrum4_with_adaptive_routing_and_400g_ethernet_ports) {
  const scenario s = load("system: {preset: gb300_nvl72, racks: 2, scale_out: spectrum_x}\n");
  EXPECT_EQ(s.switch_model.name, "spectrum4");
  EXPECT_EQ(s.switch_.routing, "adaptive");
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, 400.0);  // ConnectX-8's Ethernet ports: up to 400 Gb/s each
}

TEST(system_preset, the_files_keys_override_it_and_explain_names_each_origin) {
  const scenario s = load(
      "system: {preset: gb300_nvl72, racks: 2}\n"
      "nvlink: {switch_latency_ns: 200}\n"
      "topology: {link_gbps: 400}\n",
      {"pcie.gpu_gen=5"});
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, 400.0);
  EXPECT_EQ(s.pcie.gpu_generation, 5u);
  EXPECT_EQ(s.key_sources.at("topology.link_gbps"), "sys.yaml:3");
  EXPECT_EQ(s.key_sources.at("topology.rails"), "system.preset gb300_nvl72");
  const std::string text = explain_scenario(s);
  auto line_of = [&](const std::string& key) {
    const size_t at = text.find("\n" + key + " ");
    return at == std::string::npos ? std::string() : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("nvlink.gpus_per_domain").find("system.preset gb300_nvl72"), std::string::npos) << text;
  EXPECT_NE(line_of("nvlink.switch_latency_ns").find("sys.yaml:2"), std::string::npos) << text;
  EXPECT_NE(line_of("pcie.gpu_gen").find("--set pcie.gpu_gen=5"), std::string::npos) << text;
  EXPECT_NE(line_of("pcie.nic_gen").find("system.preset gb300_nvl72"), std::string::npos) << text;
  EXPECT_NE(line_of("nic.mtu_bytes").find("default"), std::string::npos) << text;
}

TEST(system_preset, bad_input_is_refused_naming_the_keys) {
  EXPECT_NE(error_of([] {
              load("system: {preset: gb200_nvl72, racks: 0}\n");
            }).find("sys.yaml: system.racks 0: system.preset gb200_nvl72 needs at least one rack"),
            std::string::npos);
  EXPECT_NE(error_of([] { load("system: {preset: hgx_b300}\n"); }).find("system.nodes 0"), std::string::npos);
  EXPECT_NE(error_of([] {
              load("system: {preset: hgx_b200, racks: 2}\n");
            }).find("system.racks 2: system.preset hgx_b200 counts nodes (system.nodes)"),
            std::string::npos);
  const std::string unknown = error_of([] { load("system: {preset: gb400_nvl144, racks: 1}\n"); });
  EXPECT_NE(unknown.find("system.preset"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("gb300_nvl72"), std::string::npos) << unknown;  // the choices are listed
  const std::string rails = error_of([] { load("system: {preset: gb300_nvl72, racks: 2}\ntopology: {rails: 8}\n"); });
  EXPECT_NE(rails.find("topology.rails 8 (sys.yaml:2) contradicts system.preset gb300_nvl72 (sys.yaml:1)"),
            std::string::npos)
      << rails;
  EXPECT_NE(rails.find("nvlink.gpus_per_domain = 72 (system.preset gb300_nvl72)"), std::string::npos) << rails;
  const std::string domains = error_of([] { load("system: {preset: hgx_b200, nodes: 4}\nnvlink: {domains: 3}\n"); });
  EXPECT_NE(domains.find("nvlink.domains is 3 (sys.yaml:2)"), std::string::npos) << domains;
  const std::string kind =
      error_of([] { load("system: {preset: hgx_b200, nodes: 4}\ntopology: {kind: leaf_spine}\n"); });
  EXPECT_NE(kind.find("topology.kind leaf_spine (sys.yaml:2) contradicts"), std::string::npos) << kind;
  const std::string placement = error_of([] { load("system: {preset: hgx_b200, nodes: 2}\n", {"nic.placement=dmi"}); });
  EXPECT_NE(placement.find("nic.placement dmi (--set nic.placement=dmi) contradicts"), std::string::npos) << placement;
  const std::string sw = error_of(
      [] { load("system: {preset: gb200_nvl72, racks: 1, scale_out: spectrum_x}\nswitch: {model: quantum_x800}\n"); });
  EXPECT_NE(sw.find("switch.model quantum_x800 (sys.yaml:2) contradicts"), std::string::npos) << sw;
  EXPECT_NE(error_of([] { load("system: {racks: 2}\n"); }).find("system.racks (sys.yaml:1) needs a system.preset"),
            std::string::npos);
}

}  // namespace system_preset_test
}  // namespace fabricsim::testbench
