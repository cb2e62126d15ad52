#!/usr/bin/env bash
# A run on a fabric read from a file (topology.kind: graph) against the same fabric from the built-in
# builder: default.yaml's one switch and two hosts, written by hand as GraphML, must give the identical
# report (machine fields aside, scripts/golden diff), and every operation must complete; and a cable faster
# than switch.port_config runs is refused naming the file and the edge.
# Usage: graph_run_test.sh SOURCE_DIR FABRICSIM
set -euo pipefail
src=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run "$src/testbench/scenarios/default.yaml" --quiet --json "$tmp/builtin.json"
"$bin" run "$src/testbench/scenarios/default.yaml" --set topology.kind=graph \
  --set topology.file="$src/testbench/scenarios/data/two_hosts_one_switch.graphml" --quiet --json "$tmp/graph.json"
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["completed"]==3 and r["operations"]==3, r["completed"]' "$tmp/graph.json"
/usr/bin/python3 "$src/scripts/golden" diff "$tmp/builtin.json" "$tmp/graph.json"
# A cable faster than the switch's ports is refused when the file is read, naming the file, the edge, the
# switch, where the rate came from, switch.port_config and the breakout that runs it (128x400 has 400G ports;
# 64x800 runs 800G); with that breakout the same run completes.
graph="$src/testbench/scenarios/data/two_hosts_one_switch.graphml"
if out=$("$bin" run "$src/testbench/scenarios/default.yaml" --set topology.kind=graph --set topology.file="$graph" \
  --set topology.link_gbps=800 --quiet 2>&1); then
  echo "FAIL: an 800G cable on 128x400 ports ran" >&2; exit 1
fi
want="two_hosts_one_switch.graphml: edge h0 -- sw0: 800 Gb/s (topology.link_gbps; the edge has no gbps) at switch sw0, faster than the 400 Gb/s ports of switch.port_config 128x400; use --set switch.port_config=64x800"
case "$out" in *"$want"*) ;; *) echo "FAIL: got '$out', expected '$want'" >&2; exit 1 ;; esac
"$bin" run "$src/testbench/scenarios/default.yaml" --set topology.kind=graph --set topology.file="$graph" \
  --set topology.link_gbps=800 --set switch.port_config=64x800 --quiet --json "$tmp/800g.json"
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["completed"]==3, r["completed"]' "$tmp/800g.json"
echo "port speed: refused on 128x400, runs on 64x800"
