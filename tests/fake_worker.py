"""What the fake `python`s that answer as kiln_worker share (tests/bench/fake_gpus_python.py,
tests/datagen/fake_gpu_memory_python.py): the check of how kiln starts them (`FAKE -m kiln_worker`) and the
worker's request loop (hello, eval, shutdown, one JSON line each way). Standard library only."""
import json
import sys

VERSIONS = {"python": "3", "torch": "2.11.0+fake", "triton": "3.6.0", "driver": "fake", "cuda": "13.0"}


def serve(name, devices, evaluate):
    """Answers the requests on stdin until shutdown: hello with devices() (this worker's GPUs), eval with
    evaluate(req) (the response without its id); any other op is an error answer."""
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "hello":
            out = {"ok": True, "protocol": 1, "interpreter": False, "isolation": "fork", "versions": VERSIONS,
                   "devices": devices()}
        elif op == "shutdown":
            sys.stdout.write(json.dumps({"id": req.get("id"), "ok": True}) + "\n")
            sys.stdout.flush()
            return 0
        elif op == "eval":
            out = evaluate(req)
        else:
            out = {"ok": False, "error": f"{name}: no op {op!r}"}
        out["id"] = req.get("id")
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


def main(name, devices, evaluate):
    """The fake's entry: only `-m kiln_worker` (exit 2 otherwise), then serve()."""
    if sys.argv[1:3] != ["-m", "kiln_worker"]:
        sys.stderr.write(f"{name}: only `-m kiln_worker` is supported, got {sys.argv[1:]!r}\n")
        return 2
    return serve(name, devices, evaluate)
