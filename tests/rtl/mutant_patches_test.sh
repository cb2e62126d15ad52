#!/usr/bin/env bash
# The RTL mutants are patch files, not macros in the production RTL: the clean rtl/*.sv carry no MUTANT
# macro; every rtl/mutants/<block>/<N>.patch (generated mutant N of verify-rtl --mutate, written by
# `fabricsim verify-rtl --block B --mutant-patch N`; rtl_mutate_gen_test checks it is that, byte for byte)
# starts with a header naming its mutant and block and saying what bug it plants, applies to the clean block with `patch --fuzz=0` (as rtl/CMakeLists.txt applies it) and
# changes it. And the check has teeth: the same patch against a copy whose first unique context line was
# edited (a block that moved on under a stale patch) must fail to apply.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if grep -n 'MUTANT' rtl/*.sv; then fail "production RTL still mentions MUTANT (the lines above)"; fi

count=0
for dir in rtl/mutants/*/; do
  block=$(basename "$dir")
  [ -f "rtl/$block.sv" ] || fail "$dir names no block: rtl/$block.sv does not exist"
  for p in "$dir"*; do
    name=$(basename "$p")
    [[ "$name" =~ ^([1-9][0-9]*)\.patch$ ]] || fail "$p: mutant files are named <N>.patch"
    n=${BASH_REMATCH[1]}
    head -n1 "$p" | grep -q "^Mutant $n of rtl/$block.sv " || fail "$p: first line must be 'Mutant $n of rtl/$block.sv (...)'"
    # The header is prose up to the diff; it must say more than the title line.
    desc_lines=$(awk '/^--- /{exit} NF{c++} END{print c+0}' "$p")
    [ "$desc_lines" -ge 2 ] || fail "$p: the header must say what bug the mutant plants"
    out="$tmp/$block.$n.sv"
    patch --fuzz=0 --force --no-backup-if-mismatch --reject-file=- -o "$out" "rtl/$block.sv" "$p" >"$tmp/log" 2>&1 ||
      { cat "$tmp/log" >&2; fail "$p no longer applies to rtl/$block.sv"; }
    if cmp -s "$out" "rtl/$block.sv"; then fail "$p changes nothing"; fi

    # Stale patch: edit the first context line of the patch that occurs exactly once in the block.
    stale="$tmp/$block.$n.stale.sv"
    edited=""
    while IFS= read -r line; do
      ctx=${line# }
      [ -n "${ctx//[[:space:]]/}" ] || continue
      if [ "$(grep -cFx -- "$ctx" "rtl/$block.sv")" = 1 ]; then edited=$ctx; break; fi
    done < <(awk '/^@@/{h=1; next} h && /^ /' "$p")
    [ -n "$edited" ] || fail "$p: no unique context line to edit for the stale check"
    awk -v c="$edited" '$0 == c {print $0 " // edited"; next} {print}' "rtl/$block.sv" >"$stale"
    if patch --fuzz=0 --force --no-backup-if-mismatch --reject-file=- -o "$tmp/out.sv" "$stale" "$p" >/dev/null 2>&1; then
      fail "$p still applies after its context line '$edited' was edited: a stale patch would go unnoticed"
    fi
    count=$((count + 1))
    echo "ok $p"
  done
done
[ "$count" -ge 9 ] || fail "found $count mutant patches, expected at least 9 (three per block)"
echo "$count mutant patches apply, change their block, and fail when stale"
