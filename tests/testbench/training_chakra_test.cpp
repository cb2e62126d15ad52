// Tests of Chakra execution traces as a training step (traces/chakra_reader, testbench/training_chakra):
// the shipped trace of scripts/make_chakra read back with the node counts and dependencies the script's
// header lists (counted by hand here), its step on one 400G switch between hand bounds, the timeline's bars,
// and every class of bad input refused with a message naming the file, the node and the field. Bad traces
// are encoded here by a small protobuf writer of the test's own (not libprotobuf's classes).
#include "testbench/training_chakra.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;
using traces::chakra_trace;

const std::string k_dir = std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/data/chakra_dp4";

// --- a protobuf writer for the test's traces: varints, length-delimited fields, Chakra's field numbers.
std::string varint(uint64_t v) {
  std::string out;
  do {
    out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return out;
}
std::string f_varint(int field, uint64_t v) { return varint(uint64_t(field) << 3) + varint(v); }
std::string f_bytes(int field, const std::string& b) { return varint(uint64_t(field) << 3 | 2) + varint(b.size()) + b; }

struct tnode {
  tnode(uint64_t i, std::string n, int t = 4, std::vector<uint64_t> data = {}, std::vector<uint64_t> ctrl = {},
        uint64_t dur = 10, std::vector<std::pair<std::string, int64_t>> a = {}, std::string r = "")
      : id(i),
        name(std::move(n)),
        type(t),
        data_deps(std::move(data)),
        ctrl_deps(std::move(ctrl)),
        duration(dur),
        attrs(std::move(a)),
        raw(std::move(r)) {}
  uint64_t id;
  std::string name;
  int type;  // 4: COMP_NODE
  std::vector<uint64_t> data_deps, ctrl_deps;
  uint64_t duration;
  std::vector<std::pair<std::string, int64_t>> attrs;  // int64_val
  std::string raw;                                     // extra bytes appended to the message
};

std::string message(const tnode& n) {
  std::string m = f_varint(1, n.id) + f_bytes(2, n.name) + f_varint(3, uint64_t(n.type));
  for (uint64_t d : n.ctrl_deps) m += f_varint(4, d);
  for (uint64_t d : n.data_deps) m += f_varint(5, d);
  m += f_varint(7, n.duration);
  for (const auto& [k, v] : n.attrs) m += f_bytes(10, f_bytes(1, k) + f_varint(9, uint64_t(v)));
  return m + n.raw;
}

std::string encode(const std::vector<tnode>& nodes) {
  const std::string meta = f_bytes(1, "0.0.4");
  std::string out = varint(meta.size()) + meta;
  for (const tnode& n : nodes) {
    const std::string m = message(n);
    out += varint(m.size()) + m;
  }
  return out;
}

tnode coll(uint64_t id, int64_t type, int64_t bytes, std::vector<uint64_t> deps = {}) {
  return {id, "ar" + std::to_string(id), 7, std::move(deps), {}, 0, {{"comm_type", type}, {"comm_size", bytes}}, ""};
}

// Graph of two ranks given by their encoded files "r0.et", "r1.et".
training_graph graph_of(const std::vector<std::string>& bytes) {
  std::vector<chakra_trace> t;
  std::vector<std::string> files;
  for (size_t r = 0; r < bytes.size(); ++r) {
    files.push_back("r" + std::to_string(r) + ".et");
    t.push_back(traces::parse_chakra_trace(bytes[r], files.back()));
  }
  return chakra_graph(t, files, 1e12);
}

// The message of the config_error that `f` throws ("" and a failure if none).
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const core::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

// --- the shipped trace

const training_task* find(const training_graph& g, const std::string& label, uint32_t rank) {
  for (const training_task& t : g.tasks)
    if (t.label == label && (!t.compute || t.rank == rank)) return &t;
  return nullptr;
}
uint32_t index_of(const training_graph& g, const training_task* t) { return uint32_t(t - g.tasks.data()); }

TEST(training_chakra, shipped_trace_has_the_nodes_and_dependencies_the_script_wrote) {
  const std::vector<std::string> files = chakra_files(k_dir, "x.yaml");
  ASSERT_EQ(files.size(), 4u);
  const training_graph g = load_chakra_graph(files, 2250e12 * 0.5);
  // Per rank: step_begin, 4 forward, 4 backward, optimizer = 10 compute tasks; 2 allreduces over the 4 ranks
  // and one send (rank 0's node 11 with rank 1's node 11) are 3 communication tasks.
  size_t compute = 0;
  for (const training_task& t : g.tasks) compute += t.compute;
  EXPECT_EQ(g.gpus, 4u);
  EXPECT_EQ(compute, 40u);
  EXPECT_EQ(g.tasks.size(), 43u);
  ASSERT_EQ(g.groups.size(), 2u);  // world allreduce, p2p send
  for (const char* name : {"allreduce_bucket1", "allreduce_bucket0"}) {
    const training_task* ar = find(g, name, 0);
    ASSERT_NE(ar, nullptr) << name;
    EXPECT_FALSE(ar->compute);
    EXPECT_EQ(ar->bytes, 16u << 20);
    EXPECT_EQ(g.groups[ar->group].op, "allreduce");
    EXPECT_EQ(g.groups[ar->group].ranks, (std::vector<uint32_t>{0, 1, 2, 3}));
    ASSERT_EQ(ar->deps.size(), 4u);  // the backward node of every rank
    const std::string after = std::string(name) == "allreduce_bucket1" ? "bwd_L2" : "bwd_L0";
    for (uint32_t r = 0; r < 4; ++r)
      EXPECT_NE(std::find(ar->deps.begin(), ar->deps.end(), index_of(g, find(g, after, r))), ar->deps.end());
  }
  const training_task* send = find(g, "send_to_1", 0);
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(g.groups[send->group].ranks, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(send->bytes, 1u << 20);
  EXPECT_EQ(send->deps, std::vector<uint32_t>{index_of(g, find(g, "fwd_L3", 0))});
  // Rank 1's first backward waits for its forward (data) and the receive (ctrl); rank 2's only for its forward.
  EXPECT_EQ(find(g, "bwd_L3", 1)->deps.size(), 2u);
  EXPECT_EQ(find(g, "bwd_L3", 2)->deps, std::vector<uint32_t>{index_of(g, find(g, "fwd_L3", 2))});
  EXPECT_DOUBLE_EQ(find(g, "fwd_L0", 3)->seconds, 100e-6);
  EXPECT_DOUBLE_EQ(find(g, "bwd_L1", 3)->seconds, 200e-6);
  // The optimizer gives num_ops 56.25e9 only: 50 us at 1.125e15 FLOP/s.
  EXPECT_NEAR(find(g, "optimizer", 2)->seconds, 50e-6, 1e-12);
  EXPECT_EQ(find(g, "optimizer", 2)->deps.size(), 2u);
  // Every dependency comes earlier (the executor runs a GPU's compute tasks in task order).
  for (uint32_t i = 0; i < g.tasks.size(); ++i)
    for (uint32_t d : g.tasks[i].deps) EXPECT_LT(d, i);
  // Compute only: 4 x 100 + 4 x 200 + 50 us on every rank.
  EXPECT_NEAR(compute_only(g, 2250e12 * 0.5).step_s * 1e6, 1250.0, 1e-6);
}

// 400 Gb/s x 4096 / 4178 (a 4096-byte payload's wire bytes, docs/collectives.md).
constexpr double k_wire_bytes_per_us = 400e9 / 8 * 4096 / 4178 / 1e6;

TEST(training_chakra, shipped_step_between_hand_bounds_and_its_timeline) {
  const json r = test::run_scenario_yaml(
      "topology: {kind: single_switch, hosts: 4, link_gbps: 400}\nnic: {place_data: false}\n"
      "workload: {kind: training}\ntraining: {chakra: \"" +
      k_dir + "/dp_step\"}\n");
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& t = r["training"];
  EXPECT_TRUE(t["completed"].get<bool>());
  EXPECT_EQ(t["tasks"], 43);
  // A ring allreduce of 16 MiB over 4 ranks moves 2 x 3/4 of it through each NIC.
  const double ar_us = 2.0 * 3 / 4 * double(16 << 20) / k_wire_bytes_per_us,
               send_us = double(1 << 20) / k_wire_bytes_per_us;
  const double step = t["step_time_us"].get<double>();
  EXPECT_NEAR(t["compute_time_us"].get<double>(), 1250.0, 1e-3);
  // At least: bucket 1 starts after 800 us of compute, the two allreduces share one communicator (one after
  // the other), then the 50 us optimizer. At most: compute plus every transfer at the wire bound, one after
  // another, with 20 us each for latency and protocol.
  EXPECT_GE(step, 800.0 + 2 * ar_us + 50.0);
  EXPECT_LE(step, 1250.0 + 2 * ar_us + send_us + 3 * 20.0);
  // The timeline: every task of the first 8 GPUs (all 4 here): 40 compute bars, the allreduces on 4 GPUs
  // each and the send on 2.
  const json& tl = t["timeline"];
  EXPECT_EQ(tl["gpus"], 4);
  EXPECT_FALSE(tl["truncated"].get<bool>());
  // Kinds in the order they first occur in the task list: the send (after the last forward node) first.
  EXPECT_EQ(tl["kinds"], json({"compute", "p2p send", "world allreduce"}));
  std::map<uint64_t, size_t> by_kind;
  double last_end = 0;
  for (const json& b : tl["bars"]) {
    ++by_kind[b[1].get<uint64_t>()];
    const double s = b[2].get<double>(), e = b[3].get<double>();
    EXPECT_LE(s, e);
    last_end = std::max(last_end, e);
    if (b[1] == 0) {  // a compute bar lasts its node's time: 0 (metadata), 100, 200 or 50 us
      EXPECT_TRUE(e - s == 0.0 || std::abs(e - s - 100) < 1e-3 || std::abs(e - s - 200) < 1e-3 ||
                  std::abs(e - s - 50) < 1e-3)
          << b.dump();
    }
  }
  EXPECT_EQ(by_kind, (std::map<uint64_t, size_t>{{0, 40}, {1, 2}, {2, 8}}));
  EXPECT_NEAR(last_end, step, 1e-6);
}

// --- bad input

TEST(training_chakra, truncated_corrupt_and_empty_files_are_refused) {
  const std::string good = encode({{1, "a"}, {2, "b", 4, {1}}});
  EXPECT_NE(refusal([&] { traces::parse_chakra_trace(good.substr(0, good.size() - 3), "t.et"); }).find("t.et: byte "),
            std::string::npos);
  EXPECT_NE(refusal([&] { traces::parse_chakra_trace(good.substr(0, good.size() - 3), "t.et"); }).find("truncated"),
            std::string::npos);
  // A Node whose name field claims more bytes than the message holds.
  const std::string bad = std::string("\x00", 1) + "\x04" + "\x12\x09" + "ab\x08";
  EXPECT_NE(refusal([&] { traces::parse_chakra_trace(bad, "t.et"); })
                .find("node message 0 (after node none) does "
                      "not parse as a Chakra Node"),
            std::string::npos);
  EXPECT_NE(refusal([&] { traces::parse_chakra_trace("", "t.et"); }).find("t.et: empty"), std::string::npos);
  EXPECT_NE(refusal([&] {
              traces::parse_chakra_trace(encode({{1, "a"}, {1, "b"}}), "t.et");
            }).find("t.et: node 1 \"b\": id: a second node with this id"),
            std::string::npos);
  EXPECT_NE(refusal([&] { traces::read_chakra_trace("/nonexistent/x.0.et"); }).find("cannot open"), std::string::npos);
}

TEST(training_chakra, nodes_it_does_not_understand_are_refused_by_name) {
  EXPECT_EQ(refusal([&] {
              graph_of({encode({{1, "a"}, {2, "ckpt", 10}})});
            }),
            "r0.et: node 2 \"ckpt\": type: CHECKPOINT_NODE is not modelled (fabricsim reads COMP_NODE, "
            "MEM_LOAD_NODE, MEM_STORE_NODE, METADATA_NODE, COMM_COLL_NODE, COMM_SEND_NODE and COMM_RECV_NODE)");
  EXPECT_NE(refusal([&] {
              graph_of({encode({{5, "x", 42}})});
            }).find("node 5 \"x\": type: NodeType 42"),
            std::string::npos);
  const std::string reduce = encode({coll(3, 1, 64)});
  EXPECT_NE(refusal([&] {
              graph_of({reduce, reduce});
            })
                .find("r0.et: node 3 \"ar3\": attribute comm_type: REDUCE "
                      "is not modelled"),
            std::string::npos);
  const std::string odd = encode({coll(3, 77, 64)});
  EXPECT_NE(refusal([&] {
              graph_of({odd, odd});
            }).find("comm_type: CollectiveCommType 77 is not modelled"),
            std::string::npos);
  tnode no_size = coll(3, 0, 0);
  no_size.attrs.pop_back();
  EXPECT_NE(refusal([&] {
              graph_of({encode({no_size}), encode({no_size})});
            }).find("r0.et: node 3 \"ar3\": attribute comm_size: missing (a COMM_COLL_NODE needs it)"),
            std::string::npos);
  tnode text_type = coll(3, 0, 64);
  text_type.attrs.clear();
  text_type.raw = f_bytes(10, f_bytes(1, "comm_type") + f_bytes(29, "allreduce"));
  EXPECT_NE(refusal([&] { graph_of({encode({text_type})}); }).find("attribute comm_type: expected an integer value"),
            std::string::npos);
}

TEST(training_chakra, dependencies_on_missing_nodes_and_cycles_are_refused) {
  EXPECT_EQ(refusal([&] {
              graph_of({encode({{1, "a"}, {2, "b", 4, {1, 99}}})});
            }),
            "r0.et: node 2 \"b\": data_deps: node 99 is not in this file");
  EXPECT_EQ(refusal([&] {
              graph_of({encode({{1, "a", 4, {}, {7}}})});
            }),
            "r0.et: node 1 \"a\": ctrl_deps: node 7 is not in this file");
  const std::string msg = refusal([&] { graph_of({encode({{1, "a", 4, {3}}, {2, "b", 4, {1}}, {3, "c", 4, {2}}})}); });
  EXPECT_NE(msg.find("a dependency cycle"), std::string::npos) << msg;
  for (const char* n : {"node 1 \"a\"", "node 2 \"b\"", "node 3 \"c\""})
    EXPECT_NE(msg.find(n), std::string::npos) << msg;
  // A cycle across ranks through a collective: rank 0's compute waits for the allreduce, which waits for it.
  const std::string r0 = encode({coll(1, 0, 64, {2}), {2, "c", 4, {1}}});
  const std::string r1 = encode({coll(1, 0, 64)});
  EXPECT_NE(refusal([&] { graph_of({r0, r1}); }).find("a dependency cycle"), std::string::npos);
}

TEST(training_chakra, collectives_and_point_to_point_that_do_not_match_across_ranks_are_refused) {
  EXPECT_NE(refusal([&] {
              graph_of({encode({coll(1, 0, 64)}), encode({coll(1, 0, 128)})});
            })
                .find("r1.et: node 1 \"ar1\": collective 0 of process group \"world\": comm_type ALL_REDUCE "
                      "comm_size 128, but r0.et: node 1 \"ar1\" has comm_type ALL_REDUCE comm_size 64"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              graph_of({encode({coll(1, 0, 64), coll(2, 0, 64)}), encode({coll(1, 0, 64)})});
            }).find("r0.et: 2 collectives on process group \"world\", but r1.et has 1"),
            std::string::npos);
  const tnode send{1, "s", 5, {}, {}, 0, {{"comm_dst", 1}, {"comm_size", 64}}, ""};
  EXPECT_NE(refusal([&] {
              graph_of({encode({send}), encode({})});
            }).find("r0.et: node 1 \"s\": no COMM_RECV_NODE in r1.et with comm_src 0 and comm_tag 0 matches it"),
            std::string::npos);
  const tnode recv{1, "r", 6, {}, {}, 0, {{"comm_src", 0}, {"comm_tag", 3}}, ""};
  EXPECT_NE(refusal([&] {
              graph_of({encode({}), encode({recv})});
            }).find("r1.et: node 1 \"r\": no COMM_SEND_NODE in r0.et with comm_dst 1 and comm_tag 3"),
            std::string::npos);
  const tnode far{1, "s", 5, {}, {}, 0, {{"comm_dst", 2}, {"comm_size", 64}}, ""};
  EXPECT_NE(refusal([&] {
              graph_of({encode({far}), encode({})});
            }).find("attribute comm_dst: 2 is outside 0 .. 1"),
            std::string::npos);
}

TEST(training_chakra, a_trace_set_that_does_not_fit_the_fabric_is_refused) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("chakra_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (int r = 0; r < 2; ++r) std::ofstream(dir / ("s." + std::to_string(r) + ".et"), std::ios::binary) << encode({});
  EXPECT_EQ(chakra_files(dir.string(), "x.yaml").size(), 2u);  // the directory's one prefix
  EXPECT_NE(refusal([&] {
              chakra_files((dir / "other").string(), "x.yaml");
            }).find("no " + (dir / "other").string() + ".0.et"),
            std::string::npos);
  const test::child_result c = test::run_in_child([&] {
    return run_scenario(load_scenario_text("topology: {kind: single_switch, hosts: 4}\nnic: {place_data: false}\n"
                                           "workload: {kind: training}\ntraining: {chakra: " +
                                               (dir / "s").string() + "}\n",
                                           "t.yaml"))
        .dump();
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("t.yaml: training.chakra: 2 trace files"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("but the run has 4 GPUs"), std::string::npos) << c.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabricsim::testbench
