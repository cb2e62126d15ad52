#!/usr/bin/env python3
"""Scale-out test (docs/scale_out.md): the same scenario in one process and under `mpirun -n N` gives the
same report, apart from wall-clock figures, kernel wake-ups and the `scale_out` object
(tests/mpi/compare_reports.py); the partition and the number of crossing links are the hand-derived ones;
what is not cut yet fails with a clear error.

Usage: scale_out_test.py FABRICSIM SOURCE_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

FABRICSIM, SOURCE, WORK = sys.argv[1:4]
HERE = os.path.join(SOURCE, "tests", "mpi")
sys.path.insert(0, HERE)
import compare_reports  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def run(scenario, ranks, tag, expect_status=0):
    out = os.path.join(WORK, f"{tag}.{ranks}.json")
    cmd = [FABRICSIM, "run", scenario, "--json", out, "--quiet"]
    if ranks > 1:
        cmd = ["mpirun", "--oversubscribe", "-n", str(ranks)] + cmd
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=60)
    if p.returncode != expect_status:
        failures.append(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect_status}\n{p.stderr[-2000:]}")
        return None, p
    return (json.load(open(out)) if expect_status == 0 else None), p


def check(cond, what):
    if not cond:
        failures.append(what)


def same_as_one_process(tag, scenario, ranks_list, expected_partition):
    ref, _ = run(scenario, 1, tag)
    if ref is None:
        return ref
    check("scale_out" not in ref, f"{tag}: a one-process report has no scale_out object")
    for n in ranks_list:
        rep, _ = run(scenario, n, tag)
        if rep is None:
            continue
        diffs = []
        compare_reports.diff(ref, rep, "", diffs)
        check(not diffs, f"{tag}: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        so = rep.get("scale_out", {})
        check(so.get("ranks") == n, f"{tag}: scale_out.ranks {so.get('ranks')}, expected {n}")
        check(so.get("frames_exchanged", 0) > 0, f"{tag}: {n} ranks exchanged no frame")
        if n in expected_partition:
            hosts, switches, cross = expected_partition[n]
            got = (so.get("hosts_per_rank"), so.get("switches_per_rank"), so.get("cross_links"))
            check(got == (hosts, switches, cross), f"{tag}: {n} ranks: partition {got}, expected {(hosts, switches, cross)}")
            # Leaf-spine cables are 10 m at 5 ns/m plus 100 ns of FEC: the lookahead is 150 ns.
            check(so.get("lookahead_ns") == 150.0, f"{tag}: lookahead {so.get('lookahead_ns')} ns, expected 150")
    return ref


# 4 leaves x 4 hosts, 4 spines. Leaves go in contiguous blocks (leaf j to rank j * N / 4); a spine reaches
# every leaf equally, so it goes to the least loaded rank. 2 ranks: leaves 0,1 | 2,3, spines 0,2 | 1,3; the
# crossing cables are 2 leaves x 2 spines each way = 8, 16 links. 4 ranks: a leaf and a spine each; every
# leaf has 3 of its 4 spine cables off-rank: 12 cables, 24 links. 8 ranks: leaves on ranks 0,2,4,6, spines on
# the empty 1,3,5,7; all 16 leaf-spine cables cross, 32 links.
flows = same_as_one_process(
    "flows", os.path.join(HERE, "leaf_spine_flows.yaml"), [2, 4, 8],
    {2: ([8, 8], [4, 4], 16), 4: ([4, 4, 4, 4], [2, 2, 2, 2], 24),
     8: ([4, 0, 4, 0, 4, 0, 4, 0], [1, 1, 1, 1, 1, 1, 1, 1], 32)})
if flows is not None:
    check(flows["verified"] and flows["completed"] == flows["operations"] == 120,
          "flows: every flow completes and its bytes are verified")
    check(flows["fabric"]["cnps_sent"] > 0, "flows: the workload makes CNPs (they cross ranks)")

# 5 leaves x 4 hosts, 4 spines, 2 ranks: leaves 0,1,2 | 3,4 (leaf j to rank j * 2 / 5), 12 | 8 hosts. Spines
# see 3:2 of the leaves (no 3/4 majority): the least loaded rank each, 1, 0, 1, 0. Crossing: 3 leaves x 2
# spines + 2 leaves x 2 spines = 10 cables, 20 links.
incast = same_as_one_process("incast", os.path.join(HERE, "incast_pfc.yaml"), [2, 4],
                             {2: ([12, 8], [5, 4], 20)})
if incast is not None:
    check(incast["fabric"]["pfc_pause_frames"] > 0, "incast: PFC pauses are sent (and cross ranks)")

# A partition given in the scenario (`partition:`): leaf0 and the four spines on rank 0, the other leaves and
# h0 (whose leaf is leaf0) on rank 1. Hosts: leaf0's h1-h3 on rank 0, the 16 under leaves 1-4 and h0 on rank
# 1; switches 5 | 4. Crossing: leaves 1-4 to the 4 spines, 16 cables, and h0's own cable: 17 cables, 34
# links. The shortest crossing link is now h0's 2 m host cable: 2 x 5 ns + 100 ns of FEC = 110 ns.
with open(os.path.join(HERE, "incast_pfc.yaml")) as f:
    incast_text = f.read()
placed = os.path.join(WORK, "incast_placed.yaml")
with open(placed, "w") as f:
    f.write(incast_text + "partition:\n  - [leaf0, spine0, spine1, spine2, spine3]\n"
            "  - [leaf1, leaf2, leaf3, leaf4, h0]\n")
ref, _ = run(os.path.join(HERE, "incast_pfc.yaml"), 1, "incast_ref")
rep, _ = run(placed, 2, "incast_placed")
if ref is not None and rep is not None:
    rep["scenario_file"] = ref["scenario_file"]  # a copy of the file, with the partition added
    diffs = []
    compare_reports.diff(ref, rep, "", diffs)
    check(not diffs, "placed partition: differs from one process in " + "; ".join(diffs[:10]))
    so = rep["scale_out"]
    got = (so["hosts_per_rank"], so["switches_per_rank"], so["cross_links"], so["lookahead_ns"])
    check(got == ([3, 17], [5, 4], 34, 110.0), f"placed partition: {got}, expected ([3, 17], [5, 4], 34, 110.0)")
# The same file in one process: the partition is ignored. On 3 ranks it is refused, naming both counts.
one, _ = run(placed, 1, "incast_placed_one")
if one is not None and ref is not None:
    one["scenario_file"] = ref["scenario_file"]
    diffs = []
    compare_reports.diff(ref, one, "", diffs)
    check(not diffs, "a partition changes nothing in one process: " + "; ".join(diffs[:10]))
_, p = run(placed, 3, "incast_placed_3", expect_status=2)
check("partition lists 2 ranks, but this run has 3" in p.stderr, f"partition on 3 ranks: {p.stderr[-500:]}")
# A name the topology does not have: refused at load, with the file, line and key.
bad = os.path.join(WORK, "incast_bad_partition.yaml")
with open(bad, "w") as f:
    f.write(incast_text + "partition:\n  - [leaf0]\n  - [leaf9]\n")
_, p = run(bad, 1, "incast_bad", expect_status=2)
check("partition.1.0" in p.stderr and "leaf9" in p.stderr and "incast_bad_partition.yaml:" in p.stderr,
      f"unknown device in partition: {p.stderr[-500:]}")

# Not cut yet: a clear error, exit status 2, no report.
_, p = run(os.path.join(SOURCE, "testbench", "scenarios", "allreduce_ring.yaml"), 2, "collective", expect_status=2)
check("is not cut across processes yet" in p.stderr and "collective" in p.stderr,
      f"a collective under 2 ranks names what is not supported: {p.stderr[-500:]}")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("scale-out: reports identical on 1, 2, 4 and 8 ranks; partitions as derived; unsupported runs refused")
