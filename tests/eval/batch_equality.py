"""Issue 14: the verdicts of a batch whose check workers share one device equal those of the same pairs
evaluated one at a time (Triton's interpreter; the real worker under $KILN_PYTHON). Compares, per pair, the
verdict and the set of reason codes of `kiln eval --batch --check-workers 3` with `kiln eval --task
--candidate` run alone. Skips (77) when the worker's Python lacks torch/triton.

usage: batch_equality.py KILN"""
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CANDS = os.path.join(REPO, "tests", "candidates")
# honest and adversarial candidates of a few tasks: ok, each hack's own rejection, a mismatch
PAIRS = [("relu", "honest/relu_ok.py"), ("relu", "honest/relu_views_ok.py"),
         ("relu", "adversarial/relu_mul_mask.py"), ("relu", "adversarial/torch_relu_decorated.py"),
         ("relu", "adversarial/reuse_reference_output.py"), ("relu", "adversarial/cached_values.py"),
         ("relu", "adversarial/cached_outputs.py"),
         ("softmax", "adversarial/softmax_decomposed.py"), ("relu", "faulty/nan_output.py"), ("relu", "faulty/wrong_shape.py")]


def main(kiln):
    py = os.environ.get("KILN_PYTHON") or os.path.join(REPO, ".venv", "bin", "python3")
    if subprocess.run([py, "-c", "import torch, triton"], capture_output=True).returncode != 0:
        print("skip: no torch/triton for the worker")
        return 77
    pairs = [(t, c) for t, c in PAIRS if os.path.exists(os.path.join(CANDS, c))]
    with tempfile.TemporaryDirectory() as d:
        pf, of = os.path.join(d, "pairs.jsonl"), os.path.join(d, "out.jsonl")
        with open(pf, "w") as f:
            for t, c in pairs:
                f.write(json.dumps({"id": c, "task": os.path.join(CANDS, "tasks", t + ".py"),
                                    "candidate": os.path.join(CANDS, c), "timeout_s": 60}) + "\n")
        common = ["--no-db", "--python", py, "--interpret", "--isolation", "fork", "--mode", "check"]
        rc = subprocess.run([kiln, "eval", "--batch", pf, "--out", of, "--check-workers", "3", "--quiet"] + common
                            ).returncode
        if rc not in (0, 1):
            print(f"kiln eval --batch exited {rc}")
            return 1
        batch = {}
        with open(of) as f:
            for line in f:
                j = json.loads(line)
                r = j.get("result") or {}
                batch[j["id"]] = (j.get("verdict"), sorted({x["code"] for x in r.get("reasons", [])}))
        failures = []
        for t, c in pairs:
            p = subprocess.run([kiln, "eval", "--task", os.path.join(CANDS, "tasks", t + ".py"), "--candidate",
                                os.path.join(CANDS, c), "--json", "--timeout", "60"] + common,
                               capture_output=True, text=True)
            try:
                r = json.loads(p.stdout)
            except ValueError:
                failures.append(f"{c}: alone: no JSON (exit {p.returncode}): {p.stderr[-300:]}")
                continue
            alone = (r.get("verdict"), sorted({x["code"] for x in r.get("reasons", [])}))
            print(f"{c}: batch {batch.get(c)} alone {alone}")
            if batch.get(c) != alone:
                failures.append(f"{c}: batch {batch.get(c)} != alone {alone}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
