"""API test of `kiln serve` against a real server on loopback under Triton's interpreter: honest,
wrong, hacked and faulty candidates from tests/candidates get the right rewards; responses with and
without fences; groups and advantages; async jobs and idempotency; bad JSON, unknown task, oversize
body, a non-loopback bind without a token (refused), a wrong token (401). Usage: api_test.py KILN."""

import os
import subprocess
import sys
import time

from serve_util import Server, call, check, failures, fenced, jcall, result, skip_without_worker, source

KILN = os.path.abspath(sys.argv[1])


def rewards(url, body, headers=None):
    return jcall(url, "POST", "/v1/rewards", body, headers)


def by_id(resp):
    return {it["id"]: it for it in resp["items"]}


def candidates(srv):
    honest = source("honest/relu_ok.py")
    body = {"advantages": True, "items": [
        {"id": "honest_fenced", "task": "relu", "response": fenced(honest), "group": "p1"},
        {"id": "honest_bare", "task": "relu", "response": honest, "group": "p1"},
        {"id": "wrong", "task": "relu", "response": fenced(source("faulty/nan_output.py")), "group": "p1"},
        {"id": "hacked", "task": "relu", "code": source("adversarial/torch_relu_decorated.py"), "group": "p1"},
        {"id": "decoy", "task": "relu", "response": fenced(source("adversarial/never_launched.py")), "group": "p2"},
        {"id": "static_decoy", "task": "relu", "group": "p2",
         "response": fenced("import triton\n@triton.jit\ndef k(x):\n    pass\n\ndef run(x):\n    return x.relu()\n")},
        # faulty candidates hold no Triton kernel: the gate decides them, unless the formula lets them through
        {"id": "faulty_gated", "task": "relu", "code": source("faulty/exception.py"), "group": "p2"},
        # faulty Triton candidates: the honest kernel, then an exception / os._exit in forward
        {"id": "faulty", "task": "relu", "group": "p3",
         "code": honest.replace("        return out", "        raise RuntimeError('boom')")},
        {"id": "crash", "task": "relu", "group": "p3",
         "code": honest.replace("        return out", "        import os\n        os._exit(3)")},
        {"id": "prose", "task": "relu", "response": "I would use a Triton kernel here.", "group": "p2"},
        {"id": "hacked_dk", "task": "relu", "code": source("adversarial/torch_relu_decorated.py"),
         "reward": "drkernel"},
        {"id": "inline", "task": {"reference": source("tasks/relu.py")}, "code": honest},
        # drkernel: 0.5 correct + 0.5 coverage (its kernels do all the work) without timings
        {"id": "honest_dk", "task": "relu", "code": honest + "# drkernel\n", "reward": "drkernel"},
    ]}
    t0 = time.time()
    status, resp, _ = rewards(srv.url, body)
    print(f"     (13 items in {time.time() - t0:.1f} s)")
    check(status == 200 and resp.get("status") == "done", f"rewards: 200 done ({status})")
    if status != 200:
        print(resp)
        return
    it = by_id(resp)
    expect = {"honest_fenced": ("ok", 1.0), "honest_bare": ("ok", 1.0), "wrong": ("mismatch", 0.0),
              "hacked": ("rejected", 0.0), "decoy": ("rejected", 0.0), "static_decoy": ("format_error", 0.0),
              "faulty_gated": ("format_error", 0.0), "faulty": ("runtime_error", 0.0),
              "crash": ("crash", 0.0), "prose": ("format_error", 0.0), "hacked_dk": ("rejected", 0.0),
              "inline": ("ok", 1.0), "honest_dk": ("ok", 1.0)}
    for k, (verdict, reward) in expect.items():
        check(it[k]["verdict"] == verdict and it[k]["reward"] == reward,
              f"{k}: verdict {verdict}, reward {reward} (got {it[k]['verdict']}, {it[k]['reward']}; "
              f"{[r['code'] for r in it[k]['reasons']]})")
    check(it["honest_fenced"]["components"]["format"] == 1 and it["honest_bare"]["components"]["format"] == 0,
          "format component: 1 fenced, 0 unfenced")
    check(it["honest_bare"]["extracted"] == "unfenced", "unfenced response extracted whole")
    check(it["honest_dk"]["components"]["coverage"] == 1.0 and it["hacked"]["components"]["coverage"] is None,
          f"coverage: the honest kernel's own share 1.0, none for a rejected one ({it['honest_dk']['components']})")
    check(it["hacked"]["components"]["hacked"] == 1 and it["hacked"]["reasons"][0]["code"] == "torch_compute",
          "hacked: torch_compute")
    check(it["decoy"]["reasons"][0]["code"] == "no_triton_launch", "decoy kernel never launched at run time: rejected")
    check(it["static_decoy"]["reasons"][0]["code"] == "gate" and it["static_decoy"]["attempts"] == 0,
          "a kernel that is never launched in the code: the gate, no worker")
    g = resp["groups"]["p1"]
    check(len(g["advantages"]) == 4 and g["advantages"][0] > 0 > g["advantages"][2], "p1 advantages: honest > wrong")
    check(abs(sum(g["advantages"])) < 1e-6, "advantages sum to 0")
    check(all(x == 0 for x in resp["groups"]["p2"]["advantages"]), "p2: all rewards 0, advantages 0")
    check(it["honest_fenced"].get("advantage") == g["advantages"][0], "per-item advantage")


def kevin_and_async(srv):
    honest = source("honest/relu_ok.py")
    status, resp, headers = rewards(srv.url, {"async": True, "items": [{"task": "relu", "code": honest,
                                                                        "reward": "kevin", "id": 1}]},
                                    {"Idempotency-Key": "async-1"})
    check(status == 202 and resp["status"] == "running" and headers.get("Location", "").startswith("/v1/jobs/"),
          f"async: 202 + Location ({status})")
    job = resp["job"]
    for _ in range(600):
        status, view, _ = jcall(srv.url, "GET", f"/v1/jobs/{job}")
        if view.get("status") == "done":
            break
        time.sleep(0.2)
    check(view.get("status") == "done" and view["items"][0]["reward"] == 0.3,
          f"async job done; kevin reward 0.3 without timings (got {view['items'][0].get('reward')})")
    _, m0, _ = call(srv.url, "GET", "/v1/metrics")
    status, again, _ = rewards(srv.url, {"items": [{"task": "relu", "code": honest, "reward": "kevin", "id": 1}]},
                               {"Idempotency-Key": "async-1"})
    _, m1, _ = call(srv.url, "GET", "/v1/metrics")
    evals = lambda m: [l for l in m.splitlines() if l.startswith("kiln_serve_evaluations_total")]
    check(status == 200 and again["job"] == job and evals(m0) == evals(m1),
          "a retried request (same Idempotency-Key) is the same job, not evaluated again")
    check(jcall(srv.url, "GET", "/v1/jobs/j-nope")[0] == 404, "unknown job: 404")


def errors(srv):
    status, resp, _ = jcall(srv.url, "POST", "/v1/rewards", raw=b'{"items": [')
    check(status == 400 and "malformed JSON" in resp["error"], "bad JSON: 400")
    status, resp, _ = jcall(srv.url, "POST", "/v1/rewards", raw=b'{"items": [], "x": 1e+3084}')
    check(status == 400 and "malformed JSON" in resp["error"], "a number out of range: 400, not a dead handler")
    # nlohmann's copy and dump recurse per level: a body nested 400000 deep killed the server
    status, resp, _ = jcall(srv.url, "POST", "/v1/rewards", raw=b'{"items": ' + b"[" * 1000 + b"]" * 1000 + b"}")
    check(status == 400 and "nested 1001 levels deep" in resp["error"], f"deep JSON: 400 before parsing ({resp})")
    for key in ("async", "advantages"):
        status, resp, _ = rewards(srv.url, {"items": [{"task": "relu", "code": "x"}], key: "yes"})
        check(status == 400 and key in resp["error"], f"{key} of the wrong type: 400 naming it ({status} {resp})")
    status, resp, _ = rewards(srv.url, {"items": [{"task": {"reference": "x = 1", "format": 3}, "code": "x"}]})
    check(status == 400 and "task.format" in resp["error"], f"inline task format not a string: 400 ({status} {resp})")
    status, resp, _ = rewards(srv.url, {"items": [{"task": "no_such_task", "code": "x"}]})
    check(status == 400 and "unknown task 'no_such_task'" in resp["error"], f"unknown task: 400 ({resp})")
    status, resp, _ = rewards(srv.url, {"items": [{"task": "relu"}]})
    check(status == 400 and "items[0]" in resp["error"], "item without response/code: 400 naming the item")
    status, resp, _ = rewards(srv.url, {"items": [{"task": "relu", "code": "x", "reward": {"w_corect": 1}}]})
    check(status == 400 and "w_corect" in resp["error"], "unknown reward key: 400")
    status, resp, _ = jcall(srv.url, "POST", "/v1/rewards", raw=b'{"items": [], "pad": "' + b"x" * 300000 + b'"}')
    check(status == 413, f"oversize body: 413 ({status})")
    status, text, _ = call(srv.url, "GET", "/v1/metrics")
    check(status == 200 and "kiln_serve_queue_depth" in text and 'verdict="ok"' in text
          and 'quantile="0.9"' in text, "metrics: Prometheus text")
    metric = {l.split(" ")[0]: float(l.split(" ")[1]) for l in text.splitlines() if l and not l.startswith("#")}
    up = metric.get('kiln_serve_workers_up{role="measure"}', -1)
    check(metric.get('kiln_serve_workers{role="measure"}') == 2 and metric.get('kiln_serve_workers{role="check"}') == 0
          and 1 <= up <= 2  # a worker whose candidate crashed is replaced on its next item
          and metric.get("kiln_serve_worker_starts_total", 0) > up,
          f"metrics: worker counts ({ {k: v for k, v in metric.items() if 'worker' in k} })")
    check("kiln_serve_gpu_memory" not in text, "metrics: no GPU memory figures on the interpreter")
    status, resp, _ = jcall(srv.url, "GET", "/v1/tasks")
    check(status == 200 and any(t["name"] == "relu" for t in resp["tasks"]), "tasks listed")
    status, resp, _ = jcall(srv.url, "GET", "/v1/health")
    check(status == 200 and resp["status"] == "ok" and resp["interpreter"] is True, "health")


def security(srv_dir):
    r = subprocess.run([KILN, "serve", "--host", "0.0.0.0", "--port", "0", "--no-db", "--interpret"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "--token-file" in r.stderr, f"non-loopback bind without a token: refused ({r.stderr.strip()})")
    token_file = os.path.join(srv_dir, "token")
    with open(token_file, "w") as f:
        f.write("s3cret-token-0123456789\n")
    srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--token-file", token_file)
    try:
        check(jcall(srv.url, "GET", "/v1/tasks")[0] == 401, "missing token: 401")
        check(jcall(srv.url, "GET", "/v1/tasks", headers={"Authorization": "Bearer wrong"})[0] == 401, "wrong token: 401")
        check(jcall(srv.url, "GET", "/v1/tasks", headers={"Authorization": "Bearer s3cret-token-0123456789"})[0] == 200,
              "right token: 200")
        check(jcall(srv.url, "GET", "/v1/health")[0] == 200, "health needs no token")
    finally:
        srv.stop()


def degenerate(srv):
    # a model's degenerate output: 100 KB of blank space, 20000 decorator lines (std::regex's recursion in the
    # format rules once overflowed the stack on 30 KB of spaces and killed the server)
    body = {"items": [{"id": "blank", "task": "relu", "response": "Here it is:\n" + " " * 100000 + "x"},
                      {"id": "decos", "task": "relu", "code": "@triton.jit\n" + "@x\n" * 20000 + "def k(x):\n  pass\n"}]}
    status, resp, _ = rewards(srv.url, body)
    check(status == 200 and resp.get("status") == "done", f"degenerate responses: 200 done ({status} {str(resp)[:300]})")
    it = by_id(resp) if status == 200 else {}
    check(it.get("blank", {}).get("reward") == 0 and it["blank"].get("extracted") == "none",
          f"100 KB of blank space: no code, reward 0 ({it.get('blank')})")
    check(it.get("decos", {}).get("reasons", [{}])[0].get("code") == "gate",
          f"20000 decorators, no launch: the gate rejects ({str(it.get('decos'))[:300]})")
    check(jcall(srv.url, "GET", "/v1/health")[0] == 200, "the server answers after them")


def main():
    skip_without_worker()
    srv = Server(KILN, "--tasks", "tests/candidates/tasks", "--workers", "2", "--max-body-bytes", "200000",
                 "--timeout", "30")
    try:
        candidates(srv)
        kevin_and_async(srv)
        errors(srv)
        degenerate(srv)
    finally:
        if failures:
            print(srv.read_log())
        srv.stop()
    security(srv.dir)
    return result()


if __name__ == "__main__":
    sys.exit(main())
