// Tests of tenants (testbench/jobs.h, testbench/tenants.h): several jobs on one fabric, each against itself
// alone. run_scenario forks every simulation of a tenants run (the shared one and one per job alone), so
// these tests call it directly. Expected values are reasoned, not taken from a run:
// - a neighbour on other leaves shares no link and no switch: every job's figures are those of its run
//   alone, bit for bit (slowdown exactly 1);
// - a neighbour whose one flow per direction shares the one uplink with the ring's one flow per direction
//   takes half of that link at most (the leaf's egress serves its two input ports in turn, PFC pauses
//   both senders alike), so the ring's bus bandwidth falls by at most half: 1 < slowdown <= 2, with 10 %
//   for the pipeline's fill and the queue the neighbour adds to every step;
// - the ring alone reaches its bandwidth bound: 400 Gb/s x 4096 / 4178 (a 4096-byte payload's wire bytes,
//   docs/collectives.md) = 49.02 GB/s, less a one-way latency per step: each iteration is two dependent
//   steps of one 512 KiB slice (10.7 us at the bound), each waiting up to 3.5 us of NIC stages, three switch
//   pipelines and cables before the next can start: at least 10.7 / 14.2 = 75 % of the bound.
// The headline figure is a job's time from first post to last completion (warm-up iterations included).
#include "testbench/tenants.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "tests/support/error_of.h"

namespace fabricsim::testbench {
namespace tenants_test {

using nlohmann::json;
using test::error_of;

// Two leaves of 4 hosts, one spine: every leaf-to-leaf path crosses the one uplink of each leaf.
const std::string fabric =
    "name: t\ntopology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 4, spines: 1, link_gbps: 400}\n";
const std::string ring_1mib =
    "workload: {kind: collective}, collective: {min_bytes: 1048576, max_bytes: 1048576, iterations: 2, "
    "warmup_iterations: 1}";

json run(const std::string& yaml) { return run_scenario(load_scenario_text(yaml, "t.yaml")); }

constexpr double ring_bound_gbps = 400e9 / 8 * 4096 / 4178 / 1e9;  // GB/s, a 2-rank ring's busbw bound

TEST(tenants, neighbour_on_other_leaves_costs_nothing) {
  const json r = run(fabric + "jobs:\n  - {name: ring, hosts: h0-h3, " + ring_1mib +
                     "}\n  - {name: noisy, hosts: h4-h7, workload: {kind: incast, incast_senders: 3, "
                     "message_bytes: 4194304}}\n");
  ASSERT_TRUE(r.contains("jobs")) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>());
  const json& ring = r["jobs"]["ring"];
  EXPECT_EQ(ring["kind"], "collective");
  EXPECT_EQ(ring["figure"], "job_time_us");
  EXPECT_EQ(ring["hosts"], json({"h0", "h1", "h2", "h3"}));
  EXPECT_GT(ring["alone"].get<double>(), 0.0);
  EXPECT_EQ(ring["alone"].get<double>(), ring["shared"].get<double>());
  EXPECT_EQ(ring["slowdown"].get<double>(), 1.0);
  EXPECT_EQ(ring["alone_run"]["busbw_gbps"].get<double>(), ring["shared_run"]["busbw_gbps"].get<double>());
  EXPECT_TRUE(ring["shared_run"]["verified"].get<bool>());
  const json& noisy = r["jobs"]["noisy"];
  EXPECT_EQ(noisy["kind"], "incast");
  EXPECT_EQ(noisy["figure"], "job_time_us");
  EXPECT_EQ(noisy["shared_run"]["operations"], 3);
  EXPECT_EQ(noisy["shared_run"]["checked_bytes"], 3 * 4194304);
  EXPECT_EQ(noisy["alone"].get<double>(), noisy["shared"].get<double>());
  EXPECT_EQ(noisy["slowdown"].get<double>(), 1.0);
  EXPECT_EQ(noisy["alone_run"]["mean_fct_us"].get<double>(), noisy["shared_run"]["mean_fct_us"].get<double>());
  // Every incast flow goes to the job's first host, h4.
  for (const json& f : r["flows"]) EXPECT_EQ(f["dst"], "h4");
  EXPECT_NE(format_jobs_table(r).find("ring           collective   h0-h3"), std::string::npos) << format_jobs_table(r);
}

TEST(tenants, neighbour_sharing_the_uplink_slows_the_ring_within_the_hand_bound) {
  // The ring's ranks and the neighbour's pair each sit one on each leaf: both cross the one uplink per leaf,
  // one flow each per direction. The neighbour's 8 MiB each way outlasts the ring's 3 x 1 MiB each way.
  const json r = run(fabric + "jobs:\n  - {name: ring, hosts: [h0, h4], " + ring_1mib +
                     "}\n  - {name: noisy, hosts: [h1, h5], workload: {kind: all_to_all, message_bytes: 8388608}}\n");
  ASSERT_TRUE(r.contains("jobs")) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>());
  const json& ring = r["jobs"]["ring"];
  const double alone_busbw = ring["alone_run"]["busbw_gbps"].get<double>();
  EXPECT_GE(alone_busbw, 0.75 * ring_bound_gbps);
  EXPECT_LE(alone_busbw, ring_bound_gbps);
  EXPECT_GT(ring["slowdown"].get<double>(), 1.0);
  EXPECT_LE(ring["slowdown"].get<double>(), 2.0 * 1.1);
  // The neighbour outlasted the ring, so the ring's every iteration had it beside.
  EXPECT_GT(r["jobs"]["noisy"]["shared_run"]["end_us"].get<double>(), ring["shared_run"]["end_us"].get<double>());
}

// A training job: 1 layer of h 256 (ffn 1024, 4 heads), sequences of 256 tokens, vocabulary 1000, 2
// micro-batches, pure data parallelism over the job's `data` hosts, one gradient bucket: about 1 M parameters,
// a gradient allreduce of about 2.6 MB against a few us of compute per GPU: the step is mostly that allreduce.
std::string training_job(int data) {
  return "workload: {kind: training}, training: {layers: 1, hidden: 256, ffn_hidden: 1024, heads: 4, seq_len: "
         "256, vocab: 1000, micro_batches: 2, tensor: 1, pipeline: 1, bucket_mib: 1000, data: " +
         std::to_string(data) + "}";
}

// The step's gradient allreduce: its bytes (the model's size, from the report's table) and its ring bound over
// n ranks, 2(n-1)/n of it through each NIC at 400 Gb/s x 4096 / 4178.
double gradient_bound_us(const json& training, uint64_t n) {
  uint64_t bytes = 0;
  for (const json& c : training["collectives"])
    if (c["op"] == "allreduce") bytes += c["bytes"].get<uint64_t>() * c["count"].get<uint64_t>();
  EXPECT_GT(bytes, 1000000u) << training.dump();
  return 2.0 * double(n - 1) / double(n) * double(bytes) / (ring_bound_gbps * 1e3);
}

TEST(tenants, training_job_beside_a_neighbour_on_other_leaves_costs_nothing) {
  // The step's 4 GPUs on leaf0, the incast on leaf1: no shared link, no shared switch buffer.
  const json r = run(fabric + "jobs:\n  - {name: step, hosts: h0-h3, " + training_job(4) +
                     "}\n  - {name: noisy, hosts: h4-h7, workload: {kind: incast, incast_senders: 3, "
                     "message_bytes: 4194304}}\n");
  ASSERT_TRUE(r.contains("jobs")) << r.dump();
  const json& step = r["jobs"]["step"];
  EXPECT_EQ(step["kind"], "training");
  EXPECT_EQ(step["figure"], "job_time_us");
  EXPECT_TRUE(step["shared_run"]["training"]["completed"].get<bool>());
  EXPECT_EQ(step["alone"].get<double>(), step["shared_run"]["step_time_us"].get<double>());
  EXPECT_GE(step["alone"].get<double>(), gradient_bound_us(step["alone_run"]["training"], 4));
  EXPECT_EQ(step["alone"].get<double>(), step["shared"].get<double>());
  EXPECT_EQ(step["slowdown"].get<double>(), 1.0);
  EXPECT_EQ(r["jobs"]["noisy"]["slowdown"].get<double>(), 1.0);
  // The step's WRITEs carry no checked data: it counts as verified when complete, the incast's bytes are checked.
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_FALSE(step["shared_run"]["data_checked"].get<bool>());
  EXPECT_TRUE(r["jobs"]["noisy"]["shared_run"]["verified"].get<bool>());
  EXPECT_EQ(r["jobs"]["noisy"]["shared_run"]["checked_bytes"], 3 * 4194304);
  EXPECT_NE(format_jobs_table(r).find("step           training     h0-h3"), std::string::npos) << format_jobs_table(r);
}

TEST(tenants, training_job_sharing_the_uplink_slows_within_the_hand_bound) {
  // The step's 2 GPUs and the neighbour's pair each one per leaf: the gradient ring's one flow per direction
  // and the neighbour's share the one uplink. Each of the step's collectives keeps at least half of it (as in
  // the collective test above) and its compute is unchanged, so the step takes at most twice as long (10 %
  // for the queue the neighbour adds); the neighbour's 8 MiB each way outlasts the step.
  const json r = run(fabric + "jobs:\n  - {name: step, hosts: [h0, h4], " + training_job(2) +
                     "}\n  - {name: noisy, hosts: [h1, h5], workload: {kind: all_to_all, message_bytes: 8388608}}\n");
  ASSERT_TRUE(r.contains("jobs")) << r.dump();
  const json& step = r["jobs"]["step"];
  EXPECT_GE(step["alone"].get<double>(), gradient_bound_us(step["alone_run"]["training"], 2));
  EXPECT_GT(step["slowdown"].get<double>(), 1.0);
  EXPECT_LE(step["slowdown"].get<double>(), 2.0 * 1.1);
  EXPECT_GT(r["jobs"]["noisy"]["shared_run"]["end_us"].get<double>(), step["shared"].get<double>());
}

TEST(tenants, a_run_is_deterministic) {
  const std::string yaml = fabric + "jobs:\n  - {name: ring, hosts: [h0, h4], " + ring_1mib +
                           "}\n  - {name: web, hosts: [h1, h2, h5, h6], workload: {kind: generated, flow_count: 40, "
                           "load: 0.5}}\n";
  const json a = run(yaml), b = run(yaml);
  ASSERT_TRUE(a.contains("jobs"));
  EXPECT_EQ(a["jobs"].dump(), b["jobs"].dump());
  EXPECT_EQ(a["flows"].dump(), b["flows"].dump());
  // The generated flows run between the job's hosts only.
  for (const json& f : a["flows"]) {
    const std::string src = f["src"], dst = f["dst"];
    EXPECT_TRUE(src == "h1" || src == "h2" || src == "h5" || src == "h6") << src;
    EXPECT_TRUE(dst == "h1" || dst == "h2" || dst == "h5" || dst == "h6") << dst;
  }
}

TEST(tenants, bad_jobs_are_refused_naming_the_key) {
  auto load = [](const std::string& jobs) { load_scenario_text(fabric + "jobs:\n" + jobs, "t.yaml"); };
  EXPECT_EQ(error_of([&] {
              load(
                  "  - {name: a, hosts: h0-h3, workload: {kind: collective}}\n"
                  "  - {name: b, hosts: [h3, h4], workload: {kind: incast}}\n");
            }),
            "t.yaml:5: jobs.1.hosts: host h3 is claimed by job 'a' (jobs.0) and by job 'b' (jobs.1); a host runs "
            "one job");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: [], workload: {kind: incast}}\n"); }),
            "t.yaml:4: jobs.0.hosts: a job needs at least one host, the list is empty");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h6-h9, workload: {kind: incast}}\n"); }),
            "t.yaml:4: jobs.0.hosts: no host 'h9' in this fabric (hosts h0 .. h7)");
  EXPECT_EQ(error_of([&] {
              load(
                  "  - {name: a, hosts: h0-h1, workload: {kind: incast}}\n"
                  "  - {name: a, hosts: h2-h3, workload: {kind: incast}}\n");
            }),
            "t.yaml:5: jobs.1.name: job name 'a' is repeated (jobs.0 has it already)");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h3-h1, workload: {kind: incast}}\n"); }),
            "t.yaml:4: jobs.0.hosts: range 'h3-h1' runs backwards (write the lower host first, e.g. h0-h7)");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0-h1, workload: {kind: writes}}\n"); }),
            "t.yaml:4: jobs.0.workload.kind: a job cannot run workload.kind writes (a job runs one of collective, "
            "permutation, all_to_all, incast, generated, training)");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0, workload: {kind: collective}}\n"); }),
            "t.yaml:4: jobs.0.hosts: a collective job needs at least 2 hosts (its ranks), got 1");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0-h1, workload: {kind: incast, memory: dense}}\n"); }),
            "t.yaml:4: jobs.0.workload.memory: not per job: the payloads' memory is one choice for the whole run "
            "(--set workload.memory=dense changes it for every job); remove it from the job");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0-h1}\n"); }),
            "t.yaml:4: jobs.0: missing required key workload (a job needs name, hosts and workload)");
  EXPECT_EQ(error_of([&] {
              load_scenario_text(fabric +
                                     "workload: {kind: incast}\njobs:\n  - {name: a, hosts: h0-h1, workload: "
                                     "{kind: incast}}\n",
                                 "t.yaml");
            }),
            "t.yaml:3: workload: not used beside jobs: each job has its own workload (jobs.N.workload, "
            "jobs.N.collective, jobs.N.training); move it into a job");
  EXPECT_EQ(error_of([&] {
              load("  - {name: a, hosts: h0-h1, workload: {kind: training}, training: {comm_backend: cluster}}\n");
            }),
            "t.yaml:4: jobs.0.training.comm_backend: a training job's collectives run on the fabric between its "
            "hosts: only comm_backend fabric, got cluster");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0-h1, workload: {kind: training}, training: {gpus: 4}}\n"); }),
            "t.yaml:4: jobs.0.training.gpus: the job has 2 hosts (one GPU per host), got 4");
  EXPECT_EQ(error_of([&] { load("  - {name: a, hosts: h0-h1, workload: {kind: incast}, training: {layers: 2}}\n"); }),
            "t.yaml:4: jobs.0.training: applies to workload.kind training only (this job's kind is incast)");
  EXPECT_EQ(error_of([&] {
              load_scenario_text(
                  "name: t\nsystem: {preset: hgx_b200, nodes: 2}\njobs:\n  - {name: a, hosts: h0-h1, workload: "
                  "{kind: training}}\n",
                  "t.yaml");
            }),
            "t.yaml:2: system.preset: a training job (jobs.0) runs on a flat scale-out fabric; system.preset "
            "hgx_b200 builds a cluster of NVLink domains for one step over the whole system (remove the preset, "
            "or run that step alone with workload.kind training)");
  // At run time: a parallelism the job's hosts do not hold, naming the job.
  EXPECT_NE(error_of([&] {
              run(fabric +
                  "jobs:\n  - {name: a, hosts: h0-h2, workload: {kind: training}, training: {tensor: "
                  "2}}\n");
            }).find("t.yaml: jobs.0: training."),
            std::string::npos);
  // At planning: an incast target outside the job.
  EXPECT_EQ(error_of([&] {
              run(fabric + "jobs:\n  - {name: a, hosts: h0-h3, workload: {kind: incast, incast_target: h5}}\n");
            }),
            "t.yaml: jobs.0: workload.incast_target: no host 'h5' (hosts are the job's)");
}

}  // namespace tenants_test
}  // namespace fabricsim::testbench
