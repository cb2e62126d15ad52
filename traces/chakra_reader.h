// MLCommons Chakra execution traces (`training.chakra`, docs/workloads.md#chakra-execution-traces): one file
// per rank, a stream of protobuf messages each preceded by its length as a varint, first a GlobalMetadata,
// then Node messages (traces/chakra_et.proto: the fields fabricsim reads, wire-compatible with Chakra's
// et_def.proto). This reader turns one file into plain nodes and refuses what it cannot read; what the nodes
// mean for a training step (which types and collectives are modelled, the dependencies between them) is
// testbench/training_chakra.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::traces {

// Chakra's NodeType values.
enum class chakra_node_type : int {
  invalid = 0,
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  comp = 4,
  comm_send = 5,
  comm_recv = 6,
  comm_coll = 7,
  storage = 8,
  batch = 9,
  checkpoint = 10,
};
// "COMP_NODE" and the like; "NodeType N" for a value outside the schema.
std::string chakra_type_name(int type);

// Chakra's CollectiveCommType values (the comm_type attribute of a COMM_COLL_NODE).
enum class chakra_coll : int64_t {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};
// "ALL_REDUCE" and the like; "CollectiveCommType N" outside the schema.
std::string chakra_coll_name(int64_t type);

// One Node, with the attributes fabricsim reads (integer attributes in any of the schema's integer kinds).
struct chakra_node {
  uint64_t id = 0;
  std::string name;
  int type = 0;                                // chakra_node_type, as written (an unknown value is kept for the error)
  std::vector<uint64_t> data_deps, ctrl_deps;  // ids of nodes of the same file this one waits for
  uint64_t duration_micros = 0;
  std::optional<int64_t> comm_type, comm_size, comm_src, comm_dst, comm_tag, num_ops;
  std::optional<std::string> pg_name;
  size_t index = 0;  // position in the file's node stream, from 0
};

struct chakra_trace {
  std::string version;  // GlobalMetadata.version
  std::vector<chakra_node> nodes;
};

// The largest message the reader accepts: 64 MiB (a Node is a few hundred bytes; this bounds a corrupt
// length before anything is allocated for it).
constexpr uint64_t k_max_chakra_message = uint64_t(64) << 20;

// Parses the bytes of one trace file. Throws core::config_error "source: ..." naming the byte offset and,
// once nodes are read, the node (id and name) and the field: a length that runs past the end (a truncated
// file), a message that does not parse, no GlobalMetadata, an integer attribute (comm_type, comm_size,
// comm_src, comm_dst, comm_tag, num_ops) with a value that is not an integer or out of range, pg_name not a
// string, two nodes with one id.
chakra_trace parse_chakra_trace(const std::string& bytes, const std::string& source);
// The same from a file; a file that cannot be read is a config_error naming it.
chakra_trace read_chakra_trace(const std::string& path);

}  // namespace fabricsim::traces
