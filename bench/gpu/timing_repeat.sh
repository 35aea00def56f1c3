#!/usr/bin/env bash
# Timing repeatability: the KernelBench add example timed 5 times in one batch, with the
# default check workers and with none, twice each, alternating. Usage: bench/gpu/timing_repeat.sh
# Results under $OUT/timing_repeat, tarred to $OUT/timing_repeat.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
# Is the first pair's outlier (session 4: 0.00245 ms against 0.00167-0.00186) the batch's check
# workers still on the GPU beside it? The same batch with and without them, twice each, alternating.
C=$KILN_CORPUS_DIR/kernelbench/examples
for i in 1 2 3 4 5; do
  echo "{\"id\": \"run$i\", \"task\": \"$C/model_ex_add.py\", \"candidate\": \"$C/model_new_ex_add_triton.py\"}"
done > /tmp/repeat_pairs.jsonl
for round in 1 2; do
  for cw in default 0; do
    extra=(); [ "$cw" = 0 ] && extra=(--check-workers 0)
    "$KILN_BIN" eval --batch /tmp/repeat_pairs.jsonl --out "$w/repeat_${cw}_$round.jsonl" --mode time --no-db \
      --gpus 1 --compile-workers 0 "${extra[@]}" 2> "$w/repeat_${cw}_$round.stderr"
  done
done
python3 - "$w" <<'PY' > "$w/summary.txt"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "repeat_*.jsonl"))):
ms = []
for line in open(f):
    r = json.loads(line)
    for c in (r.get("result") or {}).get("cases", []):
        if c.get("candidate_ms"):
            ms.append((c["candidate_ms"]["median"], c.get("timing_method", "?")))
m = [x for x, _ in ms]
spread = (max(m) - min(m)) / min(m) * 100 if m else float("nan")
print("%-22s medians %s  spread %.1f%%  methods %s" % (os.path.basename(f), ["%.5f" % x for x in m], spread,
                                                      sorted(set(t for _, t in ms))))
PY
finish
