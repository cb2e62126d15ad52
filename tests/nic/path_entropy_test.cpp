// Path entropy (sc_models/nic/path_entropy.h): the factory, and each policy's source ports worked out by hand
// (the random ones from a second stream with the same seed).
#include "sc_models/nic/path_entropy.h"

#include <gtest/gtest.h>

#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace path_entropy_test {

using core::picoseconds;

constexpr uint16_t qp_port = 0xc123;

picoseconds ns(uint64_t v) { return picoseconds(v * 1000); }

std::unique_ptr<path_entropy> make(const std::string& name, core::rng_stream& rng, double gap_ns = 1000) {
  supernic_params p;
  p.flowlet_gap_ns = gap_ns;
  auto e = make_path_entropy(name, p, rng, "nic0");
  e->add_qp();
  e->connect(0, qp_port);
  return e;
}

TEST(path_entropy, factory_names_and_unknown_name) {
  const std::vector<std::string> expected = {"fixed", "per_packet", "per_flowlet"};
  EXPECT_EQ(path_entropy_names(), expected);
  core::rng_stream rng(1);
  for (const std::string& n : expected) EXPECT_STREQ(make(n, rng)->name(), n.c_str());
  try {
    make("ecmp", rng);
    FAIL() << "no error for an unknown name";
  } catch (const core::config_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nic0: nic.path_entropy \"ecmp\""), std::string::npos) << what;
    EXPECT_NE(what.find("fixed, per_packet, per_flowlet"), std::string::npos) << what;
  }
}

TEST(path_entropy, fixed_keeps_the_qp_port_and_draws_nothing) {
  core::rng_stream rng(7), twin(7);
  auto e = make("fixed", rng);
  for (uint64_t t : {0, 10, 5000, 100000}) EXPECT_EQ(e->data_port(0, qp_port, ns(t), ns(t)), qp_port);
  EXPECT_EQ(rng(), twin());  // the NIC's stream is untouched
  EXPECT_EQ(*e->flowlets(), 0u);
}

TEST(path_entropy, per_packet_draws_a_port_in_the_entropy_range_for_every_packet) {
  core::rng_stream rng(7), twin(7);
  auto e = make("per_packet", rng);
  for (int i = 0; i < 100; ++i) {
    const uint16_t port = e->data_port(0, qp_port, ns(i), ns(i));
    EXPECT_EQ(port, uint16_t(0xc000 | (twin() & 0x3fff)));
    EXPECT_GE(port, 0xc000);
  }
}

TEST(path_entropy, per_flowlet_new_port_only_after_a_gap_longer_than_flowlet_gap) {
  core::rng_stream rng(7), twin(7);
  auto e = make("per_flowlet", rng, 1000);
  EXPECT_EQ(e->data_port(0, qp_port, ns(0), ns(0)), qp_port);        // the first flowlet: the QP's port
  EXPECT_EQ(e->data_port(0, qp_port, ns(500), ns(500)), qp_port);    // 500 ns after the last start
  EXPECT_EQ(e->data_port(0, qp_port, ns(1500), ns(1500)), qp_port);  // exactly the gap: not longer
  const uint16_t second = uint16_t(0xc000 | (twin() & 0x3fff));
  EXPECT_EQ(e->data_port(0, qp_port, ns(2501), ns(2501)), second);  // 1001 ns idle: a new flowlet
  EXPECT_EQ(*e->flowlets(), 1u);
  // The gap runs from when a packet starts on the wire: built at 3000 but starting at 3600 (the wire busy),
  // a packet built at 4500 has followed it by 900 ns only.
  EXPECT_EQ(e->data_port(0, qp_port, ns(3000), ns(3600)), second);
  EXPECT_EQ(e->data_port(0, qp_port, ns(4500), ns(4500)), second);
  const uint16_t third = uint16_t(0xc000 | (twin() & 0x3fff));
  EXPECT_EQ(e->data_port(0, qp_port, ns(6000), ns(6000)), third);
  EXPECT_EQ(*e->flowlets(), 2u);
}

TEST(path_entropy, per_flowlet_qps_keep_their_own_flowlets) {
  core::rng_stream rng(3), twin(3);
  auto e = make("per_flowlet", rng, 1000);
  e->add_qp();
  e->connect(1, 0xc456);
  EXPECT_EQ(e->data_port(0, qp_port, ns(1), ns(1)), qp_port);
  EXPECT_EQ(e->data_port(1, 0xc456, ns(1), ns(1)), 0xc456);
  EXPECT_EQ(e->data_port(1, 0xc456, ns(5000), ns(5000)), uint16_t(0xc000 | (twin() & 0x3fff)));
  EXPECT_EQ(e->data_port(0, qp_port, ns(600), ns(600)), qp_port);  // QP 0 was idle 599 ns only
}

}  // namespace path_entropy_test
}  // namespace fabricsim::nic
