#!/usr/bin/env bash
# Scale-out benchmark (docs/scale_out.md): packet-hops per second of wall time against the number of ranks,
# the parallel efficiency, and the share of each rank's time spent at window ends.
#   tests/mpi/bench_scale_out.sh BUILD_DIR [SCENARIO] [RANKS...]
# Across hosts: FABRICSIM_MPIRUN_ARGS="--hostfile hosts.txt" tests/mpi/bench_scale_out.sh ... (the binary
# and the scenario must be at the same path on every host).
set -euo pipefail
build=${1:?usage: bench_scale_out.sh BUILD_DIR [SCENARIO] [RANKS...]}
here=$(cd "$(dirname "$0")" && pwd)
scenario=${2:-$here/bench_leaf_spine.yaml}
shift $(( $# >= 2 ? 2 : 1 ))
ranks=("$@")
[ ${#ranks[@]} -eq 0 ] && ranks=(1 2 4)
fabricsim=$build/testbench/fabricsim
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
for n in "${ranks[@]}"; do
  t0=$EPOCHREALTIME
  # The CPU time and minor page faults of the whole run, every rank's summed (mpirun waits for its ranks), and
  # the largest peak resident memory of one of them.
  time=(/usr/bin/time -o "$out/$n.cpu" -f "%U %S %R %M")
  if [ "$n" -eq 1 ]; then
    "${time[@]}" "$fabricsim" run "$scenario" --json "$out/$n.json" --quiet
  else
    # shellcheck disable=SC2086
    "${time[@]}" mpirun --oversubscribe ${FABRICSIM_MPIRUN_ARGS:-} -n "$n" "$fabricsim" run "$scenario" \
      --json "$out/$n.json" --quiet
  fi
  echo "$t0 $EPOCHREALTIME" > "$out/$n.whole"
done
python3 - "$out" "${ranks[@]}" <<'PY'
import json, sys
out, ranks = sys.argv[1], [int(r) for r in sys.argv[2:]]
base = None
print(f"{'ranks':>5} {'packet_hops':>12} {'wall_s':>8} {'hops/s':>12} {'speed-up':>8} {'efficiency':>10} "
      f"{'windows':>8} {'frames_x':>9} {'wait share (max)':>16} {'busy cpu s (max)':>16} {'meetings/window':>15} "
      f"{'whole_s':>8} {'setup_s':>8} {'merge_s':>8} {'report_s':>8} {'cpu_s':>8} {'faults':>9} {'rss_mib':>8}")
for n in ranks:
    r = json.load(open(f"{out}/{n}.json"))
    rate = r["packet_hops"] / r["wall_time_s"]
    base = base or rate
    so = r.get("scale_out", {})
    wait = max(so.get("wait_share_per_rank", [0.0]))
    # CPU time simulating (does not grow with the machine's load; one process: not measured, see
    # scripts/scale_out_model) and the ranks' meetings per window.
    t = so.get("per_rank", {})
    cpu = max(t.get("busy_cpu_s", [0.0]))
    # Outside the loop (under mpirun; docs/scale_out.md): the whole process (launch to exit, by this script),
    # the slowest rank's set-up, and rank 0's merge of the statistics and report (it alone writes it).
    start, end = (float(v) for v in open(f"{out}/{n}.whole").read().split())
    whole = end - start
    # The whole run's user + system CPU time over all ranks (does not grow with the machine's load as wall
    # time does), its minor page faults, and the largest rank's peak RSS (rank 0, which writes the report).
    user, system, faults, rss_kib = open(f"{out}/{n}.cpu").read().split()[-4:]
    user, system, faults, rss_kib = float(user), float(system), int(faults), int(rss_kib)
    setup, merge, rep = (max(t.get("setup_s", [0.0])), t.get("merge_s", [0.0])[0], t.get("report_s", [0.0])[0])
    print(f"{n:>5} {r['packet_hops']:>12} {r['wall_time_s']:>8.2f} {rate:>12.0f} {rate / base:>8.2f} "
          f"{rate / base / n:>10.2f} {so.get('windows', 0):>8} {so.get('frames_exchanged', 0):>9} {wait:>16.2f} "
          f"{cpu:>16.3f} {so.get('collectives_per_window', 0):>15.2f} {whole:>8.2f} {setup:>8.2f} {merge:>8.2f} "
          f"{rep:>8.2f} {user + system:>8.2f} {faults:>9} {rss_kib / 1024:>8.0f}")
PY
rm -rf "$out"
