// Receiver PSN reorder tracker of a RoCEv2 NIC: the Verilated RTL against the reference model cycle by cycle,
// and both kinds against transactions computed by hand from the PSN rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_ref.h"
#include "sc_models/nic/reorder_tracker_rtl.h"
#include "sc_models/nic/reorder_tracker_differential.h"

namespace fabricsim::nic {
namespace {

constexpr uint32_t half_space = 1u << 23;
constexpr uint32_t wrap(uint64_t psn) { return static_cast<uint32_t>(psn) & psn_mask; }

// ---------------------------------------------------------------------------------------------------------
// Differential bench: identical inputs into both cycle-level models, every output port compared every cycle.

class reorder_tracker_differential : public ::testing::TestWithParam<uint32_t> {};

TEST_P(reorder_tracker_differential, rtl_matches_reference_every_cycle) {
  const uint32_t window = GetParam();
  constexpr uint64_t seeds = 24;
  const uint64_t cycles_per_seed = 12 * uint64_t{window} + 16000;
  // What the random runs reached, so a weak generator cannot pass silently.
  reorder_tracker_differential_result total;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const reorder_tracker_differential_result r = run_reorder_tracker_differential(window, cycles_per_seed,
                                                                                   seed * 7919 + window);
    ASSERT_TRUE(r.matched) << "window " << window << " seed " << seed * 7919 + window << " cycle "
                           << r.mismatch_cycle << ": " << r.mismatch;
    total.cycles += r.cycles;
    for (size_t v = 0; v < 4; ++v) total.verdicts[v] += r.verdicts[v];
    total.stalled_presentations += r.stalled_presentations;
    total.head_wraps += r.head_wraps;
    total.inits += r.inits;
    total.longest_busy_cycles = std::max(total.longest_busy_cycles, r.longest_busy_cycles);
  }
  RecordProperty("cycles", std::to_string(total.cycles));
  EXPECT_GT(total.verdicts[0], 0u) << "no in_order verdicts";
  EXPECT_GT(total.verdicts[1], 0u) << "no out_of_order verdicts";
  EXPECT_GT(total.verdicts[2], 0u) << "no duplicate verdicts";
  EXPECT_GT(total.verdicts[3], 0u) << "no out_of_window verdicts";
  EXPECT_GT(total.stalled_presentations, 0u) << "never presented a PSN while in_ready was low";
  EXPECT_GT(total.head_wraps, 0u) << "the head never wrapped past 2^24 - 1";
  EXPECT_GT(total.inits, seeds) << "no init in the middle of a run";
  EXPECT_GE(total.longest_busy_cycles, 8u) << "never retired a long run of stored PSNs";
}

INSTANTIATE_TEST_SUITE_P(compiled_windows, reorder_tracker_differential,
                         ::testing::ValuesIn(reorder_tracker_rtl::compiled_windows()),
                         [](const auto& info) { return "window_" + std::to_string(info.param); });

// ---------------------------------------------------------------------------------------------------------
// The documented cycle timing, pinned on both cycle-level models (the differential test only proves they agree).

std::unique_ptr<reorder_tracker_cycle_model> make_cycle_model(const std::string& kind, uint32_t window) {
  if (kind == "rtl") return std::make_unique<reorder_tracker_rtl>(window);
  return std::make_unique<reorder_tracker_ref>(window);
}

class reorder_tracker_timing : public ::testing::TestWithParam<std::string> {};

TEST_P(reorder_tracker_timing, result_next_cycle_and_one_retirement_per_clock) {
  auto model = make_cycle_model(GetParam(), 64);
  reorder_tracker_inputs reset;
  reset.rst_n = false;
  reorder_tracker_outputs out = model->step(reset);
  EXPECT_FALSE(out.in_ready) << "no PSN is taken during reset";
  EXPECT_EQ(out.head_psn, 0u);

  reorder_tracker_inputs init;
  init.init_valid = true;
  init.init_psn = 10;
  init.in_valid = true;  // presented together with init: must not be taken
  init.in_psn = 12;
  out = model->step(init);
  EXPECT_FALSE(out.in_ready);

  auto arrive = [](uint32_t psn) {
    reorder_tracker_inputs in;
    in.in_valid = true;
    in.in_psn = psn;
    return in;
  };
  const reorder_tracker_inputs idle;

  out = model->step(arrive(12));  // accepted: head is 10 now
  EXPECT_TRUE(out.in_ready);
  EXPECT_FALSE(out.res_valid);
  EXPECT_EQ(out.head_psn, 10u);
  out = model->step(arrive(11));  // result of 12 shows while 11 is accepted
  EXPECT_TRUE(out.in_ready);
  EXPECT_TRUE(out.res_valid);
  EXPECT_EQ(out.res_verdict, 1);
  EXPECT_EQ(out.res_psn, 12u);
  out = model->step(arrive(10));
  EXPECT_TRUE(out.in_ready);
  EXPECT_EQ(out.res_psn, 11u);

  // 10 retired at its accepting edge; 11 and 12 follow one per clock while in_ready is low.
  const reorder_tracker_inputs presented = arrive(13);
  out = model->step(presented);
  EXPECT_TRUE(out.res_valid);
  EXPECT_EQ(out.res_verdict, 0);
  EXPECT_EQ(out.res_psn, 10u);
  EXPECT_EQ(out.head_psn, 11u);
  EXPECT_TRUE(out.adv_valid);
  EXPECT_EQ(out.adv_psn, 10u);
  EXPECT_TRUE(out.busy);
  EXPECT_FALSE(out.in_ready);
  out = model->step(presented);
  EXPECT_FALSE(out.res_valid);
  EXPECT_EQ(out.res_psn, 0u) << "result data is zero while res_valid is low";
  EXPECT_EQ(out.head_psn, 12u);
  EXPECT_EQ(out.adv_psn, 11u);
  EXPECT_TRUE(out.busy);
  EXPECT_FALSE(out.in_ready);
  out = model->step(presented);  // 13 accepted in this cycle
  EXPECT_EQ(out.head_psn, 13u);
  EXPECT_TRUE(out.adv_valid);
  EXPECT_EQ(out.adv_psn, 12u);
  EXPECT_FALSE(out.busy);
  EXPECT_TRUE(out.in_ready);
  out = model->step(idle);
  EXPECT_TRUE(out.res_valid);
  EXPECT_EQ(out.res_verdict, 0);
  EXPECT_EQ(out.head_psn, 14u);
  EXPECT_EQ(out.adv_psn, 13u);
  out = model->step(idle);
  EXPECT_FALSE(out.res_valid);
  EXPECT_FALSE(out.adv_valid);
  EXPECT_EQ(out.adv_psn, 0u);
  EXPECT_EQ(out.head_psn, 14u);
}

TEST_P(reorder_tracker_timing, init_abandons_retirement) {
  auto model = make_cycle_model(GetParam(), 64);
  reorder_tracker_inputs in;
  in.rst_n = false;
  model->step(in);
  in = {};
  for (uint32_t psn : {3u, 2u, 1u, 0u}) {
    in.in_valid = true;
    in.in_psn = psn;
    model->step(in);
  }
  in = {};
  reorder_tracker_outputs out = model->step(in);  // 0 retired, 1..3 pending
  EXPECT_TRUE(out.busy);
  EXPECT_EQ(out.head_psn, 1u);
  in.init_valid = true;
  in.init_psn = 500;
  out = model->step(in);
  EXPECT_TRUE(out.busy) << "init takes effect at the edge";
  in = {};
  out = model->step(in);
  EXPECT_FALSE(out.busy);
  EXPECT_TRUE(out.in_ready);
  EXPECT_FALSE(out.adv_valid);
  EXPECT_EQ(out.head_psn, 500u);
}

INSTANTIATE_TEST_SUITE_P(kinds, reorder_tracker_timing, ::testing::Values("ref", "rtl"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------------------
// Transactions computed by hand, through the factory, for both kinds.

class reorder_tracker_transactions : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<reorder_tracker> make(uint32_t window) { return make_reorder_tracker(GetParam(), window); }
};

void expect_result(const psn_result& r, psn_verdict verdict, uint32_t head, uint32_t advanced, uint32_t cycles,
                   const std::string& what) {
  EXPECT_EQ(to_string(r.verdict), std::string(to_string(verdict))) << what;
  EXPECT_EQ(r.head_psn, head) << what;
  EXPECT_EQ(r.advanced, advanced) << what;
  EXPECT_EQ(r.cycles, cycles) << what;
}

TEST_P(reorder_tracker_transactions, reports_kind_and_window) {
  auto t = make(256);
  EXPECT_EQ(std::string(t->kind()), GetParam());
  EXPECT_EQ(t->window(), 256u);
}

TEST_P(reorder_tracker_transactions, window_64_from_zero) {
  auto t = make(64);
  t->reset(0);
  expect_result(t->arrive(3), psn_verdict::out_of_order, 0, 0, 1, "3: d=3");
  expect_result(t->arrive(2), psn_verdict::out_of_order, 0, 0, 1, "2: d=2");
  expect_result(t->arrive(0), psn_verdict::in_order, 1, 1, 1, "0: d=0, 1 not received yet");
  expect_result(t->arrive(1), psn_verdict::in_order, 4, 3, 3, "1: releases 1, 2, 3");
  expect_result(t->arrive(2), psn_verdict::duplicate, 4, 0, 1, "2: d=2-4 mod 2^24 = 0xFFFFFE, behind");
  expect_result(t->arrive(67), psn_verdict::out_of_order, 4, 0, 1, "67: d=63 = Window-1");
  expect_result(t->arrive(68), psn_verdict::out_of_window, 4, 0, 1, "68: d=64 = Window");
  expect_result(t->arrive(67), psn_verdict::duplicate, 4, 0, 1, "67 again: marked");
  expect_result(t->arrive(64), psn_verdict::out_of_order, 4, 0, 1, "64: d=60, not out of window");
  expect_result(t->arrive(5), psn_verdict::out_of_order, 4, 0, 1, "5: d=1");
  expect_result(t->arrive(4), psn_verdict::in_order, 6, 2, 2, "4: releases 5");
  expect_result(t->arrive(68), psn_verdict::out_of_order, 6, 0, 1, "68: d=62 now that head is 6");
}

TEST_P(reorder_tracker_transactions, head_wraps_at_2_pow_24) {
  auto t = make(64);
  t->reset(0xFFFFFE);
  expect_result(t->arrive(0xFFFFFF), psn_verdict::out_of_order, 0xFFFFFE, 0, 1, "d=1");
  expect_result(t->arrive(0x000000), psn_verdict::out_of_order, 0xFFFFFE, 0, 1, "d=2 across the wrap");
  expect_result(t->arrive(0xFFFFFE), psn_verdict::in_order, 0x000001, 3, 3, "releases 0xFFFFFF and 0");
  expect_result(t->arrive(0xFFFFFF), psn_verdict::duplicate, 0x000001, 0, 1, "behind across the wrap");
  expect_result(t->arrive(0x000000), psn_verdict::duplicate, 0x000001, 0, 1, "behind");
  expect_result(t->arrive(0x000001), psn_verdict::in_order, 0x000002, 1, 1, "next in order");
}

TEST_P(reorder_tracker_transactions, behind_head_is_duplicate) {
  auto t = make(256);
  t->reset(100);
  expect_result(t->arrive(99), psn_verdict::duplicate, 100, 0, 1, "d=2^24-1");
  expect_result(t->arrive(wrap(100 + half_space)), psn_verdict::duplicate, 100, 0, 1, "d=2^23");
  expect_result(t->arrive(wrap(100 + half_space - 1)), psn_verdict::out_of_window, 100, 0, 1, "d=2^23-1");
  t->reset(5);
  expect_result(t->arrive(0xFFFFFB), psn_verdict::duplicate, 5, 0, 1, "10 behind, across the wrap");
  expect_result(t->arrive(0x7FFFFF), psn_verdict::out_of_window, 5, 0, 1, "d=2^23-6");
  expect_result(t->arrive(0x800005), psn_verdict::duplicate, 5, 0, 1, "d=2^23");
}

TEST_P(reorder_tracker_transactions, window_boundary_every_compiled_window) {
  for (uint32_t window : reorder_tracker_rtl::compiled_windows()) {
    auto t = make(window);
    for (uint32_t head : {0u, 1000u, psn_mask - 3, psn_mask - window + 1}) {
      const std::string where = "window " + std::to_string(window) + " head " + std::to_string(head);
      t->reset(head);
      expect_result(t->arrive(wrap(uint64_t{head} + window - 1)), psn_verdict::out_of_order, head, 0, 1,
                    where + ": d=Window-1 accepted");
      expect_result(t->arrive(wrap(uint64_t{head} + window)), psn_verdict::out_of_window, head, 0, 1,
                    where + ": d=Window rejected");
    }
  }
}

TEST_P(reorder_tracker_transactions, full_window_drains_one_per_cycle) {
  for (uint32_t window : reorder_tracker_rtl::compiled_windows()) {
    auto t = make(window);
    const uint32_t head = 0xFFFFF0;
    const std::string where = "window " + std::to_string(window);
    t->reset(head);
    for (uint32_t d = window - 1; d >= 1; --d) {
      const psn_result r = t->arrive(wrap(uint64_t{head} + d));
      ASSERT_EQ(r.verdict, psn_verdict::out_of_order) << where << " d=" << d;
    }
    expect_result(t->arrive(head), psn_verdict::in_order, wrap(uint64_t{head} + window), window, window, where);
    expect_result(t->arrive(wrap(uint64_t{head} + window)), psn_verdict::in_order,
                  wrap(uint64_t{head} + window + 1), 1, 1, where + " then the next");
  }
}

TEST_P(reorder_tracker_transactions, reset_forgets_marks) {
  auto t = make(64);
  t->reset(0);
  expect_result(t->arrive(5), psn_verdict::out_of_order, 0, 0, 1, "first 5");
  t->reset(0);
  expect_result(t->arrive(5), psn_verdict::out_of_order, 0, 0, 1, "5 after reset is new again");
  t->reset(1000);
  expect_result(t->arrive(1000), psn_verdict::in_order, 1001, 1, 1, "new expected PSN");
}

TEST_P(reorder_tracker_transactions, upper_psn_bits_ignored) {
  auto t = make(64);
  t->reset(0x0000FF);
  expect_result(t->arrive(0xAB0000FF), psn_verdict::in_order, 0x000100, 1, 1, "BTH PSN is 24 bits");
}

INSTANTIATE_TEST_SUITE_P(kinds, reorder_tracker_transactions, ::testing::Values("ref", "rtl"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------------------
// Factory and configuration errors.

std::string config_error_message(const std::string& kind, uint32_t window) {
  try {
    make_reorder_tracker(kind, window);
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "";
}

std::string compiled_list() {
  std::string list;
  for (uint32_t w : reorder_tracker_rtl::compiled_windows()) list += (list.empty() ? "" : ", ") + std::to_string(w);
  return list;
}

TEST(reorder_tracker_factory, unknown_kind_names_allowed_kinds) {
  const std::string message = config_error_message("fpga", 64);
  EXPECT_NE(message.find("reorder_tracker.kind"), std::string::npos) << message;
  EXPECT_NE(message.find("'fpga'"), std::string::npos) << message;
  EXPECT_NE(message.find("rtl, ref"), std::string::npos) << message;
}

TEST(reorder_tracker_factory, uncompiled_window_names_compiled_windows) {
  EXPECT_EQ(compiled_list(), "64, 256, 1024");
  for (const char* kind : {"rtl", "ref"}) {
    for (uint32_t window : {128u, 100u, 0u, 4096u}) {
      const std::string message = config_error_message(kind, window);
      EXPECT_NE(message.find("reorder_tracker.window"), std::string::npos) << kind << " " << message;
      EXPECT_NE(message.find(std::to_string(window)), std::string::npos) << kind << " " << message;
      EXPECT_NE(message.find(compiled_list()), std::string::npos) << kind << " " << message;
    }
  }
  EXPECT_THROW(reorder_tracker_rtl(128), core::config_error);
}

TEST(reorder_tracker_factory, reference_rejects_illegal_window) {
  EXPECT_THROW(reorder_tracker_ref(100), core::config_error);
  EXPECT_THROW(reorder_tracker_ref(8), core::config_error);
  EXPECT_THROW(reorder_tracker_ref(8192), core::config_error);
  EXPECT_NO_THROW(reorder_tracker_ref(16));
  EXPECT_NO_THROW(reorder_tracker_ref(4096));
}

// ---------------------------------------------------------------------------------------------------------
// Waveform dump for benches.

TEST(reorder_tracker_trace, rtl_writes_fst_waveform) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "reorder_tracker_trace.fst";
  std::filesystem::remove(path);
  {
    reorder_tracker_handshake tracker(std::make_unique<reorder_tracker_rtl>(64, path.string()));
    tracker.reset(7);
    EXPECT_EQ(tracker.arrive(8).verdict, psn_verdict::out_of_order);
    EXPECT_EQ(tracker.arrive(7).head_psn, 9u);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 0u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace fabricsim::nic

namespace fabricsim::nic {
namespace {

// Regression: with two Verilated trackers alive, destroying the older one used to hang in Verilator's scope
// teardown (it looked the scope up in the newest context). One tracker exists per QP, so this is the norm.
TEST(reorder_tracker_rtl_lifetime, many_models_alive_and_destroyed_in_any_order) {
  std::vector<std::unique_ptr<reorder_tracker>> trackers;
  for (uint32_t i = 0; i < 6; ++i) {
    trackers.push_back(make_reorder_tracker("rtl", i % 2 ? 64 : 256));
    trackers.back()->reset(i);
    EXPECT_EQ(trackers.back()->arrive(i).verdict, psn_verdict::in_order);
  }
  trackers.erase(trackers.begin() + 1);  // an older one first
  trackers.erase(trackers.begin());
  trackers.pop_back();                   // then the newest
  EXPECT_EQ(trackers[0]->arrive(3).verdict, psn_verdict::in_order);  // the survivors still work
  trackers.clear();
}

// The default run of `fabricsim verify-rtl --block reorder_tracker` (100000 cycles, seed 1) hits every
// coverage bin, at every compiled window.
TEST(reorder_tracker_coverage, default_run_hits_every_bin) {
  for (uint32_t window : reorder_tracker_rtl::compiled_windows()) {
    const reorder_tracker_differential_result r = run_reorder_tracker_differential(window, 100000, 1);
    ASSERT_TRUE(r.matched) << r.mismatch;
    for (size_t b = 0; b < reorder_tracker_bin_count; ++b)
      EXPECT_GT(r.coverage[b], 0u) << "window " << window << ": bin " << to_string(static_cast<reorder_tracker_bin>(b))
                                   << " not hit";
    EXPECT_TRUE(r.all_bins_hit());
    // Bins that follow from each other agree.
    EXPECT_EQ(r.hits(reorder_tracker_bin::in_order), r.verdicts[0]);
    EXPECT_EQ(r.hits(reorder_tracker_bin::head_wrap_crossed), r.head_wraps);
    EXPECT_EQ(r.hits(reorder_tracker_bin::back_pressure_stall), r.stalled_presentations);
    EXPECT_EQ(r.longest_busy_cycles, window - 1);
  }
}

}  // namespace
}  // namespace fabricsim::nic
