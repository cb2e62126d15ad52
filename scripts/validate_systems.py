"""The systems section of docs/validation.md: collectives on NVLink domains and clusters of them (docs/systems.md)
against hand bounds from the link rates and wire formats: the NVLink ring and NVLS inside one domain, the
hierarchical allreduce across 2, 4 and 8 racks (ring and NVLS inside the domains), and the hierarchical alltoall.
Domains of 8 GPUs (`nvlink.gpus_per_domain` 8, `topology.rails` 8) instead of 72, so that the runs take seconds:
the bounds depend on G and are computed for it. Imported by scripts/validate at the place the section takes
on the page."""
from validate_lib import IB_WIRE, section

# NVLink 5 per GPU: 18 links x 50 GB/s per direction x 256-byte payloads in 272 wire bytes (docs/calibration.md).
B_NV = 18 * 50.0 * 256 / 272
# GB300 NVL72 on Quantum-X800: one 800 Gb/s ConnectX-8 per GPU, 4096-byte payloads in 4122 wire bytes.
B_RAIL = 800 / 8.0 * IB_WIRE
# SHARP packets on the same rails: a 16-byte aggregation header more per 4096-byte chunk (4138 wire bytes).
B_SHARP = 800 / 8.0 * 4096 / 4138
G = 8
SMALL = ["--set", "nvlink.gpus_per_domain=%d" % G]
CLUSTER = SMALL + ["--set", "topology.rails=%d" % G, "--set", "topology.hosts_per_leaf={racks}",
                   "--set", "topology.spines={racks}"]


def sizes(b):
    return ["--set", "collective.min_bytes=%d" % b, "--set", "collective.max_bytes=%d" % b]


def cluster_args(racks, extra):
    return [a.replace("{racks}", str(racks)) for a in CLUSTER] + ["--set", "system.racks=%d" % racks] + extra


def row0(rep):
    rows = (rep or {}).get("collective", {}).get("rows") or [{}]
    return rows[0], bool((rep or {}).get("verified"))


def hier_bounds(d, intra="nvlink_ring"):
    """(NVLink, rail, serial) busbw bounds of the hierarchical allreduce over d domains of G GPUs (GB/s)."""
    n = G * d
    bf = 2.0 * (n - 1) / n
    nv = ((2.0 * G - 1) / G if intra == "nvls" else 2.0 * (G - 1) / G) / B_NV
    rail = 2.0 * (d - 1) / (d * G) / B_RAIL
    return bf / nv, (bf / rail if rail > 0 else float("inf")), bf / (nv + rail)


def sharp_serial_bound(d):
    """busbw bound of the hierarchical allreduce with SHARP across the rails (GB/s): each NIC sends its 1/G
    shard once and receives the result once, so the rail phase takes 1/G of the buffer at B_SHARP."""
    n = G * d
    return 2.0 * (n - 1) / n / (2.0 * (G - 1) / G / B_NV + 1.0 / G / B_SHARP)


def sharp_rows(v, many, size, lines):
    """SHARP against the ring across the rails at 4 racks (2(D-1)/D = 1.5 shards per NIC for the ring, 1 for
    SHARP): SHARP's busbw against its serial bound, and its time against the ring's."""
    racks = 4
    runs = {}
    for inter in ("sharp", "ring"):
        rep, _ = v.run("systems_hier_inter_%s_%d" % (inter, racks), many,
                       cluster_args(racks, sizes(size) + ["--set", "collective.inter=" + inter]))
        runs[inter] = row0(rep)
    (r, ok), (ring, ring_ok) = runs["sharp"], runs["ring"]
    bw, bound = r.get("busbw_gbps"), sharp_serial_bound(racks)
    v.row("hierarchical allreduce busbw, SHARP across the rails, %d racks of 8 GPUs, %d MiB" % (racks, size >> 20),
          "<= serial %.1f GB/s" % bound, "NVLink phases + S/G at B_sharp (docs/systems.md)", gb(bw),
          "85 .. 100 % of the serial bound, results exact",
          bw is not None and ok and 0.85 * bound <= bw <= bound * 1.0001, many)
    t_s, t_r = r.get("time_us"), ring.get("time_us")
    speed = t_r / t_s if t_s and t_r else None
    v.row("SHARP over ring across the rails, same %d racks and size: time ratio" % racks, "> 1",
          "the ring moves 2(D-1)/D = 1.5 shards per NIC, SHARP 1", ("%.2fx" % speed) if speed else None,
          "SHARP faster, both results exact", speed is not None and speed > 1.0 and ok and ring_ok, many)
    ph, rph = r.get("phases_us") or {}, ring.get("phases_us") or {}
    lines.append("| %d racks, SHARP across the rails, %d MiB | busbw %s | serial %.1f GB/s; inter-domain %.2f us "
                 "(ring %.2f us) |" % (racks, size >> 20, gb(bw), bound, ph.get("inter_domain", 0.0),
                                       rph.get("inter_domain", 0.0)))


def alltoall_bound(d):
    n = G * d
    return min(B_NV * G / (G - 1), B_RAIL * n / (n - G))


def gb(x):
    return ("%.1f GB/s" % x) if x is not None else None


@section
def systems(v):
    """NVLink domains and clusters of them against their hand bounds."""
    one = "nvl72_allreduce.yaml"
    lines = []
    got = {}
    for algo in ("nvlink_ring", "nvls"):
        rep, _ = v.run("systems_" + algo, one, SMALL + sizes(16 << 20) +
                       ["--set", "collective.algo=" + algo, "--set", "collective.chunk_bytes=262144"])
        r, ok = row0(rep)
        got[algo] = (r.get("busbw_gbps"), ok)
    ring, ring_ok = got["nvlink_ring"]
    nvls, nvls_ok = got["nvls"]
    nvls_bound = 2.0 * (G - 1) / G * B_NV
    v.row("NVLink ring allreduce busbw, one domain of 8 GPUs, 16 MiB", "<= %.1f GB/s" % B_NV,
          "18 links x 50 GB/s x 256/272 per GPU", gb(ring), "90 .. 100 % of the bound, results exact",
          ring is not None and ring_ok and 0.9 * B_NV <= ring <= B_NV * 1.0001, "nvl72_allreduce")
    v.row("NVLS allreduce busbw, same domain", "<= %.1f GB/s" % nvls_bound, "2(n-1)/n x 847.1 GB/s", gb(nvls),
          "90 .. 100 % of the bound, results exact",
          nvls is not None and nvls_ok and 0.9 * nvls_bound <= nvls <= nvls_bound * 1.0001, "nvl72_allreduce")
    ratio = nvls / ring if nvls and ring else None
    v.row("NVLS over ring, same domain and size", "<= %.3f" % (2.0 * (G - 1) / G), "ratio of the bounds, 2(n-1)/n",
          ("%.3f" % ratio) if ratio else None, "85 .. 102 % of the ratio of the bounds",
          ratio is not None and 0.85 * 2.0 * (G - 1) / G <= ratio <= 1.02 * 2.0 * (G - 1) / G, "nvl72_allreduce")
    lines.append("| one domain | ring %s, NVLS %s | ring bound %.1f, NVLS bound %.1f GB/s |" %
                 (gb(ring), gb(nvls), B_NV, nvls_bound))

    many = "gb300_nvl72_allreduce.yaml"
    size = 8 << 20
    # 8 racks: 32 MiB, so that the rail ring's 2(D-1) = 14 steps of per-hop latency (a few us each, not in the
    # bound) are amortized; at 8 MiB they cost about a third of the time.
    for racks, intra, b in ((2, "nvlink_ring", size), (4, "nvlink_ring", size), (8, "nvlink_ring", 4 * size),
                            (2, "nvls", size)):
        rep, _ = v.run("systems_hier_%s_%d" % (intra, racks), many,
                       cluster_args(racks, sizes(b) + ["--set", "collective.intra=" + intra]))
        r, ok = row0(rep)
        bw = r.get("busbw_gbps")
        nvb, railb, serial = hier_bounds(racks, intra)
        v.row("hierarchical allreduce busbw (%s inside), %d racks of 8 GPUs, %d MiB" % (intra, racks, b >> 20),
              "<= min(%.1f, %s) and <= serial %.1f GB/s" % (nvb, "%.1f" % railb, serial),
              "NVLink, rail and phase-after-phase bounds (docs/systems.md)", gb(bw),
              "85 .. 100 % of the serial bound, results exact",
              bw is not None and ok and 0.85 * serial <= bw <= min(nvb, railb, serial) * 1.0001, many)
        ph = r.get("phases_us") or {}
        lines.append("| %d racks, %s, %d MiB | busbw %s | NVLink %.1f, rail %.1f, serial %.1f GB/s; phases %s us |" %
                     (racks, intra, b >> 20, gb(bw), nvb, railb, serial,
                      " / ".join("%.2f" % ph[k] for k in ("reduce_scatter", "inter_domain", "allgather") if k in ph)))

    sharp_rows(v, many, size, lines)

    for racks in (2, 4):
        rep, _ = v.run("systems_alltoall_%d" % racks, many,
                       cluster_args(racks, sizes(size) + ["--set", "collective.op=alltoall"]))
        r, ok = row0(rep)
        bw = r.get("algbw_gbps")
        bound = alltoall_bound(racks)
        v.row("hierarchical alltoall algbw (PXN), %d racks of 8 GPUs, 8 MiB" % racks, "<= %.1f GB/s" % bound,
              "min(B_nv G/(G-1), B_rail N/(N-G)) (docs/systems.md)", gb(bw), "80 .. 100 % of the bound, blocks exact",
              bw is not None and ok and 0.8 * bound <= bw <= bound * 1.0001, many)
        ph = r.get("phases_us") or {}
        lines.append("| %d racks, alltoall, 8 MiB | algbw %s | bound %.1f GB/s; NVLink / rail done at %s us |" %
                     (racks, gb(bw), bound, " / ".join("%.2f" % ph[k] for k in ("nvlink", "rail") if k in ph)))

    v.text("""## Systems: NVLink domains and hierarchical collectives

`testbench/scenarios/nvl72_allreduce.yaml` and `gb300_nvl72_allreduce.yaml` with domains of %d GPUs
(`nvlink.gpus_per_domain`, `topology.rails`: a 72-GPU rack would take minutes per run; the bounds below are
computed for G = %d), 800 Gb/s Quantum-X800 rails (docs/systems.md).

- **Expected**: per GPU, B_nv = 18 x 50 GB/s x 256/272 = **%.1f GB/s**; a ring allreduce's busbw <= B_nv,
  NVLS's <= 2(n-1)/n B_nv. Across D racks: NVLink phases send 2(G-1)/G of the buffer (NVLS: (2G-1)/G), the
  rail phase 2(D-1)/(D G) at B_rail = 100 GB/s x 4096/4122 = **%.2f GB/s**, one after the other, so
  busbw <= 2(N-1)/N / (their times' sum). SHARP across the rails (`collective.inter: sharp`): the rail phase
  sends 1/G of the buffer once per NIC and receives it once, at B_sharp = 100 GB/s x 4096/4138 = **%.2f GB/s**
  (a 16-byte aggregation header per chunk), against the ring's 2(D-1)/(D G). Alltoall: per GPU NVLink carries (G-1)/G of the buffer and the NIC
  (N-G)/N at once (PXN), so algbw <= min(B_nv G/(G-1), B_rail N/(N-G)).
- **Measured**:

| run | measured | bounds |
|---|---|---|
%s
""" % (G, G, B_NV, B_RAIL, B_SHARP, "\n".join(lines)))
