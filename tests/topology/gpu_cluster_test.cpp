// GPUs with their scale-out NIC (sc_models/topology/gpu_cluster.h): a WRITE from a GPU of domain 0 to the
// same GPU of domain 1 is read from the source GPU's HBM through its tray, crosses the rail leaf, and is
// placed by the destination NIC through its tray into the destination GPU's HBM (GPUDirect RDMA), where the
// GPU's NVLink copy engine finds the same bytes. Wiring, bytes and the landing time against hand figures.
#include "sc_models/topology/gpu_cluster.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sc_models/switch/oq_switch.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace {

using nlohmann::json;

// 2 domains of 4 GPUs (2 NVLink chips, 4 links per GPU); one rail leaf per GPU, both domains in one group.
nvlink::nvlink_params two_domains() {
  nvlink::nvlink_params p;
  p.gpus_per_domain = 4;
  p.switch_chips = 2;
  p.links_per_gpu = 4;
  p.domains = 2;
  return p;
}

topology::topology_params rails() {
  topology::topology_params t;
  t.kind = "rail_optimized";
  t.rails = 4;
  t.groups = 1;
  t.hosts_per_leaf = 2;
  t.spines = 1;
  t.link_gbps = 400;
  t.host_cable_m = 2;
  return t;
}

constexpr uint64_t k_bytes = 256 * 1024, k_src = 0, k_dst = 1 << 20, k_copy = 2 << 20, k_hbm = 4 << 20;

uint8_t pattern(uint64_t i) { return uint8_t((i * 131 + 7) ^ (i >> 9)); }

TEST(gpu_cluster, scale_out_is_rail_optimized_with_one_server_per_domain) {
  topology::topology_params t = rails();
  EXPECT_EQ(topology::cluster_scale_out(two_domains(), t).host_count(), 8u);
  t.rails = 8;
  try {
    topology::cluster_scale_out(two_domains(), t);
    FAIL() << "accepted";
  } catch (const core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("topology.rails 8"), std::string::npos) << e.what();
  }
  t = rails();
  t.hosts_per_leaf = 3;
  try {
    topology::cluster_scale_out(two_domains(), t);
    FAIL() << "accepted";
  } catch (const core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("nvlink.domains is 2"), std::string::npos) << e.what();
  }
  t = rails();
  t.kind = "leaf_spine";
  EXPECT_THROW(topology::cluster_scale_out(two_domains(), t), core::config_error);
}

// d0_gpu1 WRITEs 256 KiB to d1_gpu1 (rail 1); then d1_gpu1 copies what landed to d1_gpu2 over NVLink.
json write_between_domains() {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    sw::oq_switch_params sp;
    sp.latency_ns = 400;
    const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sp, ports, ctx);
    };
    nic::supernic_params np;
    np.placement = "pcie";
    topology::cable_params cable;
    topology::gpu_cluster cl(two_domains(), rails(), cable, make, np, {}, k_hbm, ctx);
    uint8_t* src = cl.gpu(0, 1).hbm.data() + k_src;
    for (uint64_t i = 0; i < k_bytes; ++i) src[i] = pattern(i);
    auto& a = cl.nic_host(0, 1);
    auto& b = cl.nic_host(1, 1);
    const uint32_t rkey = b.nic->register_region(k_dst, k_bytes);
    const uint32_t qa = a.nic->create_qp(), qb = b.nic->create_qp();
    a.nic->connect_qp(qa, b.ip, qb, 0, 0);
    b.nic->connect_qp(qb, a.ip, qa, 0, 0);
    a.nic->post_write(qa, 1, k_src, k_dst, rkey, k_bytes, core::picoseconds{});
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
    json out;
    out["completions"] = a.nic->completions().size();
    const auto& landed = b.tray->landed();
    out["landed"] = landed.size();
    out["landed_ps"] = landed.empty() ? 0 : landed[0].landed_at.value;
    uint64_t wrong = 0, nic_memory_nonzero = 0;
    const uint8_t* dst = cl.gpu(1, 1).hbm.data() + k_dst;
    for (uint64_t i = 0; i < k_bytes; ++i) wrong += dst[i] != pattern(i);
    for (uint64_t i = 0; i < k_bytes; ++i) nic_memory_nonzero += b.mem->data()[k_dst + i] != 0;
    out["wrong"] = wrong;
    out["nic_memory_nonzero"] = nic_memory_nonzero;
    out["leaves"] = {a.leaf, b.leaf, cl.nic_host(0, 0).leaf, cl.nic_host(1, 2).leaf};
    out["a_rail"] = a.rail;
    out["b_server"] = b.server;
    // NVLink inside domain 1: the bytes the NIC placed are the GPU's.
    nvlink::gpu_transfer t;
    t.dst_gpu = 2;
    t.src_addr = k_dst;
    t.dst_addr = k_copy;
    t.bytes = k_bytes;
    t.tag = 9;
    uint64_t nvlink_landed = 0;
    cl.gpu(1, 2).on_arrival([&](const nvlink::gpu_arrival& x) { nvlink_landed += x.bytes; });
    cl.gpu(1, 1).post(t);
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
    uint64_t copy_wrong = 0;
    const uint8_t* copy = cl.gpu(1, 2).hbm.data() + k_copy;
    for (uint64_t i = 0; i < k_bytes; ++i) copy_wrong += copy[i] != pattern(i);
    out["nvlink_landed"] = nvlink_landed;
    out["copy_wrong"] = copy_wrong;
    return out.dump();
  });
  EXPECT_TRUE(c.ok) << c.output;
  return c.ok ? json::parse(c.output) : json();
}

TEST(gpu_cluster, gpudirect_write_between_domains_lands_in_the_gpu_hbm_on_the_hand_timeline) {
  const json r = write_between_domains();
  ASSERT_FALSE(r.is_null());
  // Host d x 4 + r is NIC r of server d: both on the rail-1 leaf of group 0 (leaf 1), GPU 0 on leaf 0, GPU 2
  // on leaf 2 (docs/topology.md, rail_optimized).
  EXPECT_EQ(r["leaves"], json({1, 1, 0, 2}));
  EXPECT_EQ(r["a_rail"], 1u);
  EXPECT_EQ(r["b_server"], 1u);
  EXPECT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["landed"], 1u);
  EXPECT_EQ(r["wrong"], 0u);
  EXPECT_EQ(r["nic_memory_nonzero"], 0u);  // the NIC's own memory map is untouched: the bytes went to HBM
  // Hand bounds on the last byte in the destination HBM. 64 packets of 4096 B, each 4096 + 82 wire bytes
  // (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble 8, gap 12), the first 16 more (RETH), at
  // 400 Gb/s: 83.56 ns each. At the least every packet crosses the source's cable, then the last one a
  // switch (400 ns) and the destination's cable (each cable 2 m x 5 ns + 100 ns FEC = 110 ns).
  const double packet_ns = 4178.0 * 8.0 / 400.0;
  const double lower_ns = 64 * packet_ns + 16 * 8.0 / 400.0 + 2 * 110.0 + 400.0;
  // At the most, besides: the work request's latency (200 ns), the last packet's store-and-forward
  // serialization on the leaf's egress (83.56 ns), the receive latency (200 ns), and for the first read
  // from the source HBM and the last write into the destination HBM one PCIe path each way: the tray's
  // latencies sum to 2 ns + 100 ns cut-through + 2 ns + 300 ns HBM = 404 ns per crossing, plus a 4 KiB
  // payload's serialization on two Gen6 x16 links (< 40 ns each): a read (request and completion) < 1 us,
  // a write < 0.5 us.
  const double upper_ns = lower_ns + 200.0 + packet_ns + 200.0 + 1000.0 + 500.0;
  const double landed_ns = r["landed_ps"].get<double>() / 1000.0;
  EXPECT_GE(landed_ns, lower_ns);
  EXPECT_LE(landed_ns, upper_ns);
  // Then NVLink inside domain 1 moves the same HBM bytes to d1_gpu2.
  EXPECT_EQ(r["nvlink_landed"], k_bytes);
  EXPECT_EQ(r["copy_wrong"], 0u);
}

TEST(gpu_cluster, a_nic_without_its_tray_is_refused) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sw::oq_switch_params{}, ports, ctx);
    };
    nic::supernic_params np;  // placement dmi
    topology::gpu_cluster cl(two_domains(), rails(), {}, make, np, {}, k_hbm, ctx);
    return std::string("built");
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("nic.placement dmi"), std::string::npos) << c.output;
}

// What a process of a scale-out run builds (docs/scale_out.md, System presets): with the device mask of the
// scale-out fabric (hosts 0..7, then leaves 0..3 and the spine), only the NVLink domains whose NICs are built.
// Returns each NVLink link's name and calendar key, what the NICs of hosts 0 and 4 hand out, and the nulls.
json build_masked(const std::vector<bool>& built) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sw::oq_switch_params{}, ports, ctx);
    };
    nic::supernic_params np;
    np.placement = "pcie";
    topology::gpu_cluster cl(two_domains(), rails(), {}, make, np, {}, k_hbm, ctx, {}, built);
    json out;
    for (const auto& l : cl.domains().links()) out["keys"][l->name()] = l->calendar_key();
    for (size_t h : {0, 4}) {
      const uint32_t q0 = cl.create_qp(h), q1 = cl.create_qp(h), k0 = cl.register_region(h, 0, 4096);
      out["numbers"].push_back({q0, q1, k0});
    }
    for (const auto& g : cl.domains().gpus()) out["gpus"].push_back(g != nullptr);
    for (const auto& s : cl.domains().chips()) out["chips"].push_back(s != nullptr);
    out["built"] = {cl.domain_built(0), cl.domain_built(1)};
    out["nics"] = {cl.nic_host(0, 0).built(), cl.nic_host(1, 0).built()};
    return out.dump();
  });
  EXPECT_TRUE(c.ok) << c.output;
  return c.ok ? json::parse(c.output) : json();
}

TEST(gpu_cluster, a_mask_builds_only_its_domains_with_the_numbers_and_keys_of_the_whole_cluster) {
  const json all = build_masked({});
  std::vector<bool> mask(8 + 5, true);             // 8 hosts, 4 rail leaves, 1 spine
  for (size_t h = 0; h < 4; ++h) mask[h] = false;  // domain 0 elsewhere
  const json part = build_masked(mask);
  ASSERT_FALSE(all.is_null());
  ASSERT_FALSE(part.is_null());
  EXPECT_EQ(part["built"], json({false, true}));
  EXPECT_EQ(part["nics"], json({false, true}));
  EXPECT_EQ(part["gpus"], json({false, false, false, false, true, true, true, true}));
  EXPECT_EQ(part["chips"], json({false, false, true, true}));
  // Domain 1's links only (4 GPUs x 4 links, both directions), each with the key the whole cluster gives it:
  // domain 0's 32 links come first, so domain 1's first (d1_gpu0_to_nvsw0_0: 2 links per chip) is 33.
  ASSERT_EQ(part["keys"].size(), 32u);
  EXPECT_EQ(all["keys"].size(), 64u);
  EXPECT_EQ(part["keys"]["d1_gpu0_to_nvsw0_0"], 33u);
  for (const auto& [name, key] : part["keys"].items()) EXPECT_EQ(key, all["keys"][name]) << name;
  // A NIC built elsewhere hands out, by its rules, what the real NIC does in the whole cluster.
  EXPECT_EQ(part["numbers"], all["numbers"]);
  EXPECT_NE(all["numbers"][0][0], all["numbers"][0][1]);
}

TEST(gpu_cluster, a_mask_that_splits_a_domain_is_refused) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    const sw::switch_factory make = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sw::oq_switch_params{}, ports, ctx);
    };
    nic::supernic_params np;
    np.placement = "pcie";
    std::vector<bool> mask(13, true);
    mask[3] = false;  // GPU 3 of domain 0 on another process than GPUs 0-2
    topology::gpu_cluster cl(two_domains(), rails(), {}, make, np, {}, k_hbm, ctx, {}, mask);
    return std::string("built");
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("NVLink domain 0 are not all built by one process"), std::string::npos) << c.output;
}

}  // namespace
}  // namespace fabricsim::test
