"""Fault test of `kiln serve` (bounded, loopback only, stops by itself): a burst of 320 asynchronous
requests, most of them cheap (responses without code or without a launched kernel: decided by the
format rules), every 20th a real one with two distinct candidates (32 evaluations; no result cache,
so only the journal keeps a finished item from running again), with the worker processes SIGKILLed
twice mid-run and the server stopped (once a two-item job is half done) and restarted on the same
journal. Checks that every accepted request is answered exactly once (one job per idempotency key,
each item once in the journal), none is lost, and no item answered before the restart is evaluated
again (the half-done job's finished item included).
Usage: fault_test.py KILN."""

import concurrent.futures as cf
import http.client
import json
import os
import signal
import sqlite3
import sys
import threading
import time

from serve_util import Server, check, fenced, jcall, result, skip_without_worker, source

KILN = os.path.abspath(sys.argv[1])
# bench/serve/fault_burst.sh runs the 1000-request version (KILN_SERVE_FAULT_REQUESTS=1000).
N_REQUESTS = int(os.environ.get("KILN_SERVE_FAULT_REQUESTS", 320))
N_REAL = 2 * ((N_REQUESTS + 19) // 20)  # real items
ANSWER_S = float(os.environ.get("KILN_SERVE_FAULT_ANSWER_S", 150))  # after the restart, to answer every job


def request_body(n):
    honest = source("honest/relu_ok.py")
    if n % 20 == 0:  # real evaluations: two distinct candidates (no cache hit), often split across batches
        items = []
        for part in "ab":
            code = honest + f"\n# fault-item-{n}{part}\n"
            if part == "a" and n % 40 == 0:
                code = code.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 1.0)")  # wrong
            items.append({"id": f"r{n}{part}", "task": "relu", "response": fenced(code)})
        return {"items": items}
    if n % 2:
        return {"items": [{"id": f"c{n}", "task": "relu", "response": f"Sorry, no kernel ({n})."}]}
    return {"items": [{"id": f"c{n}", "task": "relu", "code": f"import torch\ndef f(x):\n    return x  # {n}\n"}]}


refused = [0]  # 429 answers (the client waited Retry-After and sent the request again)


def submit(url_box, n, jobs, lock):
    """POSTs request n (async, its own idempotency key) until some server accepts it."""
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            status, resp, headers = jcall(url_box[0], "POST", "/v1/rewards", dict(request_body(n), **{"async": True}),
                                          {"Idempotency-Key": f"burst-{n}"}, timeout=30)
        except (OSError, http.client.HTTPException):
            # the server is restarting (a response it was sending when stopped arrives cut: IncompleteRead);
            # the same idempotency key sent again is the same job
            time.sleep(0.3)
            continue
        if status in (200, 202):
            with lock:
                jobs.setdefault(n, set()).add(resp["job"])
            return
        if status == 429:
            refused[0] += 1
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
        out[src.rsplit("# fault-item-", 1)[1].split()[0]] = count
    return out


def journal(db):
    """(ids of the items with a journalled result, [(job, index, results)])."""
    con = sqlite3.connect(db)
    ids = {json.loads(r).get("id") for (r,) in con.execute("SELECT result_json FROM serve_items")}
    items = con.execute("SELECT job_id, idx, COUNT(*) FROM serve_items GROUP BY job_id, idx").fetchall()
    con.close()
    return ids, items


def half_done(db):
    """True when some two-item job has exactly one result journalled (the restart then has a job
    with finished work and unfinished work) and a few real items are done."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT result_json FROM serve_items").fetchall()
    con.close()
    real = [json.loads(r).get("id") for (r,) in rows]
    real = [i for i in real if i and i.startswith("r")]
    by_req = {}
    for i in real:
        by_req.setdefault(i[:-1], []).append(i)
    return len(real) >= 4 and any(len(v) == 1 for v in by_req.values())


def main():
    skip_without_worker()
    t0 = time.time()
    srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--workers", "2", "--batch-max", "3", "--timeout", "30", "--no-cache")
    db, workdir = srv.db, srv.dir
    url_box = [srv.url]
    jobs, lock = {}, threading.Lock()
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
        stop_by = time.time() + 120  # on a loaded machine the first real results take a while
        while time.time() < stop_by and not half_done(db):
            time.sleep(0.1)
        srv.stop(signal.SIGTERM)  # the server goes away with work accepted and unfinished
        before_rows = real_rows(db)
        done_before, _ = journal(db)
        srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--workers", "2", "--batch-max", "3", "--timeout", "30", "--no-cache",
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
        deadline = time.time() + ANSWER_S
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

    check(len(jobs) == N_REQUESTS, f"all {N_REQUESTS} requests accepted ({len(jobs)})")
    check(all(len(j) == 1 for j in jobs.values()), "one job per idempotency key, across the restart")
    check(not pending, f"every job answered ({len(pending)} left)")
    check(all(len(a["items"]) == len(request_body(n)["items"]) for n, a in answers.items()),
          "each answer holds its items")
    n_items = sum(len(request_body(n)["items"]) for n in range(N_REQUESTS))
    check(len(items) == n_items and all(c == 1 for _, _, c in items), f"journal: one result per item ({len(items)})")
    real = {it["id"][1:]: dict(it, job=a["job"]) for a in answers.values() for it in a["items"] if it["id"].startswith("r")}
    check(len(real) == N_REAL, f"{N_REAL} real evaluations answered ({len(real)})")
    # An item whose worker was killed under it runs once more; killed again, it gets a verdict that is
    # never a wrong answer's (error: reward null) or crash. Every other item gets its true verdict.
    right = all(r["verdict"] == ("mismatch" if k.endswith("a") and int(k[:-1]) % 40 == 0 else "ok")
                or (r["attempts"] == 2 and (r["verdict"] == "crash" or (r["verdict"] == "error" and r["reward"] is None)))
                for k, r in real.items())
    if not right:
        print({n: (r["verdict"], [x["code"] for x in r["reasons"]], r["attempts"]) for n, r in real.items()})
    check(right, "real evaluations: honest ok, wrong mismatch (or, killed twice, crash/error)")
    check(all(r["attempts"] <= 2 for r in real.values()), "no item ran more than twice")
    journalled = [k for k in real if "r" + k in done_before]
    again = [k for k in journalled if after_rows.get(k, 0) != before_rows.get(k, 0)]
    check(journalled, "some real items were answered before the restart")
    split = [k for k in journalled if "r" + k[:-1] + ("b" if k.endswith("a") else "a") not in done_before]
    print(f"     {len(split)} journalled item(s) whose job was unfinished at the restart: {split}")
    check(not again, f"no item answered before the restart was evaluated again ({again})")
    check(killed > 0, f"workers were killed mid-run ({killed})")
    def latencies(real_only):
        return sorted(it["times"]["total_s"] for a in answers.values() for it in a["items"]
                      if isinstance(it.get("times"), dict) and "total_s" in it["times"]
                      and (not real_only or it["id"].startswith("r")))

    def q(xs, p):
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")
    print(f"{N_REQUESTS} requests ({n_items} items), {len(jobs)} accepted, {len(answers)} answered, "
          f"{len(pending)} lost, {refused[0]} 429s retried, {killed} workers killed, 1 restart, "
          f"{time.time() - t0:.0f} s; {len(journalled)} real items journalled before the restart")
    for what, xs in (("all items (most decided by the format rules at once)", latencies(False)),
                     ("real evaluations", latencies(True))):
        print(f"latency of {what}, server side (acceptance, or the restart, to result): p50 {q(xs, 0.5):.2f} s, "
              f"p99 {q(xs, 0.99):.2f} s, max {q(xs, 1):.2f} s over {len(xs)}")
    return result()


if __name__ == "__main__":
    sys.exit(main())
