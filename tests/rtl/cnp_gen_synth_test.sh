#!/usr/bin/env bash
# The CNP generator synthesizes (yosys `synth`) and holds exactly the state its specification declares, counted
# by hand from rtl/cnp_gen.sv (TimeWidth 32), not from a previous run: per context a sent bit and a 32-bit
# time (33 x Flows); the port context (33); the interval (32) and the mode bit; the clear flag and its
# log2(Flows)-bit index; the registered result (valid, emit, 24-bit QPN); two 32-bit counters.
# 33 x Flows + 157 + log2(Flows). Small Flows only: yosys time grows with the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(scripts/synth cnp_gen 2 8)
echo "$out"
for f in 2 8; do
  ffs=$(echo "$out" | awk -v f="$f" '$1 == f {print $3}')
  log2=0; n=$f; while [ "$n" -gt 1 ]; do n=$((n / 2)); log2=$((log2 + 1)); done
  expected=$((33 * f + 157 + log2))
  if [ "$ffs" != "$expected" ]; then
    echo "FAIL: Flows $f synthesized to '$ffs' flip-flops, expected $expected" >&2
    exit 1
  fi
done
echo "flip-flop counts as specified"
