#!/usr/bin/env bash
# Session 9 lead's check run: the fingerprint kernel's first compile at 4K elements/program, then bench2's
# fixed gold ordering (12 TritonBench-G modules) and the torch.compile baseline (KernelBench level 1).
# Runs from a carried tree as bench/gpu/bench2_carry.sh makes it: bash D/bench/gpu/session9_lead_check.sh
set -u
d=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p $OUT/final
s=$SECONDS
PYTHONPATH=$d/worker timeout 100 python3 - > $OUT/final/fingerprint.txt 2>&1 <<'PY'
from kiln_worker import platform as plat
plat.select_mode(False)
import time, torch
from kiln_worker import memory
x = torch.randn(1 << 28, device="cuda")
torch.cuda.synchronize(); t = time.perf_counter()
snap = memory.snapshot(([x], {}))
torch.cuda.synchronize(); dt = time.perf_counter() - t
t = time.perf_counter(); memory.snapshot(([x], {})); torch.cuda.synchronize(); dt2 = time.perf_counter() - t
base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
same = memory.changed(([x], {}), snap)
extra = torch.cuda.max_memory_allocated() - base
x[12345] += 1.0
print(f"fingerprint of 1 GiB: first {dt * 1e3:.1f} ms (with compile), second {dt2 * 1e3:.1f} ms; unchanged->{same}; "
      f"after a 1-element change->{memory.changed(([x], {}), snap)}; temporaries {extra} bytes")
PY
echo "fingerprint rc=$? $((SECONDS - s)) s: $(tail -1 $OUT/final/fingerprint.txt | cut -c1-220)" | tee $OUT/final/summary.txt
TBG_S=${TBG_S:-130} CW=${CW:-4} KB1_S=${KB1_S:-110} bash $d/bench/gpu/bench2_gpu.sh tbg_gold kb1_compile > $OUT/final/bench2.txt 2>&1
tail -8 $OUT/final/bench2.txt | tee -a $OUT/final/summary.txt
python3 - "$OUT" <<'PY' | tee -a $OUT/final/summary.txt
import json, sys, glob
for f in glob.glob(sys.argv[1] + "/bench2/tbg_gold/results.jsonl"):
    for l in open(f):
        r = json.loads(l); print(r.get("id") or r.get("task"), r.get("verdict") or r.get("outcome"), (r.get("reason") or "")[:90])
PY
