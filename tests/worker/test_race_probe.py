"""The race probe (exec/race_probe.h, evaluate._probe_run): a reference whose programs race to store different
values in one slot is judged on the slots it determines. Its reruns agree with one another (programs run in
order of their ids under the interpreter, and nearly so on a GPU), so without the probe a candidate that orders
its programs otherwise is taken for wrong; the probe (the reference's programs started in reverse order, which
kiln makes from the task's file and sends as `reference_probe`) shows the raced slots. Slots no race touches are
still compared. The end-to-end path (kiln attaching the probe) runs through tests/candidates (scatter_race_*)."""
import os

from workerproc import CANDIDATES, REPO, codes

TASK = os.path.join(CANDIDATES, "tasks", "tbg_scatter_race.py")
KILN_TASK = os.path.join(REPO, "tests", "worker", "data", "scatter_race")


def _read(p):
    with open(p) as f:
        return f.read()


def _reversed(text):
    """What exec::ReversedProgramOrder makes of these modules (each has one program_id call, tl.program_id(0))."""
    assert text.count("tl.program_id(0)") == 1
    return text.replace("tl.program_id(0)", "(tl.num_programs(0) - 1 - tl.program_id(0))")


def _req(task, cand_name, probe=None):
    cand = _read(os.path.join(CANDIDATES, cand_name))
    r = {"op": "eval", "task": task, "candidate": {"source": cand, "name": "cand.py"}, "mode": "check",
         "trials": 2, "limits": {"timeout_s": 60}}
    if probe is not None:
        r["reference_probe"] = {"source": probe}
    return r


TBG = {"format": "tritonbench_g", "name": "tbg_scatter_race", "path": TASK}
KILN = {"format": "kiln", "name": "scatter_race", "path": os.path.join(KILN_TASK, "scatter_race.py"),
        "bench_path": os.path.join(KILN_TASK, "bench.py"), "entry": "scatter_race"}


def test_outputs_of_a_racing_reference(fork_worker):
    honest = "honest/scatter_race_reversed_ok.py"
    r = fork_worker.request(_req(TBG, honest))
    assert r["verdict"] == "mismatch" and "value_mismatch" in codes(r), r   # reruns alone: the race is not seen
    probe = _reversed(_read(TASK))
    r = fork_worker.request(_req(TBG, honest, probe))
    assert r["verdict"] == "ok", r.get("reasons")
    case = r["cases"][0]
    assert case["unstable_elements"] == 16 and "reverse order" in case["note"], case
    r = fork_worker.request(_req(TBG, "adversarial/scatter_race_wrong_slot.py", probe))
    assert r["verdict"] == "mismatch" and "value_mismatch" in codes(r), r.get("reasons")


def test_in_place_changes_of_a_racing_reference(fork_worker):
    honest = "honest/scatter_race_inplace_ok.py"
    r = fork_worker.request(_req(KILN, honest))
    assert r["verdict"] == "mismatch" and "input_side_effect_mismatch" in codes(r), r
    probe = _reversed(_read(KILN["path"]))
    r = fork_worker.request(_req(KILN, honest, probe))
    assert r["verdict"] == "ok", r.get("reasons")
    case = r["cases"][0]
    assert case["unstable_input_elements"] == 16 and case["note"].count("reverse order") == 1, case
    r = fork_worker.request(_req(KILN, "adversarial/scatter_race_inplace_wrong_slot.py", probe))
    assert r["verdict"] == "mismatch" and "input_side_effect_mismatch" in codes(r), r.get("reasons")


def test_a_probe_that_fails_is_left_out(fork_worker):
    honest = "honest/scatter_race_reversed_ok.py"
    # does not load: a note, and the verdict reruns alone give
    r = fork_worker.request(_req(TBG, honest, "def (:\n"))
    assert r["verdict"] == "mismatch" and "value_mismatch" in codes(r), r
    # loads, then raises when run: dropped for the reference itself
    broken = _read(TASK).replace("    n = x.numel()\n", "    n = x.numel()\n    raise RuntimeError('probe')\n", 1)
    r = fork_worker.request(_req(TBG, honest, broken))
    assert r["verdict"] == "mismatch" and "value_mismatch" in codes(r), r


def test_the_task_against_itself_needs_no_probe_run(fork_worker):
    req = _req(TBG, "honest/scatter_race_reversed_ok.py", _reversed(_read(TASK)))
    req["candidate"] = None   # the task's own code: same order, same winners, nothing rerun
    r = fork_worker.request(req)
    assert r["verdict"] == "ok" and "unstable_elements" not in r["cases"][0], r
