"""The section of docs/validation.md on scale-across (issue 22 item 5): two sites joined by 10-100 km, DCQCN
as is against our distance-aware variant (nic.cc dcqcn_distance), beside NVIDIA's reported ~1.9x for
Spectrum-XGS. Imported by scripts/validate at the place it takes on the page."""
from validate_lib import WIRE, section

MIB = 1 << 20
KMS = (10, 40, 100)
RANKS = 8
NVIDIA_RATIO = 1.9  # Spectrum-XGS announcement, Aug 2025: "nearly doubles NCCL performance" across sites
LINK_GBS = 400 / 8.0  # GB/s, host and inter-site links
DEEP_BYTES = 64 * MIB  # the deep-edge alltoall per rank: 128 MiB across each way, 2.7 ms at the cable's rate


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


def rtt_us(km):
    """The base round trip of a QP between sites: a full data packet across (one_way_ns) and its ACK back over
    the same cables and switches (ACK serialization is small; the data packet's stands in), in us."""
    return 2 * one_way_ns(km) / 1e3


def bdp_bytes(km):
    """The inter-site cable's bandwidth-delay product: line rate x the round trip."""
    return LINK_GBS * 1e9 * rtt_us(km) * 1e-6


def deep_edge_sets(km):
    """The deep-buffer site edge of the variant (docs/calibration.md, topology.site_edge_*): RED from BDP / 7
    (DCTCP's K > C x RTT / 7 with the long RTT) to one BDP, XOFF at 2 BDP per ingress port (what one round
    trip of 2:1 overload queues), so PFC stays out of the way of the congestion control."""
    b = bdp_bytes(km)
    return ["--set", "topology.site_edge_ecn_kmin_bytes=%d" % (b / 7), "--set",
            "topology.site_edge_ecn_kmax_bytes=%d" % b, "--set", "topology.site_edge_xoff_bytes=%d" % (2 * b)]


def busbw(rep):
    rows = (rep or {}).get("collective", {}).get("rows", [])
    return rows[0]["busbw_gbps"] if rows and rows[0].get("completed") else None


def run_case(v, name, op, size, km, cc, extra=()):
    """One timing-only run of scale_across.yaml: `op` of `size` per rank, once, at `km`, with `cc`."""
    sets = ["--set", "topology.inter_site_km=%d" % km, "--set", "nic.cc=%s" % cc,
            "--set", "collective.op=%s" % op, "--set", "collective.min_bytes=%d" % size,
            "--set", "collective.max_bytes=%d" % size, "--set", "collective.iterations=1",
            "--set", "nic.place_data=false"] + list(extra)
    rep, _ = v.run(name, "scale_across.yaml", sets)
    return busbw(rep), rep


@section
def scale_across(v):
    """Two sites, 10/40/100 km: alltoall and ring allreduce with DCQCN and with dcqcn_distance; then the
    alltoall again with the deep-buffer edge's thresholds (deep_edge)."""
    cases = (("alltoall", 16 * MIB), ("allreduce", 32 * MIB))
    got = {}  # (op, km, cc) -> (busbw, report)
    for op, size in cases:
        for km in KMS:
            for cc in ("dcqcn", "dcqcn_distance"):
                got[(op, km, cc)] = run_case(v, "scale_across_%s_%d_%s" % (op, km, cc), op, size, km, cc)
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
                  reason=REASONS.get((op, km), REASONS.get(op)))
    v.text(TEXT % "\n".join(table))
    deep_edge(v)


def edge_figures(rep):
    """What the site edges did in a run: PFC frames they sent to their spines (ports 0, 1), the deepest queue
    onto the long cable (port 2) in MB, ECN marks there, and the CNPs the senders received."""
    st = (rep or {}).get("stats", {})

    def stat(inst, key):
        return st.get(inst, {}).get(key, {}).get("value", 0)
    edges = ("s0_edge0", "s1_edge0")
    pfc = sum(stat("%s.port%d" % (e, p), "pause_frames_sent") for e in edges for p in (0, 1))
    queue = max(stat("%s.port2" % e, "max_queue_bytes") for e in edges) / 1e6
    marks = sum(stat("%s.port2" % e, "ecn_marked") for e in edges)
    cnps = sum(stat(i, "rx_cnps") for i in st if i.endswith("_nic"))
    return pfc, queue, marks, cnps


def deep_edge(v):
    """Issue 22 item 5 again, with the site edges' thresholds sized to their deep buffer (deep_edge_sets) and
    an alltoall long enough for several round trips at 100 km."""
    got = {}
    for km in KMS:
        for cc in ("dcqcn", "dcqcn_distance"):
            got[(km, cc)] = run_case(v, "scale_across_deep_%d_%s" % (km, cc), "alltoall", DEEP_BYTES, km, cc,
                                     deep_edge_sets(km))
    table = []
    for km in KMS:
        (plain, rp), (dist, rd) = got[(km, "dcqcn")], got[(km, "dcqcn_distance")]
        bound = alltoall_bound(DEEP_BYTES, km)
        ratio = dist / plain if plain and dist else None
        fp, fd = edge_figures(rp), edge_figures(rd)
        b = bdp_bytes(km)
        table.append("| %d | %.0f | %.1f | %.2f .. %.1f | %.2f | %s | %s | %s | %d / %d | %.1f / %.1f | %d / %d |" % (
            km, rtt_us(km), 2 * b / 1e6, b / 7e6, b / 1e6, bound, "%.2f" % plain if plain else "failed",
            "%.2f" % dist if dist else "failed", "%.2f" % ratio if ratio else "-", fp[0], fd[0], fp[1], fd[1],
            fp[3], fd[3]))
        v.row("scale-across deep edge, alltoall %d MiB, %d km: busbw within the bound" % (DEEP_BYTES // MIB, km),
              "<= %.2f GB/s" % bound, "inter-site cable's payload rate and one crossing",
              "dcqcn %.2f, dcqcn_distance %.2f GB/s" % (plain, dist) if plain and dist else None, "at most the bound",
              plain is not None and dist is not None and max(plain, dist) <= bound * 1.0001, "scale_across + site_edge_*")
        v.row("scale-across deep edge, alltoall %d km: dcqcn_distance / dcqcn busbw" % km, "~%.1fx" % NVIDIA_RATIO,
              "NVIDIA Spectrum-XGS announcement, Aug 2025 (\"nearly doubles NCCL performance\")",
              "%.2fx" % ratio if ratio else None, "1.9 +/- 25 %",
              ratio is not None and abs(ratio - NVIDIA_RATIO) <= 0.25 * NVIDIA_RATIO, "scale_across + site_edge_*",
              reason=DEEP_REASONS.get(km))
    v.text(DEEP_TEXT % "\n".join(table))


REASONS = {
    ("alltoall", 10): ("1.39x, under the 1.425 the tolerance asks: with the edge at the switch's 256 KiB XOFF DCQCN reaches "
                       "66 % of the bound and the variant 91 %; no control could pass bound / dcqcn = 1.52x here, and "
                       "NVIDIA's 1.9x is against a baseline that is not published"),
    ("alltoall", 100): ("the 32 MiB each way crosses in 0.68 ms, less than one 1 ms round trip: no CNP comes back before "
                        "the senders are done, so no congestion control acts and both reach the bound"),
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

Why (2026-12-06 runs; CNP, PFC and queue counters of each report): in the alltoall DCQCN's fixed 5 us timers
over-cut the 16 cross-site QPs for a whole long round trip and the cable idles while they climb back (13.05 of
19.89 GB/s at 10 km); the variant, retuned at each QP's first RTT sample, cuts and climbs about twice per round
trip and keeps it busier (18.15 and 16.45 GB/s at 10 and 40 km). At 100 km the 32 MiB each way crosses in less
than one round trip, before any CNP returns. The ring allreduce sends one flow each way across and marks
nothing. Edge PFC and ECN thresholds sized to the deep buffer: the next table (a lossy DCI hop with deep VOQs,
as Jericho-class switches run, and NCCL's several channels are not modelled).
"""

DEEP_REASONS = {
    10: ("0.90x: the variant restarts each cross-site QP at line rate at its first RTT sample, a second burst that, "
         "cut at most once per scaled moderation period, overruns the edge (queue 21.5 MB, 4 BDP; 48 PFC frames) "
         "where DCQCN stays at 11 MB"),
    40: ("the variant reaches 99 % of the bound (19.78 of 19.96 GB/s) but DCQCN already gets 74 % of the cable with "
         "the deep edge, so no control could pass bound / dcqcn = 1.34x here; 1.9x needs a baseline that uses about "
         "half of the cable or less"),
    100: ("the variant reaches 99 % of the bound (17.99 of 18.11 GB/s) but DCQCN already gets 74 % of the cable with "
          "the deep edge, so no control could pass bound / dcqcn = 1.35x here"),
}

DEEP_TEXT = """### With the site edge's thresholds sized to its deep buffer

The same fabric with `topology.site_edge_xoff_bytes` = 2 BDP, `site_edge_ecn_kmin_bytes` = BDP / 7 and
`site_edge_ecn_kmax_bytes` = BDP of the long round trip (docs/calibration.md: DCTCP's K > C x RTT / 7 with the
long RTT; a rule of ours, not a vendor's figure), so the edge queues onto the long cable instead of pausing its
spines; the spines and leaves keep the switch's thresholds. An alltoall of 64 MiB per rank: 128 MiB crosses each
way, 2.7 ms at the cable's payload rate (25 round trips at 10 km, 2.7 at 100 km).

- **Expected, by hand**: busbw <= (n-1)/n x S / (2S / 49.02 GB/s + one crossing), as above. 16 QPs share each
  direction of the cable: 25 Gb/s each. DCQCN (`fabric_400g`: 5 us increase timer, 5 us cut moderation, 1 Gb/s
  additive step) gets T / 5 us increase events and as many cut chances per round trip T (21, 81, 201 at 10, 40,
  100 km): a QP marked for one round trip can be halved that many times (to the floor), and one recovering for a
  round trip before its first CNP returns gains (T / 5 us - 5) Gb/s: 16, 76, 196 Gb/s, under one share at 10 km,
  8 shares at 100 km. `dcqcn_distance` with s = T / 10 us gets about 2 of each per round trip at any distance.
  So: the same at 10 km; the distance-aware control ahead at 40 and 100 km, where DCQCN's swings empty the
  queue between its over-cuts; and no PFC frames from the edges (their XOFF is above what one round trip of
  2:1 overload queues).

| km | RTT us | XOFF MB | RED MB | bound | dcqcn | dcqcn_distance | ratio | edge PFC frames | edge queue MB | CNPs |
|---|---|---|---|---|---|---|---|---|---|---|
%s

(PFC frames the edges sent to their spines, the deepest edge queue onto the long cable and the CNPs the NICs
received: dcqcn / dcqcn_distance.)

Why (2026-12-06 runs): the deep thresholds do their part (no edge PFC frame under DCQCN; the queue onto the
long cable peaks at 1.3-2 BDP). DCQCN gets 76, 74 and 74 %% of the bound at 10, 40 and 100 km; the variant 99 %%
at 40 and 100 km, so the ratio there is the most any control could reach over this baseline (bound / dcqcn =
1.34-1.35x), not NVIDIA's 1.9x. At 10 km the variant's restart at line rate at its first sample overruns the
edge (21.5 MB, 48 PFC frames) and it loses 10 %%. Before 2026-12-06 the variant retuned only at line rate and,
here, never did (every cross-site QP was cut before its first sample): ratio 1.00 at every distance
(docs/dcqcn.md). NCCL's several channels per peer are not modelled (one QP per peer).
"""
