// Configuration errors of the Spectrum-4 switch: each bad setting is a core::config_error naming the
// instance and the key.
#include <gtest/gtest.h>

#include <functional>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"

namespace fabricsim::test {
namespace spectrum_config_test {

struct bad_config {
  std::string what;
  std::function<void(sw::spectrum_params&, unsigned& ports, core::link_params&)> spoil;
  std::vector<std::string> keys;  // each must appear in the message
};

std::ostream& operator<<(std::ostream& os, const bad_config& b) { return os << b.what; }

class config_errors : public ::testing::TestWithParam<bad_config> {};

TEST_P(config_errors, name_the_instance_and_the_key) {
  const bad_config& b = GetParam();
  const child_result c = run_in_child([&]() -> std::string {
    sw::spectrum_params sp;
    unsigned ports = 4;
    core::link_params lp;
    b.spoil(sp, ports, lp);
    try {
      spectrum_rig rig(sp, ports, lp);
    } catch (const core::config_error& e) {
      return std::string("config_error: ") + e.what();
    }
    return "accepted";
  });
  ASSERT_TRUE(c.ok) << c.output;  // any other exception fails here
  EXPECT_EQ(c.output.rfind("config_error: ", 0), 0u) << c.output;
  EXPECT_NE(c.output.find("sw0"), std::string::npos) << c.output;
  for (const std::string& k : b.keys) EXPECT_NE(c.output.find(k), std::string::npos) << k << " in " << c.output;
}

using P = sw::spectrum_params;
using L = core::link_params;

INSTANTIATE_TEST_SUITE_P(
    cases, config_errors,
    ::testing::Values(
        bad_config{"weight_zero", [](P& p, unsigned&, L&) { p.ets_weights = "0:50,3:0"; }, {"ets_weights", "3:0"}},
        bad_config{"weight_too_big", [](P& p, unsigned&, L&) { p.ets_weights = "0:1001"; }, {"ets_weights"}},
        bad_config{"weight_class_8", [](P& p, unsigned&, L&) { p.ets_weights = "0:50,8:50"; }, {"ets_weights"}},
        bad_config{"weight_not_a_number", [](P& p, unsigned&, L&) { p.ets_weights = "0:fifty"; }, {"ets_weights"}},
        bad_config{"weight_missing", [](P& p, unsigned&, L&) { p.ets_weights = "0"; }, {"ets_weights"}},
        bad_config{"lossless_class_8", [](P& p, unsigned&, L&) { p.lossless_priorities = "3,8"; },
                   {"lossless_priorities", "8"}},
        bad_config{"lossless_not_a_list", [](P& p, unsigned&, L&) { p.lossless_priorities = "34"; },
                   {"lossless_priorities"}},
        bad_config{"strict_and_weighted",
                   [](P& p, unsigned&, L&) {
                     p.strict_priorities = "3,6";
                     p.ets_weights = "0:50,3:50";
                   },
                   {"strict_priorities", "ets_weights", "class 3"}},
        bad_config{"xon_above_xoff",
                   [](P& p, unsigned&, L&) {
                     p.pfc_xoff_bytes = 100'000;
                     p.pfc_xon_bytes = 100'001;
                   },
                   {"pfc_xon_bytes", "pfc_xoff_bytes"}},
        bad_config{"kmin_above_kmax",
                   [](P& p, unsigned&, L&) {
                     p.ecn_kmin_bytes = 2'000'000;
                     p.ecn_kmax_bytes = 1'999'999;
                   },
                   {"ecn_kmin_bytes", "ecn_kmax_bytes"}},
        bad_config{"too_many_ports",
                   [](P& p, unsigned& ports, L&) {
                     p.port_config = "64x800";
                     ports = 65;
                   },
                   {"port_config", "64x800"}},
        bad_config{"link_faster_than_port",
                   [](P& p, unsigned&, L& l) {
                     p.port_config = "256x200";
                     l.rate_gbps = 400;
                   },
                   {"port_config", "256x200"}},
        bad_config{"port_config_malformed", [](P& p, unsigned&, L&) { p.port_config = "128x"; }, {"port_config"}}),
    [](const ::testing::TestParamInfo<bad_config>& i) { return i.param.what; });

TEST(spectrum_config, the_defaults_and_a_full_port_count_are_accepted) {
  const child_result c = run_in_child([] {
    sw::spectrum_params sp;
    sp.port_config = "64x800";
    core::link_params lp;
    lp.rate_gbps = 800;
    spectrum_rig rig(sp, 64, lp);
    return std::string("ok");
  });
  EXPECT_TRUE(c.ok) << c.output;
}

}  // namespace spectrum_config_test
}  // namespace fabricsim::test
