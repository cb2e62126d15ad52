#!/usr/bin/env python3
"""Scale-out test of the system presets (docs/scale_out.md, "System presets"): a cluster of NVLink domains cut
over MPI ranks with the domain as the unit gives the one-process report (apart from wall-clock figures, kernel
wake-ups and the `scale_out` object: tests/mpi/compare_reports.py); the partition, the crossing links and the
lookahead are the hand-derived ones; a partition that cannot work is refused with a clear error.

Usage: preset_scale_out_test.py FABRICSIM SOURCE_DIR WORK_DIR"""
import os
import sys

FABRICSIM, SOURCE, WORK = sys.argv[1:4]
HERE = os.path.join(SOURCE, "tests", "mpi")
sys.path.insert(0, HERE)
import compare_reports  # noqa: E402

_, failures, check, run = compare_reports.harness(WORK, FABRICSIM, "preset_")


def refused(scenario, ranks, tag, needle, extra=()):
    _, p = run(scenario, ranks, tag, expect_status=2, extra=extra)
    check(needle in p.stderr, f"{tag}: under {ranks} ranks the refusal names '{needle}': {p.stderr[-600:]}")


def collective_checked(tag, ref):
    """A collective sweep's one-process report: verified, results checked, rail WRITEs without failure."""
    check(ref["verified"] and ref["collective"]["result_checked_bytes"] > 0 and ref["collective"]["completed"],
          f"{tag}: one process: verified {ref['verified']}, result bytes checked "
          f"{ref['collective']['result_checked_bytes']}")
    obj = ref.get("hierarchical", ref.get("alltoall", {}))
    check(obj.get("rail_writes", 0) > 0 and obj.get("rail_writes_failed") == 0, f"{tag}: rail WRITEs {obj}")


def same_as_one_process(tag, scenario, expected, lookahead_ns, extra=(), ref_check=collective_checked):
    """expected: {ranks: (hosts_per_rank, switches_per_rank, cross_links)}, derived by hand in the comments;
    ref_check(tag, report) checks the one-process report."""
    ref, _ = run(scenario, 1, tag, extra=extra)
    if ref is None:
        return
    ref_check(tag, ref)
    for n, (hosts, switches, cross) in expected.items():
        rep, _ = run(scenario, n, tag, extra=extra)
        if rep is None:
            continue
        diffs = []
        compare_reports.diff(ref, rep, "", diffs)
        check(not diffs, f"{tag}: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        so = rep.get("scale_out", {})
        got = (so.get("hosts_per_rank"), so.get("switches_per_rank"), so.get("cross_links"))
        check(got == (hosts, switches, cross), f"{tag}: {n} ranks: partition {got}, expected {(hosts, switches, cross)}")
        check(so.get("lookahead_ns") == lookahead_ns, f"{tag}: {n} ranks: lookahead {so.get('lookahead_ns')} ns, "
              f"expected {lookahead_ns}")
        # Rail WRITEs crossed, with their payloads (data placed), and every rank simulated part of the fabric.
        hops = so.get("per_rank", {}).get("packet_hops", [])
        check(so.get("frames_exchanged", 0) > 0 and so.get("bytes_exchanged", 0) > so.get("frames_exchanged", 0) * 1024,
              f"{tag}: {n} ranks: {so.get('frames_exchanged')} frames, {so.get('bytes_exchanged')} bytes exchanged")
        check(len(hops) == n and all(h > 0 for h in hops) and sum(hops) == rep["packet_hops"],
              f"{tag}: {n} ranks: per-rank packet hops {hops} against {rep['packet_hops']}")


# 2 HGX B200 nodes on Spectrum-X (tests/mpi/hgx_hierarchical.yaml): 16 NICs h0..h15 (GPU r of node d is
# h(8d + r)), one group of 8 rail leaves (leaf r holds h r and h 8+r), 2 spines, every leaf to every spine.
# 2 ranks: node d on rank d with its 8 NICs; leaves in blocks, 0-3 on rank 0 and 4-7 on rank 1; a spine sees 4
# leaves on each rank, so it goes to the least loaded rank: spine0 to rank 0, spine1 to rank 1 (5 switches
# each). Crossing cables: h4-h7 to leaves 4-7 and h8-h11 to leaves 0-3 (8), spine0 to leaves 4-7 and spine1
# to leaves 0-3 (8): 16 cables, 32 links. The shortest is a NIC's 2 m cable: 2 x 5 + 100 ns of FEC = 110 ns.
same_as_one_process("hgx_spectrum", os.path.join(HERE, "hgx_hierarchical.yaml"),
                    {2: ([8, 8], [5, 5], 32)}, 110.0)
# 4 HGX B200 nodes on Quantum-X800, a group of 8 rail leaves per node (tests/mpi/hgx_hierarchical_ib.yaml):
# 32 NICs, 32 leaves (group g: leaves 8g..8g+7), 4 spines reaching all 32 leaves.
# 2 ranks: nodes 0,1 and leaves 0-15 on rank 0, nodes 2,3 and leaves 16-31 on rank 1; every spine sees 16
# leaves on each rank: spines 0,2 to rank 0 and 1,3 to rank 1 (18 switches each); each spine's 16 cables to
# the other rank's leaves cross: 64 cables, 128 links.
# 4 ranks: node and leaf group g on rank g; spine k to rank k (9 switches each); each spine has 24 leaves
# elsewhere: 96 cables, 192 links. Only leaf-spine cables cross (10 m: 50 + 100 = 150 ns).
same_as_one_process("hgx_quantum", os.path.join(HERE, "hgx_hierarchical_ib.yaml"),
                    {2: ([16, 16], [18, 18], 128), 4: ([8, 8, 8, 8], [9, 9, 9, 9], 192)}, 150.0)
# The hierarchical alltoall (NVLink copies, PXN, one rail WRITE per block across) on the same partitions:
# every block a GPU receives is checked against the regenerated send buffers.
same_as_one_process("hgx_spectrum_alltoall", os.path.join(HERE, "hgx_hierarchical.yaml"),
                    {2: ([8, 8], [5, 5], 32)}, 110.0, ["--set", "collective.op=alltoall"])
same_as_one_process("hgx_quantum_alltoall", os.path.join(HERE, "hgx_hierarchical_ib.yaml"),
                    {4: ([8, 8, 8, 8], [9, 9, 9, 9], 192)}, 150.0, ["--set", "collective.op=alltoall"])


def training_checked(algorithms):
    """A training step's one-process report: complete, verified, every GPU's results checked (the result bytes
    checked are every collective's bytes times its receivers, allreduce: all members, send: one, from the
    step's table), the communicators run as `algorithms`, every RDMA WRITE completed."""
    def ref_check(tag, ref):
        t = ref["training"]
        members = {"tp": t["parallelism"]["tensor"], "dp": t["parallelism"]["data"]}
        expected = sum(c["count"] * c["bytes"] * (1 if c["op"] == "send" else members[c["group"]])
                       for c in t["collectives"])
        check(ref["verified"] and t["completed"] and t["data_check"]["wrong_elements"] == 0 and
              t["data_check"]["result_bytes"] == expected > 0,
              f"{tag}: one process: verified {ref['verified']}, data check {t['data_check']}, expected {expected}")
        check(set(t["communicators_by_algorithm"]) == algorithms and ref["completed"] == ref["operations"] > 0,
              f"{tag}: algorithms {t['communicators_by_algorithm']}, WRITEs {ref['completed']} of {ref['operations']}")
    return ref_check


# A training step on the 2 HGX nodes of hgx_spectrum (tests/mpi/hgx_training.yaml, the same partition): on 2
# ranks the one-process report; the result bytes checked are summed over the ranks.
# Tensor 4 x pipeline 2 x data 2: TP and DP rings over NVLink inside a node, the pipeline sends across the
# nodes (RDMA WRITEs: half of them cross processes, as the NIC cables of half the rails do).
same_as_one_process("training_pp", os.path.join(HERE, "hgx_training.yaml"), {2: ([8, 8], [5, 5], 32)}, 110.0,
                    ref_check=training_checked({"nvlink_ring", "send"}))
# Tensor 2 (NVLink SHARP in each node's switch chips) x data 8: every data-parallel group has 4 GPUs on each
# node and runs the hierarchical allreduce, whose rail phase crosses processes.
same_as_one_process("training_dp", os.path.join(HERE, "hgx_training.yaml"), {2: ([8, 8], [5, 5], 32)}, 110.0,
                    ["--set", "training.tensor=2", "--set", "training.pipeline=1", "--set", "training.data=8",
                     "--set", "training.tp_algo=nvls", "--set", "training.hidden=256",
                     "--set", "training.ffn_hidden=1024", "--set", "training.heads=4", "--set", "training.vocab=4000"],
                    ref_check=training_checked({"hierarchical", "nvls"}))
refused(os.path.join(HERE, "hgx_training.yaml"), 2, "training_short_barrier",
        "collective.barrier_ns 100 ns is below the 110 ns lookahead", ["--set", "collective.barrier_ns=100"])

# A phase's end is learnt at a window's end: a barrier below the lookahead is refused, naming the key.
refused(os.path.join(HERE, "hgx_hierarchical.yaml"), 2, "short_barrier",
        "collective.barrier_ns 100 ns is below the 110 ns lookahead", ["--set", "collective.barrier_ns=100"])
# 4 nodes over 3 ranks: node 1 on rank 0, but its rail-3 leaf (leaf11) on rank 1; an HCA may not cross.
refused(os.path.join(HERE, "hgx_hierarchical_ib.yaml"), 3, "ib_cable",
        "h11 (GPU 3 of NVLink domain 1) is on rank 0 with its domain, its rail leaf leaf11 on rank 1")
# SHARP across the rails and collectives inside the domains alone: tests/mpi/domains_test.py.

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("preset scale-out: the hierarchical allreduce and alltoall on 2 HGX nodes (Spectrum-X, 2 ranks) and 4 "
      "(Quantum-X800, 2 and 4 ranks) and a training step on 2 nodes (2 ranks) as in one process; refusals named")
