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
namespace {

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
            "permutation, all_to_all, incast, generated)");
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
            "jobs.N.collective); move it into a job");
  // At planning: an incast target outside the job.
  EXPECT_EQ(error_of([&] {
              run(fabric + "jobs:\n  - {name: a, hosts: h0-h3, workload: {kind: incast, incast_target: h5}}\n");
            }),
            "t.yaml: jobs.0: workload.incast_target: no host 'h5' (hosts are the job's)");
}

}  // namespace
}  // namespace fabricsim::testbench
