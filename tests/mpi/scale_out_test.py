#!/usr/bin/env python3
"""Scale-out test (docs/scale_out.md): the same scenario in one process and under `mpirun -n N` gives the
same report, apart from wall-clock figures, kernel wake-ups and the `scale_out` object
(tests/mpi/compare_reports.py); the partition and the number of crossing links are the hand-derived ones;
sampling, the warm-up window and taps give the same report, the same time-series CSV and the same pcap files;
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

ENV = compare_reports.MPI_ENV
failures = []
# Seconds per run: FABRICSIM_MPI_TEST_TIMEOUT on a machine busy with other work (a rank descheduled at every
# window end makes a run many times slower than its simulation).
TIMEOUT = float(os.environ.get("FABRICSIM_MPI_TEST_TIMEOUT", "60"))


run = compare_reports.runner(FABRICSIM, WORK, failures, TIMEOUT)

check = compare_reports.checker(failures)


def refused_below_lookahead(scenario, ranks, tag, key, value, what):
    """collective.KEY below the 150 ns lookahead under several ranks: refused, naming the key and the figures."""
    _, p = run(scenario, ranks, tag, expect_status=2, extra=["--set", f"collective.{key}={value}"])
    check(f"collective.{key} {value} ns is below the 150 ns lookahead" in p.stderr, f"{what}: {p.stderr[-500:]}")


def check_profile(tag, n, rep):
    """Where each rank's time went (scale_out.per_rank): the counts add up to the report's, by two paths."""
    so = rep["scale_out"]
    t = so.get("per_rank", {})
    for key in ("loop_s", "busy_s", "busy_cpu_s", "pack_s", "wait_s", "exchange_s", "unpack_s", "hook_s",
                "frames_sent", "frames_received", "bytes_sent", "bytes_received", "packet_hops", "events",
                "setup_s", "setup_cpu_s", "merge_s", "merge_cpu_s", "report_s", "report_cpu_s"):
        check(len(t.get(key, [])) == n, f"{tag}: {n} ranks: per_rank.{key} has {len(t.get(key, []))} entries")
    if any(len(v) != n for v in t.values()):
        return
    # Every frame a rank sent is received by one other rank: counted on the two sides independently.
    check(sum(t["frames_sent"]) == sum(t["frames_received"]) == so["frames_exchanged"],
          f"{tag}: {n} ranks: frames sent {t['frames_sent']}, received {t['frames_received']}, "
          f"exchanged {so['frames_exchanged']}")
    check(sum(t["bytes_sent"]) == sum(t["bytes_received"]) == so["bytes_exchanged"],
          f"{tag}: {n} ranks: bytes sent {t['bytes_sent']}, received {t['bytes_received']}")
    # The ranks' own hop counts add up to the one-process figure the report carries.
    check(sum(t["packet_hops"]) == rep["packet_hops"] and all(h > 0 for h in t["packet_hops"]),
          f"{tag}: {n} ranks: per-rank packet hops {t['packet_hops']} do not add up to {rep['packet_hops']}")
    for r in range(n):
        parts = t["busy_s"][r] + t["wait_s"][r] + t["exchange_s"][r] + t["unpack_s"][r] + t["hook_s"][r]
        check(0 < t["busy_cpu_s"][r] and t["pack_s"][r] <= t["busy_s"][r] and parts <= t["loop_s"][r] * 1.001 + 1e-3,
              f"{tag}: rank {r} of {n}: busy {t['busy_s'][r]} (cpu {t['busy_cpu_s'][r]}, pack {t['pack_s'][r]}), "
              f"parts {parts} against the loop's {t['loop_s'][r]}")
    # Around the loop: every rank set up before its first window and merged after its last.
    check(all(t["setup_s"][r] > 0 and t["merge_s"][r] >= 0 and t["report_s"][r] >= 0 for r in range(n)),
          f"{tag}: {n} ranks: set-up {t['setup_s']}, merge {t['merge_s']}, report {t['report_s']} s")
    # One message per ordered pair of ranks per window, which carries every frame for that rank.
    check(so["messages_per_window"] == n * (n - 1), f"{tag}: {n} ranks: {so['messages_per_window']} messages "
          "per window")


def same_as_one_process(tag, scenario, ranks_list, expected_partition, each=None, extra=()):
    ref, _ = run(scenario, 1, tag, extra=extra)
    if ref is None:
        return ref
    check("scale_out" not in ref, f"{tag}: a one-process report has no scale_out object")
    for n in ranks_list:
        rep, _ = run(scenario, n, tag, extra=extra)
        if rep is None:
            continue
        diffs = []
        compare_reports.diff(ref, rep, "", diffs)
        check(not diffs, f"{tag}: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        so = rep.get("scale_out", {})
        if each:
            each(n, rep)
        check(so.get("ranks") == n, f"{tag}: scale_out.ranks {so.get('ranks')}, expected {n}")
        check_profile(tag, n, rep)
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
    # The window protocol meets once per window (the exchange carries the next-event agreement): 1,000-odd
    # windows and a handful of calls around the run's few start() calls. Before, it met three times.
    for n in (2, 4, 8):
        rep = json.load(open(os.path.join(WORK, f"flows.{n}.json")))
        cpw = rep["scale_out"]["collectives_per_window"]
        check(1.0 <= cpw < 1.05, f"flows: {n} ranks: {cpw} meetings of the ranks per window, expected 1 (+ < 5 %)")
    check(flows["verified"] and flows["completed"] == flows["operations"] == 120,
          "flows: every flow completes and its bytes are verified")
    check(flows["fabric"]["cnps_sent"] > 0, "flows: the workload makes CNPs (they cross ranks)")

# 5 leaves x 4 hosts, 4 spines, 2 ranks: leaves 0,1,2 | 3,4 (leaf j to rank j * 2 / 5), 12 | 8 hosts. Spines
# see 3:2 of the leaves (no 3/4 majority): the least loaded rank each, 1, 0, 1, 0. Crossing: 3 leaves x 2
# spines + 2 leaves x 2 spines = 10 cables, 20 links. Not on 4 ranks: PFC frames cross at 2, and this 5-leaf
# fabric's 4-rank partition is run and checked below (`quantum`).
incast = same_as_one_process("incast", os.path.join(HERE, "incast_pfc.yaml"), [2],
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
ref = incast  # the one-process run of incast_pfc.yaml above
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

# Sampling, the measurement window and taps (tests/mpi/incast_sampled.yaml). Each rank count runs in its own
# directory with the same relative file names (the report names the files): the report, the CSV and every
# pcap file must be byte for byte the one-process ones. Taps: leaf2_to_spine0 and spine1_to_leaf0 cross ranks
# at 2 ranks (leaves 0,1 | 2,3, spines 0,2 | 1,3) and at 4 (a leaf and a spine each); h0's uplink is local.
# spine1_to_leaf0 carries WRITEs to h0 from senders on other ranks than spine1's: the payload its pcap holds
# was shipped between ranks.
SAMPLED = os.path.join(HERE, "incast_sampled.yaml")
TAPS = ["leaf2_to_spine0=up.pcap", "spine1_to_leaf0=down.pcap", "h0:0=h0.pcap"]
FILES = ["series.csv", "up.pcap", "down.pcap", "h0.pcap"]
sampled = {}
for n in [1, 2, 4]:
    d = os.path.join(WORK, f"sampled.{n}")
    os.makedirs(d, exist_ok=True)
    for f in FILES:
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    extra = ["--set", "run.timeseries_csv=series.csv"] + [a for t in TAPS for a in ("--tap", t)]
    rep, _ = run(SAMPLED, n, "sampled", extra=extra, cwd=d)
    if rep is None:
        continue
    files = {}
    for f in FILES:
        path = os.path.join(d, f)
        check(os.path.exists(path), f"sampled: {n} ranks wrote no {f}")
        files[f] = open(path, "rb").read() if os.path.exists(path) else b""
    sampled[n] = (rep, files)
if 1 in sampled:
    ref, ref_files = sampled[1]
    fab = ref["fabric"]
    # 24 us sampled every 1 us: samples at 1, 2, ..., 24 us; 12 senders, so 12 rows each plus the header.
    check(fab["samples"] == 24, f"sampled: {fab['samples']} samples, expected 24")
    rows = ref_files["series.csv"].decode().splitlines()
    check(len(rows) == 1 + 24 * 12, f"sampled: the CSV has {len(rows)} lines, expected 1 + 24 x 12")
    check(fab["window_start_ns"] == 8000.0, f"sampled: window starts at {fab['window_start_ns']} ns, expected 8000")
    # Not a trivially empty run: the last sample of h8 (leaf 2, another rank than h0 under 2 and 4 ranks) has
    # bytes delivered, DCQCN has cut some rate below the line's 400,000 Mb/s, h0's port queued.
    cols = rows[0].split(",")
    last = [dict(zip(cols, r.split(","))) for r in rows[-12:]]
    h8 = [r for r in last if r["src"] == "h8"]
    check(len(h8) == 1 and int(h8[0]["delivered_bytes"]) > 0, "sampled: h8 delivered bytes by the last sample")
    data = [dict(zip(cols, r.split(","))) for r in rows[1:]]
    check(any(float(r["rate_mbps"]) < 400000 for r in data), "sampled: DCQCN cut some sender's rate")
    check(any(int(r["dst_port_queue_bytes"]) > 0 for r in data), "sampled: h0's port queued")
    check(fab["bottleneck"] is not None and fab["bottleneck"]["queue_mean_bytes"] > 0,
          "sampled: the bottleneck's mean queue over the window is above 0")
    # Every payload that landed was compared with its source as it landed: the completed WRITEs (16 KiB
    # each) whole, the rest in part; a byte that landed twice counts once.
    check(ref["verified"] and ref["completed"] > 0 and ref["checked_bytes"] >= ref["completed"] * 16384
          and ref["checked_bytes"] == ref["placed_bytes"] - ref["duplicate_bytes"],
          f"sampled: {ref['completed']} WRITEs completed, {ref['checked_bytes']} bytes checked, "
          f"{ref['placed_bytes']} placed, {ref['duplicate_bytes']} twice")
    # Each tap saw every frame its link carried: the count equals the link's own packet counter.
    packets = {p["link"]: p["packets"] for p in ref["ports"]}
    for t in ref["taps"]:
        check(t["frames"] > 0 and t["frames"] == packets[t["link"]],
              f"sampled: tap {t['tap']} wrote {t['frames']} frames, its link carried {packets[t['link']]}")
    for n, (rep, files) in sampled.items():
        if n == 1:
            continue
        diffs = []
        compare_reports.diff(ref, rep, "", diffs)
        check(not diffs, f"sampled: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        for f in FILES:
            check(files[f] == ref_files[f], f"sampled: {n} ranks: {f} differs from one process's "
                  f"({len(files[f])} bytes vs {len(ref_files[f])})")
        so = rep.get("scale_out", {})
        check(so.get("frames_exchanged", 0) > 0, f"sampled: {n} ranks exchanged no frame")

# A tap file that cannot be created on the rank that writes it (rank 1 transmits on leaf2_to_spine0 at 2
# ranks) stops every rank, and rank 0 prints that rank's message.
_, p = run(SAMPLED, 2, "badtap", expect_status=2, extra=["--tap", "leaf2_to_spine0=/nonexistent/dir/up.pcap"])
check("--tap leaf2_to_spine0=/nonexistent/dir/up.pcap" in p.stderr,
      f"a tap file rank 1 cannot create is reported: {p.stderr[-500:]}")

# The CSV only rank 0 writes: an error there stops every rank (after the run), with rank 0's message.
_, p = run(SAMPLED, 2, "badcsv", expect_status=2, extra=["--set", "run.timeseries_csv=/nonexistent/dir/s.csv"])
check("run.timeseries_csv /nonexistent/dir/s.csv: cannot open for writing" in p.stderr,
      f"a CSV rank 0 cannot create is reported: {p.stderr[-500:]}")


# InfiniBand: the same 5 x 4 leaf-spine of Quantum-X800 switches, a 16-to-1 incast with data placed. 2 ranks:
# the partition derived above. 4 ranks: leaves 0,1 | 2 | 3 | 4 (leaf j to rank j * 4 / 5); no spine has 3/4 of
# its 5 leaf cables on one rank, so each goes to the least loaded rank (lowest on a tie): switch counts
# 2,1,1,1 -> spine0 to rank 1; 2,2,1,1 -> spine1 to rank 2; 2,2,2,1 -> spine2 to rank 3; spine3 to rank 0.
# Crossing cables: spines 0, 1, 2 share a rank with one leaf (4 each cross), spine3 with two (3 cross): 15
# cables, 30 links.
def credits_crossed(n, rep):
    so = rep.get("scale_out", {})
    # Every data frame that crosses a leaf-spine cable occupies the far switch's receive buffer; when it
    # leaves it, that receiver sends a credit update back along the reverse cable, which crosses the same two
    # ranks. Updates are only sent for freed space (at most one per frame received, fewer when coalesced
    # within the update period), so 0 < credits exchanged <= frames exchanged.
    credits, frames = so.get("credits_exchanged", 0), so.get("frames_exchanged", 0)
    check(0 < credits <= frames, f"{rep.get('name')}: {n} ranks exchanged {credits} credit updates for {frames} frames, "
          "expected between 1 and the frame count")


quantum = same_as_one_process("quantum", os.path.join(HERE, "quantum_incast.yaml"), [2, 4],
                              {2: ([12, 8], [5, 4], 20), 4: ([8, 4, 4, 4], [3, 2, 2, 2], 30)}, credits_crossed)
if quantum is not None:
    check(quantum["verified"] and quantum["completed"] == quantum["operations"] == 16,
          "quantum: every write completes and its bytes are verified")
    # Four spines offer up to 4 x 800 Gb/s to leaf0, which drains 800 Gb/s into h0 and holds 16 KiB per
    # ingress port: the spines' ports towards leaf0 (whose cables cross ranks) must wait for credit.
    hops = quantum["fabric"]["credit_stall_us_by_hop"]
    check(hops.get("spine_to_leaf", 0) > 0, f"quantum: spines stall for leaf0's credits: {hops}")
# The same 4 x 4 leaf-spine as the flows above (partitions derived there) of Quantum-X800 switches: a random
# permutation with adaptive routing, whose choices read credit and queue state at the instant, so a different
# order of simultaneous credit deliveries and arrivals on some rank changes the report (with the deliveries'
# keys removed from one process, 2 and 4 ranks differed in about 670 fields). 2 ranks only: they showed it too,
# and credits crossing 4 ranks are run above (`quantum`).
perm = same_as_one_process("quantum_perm", os.path.join(HERE, "quantum_permutation.yaml"), [2],
                           {2: ([8, 8], [4, 4], 16)}, credits_crossed)
if perm is not None:
    check(perm["verified"] and perm["completed"] == perm["operations"] == 16,
          "quantum_perm: every write completes and its bytes are verified")
# A credit update must take longer than the lookahead: with no update latency it could take exactly the
# shortest cable's latency, so that is refused under several ranks.
_, p = run(os.path.join(HERE, "quantum_incast.yaml"), 2, "quantum_zero", expect_status=2,
           extra=["--set", "quantum.credit_update_latency_ns=0"])
check("credit_update_latency_ns" in p.stderr, f"a zero credit update latency under 2 ranks is refused: {p.stderr[-500:]}")

# Collectives (docs/scale_out.md): each process drives the ranks on its hosts; the iteration barrier, slot
# credits between processes and the posts a receiver must match are exchanged at window ends.
# Ring allreduce, 8 ranks on 4 leaves x 2 hosts, 4 KiB slices. Per iteration, 2(n-1) = 14 steps of n = 8
# WRITEs, each step moving one part (size / 8) in 4 KiB slices: 64 KiB -> 8 KiB parts, 2 slices, 14 x 8 x 2
# = 224 WRITEs; 128 KiB -> 448. Each rank sends 2(n-1)/n of the buffer: 114,688 and 229,376 bytes. Three
# iterations per size (a warm-up, two timed): (224 + 448) x 3 = 2,016 WRITEs. Partition: leaves and spines
# dealt as in `flows` above (2 ranks: 4 | 4 hosts; 4 ranks: a leaf and a spine each, 2 hosts per rank).
ring = same_as_one_process("ring", os.path.join(HERE, "collective_ring.yaml"), [2, 4],
                           {2: ([4, 4], [4, 4], 16), 4: ([2, 2, 2, 2], [2, 2, 2, 2], 24)})
# Alltoall, 16 ranks on 4 leaves x 4 hosts: every rank writes a part of size / 16 to each of the 15 others,
# one WRITE each (4 and 8 KiB parts, 8 KiB slices): 240 WRITEs per iteration, 15 x 4,096 = 61,440 and
# 15 x 8,192 = 122,880 bytes sent per rank; (240 + 240) x 3 = 1,440 WRITEs.
a2a = same_as_one_process("alltoall", os.path.join(HERE, "collective_alltoall.yaml"), [2, 4],
                          {2: ([8, 8], [4, 4], 16), 4: ([4, 4, 4, 4], [2, 2, 2, 2], 24)})
for tag, rep, writes, sent, ops in [("ring", ring, [224, 448], [114688, 229376], 2016),
                                    ("alltoall", a2a, [240, 240], [61440, 122880], 1440)]:
    if rep is None:
        continue
    c = rep["collective"]
    check(rep["verified"] and c["completed"] and rep["operations"] == rep["completed"] == ops,
          f"{tag}: every WRITE completes and is verified ({rep['operations']} WRITEs, expected {ops})")
    check([r["writes_per_iteration"] for r in c["rows"]] == writes,
          f"{tag}: WRITEs per iteration {[r['writes_per_iteration'] for r in c['rows']]}, expected {writes}")
    check([r["bytes_sent_per_rank"][0] for r in c["rows"]] == sent, f"{tag}: bytes sent per rank")
    # Each timed iteration takes time, and no bus bandwidth exceeds the 400 Gb/s (50 GB/s) links.
    check(all(len(r["iteration_times_us"]) == 2 and 0 < r["busbw_gbps"] < 50 and r["wrong"] == 0
              for r in c["rows"]), f"{tag}: two timed iterations per size, busbw in (0, 50) GB/s, no wrong element")
# The barrier in one process: 2 sizes x 3 iterations are 5 barriers; from 200 to 1,000 ns the fabric is idle
# at each (the timed iterations take as long), so the run ends 5 x 800 = 4,000 ns later.
slow_barrier, _ = run(os.path.join(HERE, "collective_ring.yaml"), 1, "ring_barrier_1000",
                      extra=["--set", "collective.barrier_ns=1000"])
if ring is not None and slow_barrier is not None:
    times = lambda r: [row["iteration_times_us"] for row in r["collective"]["rows"]]
    check(times(slow_barrier) == times(ring), "ring: a longer barrier leaves the iteration times alone")
    check(abs(slow_barrier["simulated_time_ns"] - ring["simulated_time_ns"] - 4000.0) < 1e-6,
          f"ring: barrier 1000 ns ends {slow_barrier['simulated_time_ns'] - ring['simulated_time_ns']} ns later, "
          "expected 5 x 800 = 4000")
# The barrier must be at least the lookahead (150 ns) under several ranks: refused with the key and the figure.
refused_below_lookahead(os.path.join(HERE, "collective_ring.yaml"), 2, "ring_short_barrier", "barrier_ns", 100,
                        "a barrier shorter than the lookahead is refused")
refused_below_lookahead(os.path.join(HERE, "collective_ring.yaml"), 2, "ring_short_credit", "credit_ns", 0,
                        "a credit faster than the lookahead is refused")

# The same ring on Quantum-X800 switches and InfiniBand HCAs: credit-based links, whose credit updates cross
# ranks on the switch-to-switch cables (the same partition as on Spectrum). The WRITE counts are the hand
# figures above: the ring's schedule does not depend on the link layer. 2 ranks: the collective on 4 is the
# Spectrum `ring` above, credits crossing 4 ranks are `quantum`'s.
ib_ring = same_as_one_process("ib_ring", os.path.join(HERE, "collective_ring.yaml"), [2],
                              {2: ([4, 4], [4, 4], 16)}, extra=["--set", "switch.model=quantum_x800"])
if ib_ring is not None:
    c = ib_ring["collective"]
    check(ib_ring["verified"] and c["completed"] and ib_ring["operations"] == ib_ring["completed"] == 2016,
          f"ib_ring: every WRITE completes and is verified ({ib_ring['operations']} WRITEs, expected 2016)")
    check([r["writes_per_iteration"] for r in c["rows"]] == [224, 448], "ib_ring: WRITEs per iteration")
    rep = json.load(open(os.path.join(WORK, "ib_ring.2.json")))
    check(rep["scale_out"]["credits_exchanged"] > 0, "ib_ring: 2 ranks: no credit update crossed")

# PCIe trays (nic.placement pcie) on every host of the `flows` fabric: each NIC reads what it sends from GPU
# memory through its tray and writes what it receives into it; a payload crossing ranks is named by its NIC's
# transmit buffer. Per host, the bytes landed in GPU memory are the bytes of the operations towards it
# (counted from the report's flows, independently of the trays' own counters). The bounce buffer adds the GPU
# copy engine, whose host-memory traffic meets the NIC's at the tray's root port in the same picosecond: those
# TLPs go in port order (pcie_link::send), not in the kernel's order, which differs between partitions (a
# 2-rank run used to send 43 CNPs against one process's 44). 2 ranks only (the trays' runs are the test's most
# costly, 40 % of its CPU with 4 ranks): a tray is on its host's rank, and payloads cross between 2 as between 4.
for path in ("gpudirect", "bounce"):
    trays = same_as_one_process(
        f"trays_{path}", os.path.join(HERE, "leaf_spine_flows.yaml"), [2], {2: ([8, 8], [4, 4], 16)},
        extra=["--set", "nic.placement=pcie", "--set", f"pcie.data_path={path}"])
    if trays is None:
        continue
    towards = {}
    for f in trays["flows"]:
        if f["op"] != "read":
            towards[f["dst"]] = towards.get(f["dst"], 0) + f["bytes"]
        else:
            towards[f["src"]] = towards.get(f["src"], 0) + f["bytes"]
    landed = {t["host"]: t["bytes_landed"] for t in trays["pcie"]}
    check(trays["verified"] and trays["completed"] == trays["operations"] == 120,
          f"trays_{path}: every operation completes and is verified")
    check(len(trays["pcie"]) == 16 and landed == towards,
          f"trays_{path}: GPU memory got {landed}, the operations towards each host {towards}")
    check(all(t["data_path"] == path for t in trays["pcie"]), f"trays_{path}: data path")

# A training step (tests/mpi/training_leaf_spine.yaml: tensor 2 x pipeline 2 x data 2 on 8 hosts of a 4x4
# leaf-spine, the same partitions as `faults`): every process runs the step's whole graph, posts its own
# hosts' WRITEs, and learns at window ends of the posts, slot credits and placements of the others; a
# collective's end releases tasks on every rank. The one-process report on 2 and 4 ranks, the step complete,
# every WRITE completed, pipeline sends and data-parallel allreduces (which cross ranks) among the rows.
training = same_as_one_process("training", os.path.join(HERE, "training_leaf_spine.yaml"), [2, 4],
                               {2: ([4, 4], [4, 4], 16), 4: ([2, 2, 2, 2], [2, 2, 2, 2], 24)})
if training is not None:
    t = training["training"]
    check(t["completed"] and training["completed"] == training["operations"] > 0 and training["failed"] == 0,
          f"training: step completed {t['completed']}, WRITEs {training['completed']} of {training['operations']}")
    groups = {(c["group"], c["op"]) for c in t["collectives"]}
    check({("tp", "allreduce"), ("pp", "send"), ("dp", "allreduce")} <= groups,
          f"training: collectives {sorted(groups)}")
    check(t["step_time_us"] > t["compute_time_us"] > 0, f"training: step {t['step_time_us']} us, compute "
          f"{t['compute_time_us']} us")
# A collective's end is learnt at a window's end: a barrier below the 150 ns lookahead is refused.
refused_below_lookahead(os.path.join(HERE, "training_leaf_spine.yaml"), 2, "training_barrier", "barrier_ns", 100,
                        "training: a barrier shorter than the lookahead is refused")
# At 4 ranks the data-parallel ring's reducing connections cross: their slot credits must not be faster.
refused_below_lookahead(os.path.join(HERE, "training_leaf_spine.yaml"), 4, "training_credit", "credit_ns", 100,
                        "training: a slot credit faster than the lookahead is refused at 4 ranks")

# (SHARP collectives are cut: tests/mpi/sharp_test.py; a training step on a system preset, and what is still
# refused on presets: tests/mpi/preset_scale_out_test.py.)

# Faults on crossing cables (tests/mpi/faults_leaf_spine.yaml): 4 leaves x 2 hosts, 4 spines. 2 ranks: leaves
# 0,1 | 2,3, spines 0,2 | 1,3 (as for `flows`), 4 | 4 hosts, 8 crossing cables, 16 links; 4 ranks: leaf j and
# spine j on rank j, 12 crossing cables, 24 links. Every faulty cable joins a leaf and a spine on different
# ranks in both cuts, so each direction's verdicts are made on its transmitter's rank and each end learns of
# a carrier change on its own rank.
faults = same_as_one_process("faults", os.path.join(HERE, "faults_leaf_spine.yaml"), [2, 4],
                             {2: ([4, 4], [4, 4], 16), 4: ([2, 2, 2, 2], [2, 2, 2, 2], 24)})
if faults is not None:
    check(faults["verified"] and faults["completed"] == faults["operations"] == 8,
          "faults: every WRITE completes and its bytes are verified")
    check(faults["faults"]["retransmissions"] > 0, "faults: the losses are retransmitted")
    entries = faults["faults"]["entries"]
    stats = faults["stats"]

    def link_count(name, what):
        return stats[name][what]["value"]
    down, flap, loss, port, ber = entries
    # Time down from the schedule: 8 us; 1 us in each of the periods starting at 6 and 11 us (16 is the end);
    # 6 us.
    check([e["time_down_ns"] for e in (down, flap, port)] == [8000.0, 2000.0, 6000.0],
          f"faults: time down {[e['time_down_ns'] for e in (down, flap, port)]}, expected 8000, 2000, 6000 ns")
    check(port["links"] == ["leaf3_to_spine2", "spine2_to_leaf3"],
          f"faults: leaf3 port 4 is its cable to spine2 (ports 0-1 hosts, 2-5 spines 0-3): {port['links']}")
    for e in (down, flap, port):
        # The entry's count (each direction judged on its transmitter's rank) is the two links' own counters
        # (merged separately, with the statistics).
        a, b = e["links"]
        check(e["frames_lost"] > 0 and e["frames_lost"] == link_count(a, "fault_lost") + link_count(b, "fault_lost"),
              f"faults: {e['kind']} lost {e['frames_lost']} frames, its links {link_count(a, 'fault_lost')} + "
              f"{link_count(b, 'fault_lost')}")
    for e in (down, port):
        # Rerouted: the ends learn 2 us after the carrier drops and stop sending into the cable, so nothing is
        # lost on it after (end - 2 us) although every WRITE is still running then; the fabric's goodput came
        # back, in a sampling period that begins after the last loss.
        ran_on = all(f["completed_ns"] > e["end_ns"] for f in faults["flows"])
        check(ran_on and e["last_loss_ns"] < e["end_ns"] - 2000,
              f"faults: {e['kind']}: last loss at {e['last_loss_ns']} ns, the outage ends at {e['end_ns']} ns")
        check(e["time_to_recover_ns"] is not None and e["time_to_recover_ns"] > e["last_loss_ns"] - e["start_ns"],
              f"faults: {e['kind']} recovered after its last loss: {e['time_to_recover_ns']}")
    # The spines that lost their only way down drop what the far leaves still spray to them (only the cable's
    # ends know): spine1 towards leaf0 (from leaf3, h6/h7 -> h0/h1), spine2 towards leaf3 (from leaf2).
    check(link_count("spine1", "no_live_port") > 0 and link_count("spine2", "no_live_port") > 0,
          "faults: spine1 and spine2 drop frames with no live port while their cable is known down")
    check(0 < loss["frames_lost"] <= loss["frames_exposed"] and
          loss["frames_lost"] == link_count("leaf1_to_spine3", "fault_lost"),
          f"faults: loss lost {loss['frames_lost']} of {loss['frames_exposed']} frames")
    # Bit errors: judged on spine0's rank, dropped by leaf3's FCS check on leaf3's rank.
    check(0 < ber["fcs_errors"] <= ber["frames_exposed"] and
          ber["fcs_errors"] == link_count("spine0_to_leaf3", "fcs_errors"),
          f"faults: bit errors corrupted {ber['fcs_errors']} of {ber['frames_exposed']} frames")

# The same faults with Spectrum-X's remote fault notification (docs/faults.md): the switches away from a
# failed cable stop routing towards it fault.notification_us (1 us) after its ends detect it. Every rank
# computes the whole fabric's reachability tables from the schedule and gives its own switches their rows:
# the one-process report on 2 and 4 ranks. The notification must act: spine1 (cut off from leaf0 by the
# link_down) and spine2 (from leaf3 by the port_down) get fewer frames they cannot deliver than with the ends
# alone (the far leaves stop spraying to them 1 us after detection instead of until the link returns).
# 2 ranks (every faulty cable crosses there too; faults on 4 ranks are `faults` above).
notified = same_as_one_process("faults_notified", os.path.join(HERE, "faults_leaf_spine.yaml"), [2],
                               {2: ([4, 4], [4, 4], 16)}, extra=["--set", "fault.remote_notification=true"])
if notified is not None and faults is not None:
    check(notified["verified"] and notified["completed"] == notified["operations"] == 8,
          "faults_notified: every WRITE completes and its bytes are verified")
    for spine in ("spine1", "spine2"):
        on, off = (r["stats"][spine]["no_live_port"]["value"] for r in (notified, faults))
        check(on < off, f"faults_notified: {spine} dropped {on} frames with no live port with the notification, "
              f"{off} without: the far leaves should stop sending to it")

# The same faults on Quantum-X800 switches and HCAs (same partitions). Two things cross ranks here that a
# Spectrum fabric does not have: the subnet manager's reroute (reachability tables computed on every rank
# from the whole fabric's routes and the fault schedule, each switch reading its own rows), and the credit
# recovery of frames a fault destroys: the verdict is made on the transmitter's rank, the receiver that must
# resynchronise at the sender's next FCTBS refresh is on the other (it learns of the loss as the frame
# arrives). Without that recovery the lost blocks' credit leaks and the run differs or stalls. 2 ranks: every
# faulty cable crosses there.
ib_faults = same_as_one_process("ib_faults", os.path.join(HERE, "faults_leaf_spine.yaml"), [2],
                                {2: ([4, 4], [4, 4], 16)},
                                extra=["--set", "switch.model=quantum_x800", "--set", "quantum.routing=adaptive"])
if ib_faults is not None:
    check(ib_faults["verified"] and ib_faults["completed"] == ib_faults["operations"] == 8,
          "ib_faults: every WRITE completes and its bytes are verified")
    lost = [e["frames_lost"] for e in ib_faults["faults"]["entries"][:4]]
    check(all(n > 0 for n in lost), f"ib_faults: the carrier and loss faults destroyed frames: {lost}")
    check(ib_faults["stats"]["spine0_to_leaf3"]["fcs_errors"]["value"] > 0,
          "ib_faults: bit errors on spine0 -> leaf3 are caught at leaf3 (the other rank)")


# fabricsim replay across ranks: h0's uplink captured in one process (its flows go to every leaf), then
# replayed onto the same fabric in one process and on 2 ranks: the same report (the replay object included),
# the replayed messages crossing ranks.
flows_file = os.path.join(HERE, "leaf_spine_flows.yaml")
capture = os.path.join(WORK, "h0_uplink.pcap")
run(flows_file, 1, "replay_capture", extra=["--tap", f"h0:0={capture}"])
replayed = {}
for n in (1, 2):
    out = os.path.join(WORK, f"replay.{n}.json")
    cmd = [FABRICSIM, "replay", capture, "--scenario", flows_file, "--json", out, "--quiet"]
    if n > 1:
        cmd = ["mpirun", "--oversubscribe", "-n", str(n)] + cmd
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
    check(p.returncode == 0, f"replay: {n} ranks exit {p.returncode}: {p.stderr[-1000:]}")
    replayed[n] = json.load(open(out)) if p.returncode == 0 else None
if all(replayed.values()):
    ref = replayed[1]
    posted = ref["replay"]["messages_posted"]
    check(posted > 0 and ref["completed"] == posted and ref["verified"] and "scale_out" not in ref,
          f"replay: {posted} messages posted, {ref['completed']} completed in one process")
    for n in (2,):
        diffs = []
        compare_reports.diff(ref, replayed[n], "", diffs)
        check(not diffs, f"replay: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        so = replayed[n]["scale_out"]
        check(so["ranks"] == n and so["frames_exchanged"] > 0, f"replay: {n} ranks: {so['frames_exchanged']} frames crossed")
        check_profile("replay", n, replayed[n])


# --record-rtl across ranks: each rank records the RTL blocks of its own NICs (reorder trackers, DCQCN reaction
# points, CNP generators); rank 0 writes them in the canonical order one process writes (instances in name
# order, each one's lines together), so the files are byte for byte the one-process files, and they replay.
# Each rank count records into `rec` under its own directory: the files' header lines name that path.
recorded = {}
for n in (1, 2, 4):
    d = os.path.join(WORK, f"rec.{n}", "rec")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    rep, _ = run(flows_file, n, "rec", extra=["--record-rtl", "rec"], cwd=os.path.dirname(d))
    if rep is not None:
        recorded[n] = {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}
BLOCKS = ["cnp_gen.txt", "dcqcn_rp.txt", "reorder_tracker.txt"]
if 1 in recorded:
    ref = recorded[1]
    check(sorted(ref) == BLOCKS, f"rec: one process wrote {sorted(ref)}, expected {BLOCKS} (and no part file)")
    # 16 NICs: one CNP generator each; a reaction point and a reorder tracker per queue pair, and a queue pair
    # per flow (queue_pairs: per_flow) at each of its two ends: 2 x 120 = 240.
    news = {f: sum(1 for line in ref.get(f, b"").decode().splitlines() if line.startswith("new ")) for f in BLOCKS}
    check(news == {"cnp_gen.txt": 16, "dcqcn_rp.txt": 240, "reorder_tracker.txt": 240},
          f"rec: instances recorded {news}, expected 16 CNP generators, 240 reaction points and 240 trackers")
    for f in BLOCKS:
        out = subprocess.run([FABRICSIM, "verify-rtl", "--block", f[:-4], "--replay",
                              os.path.join(WORK, "rec.1", "rec", f)], capture_output=True, text=True, timeout=TIMEOUT)
        check(out.returncode == 0 and "RTL matches the reference model" in out.stdout,
              f"rec: {f} does not replay: {out.stdout[-300:]}{out.stderr[-300:]}")
    for n in (2, 4):
        if n not in recorded:
            continue
        check(sorted(recorded[n]) == sorted(ref), f"rec: {n} ranks wrote {sorted(recorded[n])}, one process {sorted(ref)}")
        for f in ref:
            check(recorded[n].get(f) == ref[f], f"rec: {n} ranks: {f} differs from one process's "
                  f"({len(recorded[n].get(f, b''))} bytes vs {len(ref[f])})")


# Memory (docs/scale_out.md, Memory): rank 0 alone adopts the statistics of the blocks other ranks built, and
# holds no more than one process does (its devices are a share of the fabric, the merged statistics the same
# entries) plus the cost of being an MPI rank, measured here as the peak of a rank that builds no device (a
# partition by hand puts every switch and host on rank 1). Each rank's peak after the merge (VmHWM) is
# bounded so. The merge that gave each entry a 15 KiB histogram (10.7 GB per rank at 4,096 NICs) would add
# about 150 MB here, against a bound near 60 MB. 128 NICs (8 leaves of 16, 4 spines), timing only, 0.2 us.
def memory_bounded():
    scenario = os.path.join(HERE, "bench_leaf_spine.yaml")
    extra = ["--set", "run.duration_us=0.2", "--set", "topology.leaves=8", "--set", "topology.spines=4"]
    one, _ = run(scenario, 1, "mem", extra=extra)
    two, _ = run(scenario, 2, "mem", extra=extra)
    devices = ",".join([f"leaf{i}" for i in range(8)] + [f"spine{i}" for i in range(4)])
    empty, _ = run(scenario, 2, "mem_empty", extra=extra + ["--set", f"partition=[[],[{devices}]]"])
    if one is None or two is None or empty is None:
        return
    so = empty["scale_out"]
    check(so["hosts_per_rank"] == [0, 128] and so["switches_per_rank"] == [0, 12],
          f"mem: the partition by hand gave {so['hosts_per_rank']} hosts, {so['switches_per_rank']} switches")
    entries = sum(len(v) for v in empty["stats"].values())
    check(so["statistics_adopted"] > 0.9 * entries,
          f"mem: rank 0 with no device adopted {so['statistics_adopted']} of {entries} statistics")
    rank_cost = so["peak_rss_mib_per_rank"][0]
    bound = one["peak_rss_mib"] + rank_cost
    for tag, rep in (("2 ranks", two), ("rank 0 without devices", empty)):
        s2 = rep["scale_out"]
        for r, (before, after) in enumerate(zip(s2["peak_rss_mib_per_rank"], s2["peak_rss_after_merge_mib_per_rank"])):
            check(before <= after <= bound,
                  f"mem: {tag}: rank {r}: peak {before:.1f} MiB before the merge, {after:.1f} after, above "
                  f"{bound:.1f} (one process {one['peak_rss_mib']:.1f} + a rank without devices {rank_cost:.1f})")


memory_bounded()


# Verdicts under mpirun as in one process (docs/report.md, "Exit status"). A payload misplaced by h7's NIC
# (leaf3: rank 1 of 2) is caught by the byte check on that rank: the merged report is the one-process one,
# not verified, exit 1 on every rank. A run cut off at 0.2 us, before any work request's first packet has
# left (nic.wqe_latency_ns is 200), lands nothing and checks nothing: exit 4, checked_bytes 0.
def verdict_reports(tag, scenario, status, extra):
    reports = {}
    for n in (1, 2):
        out = os.path.join(WORK, f"{tag}.{n}.json")
        cmd = [FABRICSIM, "run", scenario, "--json", out, "--quiet"] + extra
        if n > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(n)] + cmd
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        check(p.returncode == status, f"{tag}: {n} ranks exit {p.returncode}, expected {status}: {p.stderr[-1000:]}")
        reports[n] = json.load(open(out)) if os.path.exists(out) else None
    if reports[1] is not None and reports[2] is not None:
        diffs = []
        compare_reports.diff(reports[1], reports[2], "", diffs)
        check(not diffs, f"{tag}: 2 ranks differ from one process: " + "; ".join(diffs[:10]))
    return reports[1]


misplaced = verdict_reports("misplaced", os.path.join(HERE, "faults_leaf_spine.yaml"), 1,
                            ["--set", "faults=[{kind: misplace, host: h7, after_packets: 20, offset_bytes: 64}]"])
if misplaced is not None:
    entry = misplaced["faults"]["entries"][0]
    check(not misplaced["verified"] and entry["fired"] and 0 < misplaced["mismatched_bytes"] <= entry["payload_bytes"] + 64,
          f"misplaced: {misplaced['mismatched_bytes']} bytes wrong, the payload {entry['payload_bytes']} + 64")
unchecked = verdict_reports("unchecked", os.path.join(HERE, "leaf_spine_flows.yaml"), 4,
                            ["--set", "run.duration_us=0.2"])
if unchecked is not None:
    check(unchecked["checked_bytes"] == 0 and unchecked["completed"] == 0 and not unchecked["verified"],
          f"unchecked: {unchecked['completed']} completed, {unchecked['checked_bytes']} bytes checked")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("scale-out: reports identical on 1, 2, 4 and 8 ranks (Ethernet and InfiniBand); samples, CSV and pcap "
      "files identical on 1, 2 and 4; ring allreduce (Spectrum on 2 and 4, Quantum-X800 on 2), alltoall, faults "
      "(Spectrum on 2 and 4; with the remote notification, and Quantum-X800, on 2), a training step and RTL "
      "recordings identical on 1, 2 and 4, PCIe trays (GPUDirect and bounce) on 1 and 2; partitions as derived; "
      "credits cross; verdicts (a misplaced payload, nothing checked) as in one process; a capture replayed on 2 "
      "ranks as in one process; unsupported runs refused")
