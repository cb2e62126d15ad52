// Bench sensitivity: every deliberately mutated RTL variant (rtl/mutants/<block>/<N>.patch, generated mutant N of
// verify-rtl --mutate) fails its block's differential bench under the default stimulus, while the real RTL passes
// the same run.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/cnp_gen_rtl.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/dcqcn_rp_differential.h"
#include "sc_models/nic/dcqcn_rp_rtl.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_differential.h"
#include "sc_models/nic/reorder_tracker_rtl.h"

namespace {

using namespace fabricsim::nic;

// The default stimulus of `fabricsim verify-rtl` (testbench/verify_rtl.h): 100000 cycles, seed 1.
constexpr uint64_t default_cycles = 100000;
constexpr uint64_t default_seed = 1;

TEST(rtl_mutants, every_block_has_at_least_three) {
  EXPECT_GE(reorder_tracker_rtl::compiled_mutants().size(), 3u);
  EXPECT_GE(cnp_gen_rtl::compiled_mutants().size(), 3u);
  EXPECT_GE(dcqcn_rp_rtl::compiled_mutants().size(), 3u);
}

TEST(rtl_mutants, reorder_tracker_bench_catches_every_mutant) {
  const uint32_t window = reorder_tracker_rtl::mutant_window();
  const auto real = run_reorder_tracker_differential(window, default_cycles, default_seed);
  ASSERT_TRUE(real.matched) << real.mismatch;
  for (uint32_t mutant : reorder_tracker_rtl::compiled_mutants()) {
    const auto r = run_reorder_tracker_differential(window, default_cycles, default_seed, "", mutant);
    EXPECT_FALSE(r.matched) << "reorder_tracker mutant " << mutant << " survived " << r.cycles << " cycles";
    if (!r.matched) {
      EXPECT_FALSE(r.mismatch.empty());
    }
  }
}

TEST(rtl_mutants, cnp_gen_bench_catches_every_mutant) {
  const uint32_t flows = cnp_gen_rtl::mutant_flows();
  const auto real = run_cnp_gen_differential(flows, default_cycles, default_seed);
  ASSERT_TRUE(real.matched) << real.mismatch;
  for (uint32_t mutant : cnp_gen_rtl::compiled_mutants()) {
    const auto r = run_cnp_gen_differential(flows, default_cycles, default_seed, "", mutant);
    EXPECT_FALSE(r.matched) << "cnp_gen mutant " << mutant << " survived " << r.cycles << " cycles";
    if (!r.matched) {
      EXPECT_FALSE(r.mismatch.empty());
    }
  }
}

TEST(rtl_mutants, dcqcn_rp_bench_catches_every_mutant) {
  dcqcn_rp_differential_options o;
  o.cycles = default_cycles;
  o.seed = default_seed;
  const auto real = run_dcqcn_rp_differential(o);
  ASSERT_TRUE(real.matched) << real.mismatch;
  for (uint32_t mutant : dcqcn_rp_rtl::compiled_mutants()) {
    o.mutant = mutant;
    const auto r = run_dcqcn_rp_differential(o);
    EXPECT_FALSE(r.matched) << "dcqcn_rp mutant " << mutant << " survived " << r.transactions << " transactions";
    if (!r.matched) {
      EXPECT_FALSE(r.mismatch_signal.empty());
    }
  }
}

TEST(rtl_mutants, factories_build_mutants_by_kind) {
  auto tracker = make_reorder_tracker("rtl_mutant_16", reorder_tracker_rtl::mutant_window());
  EXPECT_STREQ(tracker->kind(), "rtl_mutant_16");
  cnp_gen_params cnp;
  cnp.flows = cnp_gen_rtl::mutant_flows();
  EXPECT_STREQ(make_cnp_gen("rtl_mutant_12", cnp)->kind(), "rtl_mutant_12");
  EXPECT_STREQ(make_dcqcn_rate_engine("rtl_mutant_314", dcqcn_params{})->kind(), "rtl_mutant_314");
  // The production kinds are unchanged.
  EXPECT_STREQ(make_reorder_tracker("rtl", 256)->kind(), "rtl");
}

TEST(rtl_mutants, errors_name_the_mutant_and_what_is_built) {
  try {
    reorder_tracker_rtl rtl(256, "", 16);
    FAIL() << "a mutant at an unbuilt window was accepted";
  } catch (const fabricsim::core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("window 64 only"), std::string::npos) << e.what();
  }
  try {
    cnp_gen_rtl rtl(cnp_gen_rtl::mutant_flows(), "", 99);
    FAIL() << "an unknown mutant was accepted";
  } catch (const fabricsim::core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("mutant 99 is not built; built: 12, 18, 52"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_reorder_tracker("rtl_mutant_x", 64), fabricsim::core::config_error);
  EXPECT_THROW(make_dcqcn_rate_engine("rtl_mutant_0", dcqcn_params{}), fabricsim::core::config_error);
}

}  // namespace
