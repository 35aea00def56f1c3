"""torch's process-wide settings change how fast the reference runs: a candidate that turns off cuDNN or
flash attention (here through getattr/setattr, which the static checks cannot see) slows the reference it is
timed against. The worker compares the settings with their values before the candidate, reports
`global_state` and puts them back (a shared worker's next evaluation is unaffected)."""
import os

from workerproc import CANDIDATES, Worker, codes, eval_request

RELU = os.path.join(CANDIDATES, "honest", "relu_ok.py")


def _req(lines):
    src = open(RELU).read().replace("import triton.language as tl\n", "import triton.language as tl\n" + lines, 1)
    req = eval_request(RELU)
    req["candidate"] = {"source": src, "name": "settings.py"}
    return req


def test_settings_changed_at_import_are_rejected_and_restored():
    w = Worker(isolation="shared")
    try:
        r = w.request(_req("setattr(getattr(getattr(torch, 'backends'), 'cudnn'), 'enabled', False)\n"
                           "getattr(torch.backends.cuda, 'enable_flash_sdp')(False)\n"))
        assert r["verdict"] == "rejected" and "global_state" in codes(r), r
        assert any("cudnn.enabled" in x["message"] for x in r["reasons"]), r
        ok = w.request(eval_request(RELU))          # same process: the settings were put back
        assert ok["verdict"] == "ok" and "global_state" not in codes(ok), ok
    finally:
        w.close()


def test_settings_changed_while_running_are_rejected(fork_worker):
    src = open(RELU).read().replace("        out = torch.empty_like(x)\n",
                                    "        torch.set_num_threads(torch.get_num_threads() + 1)\n        out = torch.empty_like(x)\n", 1)
    req = eval_request(RELU)
    req["candidate"] = {"source": src, "name": "threads.py"}
    r = fork_worker.request(req)
    assert r["verdict"] == "rejected" and "global_state" in codes(r), r
