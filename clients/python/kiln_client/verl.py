"""verl's custom reward function: reward.custom_reward_function.path = .../kiln_client/verl.py,
name = compute_score (docs/serve.md, "verl").

The task comes from extra_info["task"] when present, else from ground_truth: a task name the server
loaded, or a reference module's source (inline, KernelBench style) when it holds a newline.
Configuration: $KILN_SERVE_URLS, $KILN_SERVE_TOKEN_FILE, $KILN_SERVE_TIMEOUT (seconds, default 600),
$KILN_REWARD (a preset name), or the same as keyword arguments (verl passes reward_kwargs through)."""

import asyncio
import logging
import os

from kiln_client.client import InfrastructureError, KilnClient, KilnError

log = logging.getLogger("kiln_client")

SCORE_KEYS = ("score", "kiln_correct", "kiln_speedup", "kiln_format", "kiln_hacked", "kiln_infra_error",
              "kiln_verdict", "kiln_error")

_clients = {}


def _client(urls=None, token_file=None, timeout=None):
    key = (urls, token_file, timeout)
    if key not in _clients:
        _clients[key] = KilnClient(urls=urls, token_file=token_file,
                                   timeout=float(timeout or os.environ.get("KILN_SERVE_TIMEOUT", 600)))
    return _clients[key]


def _task(ground_truth, extra_info):
    t = (extra_info or {}).get("task", ground_truth)
    if isinstance(t, str) and "\n" in t:
        return {"reference": t}
    return t


def _row(verdict="error", error="", reward=0.0, comp=None, infra=False, speedup=None):
    comp = comp or {}
    return {
        "score": float(reward),
        "kiln_correct": float(comp.get("correct", 0)),
        "kiln_speedup": float(speedup or 0.0),
        "kiln_format": float(comp.get("format", 0)),
        "kiln_hacked": float(comp.get("hacked", 0)),
        "kiln_infra_error": 1.0 if infra else 0.0,
        "kiln_verdict": verdict,
        "kiln_error": error,
    }


def compute_score(data_source, solution_str, ground_truth, extra_info=None, urls=None, token_file=None,
                  timeout=None, reward=None, mode=None, **kw):
    """One response's reward as a dict with SCORE_KEYS. An infrastructure failure (no server, timeout,
    a server-side error) gives score 0.0 with kiln_infra_error 1.0 and a warning in the log: filter
    such samples out rather than learning from them."""
    item = {"task": _task(ground_truth, extra_info), "response": solution_str or ""}
    if reward or os.environ.get("KILN_REWARD"):
        item["reward"] = reward or os.environ["KILN_REWARD"]
    if mode:
        item["mode"] = mode
    try:
        out = _client(urls, token_file, timeout).rewards([item])["items"][0]
    except (InfrastructureError, KilnError) as e:
        infra = isinstance(e, InfrastructureError)
        log.warning("kiln reward %s for data_source=%s: %s", "infrastructure failure" if infra else "refused",
                    data_source, e)
        return _row(error=str(e), infra=infra)
    if out.get("reward") is None:  # the server's own infrastructure error for this item
        log.warning("kiln reward infrastructure failure for data_source=%s: %s", data_source, out.get("error"))
        return _row(verdict=out.get("verdict", "error"), error=out.get("error", ""), infra=True)
    return _row(verdict=out.get("verdict", ""), reward=out["reward"], comp=out.get("components"),
                speedup=out.get("speedup"))


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kw):
    """The same in a worker thread (verl's async reward loop)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: compute_score(data_source, solution_str, ground_truth,
                                                                  extra_info, **kw))
