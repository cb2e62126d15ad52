#!/usr/bin/env python3
"""Scale-out test of the last two collectives cut across MPI ranks (docs/scale_out.md, "System presets"):
SHARP across a system preset's rails (`collective.inter: sharp`) and the collectives inside the NVLink domains
alone (`topology.kind: nvl72`, or `collective.algo: nvlink_ring | nvls` on a preset). Each gives the one-process
report on 2 and 4 ranks (apart from what tests/mpi/compare_reports.py strips), with what the run did checked
against hand counts (bytes reduced or landed, from the size and the participants; every GPU's result checked
against the reference sum); a run whose rank 1 is perturbed (an MPMD launch giving ranks 1.. another switch
latency) must differ from one process, so the comparison can fail; a single NVLink domain on 2 ranks is
refused, naming the key.

Usage: domains_test.py FABRICSIM SOURCE_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

FABRICSIM, SOURCE, WORK = sys.argv[1:4]
HERE = os.path.join(SOURCE, "tests", "mpi")
sys.path.insert(0, HERE)
import compare_reports  # noqa: E402

TIMEOUT, failures, check, run = compare_reports.harness(WORK, FABRICSIM, "domains_")


def differences(ref, rep):
    out = []
    compare_reports.diff(ref, rep, "", out)
    return out


def run_perturbed(scenario, ranks, tag, extra, rank1_extra):
    """mpirun MPMD: rank 0 as given, ranks 1.. with `rank1_extra` as well (their part of the model changed);
    rank 0 writes the report."""
    out = os.path.join(WORK, f"domains_{tag}.perturbed.json")
    cmd = [FABRICSIM, "run", scenario, "--json", out, "--quiet"] + list(extra)
    full = ["mpirun", "--oversubscribe", "-n", "1"] + cmd + [":", "-n", str(ranks - 1)] + cmd + list(rank1_extra)
    p = subprocess.run(full, env=compare_reports.MPI_ENV, capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0:
        failures.append(f"{' '.join(full)}: exit {p.returncode}\n{p.stderr[-2000:]}")
        return None
    with open(out) as f:
        return json.load(f)


def same_as_one_process(tag, scenario, ranks, extra, ref_check, part_check, perturb):
    """ref_check(report): the one-process report against hand counts; part_check(n, report): the n-rank
    report's partition; perturb: `--set` arguments for ranks 1.. of a 2-rank run, which must change the report."""
    ref, _ = run(scenario, 1, tag, extra=extra)
    if ref is None:
        return
    ref_check(tag, ref)
    for n in ranks:
        rep, _ = run(scenario, n, tag, extra=extra)
        if rep is None:
            continue
        diffs = differences(ref, rep)
        check(not diffs, f"{tag}: {n} ranks differ from one process in {len(diffs)} fields: " + "; ".join(diffs[:10]))
        part_check(tag, n, rep)
    bad = run_perturbed(scenario, 2, tag, extra, perturb)
    if bad is not None:
        diffs = differences(ref, bad)
        check(any("time_us" in d for d in diffs),
              f"{tag}: rank 1 perturbed ({' '.join(perturb)}): the comparison should find other times, found "
              f"{len(diffs)} differences: {diffs[:5]}")


# ---- SHARP across the rails: tests/mpi/hgx_hierarchical_ib.yaml with collective.inter sharp.
# 4 HGX B200 nodes (domains) of 8 GPUs, a group of 8 rail leaves per node (leaf 8d + q holds GPU q of node d),
# 4 spines. Rail q's tree: the 4 leaves 8d + q below a spine (spine 3 - q mod 4: the q-th of the four tied,
# counted from the last, as build_sharp_tree orders ties), each
# leaf with one member. Phase 2 reduces GPU q's shard: 131,072 bytes of floats over 8 GPUs, 4,096 elements,
# 16,384 bytes, in 4 chunks of nic.mtu_bytes 4,096. Per rail and iteration the leaves take 4 x 4 pieces (one
# child), the root 4 x 4 (four children): 32 pieces; 8 rails x 2 iterations: 512. Every GPU's result is checked
# element by element against the reference sum (allreduce_reference, 64-bit integers): 32 x 131,072 bytes.
IB = os.path.join(HERE, "hgx_hierarchical_ib.yaml")
SHARD, RAILS, ITERS, GPUS, SIZE = 16384, 8, 2, 32, 131072


def sharp_ref(tag, ref):
    c, h = ref["collective"], ref["hierarchical"]
    sh = h.get("sharp", {})
    check(ref["verified"] and c["completed"] and c["rows"][0]["wrong"] == 0 and
          c["result_checked_bytes"] == GPUS * SIZE,
          f"{tag}: one process: verified {ref['verified']}, wrong {c['rows'][0]['wrong']}, result bytes checked "
          f"{c['result_checked_bytes']} (expected {GPUS * SIZE})")
    chunks = SHARD // 4096
    check(sh.get("trees") == RAILS and sh.get("tree_switches") == RAILS * 5 and
          sh.get("roots") == [f"spine{3 - q % 4}" for q in range(RAILS)],
          f"{tag}: trees {sh.get('trees')}, tree switches {sh.get('tree_switches')}, roots {sh.get('roots')}")
    check(sh.get("pieces") == RAILS * ITERS * (4 * chunks * 1 + chunks * 4),
          f"{tag}: {sh.get('pieces')} pieces reduced, expected {RAILS * ITERS * 8 * chunks}")
    check(all(sh.get(k) == 0 for k in ("unexpected", "host_unexpected", "credit_violations", "credit_overruns")),
          f"{tag}: SHARP counters {sh}")


# 2 ranks: nodes 0, 1 and leaves 0-15 on rank 0, spines 0 and 2 with them; 4 ranks: node g and spine g on rank
# g (tests/mpi/preset_scale_out_test.py derives both). Rail q's tree edges that cross: its two leaves on the
# other rank from its root spine (2 ranks), the three leaves away from its root's rank (4 ranks). Each carries the
# shard up and the result down, each iteration: with data placed the bytes exchanged exceed a timing-only run's
# by exactly 8 rails x crossing edges x 2 x 16,384 x 2 (the partial results travel with their values).
def sharp_part(tag, n, rep):
    so = rep["scale_out"]
    check(so["hosts_per_rank"] == [GPUS // n] * n and so["lookahead_ns"] == 150.0,
          f"{tag}: {n} ranks: hosts per rank {so['hosts_per_rank']}, lookahead {so['lookahead_ns']}")
    timing, _ = run(IB, n, tag + "_timing", extra=["--set", "collective.inter=sharp", "--set", "nic.place_data=false"])
    if timing is None:
        return
    crossing = {2: 2, 4: 3}[n]
    payload = RAILS * crossing * 2 * SHARD * ITERS
    got = so["bytes_exchanged"] - timing["scale_out"]["bytes_exchanged"]
    check(so["frames_exchanged"] == timing["scale_out"]["frames_exchanged"] > 0 and got == payload,
          f"{tag}: {n} ranks: frames {so['frames_exchanged']} / {timing['scale_out']['frames_exchanged']} (data / "
          f"timing only), bytes exchanged beyond timing only {got}, expected the SHARP payload {payload}")


same_as_one_process("sharp_rails", IB, (2, 4), ["--set", "collective.inter=sharp"], sharp_ref, sharp_part,
                    ["--set", "sharp.latency_ns=400"])
_, p = run(IB, 2, "sharp_short_barrier", expect_status=2,
           extra=["--set", "collective.inter=sharp", "--set", "collective.barrier_ns=100"])
check("collective.barrier_ns 100 ns is below the 150 ns lookahead" in p.stderr,
      f"SHARP on the rails, barrier below the lookahead under 2 ranks: {p.stderr[-500:]}")


# ---- Inside the NVLink domains alone. Landed bytes by hand, per GPU and iteration: NVLS allreduce, the whole
# buffer once (the chips multicast every reduced packet to every GPU); the ring, 2 (G - 1) / G of it
# (reduce-scatter and allgather, G - 1 chunks of 1/G each).
def nvlink_ref(domains, gpus, sizes, iters, algo):
    def ref_check(tag, ref):
        c = ref["collective"]
        per_gpu = sum(sizes) * iters * (1 if algo == "nvls" else 2 * (gpus - 1) / gpus)
        check(ref["verified"] and c["completed"] and all(r["wrong"] == 0 for r in c["rows"]) and
              c["result_checked_bytes"] == domains * gpus * sum(sizes),
              f"{tag}: one process: verified {ref['verified']}, result bytes checked {c['result_checked_bytes']} "
              f"(expected {domains * gpus * sum(sizes)})")
        check(ref["placed_bytes"] == domains * gpus * per_gpu,
              f"{tag}: {ref['placed_bytes']} bytes landed in HBM, expected {domains * gpus * per_gpu}")
        check(ref["nvlink"]["credit_overruns"] == 0 and ref["nvlink"]["credit_violations"] == 0,
              f"{tag}: NVLink credits {ref['nvlink']}")
    return ref_check


def nvlink_part(domains):
    def part_check(tag, n, rep):
        so = rep["scale_out"]
        want = [sum(1 for d in range(domains) if d * n // domains == r) for r in range(n)]
        hops = so["per_rank"]["packet_hops"]
        check(so["domains_per_rank"] == want and so["cross_links"] == 0 and so["lookahead_ns"] is None,
              f"{tag}: {n} ranks: domains per rank {so['domains_per_rank']} (expected {want}), cross links "
              f"{so['cross_links']}, lookahead {so['lookahead_ns']}")
        check(len(hops) == n and all(h > 0 for h in hops) and sum(hops) == rep["packet_hops"] and
              so["frames_exchanged"] == 0,
              f"{tag}: {n} ranks: per-rank packet hops {hops} against {rep['packet_hops']}, "
              f"{so['frames_exchanged']} frames exchanged")
    return part_check


NVL = os.path.join(HERE, "nvlink_domains.yaml")
for algo in ("nvls", "nvlink_ring"):
    same_as_one_process(f"nvl72_{algo}", NVL, (2, 4), ["--set", f"collective.algo={algo}"],
                        nvlink_ref(4, 8, (65536, 131072), 3, algo), nvlink_part(4),
                        ["--set", "nvlink.link_latency_ns=777"])
# On a preset: the 2 HGX B200 nodes of tests/mpi/hgx_hierarchical.yaml, one 8-GPU domain each, on 2 ranks.
HGX = os.path.join(HERE, "hgx_hierarchical.yaml")
for algo in ("nvls", "nvlink_ring"):
    same_as_one_process(f"hgx_{algo}", HGX, (2,), ["--set", f"collective.algo={algo}", "--set", "nic.place_data=true"],
                        nvlink_ref(2, 8, (65536, 131072), 2, algo), nvlink_part(2),
                        ["--set", "nvlink.link_latency_ns=777"])

# One domain on 2 ranks would leave rank 1 empty: refused, naming the key (and on a preset, the node count).
_, p = run(NVL, 2, "one_domain", expect_status=2, extra=["--set", "nvlink.domains=1"])
check("nvlink.domains 1: a collective inside the NVLink domains alone" in p.stderr and
      "2 ranks would leave 1 of them with nothing to simulate" in p.stderr,
      f"nvl72, one domain on 2 ranks: {p.stderr[-600:]}")
_, p = run(HGX, 4, "hgx_three_empty", expect_status=2, extra=["--set", "collective.algo=nvls"])
check("system.nodes 2: a collective inside the NVLink domains alone" in p.stderr and
      "4 ranks would leave 2 of them" in p.stderr, f"2 HGX nodes on 4 ranks: {p.stderr[-600:]}")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("domains: SHARP across a preset's rails on 2 and 4 ranks and allreduces inside NVLink domains alone (nvl72 "
      "on 2 and 4 ranks, a preset on 2) as in one process, with hand counts; perturbed ranks caught; one domain "
      "per rank or more required")
