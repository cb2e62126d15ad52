#!/usr/bin/env bash
# The DCQCN reaction point synthesizes (yosys `synth`) and holds exactly the state its specification
# declares, counted by hand from rtl/dcqcn_rp.sv: five time registers (latched request time, alpha and rate
# deadlines, last cut, deadline output) 5*TimeW; rate and target 2*RateW; alpha AlphaW; latched bytes BytesW;
# byte accumulator AccW; two event counters 2*CountW; events 10; busy, kind (2), two timer-armed bits and
# the deadline valid bit 6; the response valid bit 1. Narrow widths keep the run short.
set -euo pipefail
cd "$(dirname "$0")/../.."
setting=RateW=24,AlphaW=12,TimeW=48,PeriodW=24,BytesW=16,AccW=32,CountW=8
out=$(scripts/synth dcqcn_rp "$setting")
echo "$out"
ffs=$(echo "$out" | awk -v s="$setting" '$3 == s {print $2}')
expected=$((5 * 48 + 2 * 24 + 12 + 16 + 32 + 2 * 8 + 10 + 6 + 1))
if [ "$ffs" != "$expected" ]; then
  echo "FAIL: $setting synthesized to '$ffs' flip-flops, expected $expected" >&2
  exit 1
fi
echo "flip-flop count as specified"
