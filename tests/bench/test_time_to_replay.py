"""bench/gpu/tritonbench_g_time_to_replay.py on synthetic shard folders: a module evaluated in two batches (re-run
in a later device call) keeps the later batch's result AND only that batch's recorded exchanges (the replay
answers a pair with the first matching exchange: with both kept, it replayed the earlier verdict; H100 run 9,
block_sparse_attn rejected in call 1, ok in call 2)."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]


def shard(d, name, results):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"result_{name}.jsonl"), "w") as r, open(os.path.join(d, f"transcript_{name}.jsonl"), "w") as t:
        for mod, verdict in results:
            r.write(json.dumps({"id": mod, "verdict": verdict, "pair_hash": "x"}) + "\n")
            t.write(json.dumps({"request": {"op": "eval", "task": {"name": f"tritonbench_g/{mod}"}},
                                "response": {"verdict": verdict, "batch": name}}) + "\n")
        t.write(json.dumps({"request": {"id": "hello", "op": "hello"}, "response": {}}) + "\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        shard(f"{d}/a", "s11a", [("m1", "rejected"), ("m2", "mismatch")])
        shard(f"{d}/b", "s11b", [("m3", "ok"), ("m1", "ok")])
        subprocess.run([sys.executable, TOOL, f"{d}/out", f"{d}/a", f"{d}/b"], check=True, capture_output=True)
        expected = {json.loads(l)["id"]: json.loads(l)["verdict"] for l in open(f"{d}/out/expected.jsonl")}
        assert expected == {"m1": "ok", "m2": "mismatch", "m3": "ok"}, expected
        ex = [json.loads(l) for l in open(f"{d}/out/transcript.jsonl")]
        m1 = [x["response"] for x in ex if x["request"].get("task", {}).get("name") == "tritonbench_g/m1"]
        assert m1 == [{"verdict": "ok", "batch": "s11b"}], m1          # call 1's answer left out
        assert sum(1 for x in ex if x["request"].get("op") == "hello") == 2   # both batches' handshakes kept
        assert len(open(f"{d}/out/pairs.jsonl").readlines()) == 3
    print("ok")


if __name__ == "__main__":
    main()
