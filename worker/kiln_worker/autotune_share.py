"""One autotune pick per key for a candidate that is the task's own code (issue 16).

A candidate and its reference are two loaded copies of their modules, so every `@triton.autotune` kernel
benchmarks all its configs once per copy at every new key (each perf size): TritonBench-G's slow autotuners
(matrix_vector_multip: 48 configs x 18 sizes) spent most of their `--mode time` evaluation tuning twice.

When the candidate's source is the task's file itself (`candidate: null`, or the same bytes), both copies are
trusted code, identical kernel by kernel: here each candidate autotuner takes its reference twin's pick table
(`Autotuner.cache`, one dict), so whichever copy meets a key first tunes it and the other uses that pick. For
a kernel the same source, configs and key, this is the pick the second copy would make up to timing noise;
a plain script that runs the module twice also tunes once. Any other candidate keeps its own tuning: were the
tables shared with untrusted code, a candidate could plant a slow pick for the reference (the reason Triton's
own disk cache, `cache_results` / TRITON_CACHE_AUTOTUNING, is not used: a candidate can write its files).

Across requests (`keep`): a warm worker (kiln optimize's, `--isolation shared`) loads the task's reference, and
in verification the original as the timing baseline, afresh for every request, and each copy of an autotuned
kernel tuned every key again: on an H200, bmm_optimized's original took 26 s to tune its three perf sizes,
and the verification of a 2.65x finalist, which tunes the reference and the original again, ran past the
90 s hard end. In trusted requests only (the user's kernel and kiln's rewrites of it, as the perf inputs'
cache in tasks.py) these trusted copies take the process's pick table for their kernel, so a key is tuned
once per worker, as in a long-running program. A strict (untrusted) request forgets every table first and
never reads or writes one.
"""
from __future__ import annotations

import math


def _classes():
    """Triton's Autotuner and JITFunction, imported when first needed (the worker sets up the interpreter
    before Triton is imported), or (None, None) without Triton."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
        return Autotuner, JITFunction
    except Exception:  # noqa: BLE001 - no Triton: nothing to share
        return None, None


def _unwrap(obj, cls, depth=8):
    """`obj` or the first object of class `cls` along its `.fn` chain (heuristics and autotune wrappers)."""
    for _ in range(depth):
        if obj is None or cls is None:
            return None
        if isinstance(obj, cls):
            return obj
        obj = getattr(obj, "fn", None)
    return None


def _kernel_key(at):
    """What identifies the kernel an autotuner runs: the JIT function's source key (compiled runs) and the
    Python function's code at the end of the `.fn` chain (the interpreter's InterpretedFunction has no key)."""
    jit = _unwrap(at.fn, _classes()[1])
    obj = at.fn
    for _ in range(8):
        if getattr(obj, "fn", None) is None:
            break
        obj = obj.fn
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    return (jit.cache_key if jit is not None else None, getattr(obj, "__qualname__", ""), code.co_code,
            repr(code.co_consts), code.co_names)


def _twins(a, b) -> bool:
    """The same kernel tuned the same way: key, argument names, configs and the kernel's code."""
    ia = _identity(a)
    return ia is not None and ia == _identity(b)


# Pick tables of trusted autotuned kernels, by identity (_identity), kept across the requests of one process.
_PICKS = {}
# The configs (as str) of each kept identity, for export: a pick travels as its index among them.
_CONFIGS = {}
# Picks handed in by a trusted request (seed), by identity digest: [(key tuple, config index)], taken by the
# first keep() of a kernel with that digest.
_SEEDS = {}


def _identity(at):
    """What makes two autotuners' picks interchangeable: the kernel (_kernel_key), its key, argument names
    and configs. None when it cannot be told."""
    try:
        k = _kernel_key(at)
        if k is None:
            return None
        return (type(at).__name__, tuple(at.keys), tuple(at.arg_names), tuple(str(c) for c in at.configs), k)
    except Exception:  # noqa: BLE001 - anything unexpected: not kept
        return None


def keep(mod) -> list:
    """Each autotuner of `mod` (module globals; trusted code only) takes the process's pick table for its
    kernel, or leaves its own there for later copies. -> the names kept."""
    names = []
    tuner = _classes()[0]
    if tuner is None or mod is None:
        return names
    for name, obj in list(vars(mod).items()):
        a = _unwrap(obj, tuner)
        ident = _identity(a) if a is not None else None
        if ident is None:
            continue
        table = _PICKS.setdefault(ident, a.cache)
        if table is not a.cache:
            table.update(a.cache)
            a.cache = table
        _CONFIGS.setdefault(ident, [str(c) for c in a.configs])
        for key, idx in _SEEDS.pop(_digest(ident), []):
            if 0 <= idx < len(a.configs):
                table.setdefault(key, a.configs[idx])
        names.append(name)
    return names


def forget():
    """Drops every kept pick table and seed (a strict request: untrusted code runs in this process)."""
    _PICKS.clear()
    _CONFIGS.clear()
    _SEEDS.clear()


# Across worker processes (issue 21): a worker kiln optimize restarts (a candidate cut at its deadline kills
# it) lost the original's picks, and the next request tuned every key again: on an H200,
# int8_matmul_quantization's original took 68 s to tune its three perf sizes, and the verification of a 1.38x
# finalist, in a fresh worker, ran into the hard end. So trusted responses carry the kept picks (export) and
# kiln sends them back in its next trusted requests (seed): they travel through kiln, never through a file a
# candidate could write, and a strict request neither reads nor reports them.
def _digest(ident) -> str:
    import hashlib
    return hashlib.sha256(repr(ident).encode("utf-8", "replace")).hexdigest()[:32]


def _json_scalar(v) -> bool:
    """A key value that survives strict JSON both ways: a string, a boolean, an integer or a finite float."""
    return isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v))


def export() -> list:
    """The kept picks as JSON: [{"id": digest, "picks": [[key values], config index], ...]}]; keys whose values
    are not strings, booleans or finite numbers are left out (a NaN would break kiln's JSON)."""
    out = []
    for ident, table in _PICKS.items():
        strs = _CONFIGS.get(ident)
        if not strs:
            continue
        picks = []
        for key, cfg in list(table.items()):
            if not isinstance(key, tuple) or not all(_json_scalar(v) for v in key):
                continue
            try:
                idx = strs.index(str(cfg))
            except ValueError:
                continue
            picks.append([list(key), idx])
        if picks:
            out.append({"id": _digest(ident), "picks": picks})
    return out


def seed(entries) -> int:
    """Takes picks exported by an earlier trusted response (export): each is applied when a kernel with that
    identity is kept (keep), unless it already has a pick for the key. Malformed entries are ignored. -> the
    number of picks taken."""
    n = 0
    if not isinstance(entries, list):
        return n
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("id"), str) or not isinstance(e.get("picks"), list):
            continue
        for p in e["picks"]:
            if (isinstance(p, list) and len(p) == 2 and isinstance(p[0], list) and isinstance(p[1], int)
                    and not isinstance(p[1], bool)
                    and all(_json_scalar(v) for v in p[0])):
                _SEEDS.setdefault(e["id"], []).append((tuple(p[0]), p[1]))
                n += 1
    return n


def share(ref_mod, cand_mod) -> list:
    """Gives each autotuner of `cand_mod` (module globals) its twin's pick table in `ref_mod`, the global of the
    same name. Only for a candidate whose source is the task's own. -> the names shared."""
    names = []
    tuner = _classes()[0]
    if tuner is None or ref_mod is None or cand_mod is None:
        return names
    for name, obj in list(vars(ref_mod).items()):
        a = _unwrap(obj, tuner)
        if a is None:
            continue
        b = _unwrap(getattr(cand_mod, name, None), tuner)
        if b is None or b is a or not _twins(a, b):
            continue
        a.cache.update(b.cache)
        b.cache = a.cache
        names.append(name)
    return names


def _tuners(mod):
    """(kernel name, autotuner) for each autotuner among `mod`'s globals (heuristics wrappers unwrapped)."""
    tuner = _classes()[0]
    if tuner is None or mod is None:
        return []
    out = []
    for name, obj in list(vars(mod).items()):
        a = _unwrap(obj, tuner)
        if a is not None and isinstance(getattr(a, "cache", None), dict):
            out.append((getattr(getattr(a, "base_fn", None), "__name__", name), a))
    return out


def tuned_keys(mod) -> dict:
    """The keys each autotuner of `mod` has picked a config for, by kernel name (trusted code only)."""
    return {name: set(a.cache) for name, a in _tuners(mod)}


def keys_added(mod, before) -> dict:
    """The keys each autotuner of `mod` met since `before` (tuned_keys), by kernel name, as
    {"names": the key's parameter names, "keys": [[their values], ...]} (kiln optimize pins the shapes it
    measured to the config it measured faster there). Triton's key is the key parameters' values and then the
    arguments' dtypes; only keys whose parameters' values are all numbers or booleans are reported (a key
    parameter not passed shifts a dtype string into them)."""
    out = {}
    for name, a in _tuners(mod):
        names = [k for k in a.keys if isinstance(k, str)]
        if not names or len(names) != len(a.keys):
            continue
        keys = []
        for key in a.cache:
            if key in before.get(name, ()) or not isinstance(key, tuple) or len(key) < len(names):
                continue
            values = list(key[:len(names)])
            if all(isinstance(v, (bool, int, float)) for v in values) and values not in keys:
                keys.append(values)
        if keys:
            out[name] = {"names": names, "keys": keys}
    return out
