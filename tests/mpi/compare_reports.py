#!/usr/bin/env python3
"""Compares fabricsim JSON reports field by field, apart from what legitimately differs between runs and
rank counts (docs/scale_out.md): wall-clock figures, kernel wake-ups (each rank wakes its own kernel) and the
`scale_out` object. Usage: compare_reports.py REFERENCE OTHER... ; exit 1 and the differing paths on a mismatch."""
import json
import os
import subprocess
import sys

# Wall-clock and per-kernel figures: not results of the model.
IGNORED = {"wall_time_s", "packet_hops_per_s", "peak_rss_mib", "events", "events_per_packet_hop", "scale_out"}


# What the MPI tests run mpirun with (root in a container, more ranks than cores), and their shared check.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def harness(work, fabricsim, prefix):
    """A test script's common start: (timeout, failures, check, run) for FABRICSIM and WORK_DIR, the run's
    reports named with `prefix`; FABRICSIM_MPI_TEST_TIMEOUT sets one run's time limit (120 s)."""
    timeout = float(os.environ.get("FABRICSIM_MPI_TEST_TIMEOUT", "120"))
    failures = []
    return timeout, failures, checker(failures), runner(fabricsim, work, failures, timeout, prefix=prefix)


def checker(failures):
    """check(cond, what): records `what` in `failures` when `cond` is false."""
    def check(cond, what):
        if not cond:
            failures.append(what)
    return check


def runner(fabricsim, work, failures, timeout, prefix=""):
    """run(scenario, ranks, tag, expect_status=0, extra=(), cwd=None) -> (report or None, process): fabricsim in
    one process (ranks 1) or under mpirun; an unexpected exit status is recorded in `failures`."""
    def run(scenario, ranks, tag, expect_status=0, extra=(), cwd=None):
        out = os.path.join(work, f"{prefix}{tag}.{ranks}.json")
        cmd = [fabricsim, "run", scenario, "--json", out, "--quiet"] + list(extra)
        if ranks > 1:
            cmd = ["mpirun", "--oversubscribe", "-n", str(ranks)] + cmd
        p = subprocess.run(cmd, env=MPI_ENV, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        if p.returncode != expect_status:
            failures.append(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect_status}\n{p.stderr[-2000:]}")
            return None, p
        if expect_status != 0:
            return None, p
        with open(out) as f:
            return json.load(f), p
    return run


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            # Wall time is nowhere the same (the training object carries its own).
            if (path == "" and k in IGNORED) or k == "wall_time_s":
                continue
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'reference' if k in a else 'other'}")
            else:
                diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} entries vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} vs {b!r}")


def main():
    ref = json.load(open(sys.argv[1]))
    status = 0
    for other in sys.argv[2:]:
        out = []
        diff(ref, json.load(open(other)), "", out)
        if out:
            status = 1
            print(f"{other} differs from {sys.argv[1]} in {len(out)} fields:")
            for line in out[:40]:
                print("  " + line)
        else:
            print(f"{other}: identical to {sys.argv[1]} (apart from {', '.join(sorted(IGNORED))})")
    return status


if __name__ == "__main__":
    sys.exit(main())
