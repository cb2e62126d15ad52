#!/usr/bin/env bash
# One WRITE of 1024 bytes (one packet) from h0 in site 0 to h4 in site 1 of a two-site multi_site fabric,
# at 10 and 100 km: its one-way latency (fabric.data_packet_latency_ns, one packet: its exact max) is the
# hand sum over its 7 links and 6 switches, from the named defaults:
#   wire bytes w = 82 (headers, FCS, preamble, gap) + 16 (RETH) + 1024 = 1122; s = w x 8 / 400 Gb/s = 22.44 ns
#   cables (length x 5 ns/m + 100 ns FEC): host 2 m 110, leaf-spine 10 m 150, spine-edge 30 m 250,
#   inter-site 10 km 50 100 (100 km: 500 100); pipeline P = 80 + 40 + 120 + 80 + 80 = 400 ns per switch;
#   cut-through at each switch (idle egress, same rate) saves (w - 128) x 8 / 400 = 19.88 ns.
#   latency = 7 s + (2 x 110 + 2 x 150 + 2 x 250 + L_far) + 6 (P - 19.88)
# and the WRITE completes with FCT = its ideal (testbench/fct_report.cpp, a second implementation).
# The local ACK timeout is IBTA exponent 10 (4.096 us x 2^10 = 4.19 ms), above the 1 ms round trip at 100 km.
# Usage: multi_site_run_test.sh SOURCE_DIR FABRICSIM
set -euo pipefail
src=$1 bin=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for km in 10 100; do
  cat > "$tmp/far_$km.yaml" <<YAML
name: far_$km
topology: {kind: multi_site, leaves: 2, hosts_per_leaf: 2, spines: 2, inter_site_km: $km}
nic: {rto_us: 4194.304}
writes: [{src: h0, dst: h4, bytes: 1024}]
YAML
  "$bin" run "$tmp/far_$km.yaml" --quiet --json "$tmp/far_$km.json"
done
# The edges, and only they, get topology.edge_buffer_bytes: 1 MB cannot hold the PFC headroom of a 10 km
# cable (a 400G round trip of 100 us is 5 MB), and the refusal names the edge; the other switches keep
# switch.buffer_bytes, so a 1 MB switch.buffer_bytes refuses a leaf instead.
if "$bin" run "$tmp/far_10.yaml" --quiet --set topology.edge_buffer_bytes=1000000 > "$tmp/edge.txt" 2>&1; then
  echo "a 1 MB edge buffer was accepted"; exit 1
fi
grep -q "s0_edge0: PFC headroom" "$tmp/edge.txt" || { cat "$tmp/edge.txt"; exit 1; }
if "$bin" run "$tmp/far_10.yaml" --quiet --set switch.buffer_bytes=100000 > "$tmp/leaf.txt" 2>&1; then
  echo "a 100 KB switch buffer was accepted"; exit 1
fi
grep -q "s0_leaf0: PFC headroom" "$tmp/leaf.txt" || { cat "$tmp/leaf.txt"; exit 1; }
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
def hand(km):
    w = 82 + 16 + 1024
    s = w * 8 / 400.0
    far = km * 1000 * 5 + 100
    return 7 * s + 2 * 110 + 2 * 150 + 2 * 250 + far + 6 * (400 - (w - 128) * 8 / 400.0)
got = {}
for km in (10, 100):
    r = json.load(open("%s/far_%d.json" % (sys.argv[1], km)))
    f = r["flows"][0]
    assert f["completed"], f
    assert abs(f["fct_ns"] - f["ideal_fct_ns"]) < 1e-3, (km, f["fct_ns"], f["ideal_fct_ns"])
    lat = r["fabric"]["data_packet_latency_ns"]  # its max is exact (docs/report.md)
    assert lat["count"] == 1, lat
    lo = lat["max"]
    assert abs(lo - hand(km)) < 0.01, (km, lo, hand(km))
    got[km] = lo
    print("%d km: one-way %.2f ns (hand %.2f), FCT %.2f ns = ideal" % (km, lo, hand(km), f["fct_ns"]))
assert abs(got[100] - got[10] - 450000.0) < 0.01, got  # 90 km x 1000 m x 5 ns/m
PY
