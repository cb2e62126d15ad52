// nic.cc dcqcn_distance (sc_models/nic/dcqcn_distance_control.h) against values worked out by hand. The
// reaction point's knobs are NVIDIA's defaults (dcqcn_rp.h): rpg_time_reset 300 us, rpg_byte_reset 32767 B,
// dce_tcp_rtt 1 us, rate_reduce_monitor_period 4 us, initial alpha 1023/1024, rpg_gd 11. Port: 400 Gb/s.
// Reference RTT 10 us (the default): a QP measuring 1 ms runs with every time constant x 100.
#include <gtest/gtest.h>

#include "sc_models/core/params.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/dcqcn_distance_control.h"

namespace fabricsim::nic {
namespace dcqcn_distance_test {

using core::picoseconds;

constexpr uint64_t line_bps = 400'000'000'000ull;

supernic_params params() {
  supernic_params p;
  p.cnp_model = "ref";
  p.dcqcn_model = "ref";
  return p;
}

std::unique_ptr<congestion_control> make(const std::string& name) {
  auto cc = make_congestion_control(name, params(), {"nic0", nullptr});
  cc->add_qp("", line_bps, picoseconds{});
  return cc;
}

picoseconds us(double v) { return picoseconds::from_ns(v * 1000.0); }

qp_status status(const congestion_control& cc) {
  qp_status st;
  st.rate_mbps = st.target_mbps = 400000.0;
  cc.status(0, st);
  return st;
}

// The QP's first packet leaves at 0 and the first ACK (covering PSN 100; snd_max 110) comes back at `rtt`.
void first_sample(congestion_control& cc, picoseconds rtt) {
  cc.sent(0, 4096, picoseconds{});
  cc.on_ack(0, nullptr, 0, 100, 110, rtt);
}

TEST(dcqcn_distance, scale_and_scaled_knobs_by_hand) {
  EXPECT_DOUBLE_EQ(distance_scale(1'000'000'000, 10.0, 1000.0), 100.0);  // 1 ms / 10 us
  EXPECT_DOUBLE_EQ(distance_scale(5'000'000, 10.0, 1000.0), 1.0);        // 5 us: never below 1
  EXPECT_DOUBLE_EQ(distance_scale(1'000'000'000, 10.0, 50.0), 50.0);     // capped
  const dcqcn_params p = distance_scaled(dcqcn_preset("nvidia"), 100.0);
  EXPECT_EQ(p.rpg_time_reset_us, 30000u);  // 300 x 100
  EXPECT_EQ(p.rpg_byte_reset, 3276700u);   // 32767 x 100
  EXPECT_EQ(p.dce_tcp_rtt_us, 100u);       // 1 x 100
  EXPECT_EQ(p.rate_reduce_monitor_period_us, 400u);
  EXPECT_EQ(p.rpg_ai_rate_mbps, 5u);  // steps unchanged
  // Capped at the fields' ranges (dcqcn_params::visit: 4e6 us, 2^30 bytes; under the 32-bit cycle counts at
  // 1 GHz, 4 294 967 us), so the reaction point accepts what it restarts with: 10 MiB x 103 = 1.08e9 bytes was
  // refused as an internal error at 100 km with a 1.03 ms sample.
  const dcqcn_params big = distance_scaled(dcqcn_preset("nvidia"), 1e6);
  EXPECT_EQ(big.rpg_time_reset_us, 4000000u);
  EXPECT_EQ(big.rpg_byte_reset, 1073741824u);
  EXPECT_NO_THROW(core::check_ranges(big, "nic.dcqcn"));
  const dcqcn_params far = distance_scaled(dcqcn_preset("fabric_400g"), 103.0);
  EXPECT_EQ(far.rpg_byte_reset, 1073741824u);  // 10 MiB x 103 = 1 080 033 280, above 2^30
  EXPECT_EQ(far.rpg_time_reset_us, 515u);      // 5 us x 103
  EXPECT_NO_THROW(core::check_ranges(far, "nic.dcqcn"));
}

TEST(dcqcn_distance, window_is_the_measured_bandwidth_delay_product) {
  auto cc = make("dcqcn_distance");
  EXPECT_FALSE(cc->window_full(0, uint64_t(1) << 40));  // nothing measured yet: no window
  first_sample(*cc, us(1000));
  // 400 Gb/s x 1 ms / 8 = 50 000 000 bytes.
  EXPECT_DOUBLE_EQ(status(*cc).window_bytes, 50e6);
  EXPECT_FALSE(cc->window_full(0, 49'999'999));
  EXPECT_TRUE(cc->window_full(0, 50'000'000));
  // The next probe is the next packet sent (PSN 110, snd_max at the last sample): an ACK below it is no
  // sample; the one covering it after 0.5 ms lowers the base RTT to 0.5 ms and the window to 25 MB.
  cc->sent(0, 4096, us(2000));
  cc->on_ack(0, nullptr, 0, 109, 120, us(2300));
  EXPECT_DOUBLE_EQ(status(*cc).window_bytes, 50e6);
  cc->on_ack(0, nullptr, 0, 110, 120, us(2500));
  EXPECT_DOUBLE_EQ(status(*cc).window_bytes, 25e6);
  // A slower sample later does not raise it.
  cc->sent(0, 4096, us(3000));
  cc->on_ack(0, nullptr, 0, 125, 130, us(3900));
  EXPECT_DOUBLE_EQ(status(*cc).window_bytes, 25e6);
}

TEST(dcqcn_distance, long_path_timers_and_cut_moderation_are_scaled) {
  auto plain = make("dcqcn");
  auto far = make("dcqcn_distance");
  first_sample(*far, us(1000));  // s = 100: restarted at 1 ms (at line rate, alpha back to its initial value)
  // The same cut on both, each at its reaction point's start (plain at 0, far at its restart at 1 ms), from
  // line rate with alpha 65472/65536 (Q0.16): current x alpha >> 17 = 400e6 kb/s x 65472 / 131072 =
  // 199 804 687 kb/s off, leaving 200 195 313 kb/s.
  plain->on_cnp(0, us(0));
  far->on_cnp(0, us(1000));
  EXPECT_NEAR(status(*plain).rate_mbps, 200195.313, 1e-6);
  EXPECT_NEAR(status(*far).rate_mbps, 200195.313, 1e-6);
  // The next timer: the alpha update, dce_tcp_rtt after the cut: 1 us, and 100 us scaled.
  EXPECT_EQ(plain->timers(0, us(0)), us(1));
  EXPECT_EQ(far->timers(0, us(1000)), us(1100));
  // A second CNP 10 us later: past the 4 us monitor period it cuts again; inside the scaled 400 us it only
  // raises alpha.
  plain->on_cnp(0, us(10));
  far->on_cnp(0, us(1010));
  EXPECT_LT(status(*plain).rate_mbps, 200195.0);
  EXPECT_NEAR(status(*far).rate_mbps, 200195.313, 1e-6);
}

TEST(dcqcn_distance, short_path_is_plain_dcqcn_and_a_cut_does_not_defer_the_retune) {
  auto near = make("dcqcn_distance");
  first_sample(*near, us(5));  // 5 us < 10 us: s = 1, nothing retuned
  near->on_cnp(0, us(6));
  EXPECT_EQ(near->timers(0, us(6)), us(7));                // alpha update 1 us after the cut
  EXPECT_DOUBLE_EQ(status(*near).window_bytes, 250000.0);  // 400 Gb/s x 5 us / 8
  // A CNP before the first sample: the sample (1 ms, s = 100) still retunes, restarting at line rate: alpha's
  // update period is 1 us x 100 from the restart at 1000 us (unscaled it would be due at 1001 us), and the
  // rate-increase timer is off at line rate.
  auto cut = make("dcqcn_distance");
  cut->sent(0, 4096, picoseconds{});
  cut->on_cnp(0, us(500));
  EXPECT_LT(status(*cut).rate_mbps, 400000.0);
  cut->on_ack(0, nullptr, 0, 100, 110, us(1000));
  EXPECT_EQ(cut->timers(0, us(1000.5)), us(1100));
  EXPECT_DOUBLE_EQ(status(*cut).rate_mbps, 400000.0);
}

}  // namespace dcqcn_distance_test
}  // namespace fabricsim::nic
