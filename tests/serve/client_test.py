"""The Python client (clients/python/kiln_client) against two real `kiln serve` on loopback: verl's
compute_score (the same keys every time; an infrastructure failure flagged and logged, never a
silent wrong answer; its own timeout), the async form, TRL's reward function (plain and
conversational completions), and load spread over both servers. Usage: client_test.py KILN."""

import asyncio
import logging
import os
import sys
import threading

from serve_util import Server, call, check, fenced, result, skip_without_worker, source

import kiln_client
from kiln_client import KilnClient, SCORE_KEYS, compute_score, compute_score_async, make_trl_reward

KILN = os.path.abspath(sys.argv[1])


class Captured(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main():
    skip_without_worker()
    cap = Captured()
    logging.getLogger("kiln_client").addHandler(cap)
    a = Server(KILN, "--tasks", "tests/candidates/tasks", "--no-db")
    b = Server(KILN, "--tasks", "tests/candidates/tasks", "--no-db")
    try:
        urls = f"{a.url},{b.url}"
        honest = source("honest/relu_ok.py")
        s = compute_score("kiln/relu", fenced(honest), "relu", urls=urls)
        check(set(s) == set(SCORE_KEYS) and s["score"] == 1.0 and s["kiln_infra_error"] == 0.0,
              f"verl: honest scores 1.0 ({s})")
        w = compute_score("kiln/relu", "no code at all", "relu", urls=urls)
        check(set(w) == set(SCORE_KEYS) and w["score"] == 0.0 and w["kiln_infra_error"] == 0.0
              and w["kiln_verdict"] == "format_error", "verl: no code scores 0.0, not an infrastructure error")
        inline = compute_score("kb", honest, source("tasks/relu.py"), extra_info={}, urls=urls)
        check(inline["score"] == 1.0, "verl: ground_truth holding the reference source (inline task)")
        dead = compute_score("kiln/relu", fenced(honest), "relu", urls="http://127.0.0.1:9", timeout=2)
        check(set(dead) == set(SCORE_KEYS) and dead["kiln_infra_error"] == 1.0 and dead["kiln_error"],
              "verl: no server -> kiln_infra_error 1, same keys")
        check(any("infrastructure failure" in l for l in cap.lines), "verl: the infrastructure failure is logged")
        slow = compute_score("kiln/relu", fenced(honest + "\n# slow\n"), "relu", urls=a.url, timeout=0.3)
        check(slow["kiln_infra_error"] == 1.0, "verl: the client's own timeout is an infrastructure failure")
        bad = compute_score("kiln/relu", "x", "no_such_task", urls=urls)
        check(bad["kiln_infra_error"] == 0.0 and "unknown task" in bad["kiln_error"],
              "verl: a refused request (unknown task) says why")
        asy = asyncio.run(compute_score_async("kiln/relu", fenced(honest), "relu", urls=urls))
        check(asy["score"] == 1.0, "verl: async form")

        trl = make_trl_reward(client=KilnClient(urls))
        r = trl(["p", "p"], [fenced(honest), "nothing"], task=["relu", "relu"])
        check(r == [1.0, 0.0], f"TRL: rewards per completion ({r})")
        conv = trl(["p"], [[{"role": "assistant", "content": fenced(honest)}]], task=["relu"])
        check(conv == [1.0], "TRL: conversational completions")
        down = make_trl_reward(client=KilnClient("http://127.0.0.1:9", timeout=1))(["p"], ["x"], task=["relu"])
        check(down == [None], "TRL: an infrastructure failure is None, not 0")

        client = KilnClient(urls)
        threads = [threading.Thread(target=client.rewards, args=([{"task": "relu", "response": f"no code {i}"}],))
                   for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        counts = []
        for srv in (a, b):
            text = call(srv.url, "GET", "/v1/metrics")[1]
            counts.append(int(float(next(l.split()[1] for l in text.splitlines()
                                         if l.startswith("kiln_serve_jobs_accepted_total")))))
        check(min(counts) >= 3, f"load spread over both servers (jobs accepted {counts})")
        check(all(v == 0 for v in client.outstanding().values()), "no request left outstanding")
    finally:
        a.stop()
        b.stop()
    return result()


if __name__ == "__main__":
    sys.exit(main())
