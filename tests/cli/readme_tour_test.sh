#!/usr/bin/env bash
# The README's five-minute tour, run as a new user would run it: every command of its code blocks (the
# first block and the Python snippet), in order, in a scratch folder beside links to the checkout's
# testbench/ and scripts/, with the build line left out (ctest runs on a build) and the build folder the
# tour names replaced by this build's. Then what the tour says it leaves behind is checked: the comparison's
# report and figures, the sweep's CSV and heat map, the Python line's answer, and the GraphML run.
# Usage: readme_tour_test.sh SOURCE_DIR FABRICSIM_BINARY
set -euo pipefail
src=$1 bin=$(readlink -f "$2")
bindir=$(dirname "$bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$src/testbench" "$tmp/testbench"
ln -s "$src/scripts" "$tmp/scripts"
# The fenced blocks between "## Five-minute tour" and the next "## " heading.
/usr/bin/python3 - "$src/README.md" "$bindir" > "$tmp/tour.sh" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
tour = text.split("## Five-minute tour", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```\n(.*?)```", tour, re.S)
assert len(blocks) >= 2, "the tour has its commands and its Python snippet"
lines = [l for b in blocks for l in b.replace("\\\n", " ").splitlines() if l.strip()]
assert lines[0].startswith("scripts/build"), lines[0]
print("set -euo pipefail")
for l in lines[1:]:
    print(l.replace("$PWD/build/release/testbench", sys.argv[2]))
PY
cd "$tmp"
grep -q "fabricsim sweep" tour.sh && grep -q "import fabricsim" tour.sh && grep -q "graphml" tour.sh || {
  echo "FAIL: the tour must show a sweep, a Python snippet and a GraphML topology" >&2; exit 1; }
bash tour.sh > tour.out 2>&1 || { cat tour.out; echo "FAIL: the tour stopped" >&2; exit 1; }
for f in incast.json plots/compare.png plots/queue_depth.png plots/flow_rate.png sw/sweep.csv \
         plots/sweep_heatmap.png; do
  [ -s "$f" ] || { cat tour.out; echo "FAIL: the tour did not leave $f" >&2; exit 1; }
done
grep -qx "True" tour.out || { cat tour.out; echo "FAIL: the Python line did not print True" >&2; exit 1; }
grep -q "VERIFIED" tour.out || { cat tour.out; echo "FAIL: no run said VERIFIED" >&2; exit 1; }
echo "the README tour ran: $(grep -c . tour.sh) lines"
