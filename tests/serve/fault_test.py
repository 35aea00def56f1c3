"""Fault test of `kiln serve` (bounded, loopback only, stops by itself): a burst of 320 asynchronous
requests, most of them cheap (responses without code or without a launched kernel: decided by the
format rules) and 32 real evaluations (each a distinct candidate), with the worker processes killed
mid-run (SIGKILL) and the server itself stopped and restarted once on the same journal. Checks that
every accepted request is answered exactly once (one job per idempotency key, each item once in the
journal), none is lost, and no item that had its result before the restart is evaluated again.
Usage: fault_test.py KILN."""

import concurrent.futures as cf
import os
import signal
import sqlite3
import sys
import threading
import time

from serve_util import Server, jcall, fenced, skip_without_worker, source

KILN = os.path.abspath(sys.argv[1])
N_REQUESTS, N_REAL = 320, 32


def request_body(n):
    honest = source("honest/relu_ok.py")
    if n % 10 == 0 and n // 10 < N_REAL:  # a real evaluation, distinct per request (no cache hit)
        code = honest + f"\n# fault-item-{n}\n"
        if n % 20 == 0:
            code = code.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 1.0)")  # wrong
        return {"items": [{"id": f"r{n}", "task": "relu", "response": fenced(code)}]}
    if n % 2:
        return {"items": [{"id": f"c{n}", "task": "relu", "response": f"Sorry, no kernel ({n})."}]}
    return {"items": [{"id": f"c{n}", "task": "relu", "code": f"import torch\ndef f(x):\n    return x  # {n}\n"}]}


def submit(url_box, n, jobs, lock):
    """POSTs request n (async, its own idempotency key) until some server accepts it."""
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            status, resp, headers = jcall(url_box[0], "POST", "/v1/rewards", dict(request_body(n), **{"async": True}),
                                          {"Idempotency-Key": f"burst-{n}"}, timeout=30)
        except OSError:
            time.sleep(0.3)  # the server is restarting
            continue
        if status in (200, 202):
            with lock:
                jobs.setdefault(n, set()).add(resp["job"])
            return
        if status == 429:
            time.sleep(float(headers.get("Retry-After", 1)))
            continue
        raise AssertionError(f"request {n}: HTTP {status} {resp}")
    raise AssertionError(f"request {n}: not accepted within 120 s")


def real_rows(db):
    """Evaluations in the records, per marked candidate."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT c.source, COUNT(e.id) FROM candidates c JOIN evaluations e ON e.candidate_hash = c.hash "
                       "WHERE c.source LIKE '%# fault-item-%' GROUP BY c.hash").fetchall()
    con.close()
    out = {}
    for src, count in rows:
        n = int(src.rsplit("# fault-item-", 1)[1].split()[0])
        out[n] = count
    return out


def journal(db):
    con = sqlite3.connect(db)
    done = {job for (job,) in con.execute("SELECT job_id FROM serve_items")}
    items = con.execute("SELECT job_id, idx, COUNT(*) FROM serve_items GROUP BY job_id, idx").fetchall()
    con.close()
    return done, items


def main():
    skip_without_worker()
    t0 = time.time()
    srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--workers", "2", "--batch-max", "8", "--timeout", "30")
    db, workdir = srv.db, srv.dir
    url_box = [srv.url]
    jobs, lock = {}, threading.Lock()
    failures = []
    killed = 0
    with cf.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(submit, url_box, n, jobs, lock) for n in range(N_REQUESTS // 2)]
        cf.wait(futures)
        # Workers killed mid-run, twice, while real evaluations are queued or running.
        for _ in range(2):
            time.sleep(3)
            for pid in srv.children():
                os.kill(pid, signal.SIGKILL)
                killed += 1
        futures += [pool.submit(submit, url_box, n, jobs, lock) for n in range(N_REQUESTS // 2, N_REQUESTS)]
        # Stop once a few real items have their result (so the restart has finished work to keep).
        stop_by = time.time() + 40
        while time.time() < stop_by and sum(1 for n, c in real_rows(db).items() if c) < 4:
            time.sleep(0.5)
        srv.stop(signal.SIGTERM)  # the server goes away with work accepted and unfinished
        before_rows = real_rows(db)
        done_before, _ = journal(db)
        srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--workers", "2", "--batch-max", "8", "--timeout", "30",
                     db=db, workdir=workdir)
        url_box[0] = srv.url
        for f in futures:
            f.result()
    try:
        # A retried request (same key) after the restart is the same job.
        for n in (0, 1, 10, N_REQUESTS - 1):
            status, resp, _ = jcall(srv.url, "POST", "/v1/rewards", dict(request_body(n), **{"async": True}),
                                    {"Idempotency-Key": f"burst-{n}"})
            jobs[n].add(resp["job"])
        answers = {}
        deadline = time.time() + 150
        pending = {n: next(iter(j)) for n, j in jobs.items()}
        while pending and time.time() < deadline:
            for n, job in list(pending.items()):
                status, resp, _ = jcall(srv.url, "GET", f"/v1/jobs/{job}")
                if status == 200 and resp.get("status") == "done":
                    answers[n] = resp
                    del pending[n]
            time.sleep(0.5)
        after_rows = real_rows(db)
        _, items = journal(db)
    finally:
        srv.stop()

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    check(len(jobs) == N_REQUESTS, f"all {N_REQUESTS} requests accepted ({len(jobs)})")
    check(all(len(j) == 1 for j in jobs.values()), "one job per idempotency key, across the restart")
    check(not pending, f"every job answered ({len(pending)} left)")
    check(all(len(a["items"]) == 1 for a in answers.values()), "each answer holds its one item")
    check(len(items) == N_REQUESTS and all(c == 1 for _, _, c in items), f"journal: one result per item ({len(items)})")
    real = {n: a["items"][0] for n, a in answers.items() if a["items"][0]["id"].startswith("r")}
    check(len(real) == N_REAL, f"{N_REAL} real evaluations answered ({len(real)})")
    # An item whose worker was killed under it runs once more; killed again, it gets a verdict that is
    # never a wrong answer's (error: reward null) or crash. Every other item gets its true verdict.
    right = all(r["verdict"] == ("mismatch" if n % 20 == 0 else "ok")
                or (r["attempts"] == 2 and (r["verdict"] == "crash" or (r["verdict"] == "error" and r["reward"] is None)))
                for n, r in real.items())
    if not right:
        print({n: (r["verdict"], [x["code"] for x in r["reasons"]], r["attempts"]) for n, r in real.items()})
    check(right, "real evaluations: honest ok, wrong mismatch (or, killed twice, crash/error)")
    check(all(r["attempts"] <= 2 for r in real.values()), "no item ran more than twice")
    done_jobs = {next(iter(jobs[n])) for n in real}
    again = [n for n in real if next(iter(jobs[n])) in done_before and after_rows.get(n, 0) != before_rows.get(n, 0)]
    check(not again, f"no item answered before the restart was evaluated again ({again})")
    check(killed > 0, f"workers were killed mid-run ({killed})")
    print(f"{N_REQUESTS} requests, {killed} workers killed, 1 restart, {time.time() - t0:.0f} s; "
          f"{len(done_before & done_jobs)} real items done before the restart")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
