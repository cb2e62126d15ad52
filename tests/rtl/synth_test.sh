#!/usr/bin/env bash
# The reorder tracker synthesizes (yosys `synth`) and holds exactly the state its specification declares:
# a Window-bit bitmap, the 24-bit head, the registered result (valid, 2-bit verdict, 24-bit PSN) and the
# registered advance pulse (valid, 24-bit PSN): Window + 76 flip-flops. Counted by hand from the port and
# state description in rtl/reorder_tracker.sv, not from a previous run.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(scripts/synth reorder_tracker 64 256)
echo "$out"
for w in 64 256; do
  ffs=$(echo "$out" | awk -v w="$w" '$1 == w {print $3}')
  expected=$((w + 76))
  if [ "$ffs" != "$expected" ]; then
    echo "FAIL: Window $w synthesized to '$ffs' flip-flops, expected $expected" >&2
    exit 1
  fi
done
echo "flip-flop counts as specified"
