// Lines the command line prints around a run's table, from the scenario and the report alone: the fabric's
// shape and capacity (so that a 2:1 fabric is visible next to a collective's busbw) and the capture files
// a run wrote.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sc_models/topology/fabric.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// The capacity figures of a built-in topology.
struct fabric_capacity {
  double host_tier_gbps = 0.0;          // every host link, one direction
  double leaf_uplink_gbps = 0.0;        // every leaf-to-spine cable (0 for single_switch; dragonfly: every
                                        // router's local and global cables)
  double core_tier_gbps = 0.0;          // three_tier: every spine-to-core cable; dragonfly: every global
                                        // cable; multi_site: every inter-site cable (0 otherwise)
  double leaf_oversubscription = 1.0;   // hosts' bandwidth under a leaf over its uplinks
  double spine_oversubscription = 1.0;  // three_tier: a spine's down over up bandwidth
  // Half the narrowest tier: what crosses a cut into two equal halves of leaves (pods for three_tier) when
  // every tier is used evenly, as ECMP at best and adaptive routing aim to; the Clos bisection bandwidth.
  double bisection_gbps = 0.0;
};
fabric_capacity capacity_of(const topology::topology_params& t);

// "fabric: leaf_spine, 4 leaves x 4 hosts, 2 spines; hosts 400 Gb/s, uplinks 400 Gb/s; leaf oversubscription
// 2:1; bisection 3.2 Tb/s (half the narrowest tier)".
std::string fabric_line(const topology::topology_params& t);

// The header a collective run prints before it starts: fabric_line() of each run, labelled with the value
// when a comparison varies a topology key; "" for other workloads (their table shows the fabric's result).
std::string collective_fabric_header(const std::vector<scenario>& runs, const compare_params& compare);

// One line per capture file in a report's `taps` ("tap: wrote a.ecmp.pcap (68 frames leaving on h0_to_leaf0)"), with
// `prefix` before each (a comparison's value); "" without taps.
std::string tap_lines(const nlohmann::json& report, const std::string& prefix = "");
// tap_lines() of every run of a comparison report, each line prefixed by "KEY=VALUE: ".
std::string comparison_tap_lines(const nlohmann::json& comparison);

}  // namespace fabricsim::testbench
