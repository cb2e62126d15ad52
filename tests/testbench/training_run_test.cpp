// Tests of a training step on the fabric (testbench/training_run): a step where compute dominates
// (communication share near 0) and one whose gradient allreduce cannot hide, with the step time between
// hand bounds: at least the compute-only step plus the last bucket's ring-allreduce bandwidth bound (it
// starts after the last backward compute), at most the compute-only step plus every collective's bandwidth
// bound run one after another (at 80 % of the wire bound) and 20 us each. Each run forks (tests/support).
#include "testbench/training_run.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testbench/training_graph.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace training_run_test {

using nlohmann::json;

// 8 hosts on one 400G switch; 2 layers of h 1024 (ffn 4096), s 2048, 2 micro-batches, no pipeline, one
// gradient bucket holding all of a GPU's gradients; `extra` adds the tensor and data degrees.
std::string yaml(const std::string& extra) {
  return "topology: {kind: single_switch, hosts: 8, link_gbps: 400}\nrun: {limit_us: 2000000}\n"
         "nic: {place_data: false}\n"
         "workload: {kind: training}\n"
         "training: {layers: 2, hidden: 1024, ffn_hidden: 4096, heads: 16, seq_len: 2048, vocab: 32000,\n"
         "           micro_batches: 2, pipeline: 1, bucket_mib: 1000" +
         extra + "}\n";
}

training_params params(double efficiency) {
  training_params p;
  p.layers = 2;
  p.hidden = 1024;
  p.ffn_hidden = 4096;
  p.heads = 16;
  p.seq_len = 2048;
  p.vocab = 32000;
  p.micro_batches = 2;
  p.tensor = 2;
  p.data = 4;
  p.bucket_mib = 1000;
  p.compute_efficiency = efficiency;
  return p;
}

// Ring allreduce of `bytes` over n ranks: 2(n-1)/n of it through each NIC at 400 Gb/s x 4096 / 4178 (a
// 4096-byte payload's wire bytes, docs/collectives.md): 49.02 GB/s.
double ring_bound_us(uint64_t bytes, uint64_t n) {
  return 2.0 * double(n - 1) / double(n) * double(bytes) / (400e9 / 8 * 4096 / 4178) * 1e6;
}

TEST(training_run, compute_dominated_step_has_almost_no_exposed_communication) {
  // No tensor parallelism (its allreduces block the compute): data 8, and compute 250 times slower than the
  // default, so that only the last gradient bucket (about a millisecond) is left unhidden.
  const json r = test::run_scenario_yaml(yaml(", compute_efficiency: 0.002, tensor: 1, data: 8"));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& t = r["training"];
  EXPECT_TRUE(t["completed"].get<bool>());
  training_params p = params(0.002);
  p.tensor = 1;
  p.data = 8;
  const training_model m = make_training_model(p, 8, "t.yaml");
  const double compute_us = compute_only(build_training_graph(m), m.flops_per_s).step_s * 1e6;
  EXPECT_NEAR(t["compute_time_us"].get<double>(), compute_us, 1e-6 * compute_us);
  EXPECT_GE(t["step_time_us"].get<double>(), compute_us);
  EXPECT_LT(t["communication_share"].get<double>(), 0.05) << t.dump(1);
  EXPECT_GT(r["operations"].get<uint64_t>(), 0u);  // the collectives did move as WRITEs
}

TEST(training_run, exposed_gradient_allreduce_within_hand_bounds) {
  const json r = test::run_scenario_yaml(yaml(", tensor: 2, data: 4"));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& t = r["training"];
  EXPECT_TRUE(t["completed"].get<bool>());
  const training_model m = make_training_model(params(0.5), 8, "t.yaml");
  const training_graph g = build_training_graph(m);
  const double compute_us = compute_only(g, m.flops_per_s).step_s * 1e6;
  // One bucket per tensor rank: 2 layers x (4 h^2 + 2 h ffn) / 2 + (embedding + output layer) / 2, 2 B each.
  const uint64_t bucket = (2 * (4ull * 1024 * 1024 + 2ull * 1024 * 4096) / 2 + 2ull * 32000 * 1024 / 2) * 2;
  const double lower = compute_us + ring_bound_us(bucket, 4);
  double upper = compute_us;
  for (const training_task& k : g.tasks)
    if (!k.compute) upper += ring_bound_us(k.bytes, g.groups[k.group].ranks.size()) / 0.8 + 20.0;
  const double step = t["step_time_us"].get<double>();
  EXPECT_GE(step, lower) << t.dump(1);
  EXPECT_LE(step, upper) << t.dump(1);
  EXPECT_GT(t["communication_share"].get<double>(), 0.0);
  EXPECT_NEAR(t["exposed_communication_us"].get<double>(), step - compute_us, 1e-3);
  // The table: tp allreduces (2 layers x 2 parts x 2 micro-batches x 2 passes x 4 data ranks = 64) and the
  // 2 buckets, with their bytes.
  uint64_t tp = 0, dp = 0;
  for (const json& c : t["collectives"]) {
    if (c["group"] == "tp") {
      tp += c["count"].get<uint64_t>();
      EXPECT_EQ(c["bytes"].get<uint64_t>(), 2048u * 1024u * 2u);
    }
    if (c["group"] == "dp") {
      dp += c["count"].get<uint64_t>();
      EXPECT_EQ(c["bytes"].get<uint64_t>(), bucket);
      EXPECT_GE(c["exposed_us"].get<double>(), 2 * ring_bound_us(bucket, 4) * 0.99);  // both buckets, unhidden
    }
  }
  EXPECT_EQ(tp, 64u);
  EXPECT_EQ(dp, 2u);
}

}  // namespace training_run_test
}  // namespace fabricsim::testbench
