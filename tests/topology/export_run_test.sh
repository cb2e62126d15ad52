#!/usr/bin/env bash
# `fabricsim export-topology` against the built-in builders: each multi-tier example fabric is written as
# GraphML and run again from the file (topology.kind: graph). The reports must be identical (machine fields
# aside, scripts/golden diff): the same switches, ports, cables, routes, hashes and ideal FCTs. The counts
# the export prints follow docs/topology.md's formulas:
#   leaf_spine_small (4 leaves x 4 hosts, 4 spines):  4 + 4 = 8 switches, 16 hosts, 16 + 4 x 4 = 32 cables
#   three_tier_small (2 pods x (2 leaves + 2 spines) + 4 cores, 4 hosts per leaf):
#                    2 x 4 + 4 = 12 switches, 16 hosts, 16 + 2 x 2 x 2 + 2 x 4 = 32 cables
#   rail_optimized_small (2 groups of 4 servers x 4 rails, 4 spines): 2 x 4 + 4 = 12 switches,
#                    2 x 4 x 4 = 32 hosts, 32 + 2 x 4 x 4 = 64 cables
#   dragonfly_small (9 groups x 4 routers x 2 hosts, 2 global cables per router): 9 x 4 = 36 switches,
#                    72 hosts, 72 + 9 x 4 x 3 / 2 + 9 x 4 x 2 / 2 = 72 + 54 + 36 = 162 cables
# Then the file is edited as a user would (one leaf-spine cable removed): the run must use it (that link is
# gone from the report, one cable fewer) and still complete every operation over the other spines.
# Usage: export_run_test.sh SOURCE_DIR FABRICSIM
set -euo pipefail
src=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_counts() {  # scenario, expected "N switches, H hosts, C cables"
  local line
  line=$("$bin" export-topology "$1" --out "$tmp/$1.graphml")
  case "$line" in
    *": $2 -> "*) ;;
    *) echo "FAIL: $1: export printed '$line', expected '$2'" >&2; exit 1 ;;
  esac
}
check_counts leaf_spine_small "8 switches, 16 hosts, 32 cables"
check_counts three_tier_small "12 switches, 16 hosts, 32 cables"
check_counts rail_optimized_small "12 switches, 32 hosts, 64 cables"
check_counts dragonfly_small "36 switches, 72 hosts, 162 cables"
for sc in leaf_spine_small three_tier_small rail_optimized_small dragonfly_small; do
  "$bin" run "$sc" --quiet --json "$tmp/$sc.builtin.json"
  "$bin" run "$sc" --set topology.kind=graph --set topology.file="$tmp/$sc.graphml" --quiet --json "$tmp/graph.json"
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["completed"]==r["operations"]>0, (r["completed"], r["operations"])' "$tmp/graph.json"
  echo "$sc: $(/usr/bin/python3 "$src/scripts/golden" diff "$tmp/$sc.builtin.json" "$tmp/graph.json")"
done
# The edit: drop the cable leaf0 - spine0.
/usr/bin/python3 - "$tmp/leaf_spine_small.graphml" "$tmp/cut.graphml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
edge = re.compile(r'\s*<edge source="leaf0" target="spine0">.*?</edge>', re.S)
assert len(edge.findall(text)) == 1, "expected one leaf0-spine0 cable"
open(sys.argv[2], "w").write(edge.sub("", text, count=1))
PY
"$bin" run leaf_spine_small --set topology.kind=graph --set topology.file="$tmp/cut.graphml" --quiet --json "$tmp/cut.json"
/usr/bin/python3 - "$tmp/leaf_spine_small.builtin.json" "$tmp/cut.json" <<'PY'
import json, sys
full, cut = (json.load(open(p)) for p in sys.argv[1:3])
links = lambda r: {p["link"] for p in r["ports"]}
assert "leaf0_to_spine0" in links(full) and "spine0_to_leaf0" in links(full), "the built-in fabric has the cable"
gone = links(full) - links(cut)
assert gone == {"leaf0_to_spine0", "spine0_to_leaf0"}, gone
assert cut["completed"] == cut["operations"] > 0, (cut["completed"], cut["operations"])
print("cut: leaf0-spine0 gone, %d/%d operations completed" % (cut["completed"], cut["operations"]))
PY
