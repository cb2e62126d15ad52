"""The section of docs/validation.md on scale-across (issue 22 item 5): two sites joined by 10-100 km, DCQCN
as is against our distance-aware variant (nic.cc dcqcn_distance), beside NVIDIA's reported ~1.9x for
Spectrum-XGS. Imported by scripts/validate at the place it takes on the page."""
from validate_lib import WIRE, section

MIB = 1 << 20
KMS = (10, 40, 100)
RANKS = 8
NVIDIA_RATIO = 1.9  # Spectrum-XGS announcement, Aug 2025: "nearly doubles NCCL performance" across sites
LINK_GBS = 400 / 8.0  # GB/s, host and inter-site links


def one_way_ns(km):
    """A full packet's unloaded one-way time between sites (multi_site_run_test.sh's hand sum for 4096 payload
    bytes, 4178 on the wire): cables with FEC, 6 pipelines less the cut-through saving, 7 serializations. The
    smallest a crossing can take, so the bound below stays an upper bound."""
    w = 4178
    s = w * 8 / 400.0
    return 7 * s + 2 * 110 + 2 * 150 + 2 * 250 + km * 1000 * 5 + 100 + 6 * (400 - (w - 128) * 8 / 400.0)


def alltoall_bound(size, km):
    """busbw bound of an alltoall of `size` per rank on 2 sites x 4 ranks over one inter-site cable: each site
    sends 4 x 4 x size / 8 = 2 size across, at the cable's payload rate, plus one crossing's latency."""
    t_s = 2 * size / (LINK_GBS * 1e9 * WIRE) + one_way_ns(km) * 1e-9
    return size / t_s / 1e9 * (RANKS - 1) / RANKS


def allreduce_bound(size, km):
    """busbw bound of a ring allreduce: every rank's link carries 2(n-1)/n S, nccl-tests' busbw multiplies algbw
    by the same factor, so busbw <= the link's payload rate (docs/collectives.md); the distance adds the
    ring's 2(n-1) steps' crossings only as fill and drain, left out of the bound."""
    return LINK_GBS * WIRE


def busbw(rep):
    rows = (rep or {}).get("collective", {}).get("rows", [])
    return rows[0]["busbw_gbps"] if rows and rows[0].get("completed") else None


@section
def scale_across(v):
    """Two sites, 10/40/100 km: alltoall and ring allreduce with DCQCN and with dcqcn_distance."""
    cases = (("alltoall", 16 * MIB), ("allreduce", 32 * MIB))
    got = {}  # (op, km, cc) -> (busbw, report)
    for op, size in cases:
        for km in KMS:
            for cc in ("dcqcn", "dcqcn_distance"):
                extra = ["--set", "topology.inter_site_km=%d" % km, "--set", "nic.cc=%s" % cc,
                         "--set", "collective.op=%s" % op, "--set", "collective.min_bytes=%d" % size,
                         "--set", "collective.max_bytes=%d" % size, "--set", "collective.iterations=1",
                         "--set", "nic.place_data=false"]
                rep, _ = v.run("scale_across_%s_%d_%s" % (op, km, cc), "scale_across.yaml", extra)
                got[(op, km, cc)] = (busbw(rep), rep)
    table = []
    for op, size in cases:
        for km in KMS:
            plain, dist = got[(op, km, "dcqcn")][0], got[(op, km, "dcqcn_distance")][0]
            bound = alltoall_bound(size, km) if op == "alltoall" else allreduce_bound(size, km)
            ratio = dist / plain if plain and dist else None
            table.append("| %s | %d | %.2f | %s | %s | %s |" % (
                op, km, bound, "%.2f" % plain if plain else "failed", "%.2f" % dist if dist else "failed",
                "%.2f" % ratio if ratio else "-"))
            ok_bound = plain is not None and dist is not None and max(plain, dist) <= bound * 1.0001
            v.row("scale-across %s %d MiB, %d km: busbw within the bound" % (op, size // MIB, km),
                  "<= %.2f GB/s" % bound,
                  "inter-site cable's payload rate and one crossing" if op == "alltoall"
                  else "the links' payload rate (docs/collectives.md)",
                  "dcqcn %.2f, dcqcn_distance %.2f GB/s" % (plain, dist) if plain and dist else None,
                  "at most the bound", ok_bound, "scale_across")
            v.row("scale-across %s %d km: dcqcn_distance / dcqcn busbw" % (op, km), "~%.1fx" % NVIDIA_RATIO,
                  "NVIDIA Spectrum-XGS announcement, Aug 2025 (\"nearly doubles NCCL performance\")",
                  "%.2fx" % ratio if ratio else None, "1.9 +/- 25 %",
                  ratio is not None and abs(ratio - NVIDIA_RATIO) <= 0.25 * NVIDIA_RATIO, "scale_across",
                  reason=REASONS.get(op))
    v.text(TEXT % "\n".join(table))


REASONS = {
    "alltoall": ("PFC, not the congestion control, holds the senders: the edge pauses its spines at the switch's "
                 "per-ingress XOFF (256 KiB), so its egress queue onto the long cable stays near 0.6 MB (the 8 GiB "
                 "buffer is never used) and the cable stays busy under both controls; the distance-aware variant can "
                 "only win what DCQCN's late cuts leave idle, and here that is nothing. NVIDIA's 1.9x compares "
                 "against a baseline (and an algorithm) that is not published"),
    "allreduce": ("the ring sends one flow each way across the sites: the inter-site cable is not congested and "
                  "the two controls behave alike; what falls with distance is the ring's per-step latency (each "
                  "of its 2(n-1) steps waits for slices that cross the long cable), which no congestion control "
                  "changes"),
}

TEXT = """## Scale-across: DCQCN against a distance-aware variant

`testbench/scenarios/scale_across.yaml` (docs/topology.md, `multi_site`): two sites of 2 leaves x 2 hosts
under 2 spines, one deep-buffered edge switch each (8 GiB), joined by one 400 Gb/s cable of 10, 40 or 100 km
(5 ns/m: 50 to 500 us one way); 8 ranks, 4 per site; Spectrum-4 with adaptive routing, PFC and ECN; timing
only. `nic.cc dcqcn` is DCQCN with our 400G tuning (`fabric_400g`); `dcqcn_distance` is **our** distance-aware
variant (docs/dcqcn.md): each QP measures its base RTT and scales the reaction point's timers, byte counter
and cut moderation by RTT / 10 us, and keeps at most one bandwidth-delay product in flight. NVIDIA's
Spectrum-XGS algorithm is not public: this is not it, and the ratio is set beside NVIDIA's ~1.9x only as the
published claim.

- **Expected**: alltoall (16 MiB per rank): 16 flows each way share the one inter-site cable (4:1 against the
  hosts), so busbw <= (n-1)/n x S / (2S / (50 GB/s x 4096/4178) + one crossing). Ring allreduce (32 MiB):
  one flow each way crosses; busbw <= the link's payload rate, 49.02 GB/s.
- **Measured** (busbw, GB/s):

| op | km | bound | dcqcn | dcqcn_distance | ratio |
|---|---|---|---|---|---|
%s

Why the ratio is near 1 and not NVIDIA's 1.9x (checked on the 2026-12-06 runs: CNP, PFC and queue counters of
each report): in the alltoall the edge's PFC (per-ingress XOFF 256 KiB) holds the senders and its queue onto
the long cable stays near 0.6 MB, the deep buffer unused, under both controls; the ring allreduce sends one
flow each way across and marks nothing. What would let a distance-aware control matter, not modelled: edge
PFC thresholds sized to the deep buffer (or a lossy DCI hop with deep VOQs, as Jericho-class switches run),
and NCCL's several channels.
"""
