// The statistics merge of a scale-out run (testbench/scale_out_merge.h) without MPI: two registries stand for
// two ranks' statistics, their records are merged into rank 0's, and every merged value is the one derived by
// hand from the rules (a device's entry from its owner, a counter not tied to a device as the value before
// the run plus every rank's change, a gauge not tied to one from the lowest rank, histograms added).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sc_models/mpi/partition.h"
#include "testbench/scale_out_merge.h"

namespace fabricsim::test {
namespace stats_merge_test {

// Two leaves of one host and one spine on 2 ranks: leaf j and its host h<j> on rank j (partition_test.cpp).
mpi::partition two_ranks() {
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 2;
  t.hosts_per_leaf = 1;
  t.spines = 1;
  return mpi::partition(topology::plan_fabric(t, {}), 2);
}

TEST(StatsMerge, EachEntryByItsRule) {
  const mpi::partition part = two_ranks();
  ASSERT_EQ(part.instance_rank("h0_nic"), 0);
  ASSERT_EQ(part.instance_rank("h1_nic"), 1);
  ASSERT_EQ(part.instance_rank("h0_to_leaf0"), -1);
  core::stats_registry r0, r1;
  uint64_t tx0 = 5, tx1 = 7, stray = 99, extra = 4, link0 = 10, link1 = 10;
  core::histogram lat0, lat1;
  core::fine_histogram fine0, fine1;
  r0.counter("h0_nic", "tx", "packets", "sent", &tx0);
  r0.counter("h0_to_leaf0", "packets", "packets", "carried", &link0);
  r0.gauge("fabric", "g", "x", "a gauge", [] { return 2.5; });
  r0.hist("h0_nic", "lat", "ns", "latency", &lat0);
  r0.fine_hist("fabric", "lat", "ns", "latency", &fine0);
  r1.counter("h0_nic", "tx", "packets", "sent", &stray);  // h0 is rank 0's: rank 1's value is not taken
  r1.counter("h1_nic", "tx", "packets", "sent", &tx1);
  r1.counter("h1_nic", "extra", "pkt", "only on rank 1", &extra);
  r1.counter("h0_to_leaf0", "packets", "packets", "carried", &link1);
  r1.gauge("fabric", "g", "x", "a gauge", [] { return 9.0; });
  r1.hist("h1_nic", "lat", "ns", "latency", &lat1);
  r1.fine_hist("fabric", "lat", "ns", "latency", &fine1);
  testbench::stats_merge m0, m1;
  m0.take_bases(r0, part);
  m1.take_bases(r1, part);
  // The run: the link's counter moves by 5 on rank 0 and by 3 on rank 1.
  link0 += 5;
  link1 += 3;
  lat0.add(1);
  lat0.add(3);
  lat1.add(8);
  fine0.add(100);
  fine1.add(200);
  fine1.add(300);
  const size_t adopted = m0.merge(r0, {m0.pack(r0, part, 0), m1.pack(r1, part, 1)});
  EXPECT_EQ(adopted, 3u);  // h1_nic's tx, extra and lat
  EXPECT_EQ(r0.counter_value("h0_nic", "tx"), 5u);
  EXPECT_EQ(r0.counter_value("h1_nic", "tx"), 7u);
  EXPECT_EQ(r0.counter_value("h1_nic", "extra"), 4u);
  EXPECT_EQ(r0.counter_value("h0_to_leaf0", "packets"), 10u + 5u + 3u);
  const nlohmann::json j = r0.to_json();
  EXPECT_EQ(j["fabric"]["g"]["value"], 2.5);
  EXPECT_EQ(j["h0_nic"]["lat"]["count"], 2);
  EXPECT_EQ(j["h1_nic"]["lat"]["count"], 1);
  EXPECT_EQ(j["h1_nic"]["lat"]["max"], 8);
  EXPECT_EQ(j["fabric"]["lat"]["count"], 3);
  EXPECT_EQ(j["fabric"]["lat"]["min"], 100);
  EXPECT_EQ(j["fabric"]["lat"]["max"], 300);
  // An adopted entry keeps its unit and description.
  EXPECT_EQ(r0.descriptions_json()["h*_nic"]["extra"]["unit"], "pkt");
  EXPECT_EQ(r0.descriptions_json()["h*_nic"]["extra"]["description"], "only on rank 1");
  // Rank 1 keeps its own values.
  EXPECT_EQ(r1.counter_value("h0_to_leaf0", "packets"), 13u);
}

TEST(StatsMerge, RefusesWhatItCannotMerge) {
  const mpi::partition part = two_ranks();
  // A counter not tied to a device registered after the bases were taken (an NVLink GPU's, registered at the
  // end of elaboration on its domain's rank only) counts from 0: its whole value is its rank's change.
  core::stats_registry late;
  uint64_t v = 1;
  testbench::stats_merge m;
  m.take_bases(late, part);
  late.counter("h0_to_leaf0", "packets", "packets", "carried", &v);
  v = 6;
  EXPECT_EQ(m.merge(late, {m.pack(late, part, 0)}), 0u);
  EXPECT_EQ(late.counter_value("h0_to_leaf0", "packets"), 6u);
  // An entry of one kind on rank 0 and of another in the records.
  core::stats_registry r0, r1;
  r0.counter("fabric", "g", "x", "a counter here", &v);
  r1.gauge("fabric", "g", "x", "a gauge there", [] { return 1.0; });
  testbench::stats_merge m0, m1;
  m0.take_bases(r0, part);
  m1.take_bases(r1, part);
  const std::vector<uint8_t> from1 = m1.pack(r1, part, 1);
  EXPECT_THROW(m0.merge(r0, {from1}), std::logic_error);
}

}  // namespace stats_merge_test
}  // namespace fabricsim::test
