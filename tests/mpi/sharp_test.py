#!/usr/bin/env python3
"""SHARP across MPI ranks (docs/scale_out.md, "SHARP"): a SHARP allreduce on Quantum-X800 switches
(tests/mpi/collective_sharp.yaml) in one process and under `mpirun -n 2` and `-n 4` gives the same report apart
from what tests/mpi/compare_reports.py strips; the tree, the reduction counts and the checked bytes are the
hand-derived ones; the partial results that cross ranks travel with their values (the bytes exchanged differ
from a timing-only run's by exactly their payload); a barrier shorter than the lookahead is refused, and so is an HCA placed away from its switch.

Usage: sharp_test.py FABRICSIM SOURCE_DIR WORK_DIR"""
import os
import sys

FABRICSIM, SOURCE, WORK = sys.argv[1:4]
HERE = os.path.join(SOURCE, "tests", "mpi")
sys.path.insert(0, HERE)
import compare_reports  # noqa: E402

SCENARIO = os.path.join(HERE, "collective_sharp.yaml")
TIMEOUT = float(os.environ.get("FABRICSIM_MPI_TEST_TIMEOUT", "60"))
failures = []

check = compare_reports.checker(failures)


_run = compare_reports.runner(FABRICSIM, WORK, failures, TIMEOUT, prefix="sharp_")


def run(ranks, tag, expect_status=0, extra=()):
    return _run(SCENARIO, ranks, tag, expect_status, extra)


# By hand: 16 ranks, 4 per leaf; 64 KiB and 128 KiB in 4,096-byte chunks (one per packet: the NIC's MTU), 16
# and 32 chunks, 3 iterations each (a warm-up and two timed): every unit of the tree aggregates each chunk
# once, (16 + 32) x 3 = 144 chunks, from 4 children each (the root: the 4 leaves; a leaf: its 4 hosts), 576
# pieces of (64 + 128) KiB x 3 x 4 = 2,359,296 bytes; and sends 4 copies of each result down, 576. Every rank's
# result of the last iteration of each size is checked element by element: (65,536 + 131,072) x 16 bytes.
CHUNKS, SIZE_BYTES = (16 + 32) * 3, (65536 + 131072)
ref, _ = run(1, "data")
if ref is not None:
    c = ref["collective"]
    sh = c["sharp"]
    check(ref["verified"] and c["completed"] and all(r["wrong"] == 0 for r in c["rows"]),
          f"one process: verified {ref['verified']}, completed {c['completed']}")
    check(c["result_checked_bytes"] == SIZE_BYTES * 16,
          f"one process: {c['result_checked_bytes']} result bytes checked, expected {SIZE_BYTES * 16}")
    check(sh["root"] == "spine3" and [s["switch"] for s in sh["switches"]] == ["spine3", "leaf0", "leaf1", "leaf2", "leaf3"],
          f"tree: root {sh['root']}, switches {[s['switch'] for s in sh['switches']]}")
    for s in sh["switches"]:
        got = (s["children"], s["ops"], s["pieces"], s["bytes_reduced"], s["results_sent_down"], s["unexpected"])
        check(got == (4, CHUNKS, 4 * CHUNKS, SIZE_BYTES * 3 * 4, 4 * CHUNKS, 0),
              f"tree: {s['switch']}: children, ops, pieces, bytes reduced, results down, unexpected {got}")
    check(sh["host_unexpected"] == 0 and sh["credit_violations"] == 0 and sh["credit_overruns"] == 0,
          "tree: no unexpected packet, no send without credit")
    check(0 < sh["max_relative_error"] <= sh["float_tolerance"],
          f"float error {sh['max_relative_error']} within the tolerance {sh['float_tolerance']}")

# The one-process report on 2 and 4 ranks. The leaves whose partial results cross (2 ranks: leaf0, leaf1 to
# spine3 on rank 1; 4 ranks: leaf0, leaf1, leaf2 to spine3 on rank 3) send them up and get the results down,
# so the SHARP payload crossing is 2 x 2 x 196,608 x 3 bytes on 2 ranks and 3 x 2 x 196,608 x 3 on 4.
for n, crossing_leaves in ((2, 2), (4, 3)):
    rep, _ = run(n, "data")
    if rep is None or ref is None:
        continue
    diffs = []
    compare_reports.diff(ref, rep, "", diffs)
    check(not diffs, f"{n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
    so = rep["scale_out"]
    check(so["ranks"] == n and so["frames_exchanged"] > 0, f"{n} ranks: {so['frames_exchanged']} frames crossed")
    # The same run timing only: the same frames cross, without values; the difference in bytes exchanged is
    # the partial results' and results' payload, which a pointer into another process could not carry.
    timing, _ = run(n, "timing", extra=["--set", "nic.place_data=false"])
    if timing is None:
        continue
    payload = crossing_leaves * 2 * SIZE_BYTES * 3
    t_so = timing["scale_out"]
    check(t_so["frames_exchanged"] == so["frames_exchanged"] and
          so["bytes_exchanged"] - t_so["bytes_exchanged"] == payload,
          f"{n} ranks: frames {so['frames_exchanged']} / {t_so['frames_exchanged']} (data / timing only), bytes "
          f"{so['bytes_exchanged']} - {t_so['bytes_exchanged']} = {so['bytes_exchanged'] - t_so['bytes_exchanged']},"
          f" expected the SHARP payload {payload}")

# A reduction's end is learnt at a window's end: a barrier below the 150 ns lookahead is refused, naming the key.
_, p = run(2, "short_barrier", expect_status=2, extra=["--set", "collective.barrier_ns=100"])
check("collective.barrier_ns 100 ns is below the 150 ns lookahead" in p.stderr,
      f"a SHARP barrier shorter than the lookahead under 2 ranks is refused: {p.stderr[-500:]}")

# Not cut: an HCA away from its switch (a hand partition putting h0 on rank 1, its leaf0 on rank 0): its credits
# start from the switch's. Refused before the run on every rank, naming the host, the switch and their ranks
# (such a run used to hang).
away = os.path.join(WORK, "sharp_h0_away.yaml")
with open(away, "w") as f:
    f.write(open(SCENARIO).read() + "partition:\n  - [leaf0, leaf1, spine0, spine2]\n  - [h0, leaf2, leaf3, spine1, spine3]\n")
SCENARIO, saved = away, SCENARIO
_, p = run(2, "h0_away", expect_status=2)
SCENARIO = saved
check("partition: host h0 is on rank 1 and its switch leaf0 on rank 0: an InfiniBand HCA's cable cannot cross "
      "processes" in p.stderr, f"an HCA away from its leaf under 2 ranks is refused: {p.stderr[-500:]}")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("sharp: a SHARP allreduce's report identical on 1, 2 and 4 ranks, tree and counts as derived, partial "
      "results' values shipped across ranks, a barrier below the lookahead and an HCA away from its switch refused")
