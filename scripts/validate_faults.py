"""The sections of docs/validation.md on failed spine links and on a link failing during a collective (issue 22
item 2). Imported by scripts/validate at the place they take on the page."""
import json
import os

from validate_lib import IB_WIRE, ROOT, WIRE, compare_runs, pct, section


def failed_link_bounds(rep, leaves=8, hosts_per_leaf=16, spines=16):
    """ECMP and adaptive expectations for the leaf-to-leaf permutation with the report's absent cables: per
    (source leaf, destination leaf) pair, m = spines whose cables to both leaves are left. Adaptive: every
    one of them busy, m/16 of the pair's offered load. ECMP: 16 flows hashed onto the m equal-cost uplinks
    (routes avoid a spine that lost the destination), m (1 - (1 - 1/m)^16) busy. Returns (adaptive, ecmp,
    ecmp 3 sd) as fractions of line rate, times the wire efficiency."""
    gone = set()
    for e in rep["faults"]["entries"]:
        for link in e["links"]:
            a, b = link.split("_to_")
            gone.add(frozenset((a, b)))
    pairs = set()
    for f in rep["flows"]:
        pairs.add((int(f["src"][1:]) // hosts_per_leaf, int(f["dst"][1:]) // hosts_per_leaf))
    ad, ec, var = [], [], 0.0
    n = hosts_per_leaf
    for src, dst in sorted(pairs):
        m = sum(1 for s in range(spines) if frozenset(("leaf%d" % src, "spine%d" % s)) not in gone and
                frozenset(("leaf%d" % dst, "spine%d" % s)) not in gone)
        ad.append(min(m, n) / n)
        if m == 0:  # no two-hop path left: the pair's traffic takes longer routes, which these bounds do not cover
            ec.append(0.0)
            continue
        ec.append(m * (1 - (1 - 1.0 / m) ** n) / n)
        var += m * (1 - 1.0 / m) ** n + m * (m - 1) * (1 - 2.0 / m) ** n - m * m * (1 - 1.0 / m) ** (2 * n)
    k = len(pairs)
    return sum(ad) / k * WIRE, sum(ec) / k * WIRE, 3 * var ** 0.5 / k / n * WIRE


def latency_bounds_ns(max_queue_bytes, rate_gbps=400.0):
    """(lower, upper) one-way latency of a data packet on the headline's leaf-spine, in ns: cables (host 2 m and
    leaf-spine 10 m at 5 ns/m, plus 100 ns FEC each) and three 400 ns pipelines below; above, four
    store-and-forward serializations of a 4,194-byte frame (4096 payload + 82 header bytes + the RETH) and the
    deepest queue drained at line rate at each of the three switch hops."""
    cables = 2 * (2 * 5 + 100) + 2 * (10 * 5 + 100)
    floor = cables + 3 * 400.0
    ser = (4096 + 82 + 16) * 8 / rate_gbps
    return floor, floor + 4 * ser + 3 * max_queue_bytes * 8 / rate_gbps


@section
def failed_links(v):
    """Issue 22 item 2: a seeded share of the spine links failed before the run, ECMP against adaptive."""
    with open(os.path.join(ROOT, "testbench", "scenarios", "spectrum_x_permutation.yaml")) as f:
        base = f.read()
    lines, done = [], []
    for frac in (0.01, 0.05, 0.10):
        path = os.path.join(v.work, "failed_links_%g.yaml" % frac)
        with open(path, "w") as f:
            f.write(base.replace("name: spectrum_x_permutation", "name: failed_links_%g" % frac) +
                    "faults: [{kind: links_down, tier: leaf_spine, fraction: %g}]\n" % frac)
        rep, _ = v.run("failed_links_%g" % frac, path)
        if rep is None:
            continue
        runs = compare_runs(rep)
        if "ecmp" not in runs or "adaptive" not in runs:
            v.fail("failed_links %g: the comparison did not run both routings" % frac)
            continue
        done.append((frac, runs))
    fig = failed_links_figure(v, done).get("latency_percentiles.png")
    for frac, runs in done:
        ad_bound, ec_expect, ec_tol = failed_link_bounds(runs["adaptive"])
        target = runs["adaptive"]["faults"]["entries"][0]["target"]
        ec = runs["ecmp"]["fabric"]["effective_throughput"]
        ar = runs["adaptive"]["fabric"]["effective_throughput"]
        v.row("%g %% of spine links down (%s): ECMP" % (100 * frac, target), pct(ec_expect),
              "per leaf pair m live spines: m (1 - (1 - 1/m)^16) / 16 busy x 4096/4178", pct(ec),
              "+/- %s (3 sd of the hash's busy-uplink count)" % pct(ec_tol), abs(ec - ec_expect) <= ec_tol,
              "spectrum_x_permutation + links_down")
        v.row("%g %% of spine links down: adaptive routing" % (100 * frac), "<= %s, >= 95 %% of it" % pct(ad_bound),
              "per leaf pair m live spines of 16: m / 16 x 4096/4178", pct(ar), "95 %% .. 100 %% of the bound",
              0.95 * ad_bound <= ar <= ad_bound + 1e-4, "spectrum_x_permutation + links_down")
        lat = {k: runs[k]["fabric"]["data_packet_latency_ns"] for k in ("ecmp", "adaptive")}
        lo, hi = {}, {}
        for k in lat:
            lo[k], hi[k] = latency_bounds_ns(runs[k]["fabric"]["max_queue_bytes"])
            v.row("%g %% of spine links down: p99 data packet latency, %s" % (100 * frac, k),
                  "%.0f .. %.0f ns" % (lo[k], hi[k]),
                  "cables + 3 pipelines; + 4 store-and-forward serializations + 3 deepest queues drained", "%.0f ns" %
                  lat[k]["p99"], "the range", lo[k] <= lat[k]["p99"] <= hi[k], "spectrum_x_permutation + links_down", fig)
        v.row("%g %% of spine links down: p99 data packet latency, adaptive against ECMP" % (100 * frac),
              "adaptive < ECMP", "adaptive routing keeps packets off the queues ECMP's collisions build (NVIDIA "
              "technical blog, Spectrum-X adaptive routing)", "%.0f ns against %.0f ns" % (
                  lat["adaptive"]["p99"], lat["ecmp"]["p99"]), "-", lat["adaptive"]["p99"] < lat["ecmp"]["p99"],
              "spectrum_x_permutation + links_down", fig)
        lines.append("| %g %% | %s | %s | %s | %s | %s | %.0f | %.0f |" % (
            100 * frac, target, pct(ec_expect), pct(ec), pct(ad_bound), pct(ar), lat["ecmp"]["p99"],
            lat["adaptive"]["p99"]))
    v.text("""## Failed spine links

`spectrum_x_permutation` (128 NICs, 8 leaves x 16 hosts, 16 spines, 400 Gb/s) with
`faults: [{kind: links_down, tier: leaf_spine, fraction: F}]`: round(F x 128) leaf-spine cables, drawn from the
run seed, failed before the run, so the fabric is built and routed without them (docs/faults.md). Every leaf's
16 hosts write to one other leaf's; a pair of leaves keeps m spines whose cables to both are left.

- **Expected, adaptive routing**: every live path busy: the mean over the 8 leaf pairs of m / 16, times the wire
  efficiency 4096/4178 (an upper bound; at least 95 %% of it is asked).
- **Expected, ECMP**: 16 flows hashed onto the m equal-cost uplinks leave m (1 - 1/m)^16 of them idle, so
  m (1 - (1 - 1/m)^16) / 16 of the pair's load gets through; the tolerance is 3 standard deviations of the busy
  count (balls in bins), as in the headline.

- **p99 of per-packet latency** (`fabric.data_packet_latency_ns`: one-way, first bit sent to arrival at the
  receiving NIC, every data packet received in the window; an upper bound within 3.1 %% of the true percentile,
  docs/report.md). Expected for each routing: no packet is faster than its cables (2 x 110 + 2 x 150 ns, FEC
  included) and three 400 ns Spectrum pipelines, 1,720 ns; none is slower than four store-and-forward
  serializations of the largest data frame (4,194 bytes at 400 Gb/s, 83.9 ns each) on top of that plus the
  deepest queue in the fabric (`max_queue_bytes`) drained at line rate at each of its three switch hops. And
  adaptive routing's p99 below ECMP's: it sends each packet to the least-loaded uplink instead of the one its
  flow hashes to, so the queues that ECMP's collisions build are what ECMP's tail waits in.

| down | cables | ECMP expected | ECMP measured | adaptive bound | adaptive measured | ECMP p99 ns | adaptive p99 ns |
|---|---|---|---|---|---|---|---|
%s

The p50 and p99 of each run (the report's `data_packet_latency_ns`), a pair of bars per failure fraction and
routing:

%s

A link failing during a collective: the next section.
""" % ("\n".join(lines), "![failed_links latency](%s)" % fig if fig else "(the figure was not drawn)"))


def failed_links_figure(v, done):
    """The six runs of the failed-links section as one comparison report (value: fraction and routing), drawn
    with `fabricsim plot`; keeps its latency_percentiles.png (p50 and p99 bars per run)."""
    if not done:
        return {}
    merged = {"compare": "down", "runs": [{"value": "%g%% %s" % (100 * frac, k), "report": runs[k]}
                                          for frac, runs in done for k in ("ecmp", "adaptive")]}
    with open(os.path.join(v.work, "failed_links.json"), "w") as f:
        json.dump(merged, f)
    return v.plot("failed_links", "failed_links", ["latency_percentiles.png"],
                  title="128-NIC permutation, leaf-spine links down")


MIB = 1 << 20
# The fault notification's delay the Spectrum run sets (fault.notification_us; its default, an estimate:
# docs/calibration.md), written on the page as run.
NOTIFICATION_US = 1


def iteration_times(rep):
    return rep["collective"]["rows"][0]["iteration_times_us"]


@section
def collective_link_down(v):
    """An alltoall with a leaf-spine cable failing in its third iteration: Quantum-X800 (the subnet manager
    reroutes) against Spectrum-X with adaptive routing (the far leaf told by a fault notification, or, as
    before that mechanism, only the switches at the cable's ends learning)."""
    runs = {}
    for name, extra in (("quantum", ["--set", "switch.model=quantum_x800"]),
                        ("quantum_nofault", ["--set", "switch.model=quantum_x800", "--set", "faults=[]"]),
                        ("spectrum", ["--set", "fault.notification_us=%g" % NOTIFICATION_US]),
                        ("spectrum_nofault", ["--set", "faults=[]"]),
                        ("spectrum_ends_only", ["--set", "fault.remote_notification=false"])):
        rep, _ = v.run("collective_link_down_" + name, "alltoall_link_down.yaml", extra)
        if rep is None:
            return
        runs[name] = rep
    for name, rep in runs.items():
        v.row("alltoall with a link down: %s verified" % name.replace("_", ", "), "every byte checked, none wrong",
              "placement and result checks (docs/collectives.md)", "%s bytes checked, %d wrong" % (
                  format(rep["checked_bytes"], ","), rep["mismatched_bytes"]), "exact",
              rep["verified"] and rep["checked_bytes"] > 0, "alltoall_link_down")
    # After the reroute each source leaf reaches the other leaf's 4 hosts over 3 spines, and InfiniBand routes
    # by destination: one uplink carries two destinations' traffic, 2 x 4 sources x 1 MiB = 8 MiB per iteration.
    q_after = iteration_times(runs["quantum"])[3:]
    q_expect = 8 * MIB * 8 / (400e9 * IB_WIRE) * 1e6
    ok = all(abs(t - q_expect) <= 0.03 * q_expect for t in q_after)
    v.row("Quantum-X800, alltoall iterations after the reroute", "%.1f us" % q_expect,
          "4 destinations over 3 live uplinks: one carries 2 x 4 MiB at 400 Gb/s x IB wire efficiency",
          ", ".join("%.1f" % t for t in q_after), "+/- 3 %", ok, "alltoall_link_down")
    # Spraying over the 3 live uplinks at leaf0 could carry the 16 MiB that cross each way in 112 us, under the
    # hosts' own 7 MiB at line rate: once the far leaf knows, no iteration is slower than without the fault.
    s_after = iteration_times(runs["spectrum"])[3:]
    s_base = max(iteration_times(runs["spectrum_nofault"]))
    ok = all(t <= 1.05 * s_base for t in s_after)
    v.row("Spectrum-X adaptive + fault notification, alltoall iterations after the fault",
          "<= %.1f us" % (1.05 * s_base),
          "3 live uplinks carry the crossing 16 MiB in 112 us, below the hosts' line-rate time (no fault: %.1f us)"
          % s_base, ", ".join("%.0f" % t for t in s_after), "+5 %", ok, "alltoall_link_down",
          reason="" if ok else "leaf1 told of the failure still loses packets to spine1 after the notification: "
          "not understood")
    e_after = iteration_times(runs["spectrum_ends_only"])[3:]
    v.row("Spectrum-X adaptive, ends only (fault.remote_notification false): iterations after the fault",
          "> %.1f us (slower than without the fault)" % (1.05 * s_base),
          "the far leaf keeps spraying into spine1, which drops what it cannot deliver (docs/faults.md)",
          ", ".join("%.0f" % t for t in e_after), "-", all(t > 1.05 * s_base for t in e_after),
          "alltoall_link_down")
    q_rows = iteration_times(runs["quantum"])
    s_rows = iteration_times(runs["spectrum"])
    e_rows = iteration_times(runs["spectrum_ends_only"])
    table = "\n".join("| %d | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
        i + 1, iteration_times(runs["quantum_nofault"])[i], q_rows[i], iteration_times(runs["spectrum_nofault"])[i],
        s_rows[i], e_rows[i]) for i in range(len(q_rows)))

    def spine1_drops(rep):
        return rep["stats"].get("spine1", {}).get("no_live_port", {}).get("value")

    v.text("""## A link failing during a collective

`testbench/scenarios/alltoall_link_down.yaml`: an 8-rank alltoall of 8 MiB (1 MiB to each peer, six timed
iterations) on 2 leaves x 4 hosts under 4 spines at 400 Gb/s; the leaf0-spine1 cable fails at 300 us, in the
third iteration, and stays down (`fault.detect_us` 10). Every iteration is checked byte for byte.

- **Quantum-X800**: the subnet manager reroutes every switch around the dead cable after detection
  (docs/faults.md). Expected once rerouted: InfiniBand forwards by destination, so leaf0's traffic to leaf1's 4
  hosts now shares 3 uplinks and one of them carries two destinations: 8 MiB per iteration at 400 Gb/s times the
  IB wire efficiency, %.1f us, instead of the hosts' own 149.4 us.
- **Spectrum-X, adaptive routing, with the fault notification** (docs/faults.md, `fault.remote_notification`,
  `fault.notification_us` %s us, an estimate): leaf0 stops using the dead port at detection (310 us), and leaf1
  stops sending leaf0-bound packets to spine1 when told, one notification later; spraying over the 3 live
  uplinks carries the 16 MiB that cross each way in 112 us, less than the hosts' line-rate time, so from the
  next iteration on nothing should slow down. Only the iteration the fault falls in pays: the packets lost on
  the cable and those leaf1 sent to spine1 before the notification (spine1's `no_live_port`: %s), each waiting
  for a NAK or the retransmission timeout.
- **Spectrum-X, ends only** (`--set fault.remote_notification=false`, the model before the notification): leaf1
  keeps spraying a quarter of its leaf0-bound packets to spine1 for the rest of the run, spine1 drops them
  (`no_live_port`: %s), and every later iteration waits on those losses. This is the mechanism that made the
  row above fail before the notification was modelled (iterations of 2,316-2,841 us against 159.8 us). With
  ECMP and no notification (`--set switch.routing=ecmp`) the flows that leaf1 hashes through spine1 lose every
  packet, and their queue pairs end in `retry_exceeded` (measured before the notification existed, with the
  fault at 100 us: 5 of the 112 WRITEs).

| iteration | Quantum, no fault (us) | Quantum, link down (us) | Spectrum-X, no fault (us) | Spectrum-X, link down, notification (us) | Spectrum-X, link down, ends only (us) |
|---|---|---|---|---|---|
%s
""" % (q_expect, "%g" % NOTIFICATION_US, spine1_drops(runs["spectrum"]),
       spine1_drops(runs["spectrum_ends_only"]), table))
