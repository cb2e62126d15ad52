// DCQCN notification point (CNP generator): both kinds against sequences worked by hand from the moderation
// rule, the documented cycle timing, and the Verilated RTL against the reference model under random stimulus.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/cnp_gen_ref.h"
#include "sc_models/nic/cnp_gen_rtl.h"

namespace fabricsim::nic {
namespace {

constexpr uint64_t wrap_cycles = uint64_t{1} << 32;

cnp_gen_params params(uint64_t interval_ns, const std::string& mode = "per_flow", uint64_t flows = 64) {
  cnp_gen_params p;
  p.min_interval_ns = interval_ns;
  p.mode = mode;
  p.flows = flows;
  p.clock_ghz = 1.0;  // one cycle per ns, so the sequences below read in either unit
  return p;
}

// ---------------------------------------------------------------------------------------------------------
// Parameters.

TEST(cnp_gen_params, interval_in_cycles_rounds_at_the_clock) {
  cnp_gen_params p;
  EXPECT_EQ(p.min_interval_cycles(), 2000u) << "default 2 us at 1 GHz";
  p.min_interval_ns = 50000;  // the DCQCN paper's 50 us
  p.clock_ghz = 1.5;
  EXPECT_EQ(p.min_interval_cycles(), 75000u);
  p.min_interval_ns = 3;
  p.clock_ghz = 0.5;
  EXPECT_EQ(p.min_interval_cycles(), 2u) << "1.5 cycles rounds to the nearest";
}

TEST(cnp_gen_params, presets_from_the_calibration_sheet) {
  EXPECT_EQ(cnp_gen_params::nvidia_cx8().min_interval_cycles(), 2000u);
  EXPECT_TRUE(cnp_gen_params::nvidia_cx8().per_port());
  EXPECT_EQ(cnp_gen_params::dcqcn_paper().min_interval_cycles(), 50000u);
  EXPECT_FALSE(cnp_gen_params::dcqcn_paper().per_port());
  EXPECT_NO_THROW(make_cnp_gen("rtl", cnp_gen_params::dcqcn_paper()));
}

TEST(cnp_gen_params, illegal_fields_name_the_field) {
  auto error_of = [](const cnp_gen_params& p) {
    try {
      make_cnp_gen("ref", p);
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(params(100, "per_qp")).find("mode"), std::string::npos);
  EXPECT_NE(error_of(params(100, "per_flow", 48)).find("power of two"), std::string::npos);
  EXPECT_NE(error_of(params(100, "per_flow", 128)).find("64, 1024"), std::string::npos)
      << "a flow count the RTL was not compiled for lists the compiled ones";
  cnp_gen_params slow = params(100'000'000);
  slow.clock_ghz = 10;  // 1e9 cycles: fine; 1e8 ns at 10 GHz is still below 2^31
  EXPECT_EQ(error_of(slow), "no error");
  slow.clock_ghz = 25;  // out of the clock range
  EXPECT_NE(error_of(slow).find("clock_ghz"), std::string::npos);
  EXPECT_NE(error_of(params(200'000'000)).find("min_interval_ns"), std::string::npos);
  EXPECT_THROW(make_cnp_gen("verilog", params(100)), core::config_error);
}

TEST(cnp_gen_params, reset_with_other_flows_is_rejected) {
  auto gen = make_cnp_gen("ref", params(100));
  EXPECT_THROW(gen->reset(params(100, "per_flow", 1024)), core::config_error);
}

// ---------------------------------------------------------------------------------------------------------
// Transactions worked by hand, on both kinds through the one handshake adapter.

class cnp_gen_transactions : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<cnp_gen> make(const cnp_gen_params& p) { return make_cnp_gen(GetParam(), p); }
};

TEST_P(cnp_gen_transactions, reports_kind_and_flows) {
  auto gen = make(params(100, "per_flow", 1024));
  EXPECT_STREQ(gen->kind(), GetParam().c_str());
  EXPECT_EQ(gen->flows(), 1024u);
}

TEST_P(cnp_gen_transactions, per_flow_interval_boundary_and_aliasing) {
  auto gen = make(params(100));  // 100 cycles
  EXPECT_TRUE(gen->marked_arrival(5, 1000)) << "first CNP of flow 5";
  EXPECT_FALSE(gen->marked_arrival(5, 1050));
  EXPECT_FALSE(gen->marked_arrival(5, 1099)) << "one cycle before the boundary";
  EXPECT_TRUE(gen->marked_arrival(5, 1100)) << "exactly at the boundary";
  EXPECT_TRUE(gen->marked_arrival(6, 1150)) << "another flow has its own context";
  EXPECT_FALSE(gen->marked_arrival(5 + 64, 1150)) << "QPN 69 shares flow 5's context (69 mod 64)";
  EXPECT_TRUE(gen->marked_arrival(5 + 64, 1200)) << "100 cycles after flow 5's CNP at 1100";
  EXPECT_FALSE(gen->marked_arrival(5, 1299)) << "QPN 69's CNP at 1200 moderates QPN 5 too";
  const cnp_gen_counters c = gen->counters();
  EXPECT_EQ(c.emitted, 4u);
  EXPECT_EQ(c.suppressed, 4u);
}

TEST_P(cnp_gen_transactions, per_port_one_context_for_every_flow) {
  auto gen = make(params(100, "per_port"));
  EXPECT_TRUE(gen->marked_arrival(1, 0));
  EXPECT_FALSE(gen->marked_arrival(2, 50)) << "flow 2 never had a CNP, but the port did";
  EXPECT_TRUE(gen->marked_arrival(2, 100));
  EXPECT_FALSE(gen->marked_arrival(1, 150));
  EXPECT_FALSE(gen->marked_arrival(3, 199));
  EXPECT_TRUE(gen->marked_arrival(3, 200));
  EXPECT_EQ(gen->counters().emitted, 3u);
  EXPECT_EQ(gen->counters().suppressed, 3u);
  // The same arrivals per flow: every flow's first CNP goes out.
  gen->reset(params(100, "per_flow"));
  EXPECT_EQ(gen->counters().emitted, 0u) << "reset zeroes the counters";
  for (auto [flow, now, emit] : std::vector<std::tuple<uint32_t, uint64_t, bool>>{
           {1, 0, true}, {2, 50, true}, {2, 100, false}, {1, 150, true}, {3, 199, true}, {3, 200, false}})
    EXPECT_EQ(gen->marked_arrival(flow, now), emit) << "flow " << flow << " at " << now;
}

TEST_P(cnp_gen_transactions, elapsed_time_is_exact_across_the_time_wrap) {
  auto gen = make(params(100));
  const uint64_t start = 7 * wrap_cycles - 10;  // the block sees 2^32 - 10
  EXPECT_TRUE(gen->marked_arrival(7, start));
  EXPECT_FALSE(gen->marked_arrival(7, start + 99)) << "low 32 bits 89: 99 cycles later, not 2^32 - 99 earlier";
  EXPECT_TRUE(gen->marked_arrival(7, start + 100)) << "exactly at the boundary, past the wrap";
}

TEST_P(cnp_gen_transactions, silence_of_a_whole_time_wrap_aliases_as_documented) {
  // rtl/cnp_gen.sv: a context silent for 2^32 + e cycles looks e cycles old (4.3 s at 1 GHz).
  auto gen = make(params(100));
  EXPECT_TRUE(gen->marked_arrival(9, 0));
  EXPECT_FALSE(gen->marked_arrival(9, wrap_cycles + 50));
  EXPECT_TRUE(gen->marked_arrival(9, wrap_cycles + 100));
}

TEST_P(cnp_gen_transactions, zero_interval_emits_every_time) {
  auto gen = make(params(0));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(gen->marked_arrival(3, 42));
  EXPECT_EQ(gen->counters().emitted, 5u);
}

TEST_P(cnp_gen_transactions, reset_forgets_every_cnp_and_upper_qpn_bits_are_ignored) {
  auto gen = make(params(1000));
  EXPECT_TRUE(gen->marked_arrival(1, 10));
  gen->reset(params(1000));
  EXPECT_TRUE(gen->marked_arrival(1, 11)) << "the table was cleared";
  EXPECT_FALSE(gen->marked_arrival(1 | (1u << 24), 12)) << "the BTH destination QP is 24 bits";
}

INSTANTIATE_TEST_SUITE_P(kinds, cnp_gen_transactions, ::testing::Values("ref", "rtl"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------------------
// The documented cycle timing, pinned on both cycle-level models (the differential test only proves they agree).

std::unique_ptr<cnp_gen_cycle_model> make_cycle_model(const std::string& kind, uint32_t flows) {
  if (kind == "rtl") return std::make_unique<cnp_gen_rtl>(flows);
  return std::make_unique<cnp_gen_ref>(flows);
}

class cnp_gen_timing : public ::testing::TestWithParam<std::string> {};

TEST_P(cnp_gen_timing, table_clear_then_one_arrival_per_clock) {
  auto model = make_cycle_model(GetParam(), 64);
  cnp_gen_inputs in;
  in.rst_n = false;
  cnp_gen_outputs out = model->step(in);
  EXPECT_FALSE(out.in_ready);
  EXPECT_TRUE(out.busy) << "the clear starts with the reset";
  in = cnp_gen_inputs{};
  in.init_valid = true;
  in.init_interval = 10;
  out = model->step(in);
  EXPECT_FALSE(out.in_ready) << "nothing is taken in an init cycle";
  in = cnp_gen_inputs{};
  in.in_valid = true;
  in.in_flow = 4;
  in.in_now = 500;
  int stalled = 0;
  for (out = model->step(in); !out.in_ready; out = model->step(in)) {
    EXPECT_TRUE(out.busy);
    ++stalled;
  }
  EXPECT_EQ(stalled, 64) << "one table entry cleared per clock";
  // Accepted; a second arrival of the same flow one cycle later sees the first one's CNP.
  in.in_now = 501;
  out = model->step(in);
  EXPECT_TRUE(out.res_valid);
  EXPECT_TRUE(out.res_emit);
  EXPECT_EQ(out.res_flow, 4u);
  EXPECT_EQ(out.cnp_count, 1u);
  EXPECT_TRUE(out.in_ready);
  out = model->step(cnp_gen_inputs{});
  EXPECT_TRUE(out.res_valid);
  EXPECT_FALSE(out.res_emit) << "back to back: the table write is visible to the next arrival";
  EXPECT_EQ(out.suppressed_count, 1u);
  out = model->step(cnp_gen_inputs{});
  EXPECT_FALSE(out.res_valid);
  EXPECT_EQ(out.res_flow, 0u);
  EXPECT_EQ(out.cnp_count, 1u) << "counters hold";
}

INSTANTIATE_TEST_SUITE_P(kinds, cnp_gen_timing, ::testing::Values("ref", "rtl"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------------------
// Differential bench: identical inputs into both cycle-level models, every output port compared every cycle.

class cnp_gen_differential : public ::testing::TestWithParam<uint32_t> {};

TEST_P(cnp_gen_differential, rtl_matches_reference_and_covers_every_bin) {
  const uint32_t flows = GetParam();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const cnp_gen_differential_result r = run_cnp_gen_differential(flows, 150000, seed * 7919 + flows);
    ASSERT_TRUE(r.matched) << "flows " << flows << " cycle " << r.mismatch_cycle << ": " << r.mismatch;
    EXPECT_GT(r.transactions, 10000u);
    for (size_t b = 0; b < cnp_gen_bin_count; ++b)
      EXPECT_GT(r.coverage[b], 0u) << "seed " << r.seed << " missed bin " << to_string(static_cast<cnp_gen_bin>(b));
  }
}

INSTANTIATE_TEST_SUITE_P(compiled_flows, cnp_gen_differential, ::testing::ValuesIn(cnp_gen_rtl::compiled_flows()),
                         [](const auto& info) { return "flows_" + std::to_string(info.param); });

TEST(cnp_gen_differential_default, default_cli_run_hits_every_bin) {
  // What `fabricsim verify-rtl --block cnp_gen` runs by default: flows 64, 100000 cycles, seed 1.
  const cnp_gen_differential_result r = run_cnp_gen_differential(64, 100000, 1);
  ASSERT_TRUE(r.matched) << r.mismatch;
  EXPECT_TRUE(r.all_bins_hit());
}

TEST(cnp_gen_differential_default, mismatch_report_names_signal_expected_got_and_seed) {
  cnp_gen_outputs ref, rtl;
  ref.res_emit = true;
  const std::string d = describe_difference(ref, rtl);
  EXPECT_EQ(d, "signal rsp_emit_o: expected 1, got 0\n");
}

TEST(cnp_gen_trace, rtl_writes_fst_waveform) {
  const std::string path = testing::TempDir() + "cnp_gen_test.fst";
  std::filesystem::remove(path);
  const cnp_gen_differential_result r = run_cnp_gen_differential(64, 500, 2, path);
  ASSERT_TRUE(r.matched) << r.mismatch;
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 100u);
}

TEST(cnp_gen_rtl_lifetime, many_models_alive_and_destroyed_in_any_order) {
  // Verilator 5.006 teardown: each model makes its own context current before final().
  std::vector<std::unique_ptr<cnp_gen>> gens;
  for (int i = 0; i < 6; ++i) gens.push_back(make_cnp_gen("rtl", params(10, "per_flow", i % 2 ? 64 : 1024)));
  for (auto& g : gens) EXPECT_TRUE(g->marked_arrival(1, 1));
  gens.erase(gens.begin() + 2);
  gens.erase(gens.begin());
  gens.clear();
}

}  // namespace
}  // namespace fabricsim::nic
