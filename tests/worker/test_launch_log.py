"""platform.LaunchLog's per-name counts: a kernel's `launches` fact is kept in O(1) per launch (a scan of every
launch recorded so far made each launch slower than the last: an autotuner's thousands of timing launches
took ~0.6 ms each on an H200), and agrees with the launches recorded since the last reset."""
from kiln_worker import platform as plat


def test_counts_follow_the_recorded_launches_and_reset():
    log = plat.LaunchLog()
    for name in ["a", "b", "a", "a"]:
        log.append({"name": name, "own": True})
    assert log.counts == {"a": 3, "b": 1}
    assert log.counts["a"] == sum(1 for l in log.launches if l["name"] == "a")
    assert log.own_count() == 4
    log.reset()
    assert log.launches == [] and log.counts == {} and log.counts["a"] == 0


def test_kernel_facts_take_the_count(monkeypatch):
    log = plat.LaunchLog()
    monkeypatch.setattr(plat, "LAUNCHES", log)
    for _ in range(3):
        rec = {"name": "k", "own": True, "grid": [4, 1, 1], "constexprs": {"BLOCK": 64}}
        log.append(rec)
        plat._note_kernel(rec, None)
    assert log.kernels["k"]["launches"] == 3 and log.kernels["k"]["grid"] == [4, 1, 1]
    plat._note_kernel({"name": "k", "own": True, "grid": None, "constexprs": {}}, None)   # compiled, not launched
    assert log.kernels["k"]["launches"] == 3

