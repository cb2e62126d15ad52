// The SuperNIC's policies by name: one table per kind (congestion control, path entropy, ...), each entry a
// name and a maker, so that the scenario key's choices and the factory cannot disagree.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

// The names of `table` in its order (entries have a `const char* name`).
template <class Entry, size_t N>
std::vector<std::string> policy_names(const Entry (&table)[N]) {
  std::vector<std::string> v;
  for (const Entry& e : table) v.emplace_back(e.name);
  return v;
}

// The entry named `name`; otherwise config_error "<instance>: <key> "<name>" is not one of: a, b, c".
template <class Entry, size_t N>
const Entry& find_policy(const Entry (&table)[N], const std::string& name, const std::string& instance,
                         const char* key) {
  for (const Entry& e : table)
    if (name == e.name) return e;
  std::string list;
  for (const Entry& e : table) list += (list.empty() ? "" : ", ") + std::string(e.name);
  throw core::config_error(instance + ": " + key + " \"" + name + "\" is not one of: " + list);
}

}  // namespace fabricsim::nic
