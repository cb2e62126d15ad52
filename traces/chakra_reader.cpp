// Chakra execution traces: varint-length-delimited protobuf messages -> plain nodes, every fault named.
#include "traces/chakra_reader.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "chakra_et.pb.h"  // generated from traces/chakra_et.proto

namespace fabricsim::traces {

using core::config_error;

namespace {

constexpr const char* k_type_names[] = {"INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
                                        "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
                                        "STORAGE_NODE", "BATCH_NODE",     "CHECKPOINT_NODE"};
constexpr const char* k_coll_names[] = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

// The varint at `pos`; false when the bytes end inside it or it runs past ten bytes.
bool read_varint(const std::string& b, size_t& pos, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64 && pos < b.size(); shift += 7) {
    const auto byte = uint8_t(b[pos++]);
    out |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// The next message's bytes: its length prefix and body, or an error naming the offset.
std::string next_message(const std::string& b, size_t& pos, const std::string& source, const std::string& what) {
  const size_t at = pos;
  uint64_t len = 0;
  if (!read_varint(b, pos, len))
    throw config_error(
        fmt::format("{}: byte {}: {}: the length prefix is cut off (a truncated file?)", source, at, what));
  if (len > k_max_chakra_message)
    throw config_error(
        fmt::format("{}: byte {}: {}: a length of {} bytes, over the {} MiB a message may have "
                    "(a corrupt length prefix?)",
                    source, at, what, len, k_max_chakra_message >> 20));
  if (len > b.size() - pos)
    throw config_error(fmt::format("{}: byte {}: {}: the prefix says {} bytes but {} remain (a truncated file)", source,
                                   at, what, len, b.size() - pos));
  std::string body = b.substr(pos, size_t(len));
  pos += size_t(len);
  return body;
}

std::string node_ref(const std::string& source, const chakra_node& n) {
  return fmt::format("{}: node {} \"{}\"", source, n.id, n.name);
}

// An integer attribute in any of the schema's integer kinds (a bool too: 0 or 1).
int64_t integer_attr(const chakra::AttributeProto& a, const std::string& where) {
  using A = chakra::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val:
      return a.int32_val();
    case A::kInt64Val:
      return a.int64_val();
    case A::kUint32Val:
      return a.uint32_val();
    case A::kSint32Val:
      return a.sint32_val();
    case A::kSint64Val:
      return a.sint64_val();
    case A::kBoolVal:
      return a.bool_val() ? 1 : 0;
    case A::kUint64Val:
      if (a.uint64_val() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw config_error(fmt::format("{}: attribute {}: {} is out of range", where, a.name(), a.uint64_val()));
      return int64_t(a.uint64_val());
    default:
      throw config_error(
          fmt::format("{}: attribute {}: expected an integer value (int32_val, int64_val, "
                      "uint32_val, uint64_val, sint32_val, sint64_val), not {}",
                      where, a.name(), a.value_case() == A::VALUE_NOT_SET ? "no value" : "another kind"));
  }
}

chakra_node to_node(const chakra::Node& m, size_t index, const std::string& source) {
  chakra_node n;
  n.id = m.id();
  n.name = m.name();
  n.type = int(m.type());
  n.duration_micros = m.duration_micros();
  n.index = index;
  n.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
  n.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
  const std::string where = node_ref(source, n);
  for (const chakra::AttributeProto& a : m.attr()) {
    const std::string& k = a.name();
    if (k == "comm_type")
      n.comm_type = integer_attr(a, where);
    else if (k == "comm_size")
      n.comm_size = integer_attr(a, where);
    else if (k == "comm_src")
      n.comm_src = integer_attr(a, where);
    else if (k == "comm_dst")
      n.comm_dst = integer_attr(a, where);
    else if (k == "comm_tag")
      n.comm_tag = integer_attr(a, where);
    else if (k == "num_ops")
      n.num_ops = integer_attr(a, where);
    else if (k == "pg_name") {
      if (a.value_case() != chakra::AttributeProto::kStringVal)
        throw config_error(where + ": attribute pg_name: expected a string_val");
      n.pg_name = a.string_val();
    }
  }
  return n;
}

}  // namespace

std::string chakra_type_name(int type) {
  if (type >= 0 && type < int(std::size(k_type_names))) return k_type_names[type];
  return fmt::format("NodeType {}", type);
}

std::string chakra_coll_name(int64_t type) {
  if (type >= 0 && type < int64_t(std::size(k_coll_names))) return k_coll_names[type];
  return fmt::format("CollectiveCommType {}", type);
}

chakra_trace parse_chakra_trace(const std::string& bytes, const std::string& source) {
  chakra_trace t;
  size_t pos = 0;
  if (bytes.empty()) throw config_error(source + ": empty (expected a GlobalMetadata message, then Node messages)");
  {
    const std::string body = next_message(bytes, pos, source, "the GlobalMetadata message");
    chakra::GlobalMetadata meta;
    if (!meta.ParseFromString(body))
      throw config_error(source + ": byte 0: the first message does not parse as a Chakra GlobalMetadata");
    t.version = meta.version();
  }
  std::set<uint64_t> ids;
  while (pos < bytes.size()) {
    const size_t at = pos;
    const std::string what = fmt::format("node message {} (after node {})", t.nodes.size(),
                                         t.nodes.empty() ? std::string("none") : std::to_string(t.nodes.back().id));
    const std::string body = next_message(bytes, pos, source, what);
    chakra::Node m;
    if (!m.ParseFromString(body))
      throw config_error(fmt::format("{}: byte {}: {} does not parse as a Chakra Node", source, at, what));
    chakra_node n = to_node(m, t.nodes.size(), source);
    if (!ids.insert(n.id).second) throw config_error(node_ref(source, n) + ": id: a second node with this id");
    t.nodes.push_back(std::move(n));
  }
  return t;
}

chakra_trace read_chakra_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open the Chakra trace file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_chakra_trace(ss.str(), path);
}

}  // namespace fabricsim::traces
