"""Sections of docs/validation.md that check the tooling around the model against independent readers: the
three-tier and rail-optimized fabrics against their topology bounds, a link failure and the taps against
tshark's reading of the captures, replay against tshark's count of a sample capture, MPI ranks against one
process. Imported by scripts/validate at the place these sections take on the page."""
import json
import os
import sys

from validate_lib import ROOT, WIRE, load_golden_strip, pct, section, sh, tshark_frames, tshark_write_messages


@section(quick=True)
def fabrics(v):
    """Three-tier and rail-optimized fabrics: effective throughput against the bound of their topology."""
    # `offset` acts only with `pattern: shift`; both files leave the pattern at its default, random, so the
    # traffic their comments describe (and the bounds below assume) needs it set.
    big = ["--set", "workload.message_bytes=8388608", "--set", "workload.pattern=shift"]
    tt, _ = v.run("three_tier", "three_tier_small.yaml", big)
    ro, _ = v.run("rail_optimized", "rail_optimized_small.yaml", big)
    # three_tier_small: a leaf has 4 hosts and spines x links_per_spine = 2 uplinks; a spine has 2 down and
    # cores/spines = 2 up (1:1); every flow leaves its pod, so a leaf's 4 senders share 2 uplinks: 2/4 of the
    # line rate each, times the wire efficiency. rail_optimized_small: a rail leaf has 4 hosts and 4 uplinks
    # (1:1), every host sends one flow and receives one, so nothing is shared: the payload bound itself.
    tt_bound = 2.0 / 4.0 * WIRE
    ro_bound = WIRE
    # The fixed cost of a message (NIC 200 + 200 ns, up to 5 switch pipelines of 400 ns, cables, the last ACK
    # back; docs/calibration.md) is under 10 us against 171 us (rail) or 342 us (three-tier) of serialization.
    rows = []
    for name, rep, bound, ser_us in (("three-tier", tt, tt_bound, 8388608 * 8 / (tt_bound * 400e3)),
                                     ("rail-optimized", ro, ro_bound, 8388608 * 8 / (ro_bound * 400e3))):
        f = (rep or {}).get("fabric", {})
        eff = f.get("effective_throughput")
        latency_floor = bound * ser_us / (ser_us + 10.0)
        ok = eff is not None and 0.85 * bound <= eff <= bound + 1e-4 and bool(rep.get("verified"))
        v.row("%s fabric, 16/32-host permutation of 8 MiB WRITEs: effective throughput" % name,
              "<= %s" % pct(bound), "topology bound (below)", pct(eff) if eff is not None else None,
              "85 .. 100 % of the bound (margin, see below)", ok,
              "three_tier_small" if name == "three-tier" else "rail_optimized_small")
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            name, pct(bound), pct(latency_floor), pct(eff) if eff is not None else "failed",
            f.get("pfc_pause_frames", "-"), f.get("retransmissions", "-"), f.get("out_of_order_packets", "-")))
    v.text("""## Three-tier and rail-optimized fabrics

`three_tier_small.yaml` (2 pods x 2 leaves x 4 hosts, 2 spines per pod, 4 cores in 2 planes, 400G, every host
writing to the host 8 places on, in the other pod) and `rail_optimized_small.yaml` (2 groups x 4 servers x 4
rails, 8 rail leaves, 4 spines, every NIC writing to the same rail of the next server), both with per-packet
path entropy, run here with 8 MiB WRITEs so that the fixed cost of a message is a small part of the window, and
with `pattern: shift` (`--set workload.message_bytes=8388608 --set workload.pattern=shift`): the files set an
`offset` but leave `workload.pattern` at its default, random, under which the offset is ignored, so as shipped
they run a random permutation, not the traffic their comments describe (docs/topology.md).

- **Expected (bound)**: three-tier: a leaf's 4 senders share its 2 uplinks (spines x links_per_spine; the
  spine-to-core stage is 1:1), so each gets 2/4 of 400 Gb/s: 0.5 x 4096/4178 = **%s**. Rail-optimized: every
  rail leaf has as many uplinks as hosts and every host sends one flow and receives one, so nothing is shared:
  **%s**. ACKs sharing the reverse direction of the same links make the true bounds slightly lower.
- **Latency estimate**: a message's fixed cost (NIC doorbell and receive latency, up to five 400 ns switch
  pipelines, cables and FEC, the last ACK back) is below 10 us, so a fabric that only paid that would reach
  bound x T / (T + 10 us), T the serialization time at the bound (342 us, 171 us).
- **Tolerance**: the row passes at or below the bound and above 85 %% of it. The floor is a margin set after
  the first run of this section, not a derived figure. The rail-optimized run comes above its latency
  estimate (the 10 us is generous there: one switch hop for most flows); the three-tier run falls short of
  its own by a few per cent, which random per-packet hashing explains in kind (queues fluctuate on the
  randomly chosen uplinks and PFC pauses the senders: the PFC frames below) but which is not quantified here.

| fabric | bound | latency estimate | measured | PFC frames | retransmitted | out of order |
|---|---|---|---|---|---|---|
%s
""" % (pct(tt_bound), pct(ro_bound), "\n".join(rows)))


@section(quick=True)
def faults_link_down(v):
    """One cable down for 30 us under adaptive routing: rerouted, every WRITE verified, loss only on the cable."""
    fault = "[{kind: link_down, link: leaf0_to_spine1, at_us: 20, for_us: 30}]"
    links = ("leaf0_to_spine1", "spine1_to_leaf0")
    pcaps = {l: os.path.join(v.work, "link_down_%s.pcap" % l) for l in links}
    extra = ["--set", "faults=" + fault]
    for l in links:
        extra += ["--tap", "%s=%s" % (l, pcaps[l])]
    rep, _ = v.run("link_down", "faults_leaf_spine.yaml", extra)
    fl = (rep or {}).get("faults", {})
    e = (fl.get("entries") or [{}])[0]
    start, end, detect = e.get("start_ns"), e.get("end_ns"), fl.get("detect_ns")
    rate_gbps = 400.0
    # From the captures (tshark): a frame is lost when any of its bits, destination MAC to FCS, is sent while the
    # carrier is down (docs/faults.md); after detection the port takes no new frame, so only those already
    # queued at it then may still start (they drain into the dead cable: the link's `tx_known_down`).
    on_cable, after_detect, frames = 0, 0, rep is not None and start is not None
    for l in links:
        fr = tshark_frames(pcaps[l]) if frames else None
        if fr is None:
            frames = False
            break
        on_cable += sum(1 for t, n in fr if t < end and t + (n + 4) * 8 / rate_gbps > start)
        after_detect += sum(1 for t, n in fr if start + detect <= t < end)
    queued = sum(rep["stats"][l]["tx_known_down"]["value"] for l in links) if frames else None
    lost = e.get("frames_lost")
    ok = frames and bool(rep.get("verified")) and rep.get("completed") == rep.get("operations") and \
        lost == on_cable and after_detect == queued
    measured = None
    if frames:
        measured = "%d lost / %d on the cable while down; %d started after detection, %d queued then; %d/%d " \
                   "WRITEs verified" % (lost, on_cable, after_detect, queued, rep.get("completed", 0),
                                         rep.get("operations", 0))
    v.row("link_down 30 us on a leaf-spine, adaptive routing: rerouted, loss only on the dead cable",
          "lost = frames on the cable while down (tshark); after detection only frames queued then; all verified",
          "docs/faults.md carrier-down rule; the taps read by tshark", measured, "exact", ok, "faults_leaf_spine")
    no_live = 0
    for inst, st in (rep or {}).get("stats", {}).items():
        if inst.startswith("spine") and isinstance(st.get("no_live_port"), dict):
            no_live += st["no_live_port"].get("value", 0)
    v.text("""## A link down: traffic routed around

`faults_leaf_spine.yaml` with only its first fault (`--set 'faults=%s'`), both directions of the cable tapped:
leaf0's cable to spine1 goes down at 20 us for 30 us while every host WRITEs 8 MiB to a host behind the
other leaf, adaptive routing, the switches learning of the carrier change `fault.detect_us` = %.0f us later
(docs/faults.md).

- **Expected**: a frame is lost exactly when some of its bits go on the wire while the carrier is down, so
  the frames the entry reports lost are the frames the two captures show on the cable in [20 us, 50 us)
  (tshark's timestamps and lengths, 400 Gb/s); from detection on the ends route around the port, so the only
  frames started on it after detection are those already queued at it then (the links' `tx_known_down`,
  drained, not flushed); and the transport resends what was lost: every WRITE completes and verifies.
- **Measured**: %s. Frames the far leaf still sprayed to spine1, dropped there for want of a live port
  (`no_live_port`: the far leaf learns of the fault only from the fault notification, `fault.notification_us`
  after detection; not losses on the cable): %d; retransmitted packets: %s.
""" % (fault, (detect or 0) / 1e3, measured or "failed", no_live, fl.get("retransmissions", "-")))


@section(quick=True)
def taps(v):
    """--tap pcap files counted by tshark against the links' own counters."""
    t0, t1 = os.path.join(v.work, "tap_sw0_to_h0.pcap"), os.path.join(v.work, "tap_h1_to_sw0.pcap")
    rep, _ = v.run("taps", "incast_dcqcn.yaml", ["--set", "nic.cc=dcqcn", "--tap", "sw0_to_h0=" + t0,
                                                 "--tap", "h1_to_sw0=" + t1])
    ports = {p["link"]: p for p in (rep or {}).get("ports", [])}
    rows, ok, got = [], rep is not None, []
    for link, path in (("sw0_to_h0", t0), ("h1_to_sw0", t1)):
        r = sh(["tshark", "-r", path, "-T", "fields", "-e", "frame.len"])
        lens = [int(x) for x in r.stdout.split() if x.isdigit()] if r.returncode == 0 else []
        # Wire bytes = captured frame + FCS (4, not written) + preamble, SFD and gap (20), per frame.
        pk = ports.get(link, {})
        ok = ok and r.returncode == 0 and len(lens) == pk.get("packets") and \
            sum(lens) + 24 * len(lens) == pk.get("wire_bytes")
        got.append("%s %d/%s" % (link, len(lens), pk.get("packets")))
        rows.append("| `%s` | %d | %s | %d | %s |" % (link, len(lens), pk.get("packets"), sum(lens) + 24 * len(lens),
                                                     pk.get("wire_bytes")))
    v.row("taps: frames in the pcap (tshark) against the link's counter", "equal, and wire bytes equal",
          "tshark -r F; frame.len + 24 per frame", ", ".join(got) if rep else None, "exact", ok, "incast_dcqcn")
    v.text("""## Taps: the capture against the link counters

`incast_dcqcn.yaml` with `nic.cc=dcqcn`, tapping the bottleneck `sw0_to_h0` and one sender's uplink
`h1_to_sw0` (README, `--tap`). **Expected**: tshark (an independent pcap reader) finds in each file as many
frames as the link's `packets` counter in the report, and their captured lengths plus 24 bytes each (the FCS,
not written, and preamble, SFD and inter-frame gap) add up to the link's `wire_bytes`.

| link | frames (tshark) | `packets` | wire bytes from the capture | `wire_bytes` |
|---|---|---|---|---|
%s
""" % "\n".join(rows))


@section(quick=True)
def replay(v):
    """Sample captures replayed: messages and bytes as tshark counts them."""
    rows, ok, got = [], True, []
    for name in ("rdma_write_inorder", "rdma_write_sprayed"):
        cap = os.path.join(ROOT, "traces", "samples", name + ".pcap")
        out = os.path.join(v.work, "replay_%s.json" % name)
        r = sh([v.bin, "replay", cap, "--json", out, "--quiet"])
        want = tshark_write_messages(cap)
        rep = None
        if r.returncode == 0 and os.path.exists(out):
            with open(out) as f:
                rep = json.load(f)
        else:
            v.fail("replay %s: exit %d: %s" % (name, r.returncode, r.stdout[-1000:]))
        flows = (rep or {}).get("replay", {}).get("flows", [])
        posted = sum(f["posted"] for f in flows)
        done = sum(f["completed"] for f in flows)
        done_bytes = sum(f["completed_bytes"] for f in flows)
        pk = (rep or {}).get("trace", {}).get("roce_packets")
        ok = ok and rep is not None and want is not None and bool(rep.get("verified")) and \
            (pk, posted, done, done_bytes) == (want[0], want[1], want[1], want[2])
        got.append("%s: %s msgs, %s B" % (name, done, done_bytes))
        rows.append("| `%s.pcap` | %s | %s | %s | %s | %s |" % (
            name, "%d / %d / %d" % want if want else "-", pk, posted, done, done_bytes))
    v.row("replay of the sample captures: messages and bytes", "as tshark counts them",
          "tshark: RC WRITE FIRST/ONLY, RETH DMA length", "; ".join(got), "exact; verified", ok, "replay")
    v.text("""## Replay: the capture's messages

`fabricsim replay traces/samples/F.pcap` (default fabric and timing, docs/replay.md). **Expected**: tshark's
decoding of the same file: RoCEv2 packets (`-Y infiniband`), WRITE messages (an RC WRITE FIRST or ONLY opcode
starts one) and their bytes (the RETH DMA length); the replay must decode as many packets, post and complete
as many WRITEs, move the same bytes, and verify them.

| capture | tshark: packets / WRITEs / bytes | `trace.roce_packets` | posted | completed | completed bytes |
|---|---|---|---|---|---|
%s
""" % "\n".join(rows))


@section(quick=True)
def mpi_identity(v):
    """The same scenario on 2 MPI ranks and in one process: the same report, machine fields aside."""
    one, _ = v.run("mpi_1", "leaf_spine_small.yaml")
    two, _ = v.run("mpi_2", "leaf_spine_small.yaml", ["--ranks", "2"])
    strip = load_golden_strip()
    # Besides the wall-clock fields (scripts/golden), docs/report.md names what a run on several ranks may
    # differ in: the scale_out object, and the kernel wake-ups (each rank wakes its own kernel).
    per_kernel = ("scale_out", "events", "events_per_packet_hop")

    def canon(r):
        return {k: x for k, x in strip(r).items() if k not in per_kernel}
    ok = bool(one and two) and canon(one) == canon(two) and (two.get("scale_out") or {}).get("ranks") == 2
    differ = []
    if one and two:
        a, b = canon(one), canon(two)
        differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    v.row("MPI: leaf_spine_small on 2 ranks against 1 process", "the same report",
          "scripts/golden strip(); docs/report.md scale_out", ("identical (%d ranks)" % two["scale_out"]["ranks"])
          if ok else ("differs in: " + ", ".join(differ[:6]) if one and two else None), "exact", ok,
          "leaf_spine_small")
    v.text("""## MPI: one fabric across two processes

`fabricsim run testbench/scenarios/leaf_spine_small.yaml --ranks 2` against the same run in one process
(docs/scale_out.md). **Expected**: the same report field for field, apart from the wall-clock fields
`scripts/golden` strips and what docs/report.md names as per-process (`scale_out`, `events`,
`events_per_packet_hop`). **Measured**: %s.
""" % ("identical" if ok else ("differs in " + ", ".join(differ) if differ else "failed")))


@section
def docs_figures(v):
    """The figures the README and docs quote, whole: the ctest docs_figures_check (scripts/docs_figures --check
    --quick) computes only the first and last rows of the two clock tables; this runs every row."""
    r = sh([sys.executable, os.path.join(ROOT, "scripts", "docs_figures"), "--check", "--build", v.build])
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    ok = r.returncode == 0
    v.row("README and docs figures, the clock tables whole (scripts/docs_figures --check)",
          "every block as the binary prints it", "the committed blocks", last or None, "exact, machine fields masked",
          ok, "docs_figures", reason=None if ok else r.stdout[-1500:])
    v.text("""## The figures the documentation quotes

`scripts/docs_figures --check`: every marked block of README.md and docs/ against what this build prints, the
two clock tables of docs/verification.md (`scripts/clock_table`, 156 runs each) with every row; the ctest
`docs_figures_check` checks their first and last rows only. **Measured**: %s.
""" % (last or "failed"))
