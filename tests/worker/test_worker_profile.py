"""KILN_WORKER_PROFILE (docs/eval.md): each evaluation's Python profile is written into that folder, in fork and
shared isolation, without changing the verdict; unset, nothing is written."""
import os

from workerproc import CANDIDATES, Worker, eval_request

RELU = os.path.join(CANDIDATES, "honest", "relu_ok.py")


def _profiled(tmp_path, isolation):
    d = tmp_path / f"prof_{isolation}"
    w = Worker(isolation=isolation, extra_env={"KILN_WORKER_PROFILE": str(d)})
    try:
        req = eval_request(RELU)
        req["id"] = "relu/req 1"
        r = w.request(req)
    finally:
        w.close()
    assert r["verdict"] == "ok", r
    return d


def test_profile_written_per_request(tmp_path):
    for isolation in ("fork", "shared"):
        d = _profiled(tmp_path, isolation)
        names = sorted(os.listdir(d))
        stats = [n for n in names if n.endswith(".pstats")]
        texts = [n for n in names if n.endswith(".txt")]
        assert len(stats) == 1 and len(texts) == 1, names
        assert stats[0].startswith("relu_req_1."), names       # the id, made a safe file name
        text = (d / texts[0]).read_text()
        assert "cumulative" in text and "evaluate.py" in text, text[:2000]   # the evaluator's own frames


def test_no_profile_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("KILN_WORKER_PROFILE", raising=False)
    monkeypatch.chdir(tmp_path)
    w = Worker(isolation="shared")
    try:
        assert w.request(eval_request(RELU))["verdict"] == "ok"
    finally:
        w.close()
    assert not any(n.endswith((".pstats", ".txt")) for n in os.listdir(tmp_path))
