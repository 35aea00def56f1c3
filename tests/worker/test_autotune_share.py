"""One autotune pick per key when the candidate is the task's own code (worker/kiln_worker/autotune_share.py),
through the real worker (Triton's interpreter): a TritonBench-G-style module (tests/worker/data/tbg_autotune)
whose autotuned kernel prints a line each time Triton's autotuner tunes a key (its `early_config_prune`).
Three keys (`test`: n=128, perf_0: 256, perf_1: 512): the module against itself tunes each once, for both
loaded copies; a candidate that differs from the task's file (untrusted) tunes its own copy again."""
import os

from workerproc import REPO

D = os.path.join(REPO, "tests", "worker", "data", "tbg_autotune")
KERNEL = os.path.join(D, "kernels", "tuned_scale.py")


def _req(candidate):
    task = {"format": "tritonbench_g", "name": "tuned_scale", "path": KERNEL,
            "perf_path": os.path.join(D, "perf", "tuned_scale_perf.py")}
    return {"op": "eval", "task": task, "candidate": candidate, "mode": "check",
            "cases": ["test", "perf_0", "perf_1"], "trials": 1, "limits": {"timeout_s": 120}}


def _tunings(r):
    return sorted(l for l in r.get("stderr_tail", "").splitlines() if l.startswith("kiln-test-tuning"))


def test_own_code_tunes_each_key_once(fork_worker):
    r = fork_worker.request(_req(None), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"), r.get("stderr_tail", "")[-800:])
    assert _tunings(r) == ["kiln-test-tuning n=128", "kiln-test-tuning n=256", "kiln-test-tuning n=512"], _tunings(r)
    assert r["runtime_checks"].get("autotune_shared") == 1, r["runtime_checks"]


def test_same_text_as_the_task_file_is_own_code(fork_worker):
    with open(KERNEL) as f:
        r = fork_worker.request(_req({"source": f.read(), "name": "tuned_scale.py"}), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"))
    assert len(_tunings(r)) == 3, _tunings(r)


def test_other_candidate_keeps_its_own_tuning(fork_worker):
    with open(KERNEL) as f:
        source = f.read().replace("* 3.0", "* 3.0 + 0.0")
    r = fork_worker.request(_req({"source": source, "name": "tuned_scale.py"}), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"))
    assert len(_tunings(r)) == 6, _tunings(r)   # each key, in each copy
    assert "autotune_shared" not in r["runtime_checks"], r["runtime_checks"]


def _trusted(candidate, policy="trusted"):
    r = _req(candidate)
    r["policy"] = policy
    return r


def test_warm_worker_tunes_a_trusted_key_once_across_requests(shared_worker):
    """kiln optimize's warm worker loads the reference (and in verification the original) afresh for every
    request; in trusted requests their autotuners keep the process's picks, so a key is tuned once per
    worker. A strict request forgets them and never reads them (untrusted code could alter them)."""
    r1 = shared_worker.request(_trusted(None), timeout=300)
    assert r1.get("verdict") == "ok", (r1.get("verdict"), r1.get("reasons"), r1.get("stderr_tail", "")[-800:])
    assert len(_tunings(r1)) == 3, _tunings(r1)
    assert r1["runtime_checks"].get("autotune_kept") == 1, r1["runtime_checks"]
    r2 = shared_worker.request(_trusted(None), timeout=300)
    assert r2.get("verdict") == "ok", (r2.get("verdict"), r2.get("reasons"))
    assert _tunings(r2) == [], _tunings(r2)          # every key was tuned by the first request
    with open(KERNEL) as f:
        source = f.read().replace("* 3.0", "* 3.0 + 0.0")
    r3 = shared_worker.request(_trusted({"source": source, "name": "tuned_scale.py"}), timeout=300)
    assert r3.get("verdict") == "ok", (r3.get("verdict"), r3.get("reasons"))
    assert len(_tunings(r3)) == 3, _tunings(r3)      # the other kernel tunes its own copy; the reference does not
    r4 = shared_worker.request(_trusted(None, "strict"), timeout=300)
    assert r4.get("verdict") == "ok", (r4.get("verdict"), r4.get("reasons"))
    assert len(_tunings(r4)) == 3, _tunings(r4)      # strict: nothing kept is read
    assert "autotune_kept" not in r4["runtime_checks"], r4["runtime_checks"]
    r5 = shared_worker.request(_trusted(None), timeout=300)
    assert len(_tunings(r5)) == 3, _tunings(r5)      # the strict request forgot the tables


def test_trusted_cases_report_the_autotune_keys_they_meet(fork_worker):
    """kiln optimize pins the shapes it measured in a per-shape autotune: a trusted request reports, per case,
    the keys the candidate's autotuned kernels met there (the key parameters' values, without Triton's
    dtypes); a strict request reports none (the candidate's objects are not read for it)."""
    with open(KERNEL) as f:
        source = f.read().replace("* 3.0", "* 3.0 + 0.0")
    r = fork_worker.request(_trusted({"source": source, "name": "tuned_scale.py"}), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"))
    got = {c["name"]: c.get("autotune_keys") for c in r["cases"]}
    assert got == {"test": {"_scale_kernel": {"names": ["n"], "keys": [[128]]}},
                   "perf_0": {"_scale_kernel": {"names": ["n"], "keys": [[256]]}},
                   "perf_1": {"_scale_kernel": {"names": ["n"], "keys": [[512]]}}}, got
    s = fork_worker.request(_trusted({"source": source, "name": "tuned_scale.py"}, "strict"), timeout=300)
    assert s.get("verdict") == "ok", (s.get("verdict"), s.get("reasons"))
    assert all("autotune_keys" not in c for c in s["cases"]), s["cases"]


def test_trusted_picks_travel_to_a_fresh_worker_through_the_request(fork_worker):
    """A worker kiln optimize restarts (a candidate cut at its deadline) starts with no picks: a trusted
    response reports the kept ones (`autotune_picks`: the kernel's identity digest, each key and its config's
    index) and kiln sends them back in its next trusted requests, so the original is not tuned again. The
    fork worker runs every request in a fresh child: nothing else carries over. A strict request ignores them
    and reports none; malformed entries are ignored."""
    r1 = fork_worker.request(_trusted(None), timeout=300)
    assert r1.get("verdict") == "ok", (r1.get("verdict"), r1.get("reasons"), r1.get("stderr_tail", "")[-800:])
    picks = r1.get("autotune_picks")
    assert isinstance(picks, list) and len(picks) == 1, picks
    assert sorted(k[0] for k, _ in picks[0]["picks"]) == [128, 256, 512], picks   # then Triton's dtypes
    again = fork_worker.request(_trusted(None), timeout=300)
    assert len(_tunings(again)) == 3, _tunings(again)          # without them a fresh child tunes every key
    seeded = _trusted(None)
    seeded["autotune_picks"] = picks
    r2 = fork_worker.request(seeded, timeout=300)
    assert r2.get("verdict") == "ok", (r2.get("verdict"), r2.get("reasons"))
    assert _tunings(r2) == [], _tunings(r2)
    assert r2["runtime_checks"].get("autotune_seeded") == 3, r2["runtime_checks"]
    # another kernel text tunes its own copy; the reference takes the picks
    with open(KERNEL) as f:
        source = f.read().replace("* 3.0", "* 3.0 + 0.0")
    other = _trusted({"source": source, "name": "tuned_scale.py"})
    other["autotune_picks"] = picks
    r3 = fork_worker.request(other, timeout=300)
    assert r3.get("verdict") == "ok", (r3.get("verdict"), r3.get("reasons"))
    assert len(_tunings(r3)) == 3, _tunings(r3)
    strict = _trusted(None, "strict")
    strict["autotune_picks"] = picks
    r4 = fork_worker.request(strict, timeout=300)
    assert r4.get("verdict") == "ok", (r4.get("verdict"), r4.get("reasons"))
    assert len(_tunings(r4)) == 3, _tunings(r4)
    assert "autotune_picks" not in r4 and "autotune_seeded" not in r4["runtime_checks"], r4.get("runtime_checks")
    bad = _trusted(None)
    bad["autotune_picks"] = [{"id": picks[0]["id"], "picks": [[picks[0]["picks"][0][0], 99], "x", [[256], True]]},
                             "junk", {"id": 3}]
    r5 = fork_worker.request(bad, timeout=300)
    assert r5.get("verdict") == "ok", (r5.get("verdict"), r5.get("reasons"))
    assert len(_tunings(r5)) == 3, _tunings(r5)                 # an index out of range picks nothing


def test_picks_with_a_non_finite_key_value_are_neither_reported_nor_taken():
    """A NaN or infinite key value would break kiln's strict JSON reading of the response line."""
    import sys
    sys.path.insert(0, os.path.join(REPO, "worker"))
    from kiln_worker import autotune_share as a
    ident = ("Autotuner", ("n",), ("x", "n"), ("cfg",), ("k",))
    a._PICKS[ident] = {(2.0, "torch.float32"): "cfg", (float("nan"), "torch.float32"): "cfg",
                       (float("inf"),): "cfg"}
    a._CONFIGS[ident] = ["cfg"]
    try:
        out = [e for e in a.export() if e["id"] == a._digest(ident)]
        assert out == [{"id": a._digest(ident), "picks": [[[2.0, "torch.float32"], 0]]}], out
        assert a.seed([{"id": "d", "picks": [[[1, float("nan")], 0], [[1, 2.5], 0], [[float("inf")], 0]]}]) == 1
    finally:
        a.forget()
