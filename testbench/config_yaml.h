// Scenario-file mapping: puts a YAML mapping onto a `<block>_params` struct through its visit() list, applies
// `--set path=value` overrides to the YAML tree, and lists a struct's keys for the documentation. Generic: it
// knows nothing of any particular block, only of core::param_visitor.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

// A params struct as the loader sees it: something that walks its fields, usually
// `[&](core::param_visitor& v) { params.visit(v); }`.
using visit_fn = std::function<void(core::param_visitor&)>;

template <class Params>
visit_fn visitor_of(Params& params) {
  return [&params](core::param_visitor& v) { params.visit(v); };
}

// Where a YAML tree came from, so that every message can point at the line to fix: the file, and the keys
// that `--set` wrote (those have no line; the message quotes the assignment instead).
struct yaml_source {
  std::string file;  // as given by the user, e.g. "scenarios/default.yaml"
  std::map<std::string, std::string> overrides;  // key path ("topology.link_gbps") -> "--set topology.link_gbps=abc"
  // When set, apply_yaml records where every key it reads came from: key path -> where() ("file:7" or the
  // `--set`), for `fabricsim explain`. Keys absent from the YAML (defaults) are not recorded.
  std::map<std::string, std::string>* provenance = nullptr;

  // "file:7" for a parsed node; "--set a.b=c" when `key_path` or one of its parents was overridden, or when
  // the node has no position and an override below `key_path` created it; else "file".
  std::string where(const std::string& key_path, const YAML::Mark& mark) const;
  // The override that wrote `key_path` or a parent of it, or null.
  const std::string* override_for(const std::string& key_path) const;
  // "where: key_path: what", leaving out the key path when it is exactly the overridden one (the quoted
  // assignment already names it).
  std::string message(const std::string& key_path, const YAML::Mark& mark, const std::string& what) const;
};

// "section.key", or "key" for the top level (empty section path).
std::string join_key(const std::string& section_path, const std::string& key);

// What a node holds, for "got ..." in messages: "nothing", "a sequence", "a mapping" or the quoted scalar.
std::string yaml_kind(const YAML::Node& node);

// Maps the YAML mapping `node` onto the fields `visit` walks. Keys absent from the YAML keep their current
// value. Throws core::config_error naming file, line, key path and what was expected for: an unknown key
// (with the known keys and the nearest one), a value of the wrong type, a number out of range, a string
// not among the choices, a duplicate key, and a node that is not a mapping. A null node (an empty section)
// changes nothing.
void apply_yaml(const YAML::Node& node, const visit_fn& visit, const std::string& source_file,
                const std::string& section_path);
// The same with overrides tracked. `subsections` are further keys the caller maps itself (nested sections);
// they are accepted here and listed among the known keys in messages.
void apply_yaml(const YAML::Node& node, const visit_fn& visit, const yaml_source& source,
                const std::string& section_path, const std::vector<std::string>& subsections = {});

// Writes one `--set` assignment "path.to.field=value" into the tree. Numeric components index sequences
// ("writes.0.bytes=5000"); a missing mapping entry along the path is created ("nic_overrides.h1.reorder=ref").
// The value is a plain scalar, taken verbatim (type checks happen later, in apply_yaml), unless it starts
// with '[' or '{', when it is parsed as YAML flow ("writes.0={src: h0, dst: h1, bytes: 64}").
// Throws core::config_error naming `--set` and the assignment when it is malformed: no '=', an empty path
// or path component, an index past a sequence's end, a path through a scalar, a flow value that does not
// parse.
void apply_override(YAML::Node& root, const std::string& assignment);
// The same, recording the written key path in `source` so that later messages quote the assignment.
void apply_override(YAML::Node& root, const std::string& assignment, yaml_source& source);

// One key of a params struct, for the documentation.
struct key_doc {
  std::string name;
  std::string type;           // "integer", "number", "bool" or "string"
  std::string unit;           // "" for none
  std::string default_value;  // as it would be written in YAML: 400, 0.5, true, rtl
  std::string range;          // "[1, 3200]", ">= 0", "rtl, ref" (choices), "" when unrestricted
  std::string description;
};

// Every key `visit` walks, in declaration order, with the value it currently holds as the default: pass
// a visitor of a default-constructed struct (see describe<Params>()).
std::vector<key_doc> describe(const visit_fn& visit);

template <class Params>
std::vector<key_doc> describe() {
  Params defaults{};
  return describe(visitor_of(defaults));
}

}  // namespace fabricsim::testbench
