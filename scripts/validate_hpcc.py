"""The HPCC paper's FCT comparison (issue 22 item 3): web search and FB_Hadoop flows at 30 % and 50 % load,
DCQCN against HPCC, with the parameters of the paper's run script, on a scaled-down copy of its fat tree.
Imported by scripts/validate at the place the section takes on the page."""
import math

from validate_lib import compare_runs, fig_md, section

WORKLOADS = (("websearch", "web search", "hpcc_paper_websearch.yaml"),
             ("hadoop", "FB_Hadoop", "hpcc_paper_hadoop.yaml"))
LOADS = (0.3, 0.5)
SHORT_BYTES = 100000  # "short flows": up to 100 KB (the paper's project page: HPCC's gain is in flows < 200 KB)
MIN_FLOWS = 20  # a percentile of fewer flows says little (the fct table's own floor)
# "Well below": HPCC's p95 slowdown of short flows at most half of DCQCN's. The paper gives no threshold; it
# reports gains of up to 95 % (ratio 0.05) and calls them significant: half is our reading of that.
WELL_BELOW = 0.5
# Fig. 11(c) (FB_Hadoop, 50 % load, 95th percentile), DCQCN's curve at its peak: "about 5" as a reader of the
# figure reads it (the repository's issue #36, 2025-09-19; the same reader measured a little above 8 with
# run.py). Read off a log-scale plot by someone else: a factor of 2 either way is the tolerance.
FIG11C_DCQCN_P95 = 5.0
FIG11C_FACTOR = 2.0


def nearest_rank(values, q):
    """The smallest value with at least q of them at or below it (the fct report's percentile, docs/report.md)."""
    s = sorted(values)
    return s[max(1, min(len(s), int(math.ceil(q * len(s))))) - 1] if s else None


def short_p95(rep):
    """(p95 slowdown, count) over the completed flows of at most SHORT_BYTES of a report."""
    xs = [f["slowdown"] for f in (rep or {}).get("flows", [])
          if f.get("completed") and "slowdown" in f and f["bytes"] <= SHORT_BYTES]
    return nearest_rank(xs, 0.95), len(xs)


def fmt(x):
    return "%.2f" % x if x is not None else "-"


def bucket_rows(label, load, runs):
    rows = []
    dc = runs.get("dcqcn", {}).get("fct", {}).get("buckets", [])
    hp = runs.get("hpcc", {}).get("fct", {}).get("buckets", [])
    for d, h in zip(dc, hp):
        if not d.get("completed") and not h.get("completed"):
            continue
        rows.append("| %s | %d %% | %s | %d / %d | %s | %s |" % (
            label, round(100 * load), d["bucket"], d.get("completed", 0), h.get("completed", 0),
            " / ".join(fmt(d.get(k)) for k in ("p50_slowdown", "p95_slowdown", "p99_slowdown")),
            " / ".join(fmt(h.get(k)) for k in ("p50_slowdown", "p95_slowdown", "p99_slowdown"))))
    return rows


@section
def hpcc_paper(v):
    """Li et al., HPCC (SIGCOMM 2019), Fig. 11 and its project page: FCT slowdown per flow size, DCQCN against
    HPCC, web search and FB_Hadoop at 30 % and 50 % load."""
    table, figs, short, fct = [], [], {}, {}
    hops = 0
    for wl, label, scen in WORKLOADS:
        for load in LOADS:
            name = "hpcc_paper_%s_%d" % (wl, round(100 * load))
            rep, _ = v.run(name, scen, ["--set", "workload.load=%g" % load])
            runs = compare_runs(rep)
            hops += sum(r.get("packet_hops", 0) for r in runs.values())
            fct[(wl, load)] = {cc: runs.get(cc, {}).get("fct", {}).get("buckets", []) for cc in ("dcqcn", "hpcc")}
            table += bucket_rows(label, load, runs)
            short[(wl, load)] = {cc: short_p95(runs.get(cc)) for cc in ("dcqcn", "hpcc")}
            kept = v.plot(name, name, ["fct_slowdown.png"] + (["fct_cdf.png"] if load == 0.5 else []),
                          title="%s, %d %% load" % (label, round(100 * load)))
            figs.append(fig_md(kept, "fct_slowdown.png", "fct_cdf.png"))
            (d, nd), (h, nh) = short[(wl, load)]["dcqcn"], short[(wl, load)]["hpcc"]
            have = d and h and nd >= MIN_FLOWS and nh >= MIN_FLOWS
            v.row("HPCC paper, %s at %d %% load: p95 FCT slowdown of flows <= 100 KB, HPCC / DCQCN" % (
                label, round(100 * load)), "<= %.1f (HPCC well below DCQCN)" % WELL_BELOW,
                "Li et al., HPCC, SIGCOMM 2019, 5.3 and Fig. 11; hpcc-group.github.io/results.html",
                "%.2f (%.2f / %.2f, %d flows)" % (h / d, h, d, nd) if have else None, "ratio <= %.1f" % WELL_BELOW,
                have and h / d <= WELL_BELOW, scen[:-5], kept.get("fct_slowdown.png"))
    for wl, label, scen in WORKLOADS:
        gaps = {}
        for load in LOADS:
            (d, _), (h, _) = short[(wl, load)]["dcqcn"], short[(wl, load)]["hpcc"]
            gaps[load] = d - h if d and h else None
        have = all(g is not None for g in gaps.values())
        v.row("HPCC paper, %s: the gap (DCQCN - HPCC p95 slowdown, flows <= 100 KB) at 50 %% against 30 %% load" %
              label, "larger at 50 %", "hpcc-group.github.io/results.html, 50 % load; as issue 22 states the claim",
              "%.2f at 30 %%, %.2f at 50 %%" % (gaps[0.3], gaps[0.5]) if have else None, "50 % > 30 %",
              have and gaps[0.5] > gaps[0.3], scen[:-5],
              reason="in the model DCQCN's short-flow tail hardly moves with the load (the section's first table) while "
                     "HPCC's grows: see the section, \"Where we disagree\"")
    # Fig. 11(c): DCQCN's 95th-percentile curve at its peak over the flow sizes, against our buckets' largest p95.
    dc = [b["p95_slowdown"] for b in fct[("hadoop", 0.5)]["dcqcn"]
          if b.get("completed", 0) >= MIN_FLOWS and b.get("p95_slowdown")]
    peak = max(dc) if dc else None
    lo, hi = FIG11C_DCQCN_P95 / FIG11C_FACTOR, FIG11C_DCQCN_P95 * FIG11C_FACTOR
    v.row("HPCC paper, FB_Hadoop at 50 % load: DCQCN's p95 slowdown, largest over the size buckets",
          "about %.0f (read off Fig. 11(c))" % FIG11C_DCQCN_P95,
          "Li et al. 2019, Fig. 11(c), as read in the paper repository's issue #36",
          "%.2f" % peak if peak else None, "x%.0f either way (%.1f .. %.0f)" % (FIG11C_FACTOR, lo, hi),
          peak is not None and lo <= peak <= hi, "hpcc_paper_hadoop",
          reason="our DCQCN's short flows wait about twice as long at the tail as the figure's (the section, \"Where we "
                 "disagree\": the queue DCQCN holds at a congested 100G port; the reader who read 5 measured a little "
                 "above 8 with the paper's own script)")
    v.text(page_text(table, figs, short, hops))


def page_text(table, figs, short, hops):
    short_rows = "\n".join("| %s | %d %% | %s (%d) | %s (%d) | %s |" % (
        label, round(100 * load), fmt(short[(wl, load)]["dcqcn"][0]), short[(wl, load)]["dcqcn"][1],
        fmt(short[(wl, load)]["hpcc"][0]), short[(wl, load)]["hpcc"][1],
        fmt(short[(wl, load)]["hpcc"][0] / short[(wl, load)]["dcqcn"][0])
        if short[(wl, load)]["dcqcn"][0] and short[(wl, load)]["hpcc"][0] else "-")
        for wl, label, _ in WORKLOADS for load in LOADS)
    return PAGE % {"hops": hops / 1e6, "short": short_rows, "table": "\n".join(table), "figs": "\n\n".join(f for f in figs if f)}


PAGE = """## The HPCC paper's FCT comparison: web search and FB_Hadoop, DCQCN against HPCC

`testbench/scenarios/hpcc_paper_websearch.yaml` (300 flows) and `hpcc_paper_hadoop.yaml` (2000 flows), each
`--set workload.load=0.3` and `0.5`, each comparing `nic.cc` dcqcn and hpcc: flow sizes from the paper's own CDF
tables (docs/workloads.md), Poisson arrivals per host, destinations uniform over the other hosts, a queue pair
per flow, timing only. The eight simulations move %(hops).1f M packet-hops (1 KB packets); at the speed
section's rate (about 0.4 M packet-hops per second of one core) that is about a minute of CPU, so the section
is not part of `--quick` (on this work's machine, 8 jobs sharing 2 cores, the four comparisons took 6-9 minutes
each, run side by side).

- **The published record**: Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, section 5.3:
  ns-3 on a fat tree of 320 hosts at 100 Gb/s (20 ToRs, 20 aggregation and 16 core switches, 400 Gb/s between
  switches, 1 us per link, no oversubscription), FB_Hadoop flows at 30 %% load plus an incast (Fig. 11(a)),
  and at 50 %% load (Fig. 11(c)), FCT slowdown at the 95th percentile per flow size; web search at 30, 50 and
  70 %% (50th, 95th, 99th percentile) on the project page (hpcc-group.github.io/results.html, the paper's
  settings but eta 0.99). Claims: HPCC's short flows (under 200 KB) finish far faster than DCQCN's, most at the
  tail (up to 95 %% shorter); at 50 %% load the gap grows (the project page on its 50 %% web search results;
  the copy of its sentence read here is cut short, so this claim is taken as the issue states it). Numbers: the figures are plots
  only, which this work could not view; the one value used is DCQCN's peak in Fig. 11(c), **about 5**, as a
  reader of the figure states it (the paper repository's issue #36, who measured a little above 8 with the
  run script), and Fig. 11(a)'s DCQCN of 60-70 is not compared (we add no incast). HPCC's own values per size
  are not quoted: nothing read off the figures is claimed beyond the orderings.
- **The parameters**, from the paper's run script (`simulation/run.py` at `--bw 100`, `mix/fat.txt`) to our
  keys (the scenario files say the same line by line; docs/calibration.md, "HPCC paper scenarios"):

| paper (run.py / fat.txt) | value | our key | value |
|---|---|---|---|
| hosts, ToR, aggregation, core | 320, 20, 20, 16; 5 pods | `topology.kind three_tier`, `pods`, `leaves`, `spines`, `cores`, `hosts_per_leaf` | 32 hosts: 2 pods of 2 x 2, 4 cores, 8 per ToR |
| host / switch link rate | 100 / 400 Gb/s | `topology.link_gbps` / `uplink_gbps` | 100 / 400 (1:1 at every tier, as the paper) |
| link delay | 1000 ns | `host_cable_m`, `leaf_spine_cable_m`, `spine_core_cable_m` x `link.ns_per_metre`; `link.fec_latency_ns` | 200 m x 5 ns/m; FEC 0 |
| `PACKET_PAYLOAD_SIZE` | 1000 B | `nic.mtu_bytes` | 1024 (the nearest IBTA MTU) |
| `KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP` | 100 KB / 400 KB x B/25G, 0.2 (400 KB / 1600 KB at 100G, 4x at 400G) | `switch.ecn_kmin_bytes`, `ecn_kmax_bytes`, `ecn_pmax` | 400000, 1600000, 0.2 on every port (no per-speed RED line: the 400G ports mark 4x earlier than the paper's) |
| `BUFFER_SIZE` | 16 MB x B/50G = 32 MB | `switch.buffer_bytes` | 33554432 |
| DCQCN `ALPHA_RESUME_INTERVAL`, `RATE_DECREASE_INTERVAL`, `RP_TIMER` | 1, 4, 300 us | `nic.dcqcn_dce_tcp_rtt_us`, `dcqcn_rate_reduce_monitor_period_us`, `dcqcn_rpg_time_reset_us` | 1, 4, 300 |
| `EWMA_GAIN`, `FAST_RECOVERY_TIMES` | 1/256, 1 | `nic.dcqcn_dce_tcp_g`, `dcqcn_rpg_threshold` | 1020, 1 |
| `RATE_AI`, `RATE_HAI`, `MIN_RATE` | 5 and 50 Mb/s x B/25G, 1000 Mb/s | `nic.dcqcn_rpg_ai_rate_mbps`, `rpg_hai_rate_mbps`, `rpg_min_rate_mbps` | 20, 200, 1000 |
| (no byte counter in the script's NIC) | - | `nic.dcqcn_rpg_byte_reset` | 1 GiB (never reached) |
| CNP: per QP, on an ECN-marked packet's ACK | - | `nic.cnp_mode`, `cnp_interval_ns` | per_flow, 1000 (one per alpha period) |
| HPCC `U_TARGET`, `MI_THRESH` | 0.95, 0 | `nic.hpcc_eta`, `hpcc_max_stage` | 0.95, 0 |
| HPCC `RATE_AI` | 10 Mb/s x B/25G = 40 Mb/s | `nic.hpcc_w_ai_bytes` (a window step: AI x T) | 80 B (40 Mb/s x 16 us) |
| HPCC T (`GLOBAL_T 1`: the largest base RTT) | the fabric's | `nic.hpcc_base_rtt_us` | 16 (6 x 1 us cable and 5 x 400 ns pipeline each way, a 1 KB frame at 100G, the NIC's 200 ns) |

  Not matched, no knob or by choice: 10x fewer hosts, so half the flows cross pods (the paper: 80 %%); no
  incast beside the 30 %% load; our switches are Spectrum-4 (400 ns pipeline, cut-through) where ns-3's are
  store-and-forward with no pipeline delay; PFC thresholds static (the script: dynamic); ACKs every 16
  packets for DCQCN (the script: every packet; HPCC acknowledges every packet in both); INT adds 8 bytes per
  hop to HPCC's packets in both. Nothing was tuned to a figure.

FCT slowdown at the 95th percentile of the flows up to 100 KB (from `flows[]`, nearest rank; flows in brackets):

| workload | load | DCQCN p95 | HPCC p95 | HPCC / DCQCN |
|---|---|---|---|---|
%(short)s

Per size bucket (`fct`; p50 / p95 / p99 of FCT over the same WRITE alone on the idle fabric):

| workload | load | bucket | completed (DCQCN / HPCC) | DCQCN p50 / p95 / p99 | HPCC p50 / p95 / p99 |
|---|---|---|---|---|---|
%(table)s

**Where we disagree, and why.** HPCC's short flows finish far faster than DCQCN's in every case, as the paper
reports (the four ratio rows). Two things do not follow the paper:

- *DCQCN's tail is longer than Fig. 11(c)'s*: the largest p95 over the Hadoop buckets at 50 %% load is about
  twice the value read off the figure, and it is in the shortest flows. A flow of a few KB ideally takes about
  17 us here (the base RTT); a p95 of 10-11 means about 150 us more, the time a 100G port takes to drain
  1.9 MB: the queue a congested host port holds under DCQCN, which marks from Kmin (400 KB) with at most 20 %%
  probability up to Kmax (1.6 MB) and lets PFC hold it beyond. Which modelled difference makes ours deeper
  than ns-3's was not isolated in this work; the candidates are: our one RED line per switch, so the 400G
  fabric ports mark at the 100G values, 4x earlier than the paper's (more cuts, each recovered at 20 Mb/s per
  300 us); DCQCN's ACKs every 16 packets (ns-3: every packet), so cuts and marks are seen later; and 32 hosts in
  place of 320. The figure's value is also a third party's reading of a log plot, and the same reader measured
  a little above 8 with the paper's own script (issue #36), inside our tolerance.
- *The gap at 50 %% against 30 %%*: it grows for web search, but for FB_Hadoop DCQCN's short-flow p95 is the
  same at both loads while HPCC's grows, so the gap narrows a little. Consistent with the above: the queue
  DCQCN parks at the RED line is what short flows wait behind at either load (the marking thresholds, not the
  load, set its depth), while HPCC's near-empty queues do grow with the load. With 300 web search flows (152
  short ones) the p95 is the 8th largest value: the web search rows are an indication, not a measurement
  to two digits.

HPCC's longest flows are slower than DCQCN's in some buckets (Hadoop 1-10 MB at 50 %%): the project page says
the same of HPCC with INT (its records cost about 5 %% of the wire, so HPCC runs at a higher effective load, and
eta 0.95 leaves 5 %% of each link idle).

%(figs)s
"""
