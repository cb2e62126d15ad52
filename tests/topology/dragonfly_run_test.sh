#!/usr/bin/env bash
# The shipped dragonfly_small scenario (72 hosts, 9 groups of 4 routers) completes every WRITE and verifies
# every byte, with no drop on its lossy switches; and a WRITE alone on the smallest canonical dragonfly
# (p = h = 1, a = 2, g = 3: six routers in a ring, tests/topology/fabric_test.cpp) takes exactly its ideal
# FCT on every kind of path: the ideal follows the routes' path (testbench/fct_report.cpp). By hand, h0 -> h2
# (g0r0 -> g1r0, one 30 m global cable) takes 2 x (30 - 5) m x 5 ns/m = 250 ns longer than h0 -> h1
# (g0r0 -> g0r1, one 5 m local cable): the data one way, the ACK back, on otherwise identical paths.
# Usage: dragonfly_run_test.sh SOURCE_DIR FABRICSIM
set -euo pipefail
src=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run "$src/testbench/scenarios/dragonfly_small.yaml" --quiet --json "$tmp/small.json"
/usr/bin/python3 - "$tmp/small.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["operations"] == 72 and r["completed"] == 72, (r["operations"], r["completed"])
assert r["verified"] is True and r["failed"] == 0 and r["dropped_packets"] == 0, r
print("dragonfly_small: 72/72 completed, verified, no drops")
PY
# h0 .. h5 sit on g0r0, g0r1, g1r0, g1r1, g2r0, g2r1; ring distances from h0: h1 1, h2 1, h3 2, h4 2, h5 3.
for dst in h1 h2 h3 h4 h5; do
  cat > "$tmp/lone_$dst.yaml" <<YAML
name: lone_$dst
topology: {kind: dragonfly, hosts_per_router: 1, routers_per_group: 2, global_links_per_router: 1}
writes: [{src: h0, dst: $dst, bytes: 65536}]
YAML
  "$bin" run "$tmp/lone_$dst.yaml" --quiet --json "$tmp/lone_$dst.json"
done
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
ideal = {}
for dst in ["h1", "h2", "h3", "h4", "h5"]:
    f = json.load(open("%s/lone_%s.json" % (sys.argv[1], dst)))["flows"][0]
    assert f["completed"], f
    assert abs(f["fct_ns"] - f["ideal_fct_ns"]) < 1e-3, (dst, f["fct_ns"], f["ideal_fct_ns"])
    ideal[dst] = f["ideal_fct_ns"]
assert abs(ideal["h2"] - ideal["h1"] - 250.0) < 1e-6, (ideal["h1"], ideal["h2"])
# Farther on the ring is slower: one switch and one cable more per step.
assert ideal["h1"] < ideal["h3"] < ideal["h5"], ideal
print("lone WRITEs on the ring: FCT = ideal for every distance; global - local = 250 ns")
PY
