#!/usr/bin/env bash
# A run on a fabric read from a file (topology.kind: graph) against the same fabric from the built-in
# builder: default.yaml's one switch and two hosts, written by hand as GraphML, must give the identical
# report (machine fields aside, scripts/golden diff), and every operation must complete.
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
