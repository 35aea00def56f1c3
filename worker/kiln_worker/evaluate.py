"""The `eval` op: load the task and the candidate, run the correctness protocol with the runtime checks,
then (mode time) the timing protocol. Outcomes are values: every failure becomes a verdict with reasons."""
from __future__ import annotations

import collections
import contextlib
import gc
import math
import os
import re
import signal
import threading
import time
import traceback

import torch

from . import attribution, autotune_share, capture, compare, guards, legacy, memory, precompile
from . import platform as plat
from . import tasks as tasks_mod
from .verdicts import Reasons

_perf_counter = time.perf_counter  # captured before any candidate runs


class EvalTimeout(BaseException):
    pass


@contextlib.contextmanager
def deadline(seconds):
    """SIGALRM-based timeout for Python that never ends (the fork zygote also kills the child)."""
    if not seconds or seconds <= 0:
        yield
        return

    def handler(signum, frame):
        raise EvalTimeout(f"time limit of {seconds:g} s exceeded")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _chain(e):
    seen = []
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def _innermost_file(e):
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last or ""


def _compile_error_message(e):
    """Triton's CompilationError prints "at L:C:", a source excerpt, then (maybe) the cause: the first line
    alone says nothing. -> "CompilationError at L:C: `source line`: cause" (the innermost compilation error
    in the chain, and the deepest error under it), or None when `e` holds none."""
    chain = _chain(e)
    ce = [x for x in chain if type(x).__name__ == "CompilationError"]
    if not ce:
        return None
    c = ce[-1]
    node, src = getattr(c, "node", None), getattr(c, "src", None)
    where, line = "", ""
    if node is not None and hasattr(node, "lineno"):
        where = f" at {node.lineno}:{node.col_offset}"
        if isinstance(src, str):
            lines = src.split("\n")
            if 0 < node.lineno <= len(lines):
                line = f" `{lines[node.lineno - 1].strip()[:160]}`"
    cause = getattr(c, "error_message", None)
    if not cause:
        below = [x for x in chain[chain.index(c) + 1:] if type(x).__name__ != "CompilationError"]
        if below:
            text = str(below[0]).strip()
            cause = f"{type(below[0]).__name__}: {text.splitlines()[-1] if text else ''}"
    cause = " ".join(str(cause).split()) if cause else "(no cause given)"
    return f"CompilationError{where}:{line}: {cause}"[:400]


def _kiln_frames(e: BaseException, n: int = 6) -> str:
    """The worker's own frames of an exception's traceback, innermost first ("compare.py:281:chunk_pairs < ..."):
    where kiln was when an allocation failed outside the candidate's call (which of its copies to look at;
    run 12 of issue 16 had only the byte counts)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.dirname(os.path.abspath(f.filename)) == here]
    return " < ".join(f"{os.path.basename(f.filename)}:{f.lineno}:{f.name}" for f in frames[::-1][:n])


def _largest_selection(task, sel: str) -> list:
    """Cases for "@largest:K" or "@largest:K:skip:S"; a malformed selector is the request's error."""
    parts = sel.split(":")
    try:
        if len(parts) == 2:
            return task.largest_cases(int(parts[1]))
        if len(parts) == 4 and parts[2] == "skip":
            return task.largest_cases(int(parts[1]), skip=int(parts[3]))
    except ValueError:
        pass
    raise tasks_mod.TaskError(f"bad case selector {sel!r} (expected @largest:K or @largest:K:skip:S)")


def classify_exception(e: BaseException):
    """-> (reason code, message)."""
    msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:400]
    msg = _compile_error_message(e) or msg
    if isinstance(e, EvalTimeout):
        return "timeout", str(e)
    if isinstance(e, SystemExit):
        return "sys_exit", f"the candidate called sys.exit({e.code!r})"
    if isinstance(e, KeyboardInterrupt):
        return "signal", "interrupted"
    names = [type(x).__name__ for x in _chain(e)]
    text = " ".join(f"{type(x).__name__}: {x}" for x in _chain(e)).lower()
    if "OutOfResources" in names:
        return "out_of_resources", msg
    if any(n in ("CompilationError", "CompileTimeAssertionFailure", "PTXASError", "UnsupportedLanguageConstruct")
           for n in names):
        return "triton_compile_error", msg
    if isinstance(e, MemoryError) or "OutOfMemoryError" in names or "out of memory" in text \
            or "can't allocate memory" in text or "cannot allocate memory" in text:
        return "out_of_memory", msg
    if not plat.INTERPRET and plat.is_cuda_fatal(e):
        # "not supported on global/shared address space" (cudaErrorInvalidAddressSpace): a load or store
        # outside any valid window, what a wild pointer hits on an H100 where an H200 reported an illegal
        # address for the same kernel
        if "illegal" in text or "misaligned" in text or "address space" in text:
            return "illegal_memory_access", msg
        return "cuda_error", msg
    if "InterpreterError" in names:
        # the interpreter wraps everything raised inside a kernel; an error raised by triton.language while
        # building the program (e.g. a non power-of-two arange, a bad type) is what the compiler would reject
        for x in _chain(e):
            f = _innermost_file(x)
            if ("/triton/language/" in f or "/triton/compiler/" in f) and type(x).__name__ != "InterpreterError":
                return "triton_compile_error", msg
            if type(x).__name__ in ("NameError", "AssertionError") and "/triton/" not in f:
                return "triton_compile_error", msg
        return "interpreter_error", msg
    return "exception", msg


# Extra reference runs at most when the candidate mismatched (see Evaluator._compare_stable).
UNSTABLE_RUNS = 6

# Mismatches that a nondeterministic reference can cause: retried on the elements the reference determines.
_VALUE_CODES = {"value_mismatch", "nan_mismatch", "inf_mismatch", "uninitialized_output"}


class Stop(Exception):
    """Stops the evaluation (the reasons are already recorded)."""


class Evaluator:
    def __init__(self, req: dict):
        self.req = req
        self.mode = req.get("mode", "check")
        self.policy = req.get("policy", "strict")
        self.seed = int(req.get("seed", 1234) or 1234)
        self.trials = max(1, int(req.get("trials", 3) or 3))
        self.reasons = Reasons(self.policy)
        self.limits = req.get("limits") or {}
        self.timing_opts = req.get("timing") or {}
        self.tolerance = dict(req.get("tolerance") or {})
        self.cases_out = []
        self.aten_ops = {}
        self.cand_ops = []
        self.ref_ops = []
        self.cand_traces, self.ref_traces = [], []   # GPU kernel records per trial (attribution.py)
        self.attribution = None
        self.precision = None
        self._in_cand_call = False
        self._own_keys, self._ref_keys = set(), set()
        self.protocol = req.get("protocol") or "kernelbench"
        self.mem = memory.Budget()
        self.ref_launches = 0
        self.ref_mutates_inputs = False   # seen in a trial: the timed-output check does not apply
        self.runtime = {"triton_launches": 0, "foreign_streams": False, "inputs_mutated": False,
                        "output_aliases_input": False, "reverified": False, "streams_created": 0,
                        "reference_called": False}
        self.ref_out_history = memory.History()    # earlier outputs of the reference (aliasing checks)
        self.cand_out_history = memory.History()
        self.prev_seed = {}   # case -> the seed of its previous trial (cached_output on fresh inputs)
        self.tf32 = False
        self.task = None
        self.notes = []
        self.fatal = False
        self.cand_calls_without_launch = []
        self.has_baseline = False   # a timing baseline replaces the reference while timed
        self.phases = {}   # seconds spent per phase of the request (load, check, timing), for cost accounting
        self._cand_loaded = False   # from the candidate's import on, a fault of the task's code may be its doing
        self._large_inputs = False  # the last trial's inputs were fingerprinted (large): see _trial
        self._baseline = None       # guards.snapshot() before the candidate's import
        self._legacy_on = False     # TritonBench's legacy stdout check asked for (legacy.py)
        self._legacy_source = None  # the candidate's module, for its script
        self.legacy = None          # the response's legacy_stdout
        self.ran_legacy_scripts = False  # a legacy script ran in this process (a shared worker is then replaced)

    def release(self):
        """After the response: drop the request's tensors and give cached GPU blocks back (memory.py)."""
        self.ref_out_history, self.cand_out_history, self.prev_seed = memory.History(), memory.History(), {}
        self._last_args = None
        self.cand_traces, self.ref_traces = [], []
        memory.release()

    def _phase(self, name, t0):
        self.phases[name] = round(self.phases.get(name, 0.0) + _perf_counter() - t0, 4)

    # ------------------------------------------------------------------------------------------
    def run(self) -> dict:
        t0 = _perf_counter()
        resp = {"ok": True}
        with capture.capture_fds() as cap:
            try:
                with deadline(self.limits.get("timeout_s")), plat.cuda_shim(), tasks_mod.scratch_cwd():
                    self._run_with_legacy()
            except Stop:
                pass
            except tasks_mod.TaskError as e:
                if not self._candidate_caused(e):
                    return {"ok": False, "error": f"task_error: {e}", "error_code": "task_error"}
                self._record_exception(e.cause)
            except BaseException as e:  # noqa: BLE001 - outcomes are values
                code, msg = classify_exception(e)
                if code == "out_of_memory":
                    blame = memory.blame_oom(msg, self._in_cand_call, self.mem, getattr(self, "_last_args", None))
                    if blame is not None:   # not the candidate's alone: an infrastructure outcome
                        blame["where"] = _kiln_frames(e)
                        return {"ok": False, "error": blame["message"], "error_code": "infra_out_of_memory",
                                "memory": blame, "phases": dict(self.phases)}
                    msg += f" ({self.mem.oom_note})"
                self._record_exception(e, msg)
            finally:
                plat.LAUNCHES.active = False
        out_text = cap.text()
        if capture.looks_like_protocol(out_text):
            self.reasons.add("protocol_injection", "the candidate printed a line that imitates a protocol response")
        resp.update(self._response(out_text))
        resp["elapsed_s"] = round(_perf_counter() - t0, 4)
        if self.phases:
            resp["phases_s"] = self.phases
        if getattr(self.task, "skipped_cases", None):  # @largest:K left out sizes that do not fit the GPU
            resp["skipped_cases"] = list(self.task.skipped_cases)
        return resp

    def _run_with_legacy(self):
        """_run, then (when the request asks for it) the legacy stdout scripts, whatever the verdict:
        TritonBench's check does not depend on kiln's, and kiln's does not depend on it (the scripts run after
        it: the first run of a test that reads `torch.empty` index tables left the next one reading a dirty
        allocator, an illegal memory access on an H100). Never after a timeout or a lost CUDA context."""
        try:
            self._run()
        except EvalTimeout:
            raise
        except BaseException:
            self._legacy_runs()
            raise
        self._legacy_runs()

    def _legacy_wanted(self, task):
        return bool(self.req.get("legacy_stdout")) and self.mode in ("check", "time") \
            and task.format in ("tritonbench_g", "tritonbench_t")

    def _legacy_runs(self):
        """The candidate's script, then the gold's (upstream's order), unless the candidate replaced part of
        torch or the process state the gold's run relies on (then the gold is not run: not passed)."""
        if not self._legacy_on or self.fatal:
            return
        cand = gold = None
        note = None
        if self._legacy_source is not None:
            t_ph = _perf_counter()
            name = (self.req.get("candidate") or {}).get("name") or os.path.basename(self.task.path)
            script = legacy.script_of(self._legacy_source, self.task.text)
            self.ran_legacy_scripts = True
            cand = legacy.run_script(script, name, True, self.task)
            self._phase("legacy_candidate", t_ph)
        changed = guards.compare_snapshots(self._baseline, guards.snapshot()) if self._baseline is not None else []
        if changed:
            note = f"the gold's script was not run: the candidate replaced {changed[0][1]}"
        elif not (cand or {}).get("fatal"):
            t_ph = _perf_counter()
            self.ran_legacy_scripts = True
            gold = legacy.run_script(self.task.text, os.path.basename(self.task.path), False, self.task)
            self._phase("legacy_gold", t_ph)
        if (cand or {}).get("fatal") or (gold or {}).get("fatal"):
            self.fatal = True   # the CUDA context is lost: the worker is replaced after this response
        self.legacy = legacy.summarize(gold, cand, note)

    def _record_exception(self, e, msg=None):
        """An exception the candidate's run raised -> its reason, located at the candidate's own line."""
        code, classified = classify_exception(e)
        msg = classified if msg is None else msg
        at = tasks_mod.user_frame(e, guards.FLAGS.candidate_files)
        if at:
            self.reasons.add(code, msg, file=at[0], line=at[1])
        else:
            self.reasons.add(code, msg)
        if code in ("illegal_memory_access", "cuda_error"):
            self.fatal = True
        self.notes.append(tasks_mod.shown_paths("".join(traceback.format_exception(e)))[-1500:])

    def _candidate_caused(self, e):
        """A TaskFault (the task's own code raised) is the candidate's doing when the candidate already ran and
        changed what the task relies on (a patch, a poisoned CUDA context) or already earned a failing verdict."""
        if not isinstance(e, tasks_mod.TaskFault) or not self._cand_loaded:
            return False
        if not plat.INTERPRET and plat.is_cuda_fatal(e.cause):
            return True
        if self._baseline is not None:
            self._check_patches(self._baseline, "call")
        return self.reasons.verdict() != "ok"

    def _runtime_out(self):
        ahead = precompile.STATS["configs"] - getattr(self, "_precompiled0", precompile.STATS["configs"])
        if ahead > 0:   # autotune configs compiled side by side before their autotuner timed them
            self.runtime["autotune_precompiled"] = ahead
        return self.runtime

    def _response(self, out_text):
        reasons = self.reasons.sorted()
        verdict = self.reasons.verdict()
        errors = [r for r in reasons if r["severity"] == "error"]
        first = errors[0] if errors else {}
        where = f"{first['file']}:{first['line']}: " if first.get("line") else ""
        resp = {
            "verdict": verdict,
            "reasons": reasons,
            "message": where + first.get("message", ""),
            "cases": self.cases_out,
            "kernels": self._kernels(),
            "aten_ops": self.aten_ops,
            "runtime_checks": self._runtime_out(),
            "protocol": self.protocol,
            "interpreter": plat.INTERPRET,
            "stderr_tail": capture.tail(out_text + ("\n" + self.notes[-1] if self.notes else "")),
        }
        if self.attribution is not None:
            resp["attribution"] = self.attribution
        if self.precision is not None:
            resp["precision"] = self.precision
        if self.legacy is not None:
            resp["legacy_stdout"] = self.legacy
        resp["memory"] = self.mem.report()
        if self.policy == "trusted":
            picks = autotune_share.export()
            if picks:
                resp["autotune_picks"] = picks
        if self.fatal:
            resp["fatal"] = True
        return resp

    def _kernels(self):
        out = []
        for k in plat.LAUNCHES.kernels.values():
            if not k.get("own"):
                continue
            d = {kk: v for kk, v in k.items() if kk != "own"}
            out.append(d)
        return out

    # ------------------------------------------------------------------------------------------
    def _run(self):
        spec = self.req.get("task")
        if not isinstance(spec, dict):
            raise tasks_mod.TaskError("eval without task")
        with tasks_mod.harness(spec.get("path"), "loading the task"):
            self.task = task = tasks_mod.make_task(spec)
        # Trusted code only (kiln optimize: the user's kernel and kiln's rewrites of it): a warm worker
        # keeps the perf harness's generated inputs between requests. Untrusted code could reach and
        # alter a cache that later evaluations read, so it never gets one.
        task.reuse_inputs = self.policy == "trusted"
        for k, v in (task.tolerance or {}).items():
            self.tolerance.setdefault(k, v)
        if self.protocol not in compare.PROTOCOLS:
            raise tasks_mod.TaskError(f"unknown protocol {self.protocol!r} (expected {', '.join(compare.PROTOCOLS)})")
        for k, v in compare.PROTOCOLS[self.protocol].items():
            self.tolerance.setdefault(k, v)
        plat.install_launch_instrumentation()
        attribution.install()
        precompile.install()
        precompile.ENABLED[0] = self.mode != "compile"
        self._precompiled0 = precompile.STATS["configs"]
        guards.install_audit_hook()
        t_ph = _perf_counter()
        with plat.cuda_shim(), tasks_mod.harness(task.path, "importing the task's reference"):
            task.load_reference()
        self._phase("load_reference", t_ph)
        self._load_reference_probe(task)
        if self.policy == "trusted":   # a key tuned in an earlier request of this worker is not tuned again
            seeded = autotune_share.seed(self.req.get("autotune_picks"))
            if seeded:
                self.runtime["autotune_seeded"] = seeded
            kept = autotune_share.keep(getattr(task, "ref_mod", None))
            if kept:
                self.runtime["autotune_kept"] = len(kept)
        else:
            autotune_share.forget()
        self._legacy_on = self._legacy_wanted(task)
        self._load_timing_baseline(task)
        baseline = self._baseline = guards.snapshot()
        self._settings0 = guards.global_state()

        cand = self.req.get("candidate")
        source = cand.get("source") if isinstance(cand, dict) else None
        name = (cand or {}).get("name") or "candidate.py"
        own_code = self._is_task_code(task, source)
        if source is None:  # the task's own code
            if task.format in ("tritonbench_g", "tritonbench_t", "kiln"):
                with open(task.path) as f:
                    source = f.read()
            else:
                raise tasks_mod.TaskError("candidate: null is only valid for tritonbench and kiln tasks")
        if self._legacy_on:
            self._legacy_source = tasks_mod.split_tritonbench(source)[0]
        self.tf32 = bool(re.search(r"\btl\.dot\b|\.dot\(", source))
        if self.protocol == "kernelbench" and task.format in ("kernelbench", "tritonbench_t"):
            self.tf32 = False   # torch reference in IEEE fp32: a tf32 dot is reduced_precision, no allowance

        # import the candidate as a fresh module
        plat.LAUNCHES.active = True
        plat.LAUNCHES.reset()
        t_ph = _perf_counter()
        self._cand_loaded = True
        try:
            with plat.cuda_shim(), guards.candidate_running(), guards.watch_streams():
                task.load_candidate(source, name)
        except tasks_mod.CandidateLoadError as e:
            self.reasons.add(e.kind, str(e))
            raise Stop()
        except tasks_mod.TaskError:
            raise
        except (EvalTimeout, SystemExit):
            raise
        except BaseException as e:
            code, msg = classify_exception(e)
            if code == "exception":
                code = "import_error"
            self.reasons.add(code, f"importing the candidate failed: {msg}")
            raise Stop()
        finally:
            self._phase("load_candidate", t_ph)
        self._check_patches(baseline, "import")
        if own_code:   # trusted like the reference: one autotune pick per key for both copies
            shared = autotune_share.share(getattr(task, "ref_mod", None), getattr(task, "cand_mod", None))
            if shared:
                self.runtime["autotune_shared"] = len(shared)
                self.notes.append(f"autotune: the candidate is the task's own code; {len(shared)} autotuned "
                                  f"kernel(s) ({', '.join(shared[:3])}) tune once per key for both copies")

        t_ph = _perf_counter()
        cases = []
        for c in self.req.get("cases") or task.default_cases(self.mode):
            # "@largest:K": the K cases with the most input bytes (kiln optimize --cases @largest:K);
            # "@largest:K:skip:S": the K next after the S largest (kiln optimize, below sizes where the
            # original fails)
            sel = _largest_selection(task, c) if c.startswith("@largest:") else [c]
            if not sel:
                raise tasks_mod.TaskError(f"no case for {c!r}: the task has no smaller sizes")
            cases += [x for x in sel if x not in cases]
        if hasattr(task, "all_case_names") and any(c.startswith("perf_") for c in cases):
            task.all_case_names()
        unknown = [c for c in cases if c not in task.case_names]
        if unknown:
            raise tasks_mod.TaskError(f"unknown case(s) {unknown}; the task has {task.case_names}")
        self._phase("select_cases", t_ph)

        if self.mode == "compile":
            self._compile(cases)
            self._check_patches(baseline, "call")
            return
        if self.mode == "profile":
            self._profile(self.req.get("profile_case") or cases[0])
            return

        if self.mode == "time_only":
            # The measuring stage of a pipelined batch: the candidate passed `check` (every trial) on a check
            # worker; re-verify it here, in the process that times it, on fresh inputs (the trials after the
            # check's own: seeds seed + 1000 * (trials + t) + i), then time it.
            verify = max(1, int(self.req.get("verify_trials", 1) or 1))
            t_ph = _perf_counter()
            self._check(cases, verify, baseline, seed_offset=1000 * self.trials)
            self._phase("check", t_ph)
        else:
            t_ph = _perf_counter()
            self._check(cases, self.trials, baseline)
            self._phase("check", t_ph)
        if self.reasons.verdict() != "ok" or self.mode not in ("time", "time_only"):
            return
        if not plat.timing_available():
            self.reasons.add("timing_unavailable", "no timing under the interpreter (no GPU)")
            self.notes.append("interpreter: timing skipped")
            return
        from . import timing
        t_ph = _perf_counter()
        speedups = timing.time_cases(self, cases)
        self._phase("timing", t_ph)
        self._check_patches(baseline, "timing")
        if speedups and max(speedups) > 10.0:
            self.reasons.add("excessive_speedup", f"speedup {max(speedups):.1f}x > 10x: re-verified with "
                                                  f"{self.trials * 3} trials")
            self.runtime["reverified"] = True
            # timing.time_cases turned the launch log off (its launch hook counts alone): the re-verification's
            # trials must record launches again, or an honest kernel reads as no_triton_launch (H100, session 10)
            plat.LAUNCHES.active = True
            self._check(cases, self.trials * 3, baseline, seed_offset=7919, record=False)

    @staticmethod
    def _is_task_code(task, source):
        """The candidate is the task's file itself: `candidate: null` or the same text (autotune_share.py)."""
        if task.format not in ("tritonbench_g", "tritonbench_t", "kiln"):
            return False
        if source is None:
            return True
        try:
            with open(task.path) as f:
                return f.read() == source
        except OSError:
            return False

    def _load_reference_probe(self, task):
        """The reference module with its programs started in reverse order (`reference_probe` in the request, made
        by kiln from the task's own file: exec/race_probe.h), run among the reference's reruns after a mismatch
        (`_stable_probe`): a racing write's winner flips in it. A probe that fails to load is left out (a note),
        never an error: the reruns then go as without it."""
        self._probe_loaded = False
        probe = self.req.get("reference_probe")
        if not isinstance(probe, dict) or not isinstance(probe.get("source"), str) or \
                not hasattr(task, "load_reference_probe"):
            return
        try:
            with plat.cuda_shim(), tasks_mod.harness(task.path, "importing the reference's race probe"):
                task.load_reference_probe(probe["source"])
            self._probe_loaded = True
        except BaseException as e:  # noqa: BLE001 - kiln's transform of the task's code: without it, as before
            self.notes.append(f"the reference's race probe (its programs in reverse order) did not load "
                                 f"({type(e).__name__}: {str(e)[:200]}); racing writes are probed by reruns alone")

    def _load_timing_baseline(self, task):
        """kiln optimize's original (`baseline` in the request, trusted): loaded before the candidate, like the
        reference, and timed in the reference's place (timing.time_cases). Only in the timing modes."""
        base = self.req.get("baseline")
        self.has_baseline = False
        if self.mode not in ("time", "time_only") or not isinstance(base, dict) or base.get("source") is None:
            return
        t_ph = _perf_counter()
        try:
            with plat.cuda_shim():
                task.load_baseline(base["source"], base.get("name") or "baseline.py")
        except tasks_mod.TaskError:
            raise
        except BaseException as e:  # noqa: BLE001 - the baseline is the caller's code, not the candidate's
            raise tasks_mod.TaskError(f"the timing baseline failed to load: {type(e).__name__}: {e}") from e
        finally:
            self._phase("load_baseline", t_ph)
        self.has_baseline = True
        if self.policy == "trusted":   # the original's picks: its own, made in the baseline run of this worker
            autotune_share.keep(getattr(task, "base_mod", None))

    # ------------------------------------------------------------------------------------------
    def _check_patches(self, baseline, when):
        for code, name in guards.compare_snapshots(baseline, guards.snapshot()):
            self.reasons.add(code, f"{name} was replaced by the candidate (at {when})")
        # torch's process-wide settings (cuDNN, SDPA kernels, matmul precision, ...): put back at once, so
        # the reference keeps running as it would alone, and reported
        for name in guards.restore_global_state(getattr(self, "_settings0", {})):
            self.reasons.add("global_state", f"the candidate changed {name} (at {when}); restored")

    def _call_candidate(self, fn, args, kwargs, seed, poison):
        rec = guards.OpRecorder(poison=poison)
        before = len(plat.LAUNCHES.launches)
        bench_before = collections.Counter(plat.LAUNCHES.bench_launches)
        err_before = len(plat.LAUNCHES.errors)
        threads_before = set(threading.enumerate())
        guards.FLAGS.host_elements = 0
        plat.poison_allocator()
        tasks_mod.seed_all(seed)
        self._in_cand_call = True
        with attribution.kernel_trace() as trace, plat.cuda_shim(), guards.candidate_running(), \
                guards.watch_streams(), rec:
            out = fn(*args, **kwargs)
        self._in_cand_call = False
        plat.synchronize()
        self._trace = trace
        # A thread the candidate left running would run on while the reference does (and could touch
        # its outputs); the static checks reject `threading` imports, this catches the rest.
        # Tensor data taken to numpy / Python lists: the result computed outside torch and Triton.
        out_numel = sum(v.numel() for _, v in compare.flatten(out) if isinstance(v, torch.Tensor))
        if guards.FLAGS.host_elements >= max(4096, out_numel // 8):
            self.reasons.add("host_compute", f"the candidate converted {guards.FLAGS.host_elements} tensor elements "
                                             "to numpy or Python lists while running (work done outside Triton)")
        left = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        if left:
            self.reasons.add("background_thread", f"the candidate left {len(left)} thread(s) running after it "
                                                  f"returned ({left[0].name!r})")
        launches = plat.LAUNCHES.launches[before:]
        own = sum(1 for l in launches if l["own"])
        self._own_names = plat.LAUNCHES.own_names_since(before, bench_before)
        self._own_keys.update((l["module"], l["name"]) for l in launches if l["own"])
        errors = plat.LAUNCHES.errors[err_before:]
        return out, rec, own, errors

    def _call_reference(self, fn, args, kwargs, seed):
        # poisoned too: elements the reference itself never writes then compare as NaN == NaN
        rec = guards.OpRecorder(poison=True)
        before = len(plat.LAUNCHES.launches)
        tasks_mod.seed_all(seed)
        with tasks_mod.harness(self.task.path, "the reference"):
            with plat.cuda_shim(), rec:
                out = fn(*args, **kwargs)
            plat.synchronize()
        self._ref_keys.update((l["module"], l["name"]) for l in plat.LAUNCHES.launches[before:])
        return out, rec, len(plat.LAUNCHES.launches) - before

    def _check(self, cases, trials, baseline, seed_offset=0, record=True):
        task = self.task
        self.mem.start_trials()
        for ci, case in enumerate(cases):
            stats = {"name": case, "passed": False, "trials": 0}
            if record:
                self.cases_out.append(stats)
            cand_fn = task.candidate(case)
            ref_fn = task.reference(case)
            n_trials = task.trials_for(case, trials)
            max_abs, rel = 0.0, 0.0
            # trusted: which autotune keys the candidate's kernels meet in this case (kiln optimize pins them)
            cand_mod = getattr(task, "cand_mod", None) if record and self.policy == "trusted" else None
            keys_before = autotune_share.tuned_keys(cand_mod) if cand_mod is not None else None
            for t in range(n_trials):
                seed = self.seed + seed_offset + 1000 * t + ci
                ok = self._trial(case, t, seed, cand_fn, ref_fn, stats)
                self._check_patches(baseline, "call")
                if not ok:
                    stats.pop("_max_abs", None)
                    stats.pop("_rel", None)
                    raise Stop()
                max_abs = max(max_abs, stats.pop("_max_abs"))
                rel = max(rel, stats.pop("_rel"))
                stats["trials"] = t + 1
            stats.update({"passed": True, "max_abs_err": max_abs, "rel_l2_err": rel})
            if keys_before is not None:
                added = autotune_share.keys_added(cand_mod, keys_before)
                if added:
                    stats["autotune_keys"] = added
            if hasattr(task, "work"):
                w = task.work(case, self._last_args)
                if w:
                    stats.update(w)
        self._runtime_verdicts()

    def _draw_inputs(self, case, seed):
        """The trial's master inputs. Harness allocations: ints zeroed, floats poisoned."""
        t_in = _perf_counter()
        with guards.OpRecorder(poison=True), tasks_mod.harness(self.task.path, f"{self.task.inputs_name} (case {case!r})"):
            inp = self.task.inputs(case, seed)
        self._phase("inputs", t_in)
        return inp if inp is not None else ([], {})

    def _trial(self, case, t, seed, cand_fn, ref_fn, stats):
        """One trial, within 1.5x the task's own footprint (docs/verdicts.md, "Memory"). Small inputs: the
        candidate runs on a clone of the master inputs (kept only when it changed them). Large inputs
        (fingerprinted): it runs on the master itself (_candidate_on_master). The reference then runs on the
        master; large inputs are freed before the outputs are compared, so that the inputs and both outputs
        (1.5x) are alive together only during the reference's call and one fingerprint without temporaries."""
        self._last_args = None   # the previous trial's inputs, freed before this trial draws its own
        if self._large_inputs:
            gc.collect()   # and its outputs, which reference cycles of the calls can still hold
        args, kwargs = self._draw_inputs(case, seed)
        self._last_args = args
        master = (args, kwargs)
        master_copy = memory.snapshot(master)  # the master's bits (large: fingerprints), to see the candidate reach it
        self._large_inputs = master_copy[0] != "clone"
        if master_copy[0] == "clone":
            out_c, c_changed, in_alias, c_inputs = self._candidate_on_clone(case, cand_fn, master, master_copy, seed)
        else:
            out_c, c_changed, in_alias, c_inputs, master = self._candidate_on_master(case, cand_fn, master,
                                                                                     master_copy, seed)
            if master is None:
                self.runtime["inputs_mutated"] = True
                self.reasons.add("input_mutated", f"the candidate modified its inputs {c_changed[:3]} in place, and "
                                                  "they cannot be drawn again as they were to see whether the "
                                                  "reference does too")
                stats["trials"] = t + 1
                return False
            args, kwargs = master
            self._last_args = args
        del args, kwargs

        # the reference with its programs in reverse order, for the reruns after a mismatch: resolved then
        # (`_probe_run`), never on a trial that matches
        self._rev_case = case if getattr(self, "_probe_loaded", False) else None
        self._ref_rev = None
        # the reference after the candidate, on the master itself (a copy of the inputs fewer)
        with attribution.kernel_trace() as ref_trace:
            out_r, rec_r, ref_launches = self._call_reference(ref_fn, master[0], master[1], seed)
        self.ref_traces.append(ref_trace if ref_launches else None)
        self.mem.note_task(master, out_r)
        self.ref_launches += ref_launches
        self.ref_ops.append((case, rec_r.calls, ref_launches))
        self._judge_precision(out_r)
        r_changed = memory.changed(master, master_copy)
        self.ref_mutates_inputs = self.ref_mutates_inputs or bool(r_changed)
        # the inputs as drawn, for further runs of the reference (after a mismatch)
        pristine = self._pristine(case, seed, master, master_copy, bool(r_changed))
        r_storages = compare.storages(master)

        # inputs: the candidate may change them only where the reference does too
        side_ok = True
        if c_changed:
            if not r_changed:
                self.runtime["inputs_mutated"] = True
                zeroed = all(float(v.abs().sum()) == 0 for p, v in compare.flatten(c_inputs)
                             if isinstance(v, torch.Tensor) and p in c_changed and v.numel() > 0)
                if zeroed:
                    self.reasons.add("inputs_zeroed", f"the candidate zeroed its inputs {c_changed[:3]}")
                self.reasons.add("input_mutated", f"the candidate modified inputs {c_changed[:3]} "
                                                  "that the reference leaves alone")
            elif not self._same_side_effects(
                    c_inputs, master, stats, lambda k: self._rerun_reference_inputs(ref_fn, pristine, seed, k)):
                self.reasons.add("input_side_effect_mismatch",
                                 f"case {case}, trial {t}: the candidate's in-place changes to its inputs differ "
                                 "from the reference's")
                side_ok = False   # the case fails here (its outputs are still judged, for their reasons)
        del c_inputs
        if master_copy[0] != "clone":
            # large inputs are not needed by the comparison: freed (drawn again if a rerun needs them)
            self._last_args = memory.shapes_only(self._last_args)
            master = None
            gc.collect()   # the call's machinery leaves reference cycles that still hold the inputs
        outputs_ok = self._judge_outputs(case, t, seed, ref_fn, pristine, out_c, out_r, r_storages, in_alias, stats)
        return outputs_ok and side_ok

    def _candidate_on_clone(self, case, cand_fn, master, snap, seed):
        """Small inputs: the candidate on clones of the master. -> (its output, the paths it changed, its output's
        overlaps with its inputs, its inputs as it left them when it changed them)."""
        c_args, c_kwargs = tasks_mod.clone_tree(master[0]), tasks_mod.clone_tree(master[1])
        out_c = self._candidate_trial(case, cand_fn, c_args, c_kwargs, seed)
        if memory.changed(master, snap):
            self.runtime["inputs_mutated"] = True
            self.reasons.add("input_mutated", "the candidate modified the worker's master copy of the inputs")
        c_changed = compare.changed_paths((c_args, c_kwargs), master)
        in_alias = compare.overlaps(compare.storages(out_c), compare.storages((c_args, c_kwargs)))
        return out_c, c_changed, in_alias, ((c_args, c_kwargs) if c_changed else None)

    def _candidate_on_master(self, case, cand_fn, master, snap, seed):
        """Large inputs: the candidate runs on the master itself (a clone would be one more copy of the inputs),
        checked against the master's fingerprints. When it changed them, they are kept as it left them (the
        side-effect comparison) and the reference gets the inputs drawn again from the same seed, used only
        when they equal the fingerprints. -> (output, changed paths, overlaps of the output with its inputs,
        its inputs as it left them when changed, the inputs for the reference (None: cannot be had again))."""
        types = [(p, type(v)) for p, v in compare.flatten(master)]
        out_c = self._candidate_trial(case, cand_fn, master[0], master[1], seed)
        c_changed = memory.changed(master, snap)
        # a tensor given another class (x.__class__ = a subclass whose __torch_function__ would answer for the
        # reference) counts as changed: the reference then gets inputs drawn again
        retyped = [p for (p, ty), (_, v) in zip(types, compare.flatten(master)) if type(v) is not ty]
        if retyped:
            self.reasons.add("input_mutated", f"the candidate changed the class of its inputs {retyped[:3]}")
            c_changed = sorted(set(c_changed) | set(retyped))
        in_alias = compare.overlaps(compare.storages(out_c), compare.storages(master))
        if not c_changed and not in_alias:
            return out_c, [], in_alias, None, master
        # Changed inputs, or an output that is (a view of) an input the candidate left as drawn (a harness
        # returning the buffer the kernel writes, e.g. context_attn_fwd's `o`): the reference must not run on
        # this master, whose outputs would then be the candidate's own memory (output_aliases_reference, or a
        # candidate that writes nothing compared with what the reference wrote there).
        self._last_args = None
        again = self._draw_inputs(case, seed)
        again = None if memory.changed(again, snap) else again
        if not c_changed:
            return (out_c, [], in_alias, None, master) if again is None else (out_c, [], in_alias, None, again)
        return out_c, c_changed, in_alias, master, again

    def _candidate_trial(self, case, cand_fn, c_args, c_kwargs, seed):
        """The candidate's call on its clones and the checks of what it did while running -> its output."""
        guards.FLAGS.reference_called = 0
        guards.FLAGS.streams_created = 0
        fs_before = plat.LAUNCHES.foreign_stream_launches
        out_c, rec_c, own, errors = self._call_candidate(cand_fn, c_args, c_kwargs, seed, poison=True)
        self.runtime["triton_launches"] += own
        for k, v in rec_c.ops.items():
            self.aten_ops[k] = self.aten_ops.get(k, 0) + v
        self.cand_ops.append((case, rec_c.calls, own))
        self.cand_traces.append((case, self._trace, self._own_names) if self._trace else None)
        if own == 0:
            self.cand_calls_without_launch.append(case)
        if errors:
            n, tn, m = errors[0]
            self.reasons.add("swallowed_kernel_error",
                             f"launching {n} raised {tn} ({m[:120]}) but the candidate returned normally")
        if guards.FLAGS.reference_called:
            self.runtime["reference_called"] = True
            self.reasons.add("reference_called", "the candidate called the reference implementation")
        if guards.FLAGS.streams_created or plat.LAUNCHES.foreign_stream_launches > fs_before:
            self.runtime["foreign_streams"] = True
            self.runtime["streams_created"] += guards.FLAGS.streams_created
            self.reasons.add("foreign_stream", "the candidate created or launched on a CUDA stream of its own")
        for code, n in guards.FLAGS.events.items():
            self.reasons.add(code, f"the candidate did {guards.FLAGS.event_detail.get(code, code)} while running")
        return out_c

    def _pristine(self, case, seed, master, master_copy, ref_changed):
        """-> a function giving the trial's inputs as drawn (or None when they cannot be had again): small inputs,
        the master when the reference left it alone, else the snapshot's clone; large inputs (not held once the
        reference ran), the inputs drawn again from the same seed, used only when they equal the fingerprints."""
        held = master if master_copy[0] == "clone" else None   # large inputs are not held for reruns

        def get():
            if not ref_changed and held is not None:
                return held
            if master_copy[0] == "clone":
                return master_copy[1]
            again = self._draw_inputs(case, seed)
            return None if memory.changed(again, master_copy) else again
        return get

    def _judge_outputs(self, case, t, seed, ref_fn, pristine, out_c, out_r, r_storages, in_alias_all, stats):
        """Aliasing, then the comparison of the outputs (with the reference-instability runs on a mismatch).
        r_storages: the byte ranges of the reference's inputs (compare.storages)."""
        cs = compare.storages(out_c)
        ref_alias = {p for p, _ in compare.overlaps(compare.storages(out_r), r_storages)}
        in_alias = [(p, q) for p, q in in_alias_all if p not in ref_alias]
        if in_alias:
            self.runtime["output_aliases_input"] = True
            self.reasons.add("output_aliases_input", f"output {in_alias[0][0]} is (a view of) an input")
        ref_all = compare.storages(out_r) + self.ref_out_history.storages()
        if compare.overlaps(cs, ref_all):
            self.reasons.add("output_aliases_reference", "the candidate's output lives in the reference's output memory")
        if compare.overlaps(cs, self.cand_out_history.storages()):
            self.reasons.add("cached_output", "the candidate returned the same output memory as in an earlier call")

        try:
            try:
                st = compare.compare(out_c, out_r, self.tolerance, self.tf32)
            except compare.Mismatch as m:
                st = self._compare_stable(ref_fn, pristine, seed, out_c, out_r, stats) \
                    if m.code in _VALUE_CODES else None
                if st is None:
                    raise
        except compare.Mismatch as m:
            prev_seed = self.prev_seed.get(case)
            if t > 0 and prev_seed is not None and self._is_previous_answer(case, ref_fn, prev_seed, out_c):
                self.reasons.add("cached_output", "on fresh inputs the candidate returned the previous call's result")
            self.reasons.add(m.code, f"case {case}, trial {t}: {m}")
            stats["trials"] = t + 1
            stats.pop("_max_abs", None)
            stats.pop("_rel", None)
            return False
        finally:
            self.ref_out_history.append(out_r)
            self.cand_out_history.append(out_c)
            self.prev_seed[case] = seed
        stats["_max_abs"], stats["_rel"] = st["max_abs_err"], st["rel_l2_err"]
        stats["shapes"], stats["dtypes"] = st["shapes"], st["dtypes"]
        return True

    def _is_previous_answer(self, case, ref_fn, prev_seed, out_c) -> bool:
        """After a mismatch: whether the candidate's output equals the previous trial's answer, recomputed (its
        inputs drawn again from its seed, the reference run on them) rather than kept from trial to trial (an
        output's worth of memory per trial). A failure to recompute leaves the mismatch as it is."""
        try:
            args, kwargs = self._draw_inputs(case, prev_seed)
            prev, _, _ = self._call_reference(ref_fn, args, kwargs, prev_seed)
            return compare.close(out_c, prev, self.tolerance, self.tf32)
        except Exception:  # noqa: BLE001 - out of memory, a reference that fails now: no extra reason
            return False

    def _same_side_effects(self, c_inputs, r_inputs, stats=None, rerun=None) -> bool:
        """The inputs as candidate and reference left them (each started from its own clone of the same
        values): a difference is a mismatch; a failure of the comparison itself (out of memory comparing
        gigabytes of inputs) is not, it propagates and is classified as such. As for outputs (the same probe,
        `_stable_probe`), `rerun(k)` runs the reference again on fresh clones and returns its inputs as it
        left them: elements the reference's runs leave differently (racing writes: TritonBench-G harnesses
        draw destination indices with repeats, so several programs store to one slot) are not compared, and
        a racing tail no run has shown yet is allowed up to what the reference's own last run added."""
        try:
            compare.compare(c_inputs, r_inputs, self.tolerance, self.tf32)
            return True
        except compare.Mismatch:
            if rerun is None:
                return False
        st = self._stable_probe(rerun, c_inputs, r_inputs, stats if stats is not None else {}, inputs=True)
        return st is not None

    def _rerun_reference_inputs(self, ref_fn, pristine, seed, k=0):
        """Rerun k of the reference on fresh clones of the trial's inputs, as the candidate ran (allocator
        flooded, same seed; `_probe_run` says with which fill and in which program order); -> those inputs as
        it left them (None when the inputs cannot be had again)."""
        inputs = pristine()
        if inputs is None:
            return None

        def run(fn, alt):
            a, kw = tasks_mod.clone_tree(inputs[0]), tasks_mod.clone_tree(inputs[1])
            self._filled_call(fn, a, kw, seed, alt)
            return (a, kw)
        return self._probe_run(ref_fn, k, run)

    def _filled_call(self, fn, args, kwargs, seed, alt):
        """The reference's call with memory nobody writes holding NaN (`alt` False) or finite values."""
        try:
            guards.ALT_FILL["on"] = alt
            plat.poison_allocator(value=guards.ALT_FLOAT if alt else float("nan"))
            return self._call_reference(fn, args, kwargs, seed)[0]
        finally:
            guards.ALT_FILL["on"] = False

    def _probe_run(self, ref_fn, k, run):
        """Rerun k of the reference through `run(fn, alt)`. Runs alternate between unwritten memory as NaN (even
        k) and as finite values (odd k). With the race probe (the reference's programs started in reverse order,
        `_load_reference_probe`), runs 0 and 3 of every four use it: the first rerun flips every write-write
        race's winner, the second exposes reads of unwritten memory. Should the probe fail, it is dropped and the
        reference itself runs (the probe is kiln's transform of trusted code: a failure of it says nothing of
        the candidate)."""
        alt = k % 2 == 1
        case = getattr(self, "_rev_case", None)
        if case is not None and k % 4 in (0, 3):
            try:
                if self._ref_rev is None:   # first use in this trial
                    self._ref_rev = self.task.reference_probe(case)
                if self._ref_rev is not None:
                    out = run(self._ref_rev, alt)
                    self._probe_runs = getattr(self, "_probe_runs", 0) + 1
                    return out
            except Exception as e:  # noqa: BLE001 - see above
                if not plat.INTERPRET and plat.is_cuda_fatal(e):
                    raise
                self._rev_case = None
                self.notes.append(f"the reference's race probe failed ({type(e).__name__}: {str(e)[:200]}); "
                                  "reruns of the reference alone")
        return run(ref_fn, alt)

    def _compare_stable(self, ref_fn, pristine, seed, out_c, out_r, stats):
        """The candidate's output mismatched the reference's: run the reference again on fresh clones of the
        same inputs, under the candidate's conditions (allocator flooded, same seed), and compare the candidate
        on the elements the reference determines (`_stable_probe`). -> the comparison's stats, or None (the
        original mismatch stands). The candidate cannot reach these runs: they happen after the candidate's
        code, the patch checks still follow, and elements the reference determines (uninitialised ones
        included) are still judged."""
        inputs = pristine()
        if inputs is None:
            return None   # the inputs cannot be drawn again as they were: the mismatch stands
        args, kwargs = inputs

        def probe(k):
            return self._probe_run(ref_fn, k, lambda fn, alt: self._filled_call(
                fn, tasks_mod.clone_tree(args), tasks_mod.clone_tree(kwargs), seed, alt))
        return self._stable_probe(probe, out_c, out_r, stats)

    def _stable_probe(self, probe, got, first, stats, inputs=False):
        """`got` (the candidate's outputs, or its inputs as it left them) differs from `first` (the reference's
        run): elements on which runs of the reference disagree are not determined by it (atomics, races, reads
        of memory it never wrote); compare the candidate on the other elements only. `probe(alt)` is one more
        run of the reference -> its tree. -> the comparison's stats, or None (the mismatch stands) when a run
        fails, differs in structure, or leaves no element stable.

        Runs alternate between memory it never writes holding NaN (as the first) and holding finite values,
        which exposes elements that depend on it (reads past the end of a buffer, of memory nobody wrote).
        Elements that differ from the first run in any run are masked (the union). A race picks one of several
        writers per run, so two runs rarely show every racing element (on an H100, TritonBench-G's
        index_select_bwd changed 256-352 of its 512 racing elements per run): runs go on while each adds
        unstable elements, up to UNSTABLE_RUNS; a deterministic reference stops after two. A race can also
        leave a tail: elements whose variation no run has shown yet, in the candidate's run as in the next run
        of the reference (TritonBench-G's quantize_copy_kv changed 170k-204k of 4.2M elements per run). So
        from the third run on, a candidate that differs from the first run outside the mask in no more
        elements than the last run of the reference added to it is within the reference's own variation. A
        deterministic reference adds none: no slack. With the race probe (`_probe_run`), the first rerun starts
        the reference's programs in reverse order, which flips the winner of nearly every racing element at once.
        `probe(k)` is rerun k."""
        what = "input elements that the reference changes in place" if inputs else "output elements"
        key = "unstable_input_elements" if inputs else "unstable_elements"
        union, n_prev, quiet = None, 0, 0
        self._probe_runs = 0
        for k in range(UNSTABLE_RUNS):
            try:
                out_rk = probe(k)
            except Exception as e:  # noqa: BLE001 - the first mismatch is the outcome
                if not plat.INTERPRET and plat.is_cuda_fatal(e):
                    self.fatal = True
                return None
            masks = None if out_rk is None else compare.unstable_elements(first, out_rk, self.tolerance, self.tf32)
            if masks is None:
                return None
            union = masks if union is None else compare.union_masks(union, masks)
            if inputs:  # no verdict from nothing: the inputs that vary must keep stable elements
                varying = [m for m in union if not isinstance(m, bool) and bool(m.any())]
                if varying and all(bool(m.all()) for m in varying):
                    return None
            masked, n, total = compare.replace_unstable(got, first, union)
            grew = n - n_prev
            quiet = quiet + 1 if n == n_prev or n == 0 else 0
            n_prev = n
            if n >= total:
                return None
            if n == 0:
                if k >= 1:
                    return None  # two runs (NaN and finite unwritten memory) agree with the first everywhere
                continue
            tail = 0
            try:
                st = compare.compare(masked, first, self.tolerance, self.tf32)
            except compare.Mismatch:
                st, tail = self._within_tail(masked, first, grew) if k >= 2 and grew > 0 else (None, 0)
                if st is None:
                    if quiet >= 2 and k >= 2:
                        return None  # the mask stopped growing: the mismatch is the candidate's
                    continue
            stats[key] = max(stats.get(key, 0), n + tail)
            if k >= 1:
                how = "unwritten memory as NaN and as finite values"
                if self._probe_runs:
                    how += f"; {self._probe_runs} with its programs started in reverse order"
            else:
                how = "the second with its programs started in reverse order" if self._probe_runs else "same conditions"
            note = f"{n} of {total} {what} differ between {k + 2} runs of the reference ({how}); they were not compared"
            if tail:
                note += f"; {tail} more differ from the first run, no more than the {grew} that the reference's " \
                        "last run added"
            if inputs and stats.get("note") and note not in stats["note"]:
                note = f"{stats['note']}; {note}"   # (the outputs' note of an earlier trial of this case stays)
            stats["note"] = note
            return st
        return None

    def _within_tail(self, masked, out_r, grew):
        """The candidate's differences from the first reference run outside the mask, when they are no more
        than `grew` (what the reference's last run added to the mask): -> (the comparison's stats with those
        elements taken from the reference, their number); else (None, 0)."""
        outside = compare.unstable_elements(masked, out_r, self.tolerance, self.tf32)
        if outside is None:
            return None, 0
        tail = compare.count_masked(outside)
        if tail > grew:
            return None, 0
        masked, _, _ = compare.replace_unstable(masked, out_r, outside)
        try:
            return compare.compare(masked, out_r, self.tolerance, self.tf32), tail
        except compare.Mismatch:
            return None, 0

    # ------------------------------------------------------------------------------------------
    def _runtime_verdicts(self):
        if self.cand_calls_without_launch:
            self.reasons.add("no_triton_launch", "the candidate launched no Triton kernel of its own in case "
                                                 f"{self.cand_calls_without_launch[0]!r}")
        self._judge_torch_compute()

    def _judge_torch_compute(self):
        """Where is the work done, and at what precision? See docs/verdicts.md (attribution)."""
        task_numel = 1
        task_numel = max(task_numel, self.ref_out_history.last_numel)
        for p, v in compare.flatten(self._last_args):
            if isinstance(v, torch.Tensor):
                task_numel = max(task_numel, v.numel())
        rec = attribution.judge_dispatch(self, task_numel)
        prof = attribution.judge_profile(self)
        self.attribution = prof or rec
        if prof is not None:
            self.attribution["dispatcher"] = rec

    def _judge_precision(self, out_r):
        """After a trial's reference call, before the comparison: dots below the task's precision."""
        out_dtype = next((v.dtype for _, v in compare.flatten(out_r)
                          if isinstance(v, torch.Tensor) and v.dtype.is_floating_point), None)
        torch_ref = all(r[2] == 0 for r in self.ref_ops)
        self.precision = attribution.judge_precision(self, out_dtype, self._own_keys, self._ref_keys, torch_ref,
                                                     self.protocol)

    # ------------------------------------------------------------------------------------------
    def _compile(self, cases):
        plat.set_suppress_launches(True)
        try:
            for ci, case in enumerate(cases):
                with tasks_mod.harness(self.task.path, f"{self.task.inputs_name} (case {case!r})"):
                    inp = self.task.inputs(case, self.seed + ci)
                args, kwargs = inp if inp is not None else ([], {})
                fn = self.task.candidate(case)
                try:
                    with plat.cuda_shim(), guards.candidate_running():
                        fn(*args, **kwargs)
                except BaseException as e:
                    code, msg = classify_exception(e)
                    if code in ("triton_compile_error", "out_of_resources", "timeout", "sys_exit"):
                        raise
                    # outputs are garbage with launches suppressed; only compile failures count
                self.cases_out.append({"name": case, "compiled": True})
        finally:
            plat.set_suppress_launches(False)

    def _profile(self, case):
        with tasks_mod.harness(self.task.path, f"{self.task.inputs_name} (case {case!r})"):
            inp = self.task.inputs(case, self.seed)
        args, kwargs = inp if inp is not None else ([], {})
        fn = self.task.candidate(case)
        with plat.cuda_shim():
            fn(*tasks_mod.clone_tree(args), **tasks_mod.clone_tree(kwargs))  # warm-up (compile, autotune)
            plat.synchronize()
            first = len(plat.LAUNCHES.launches)
            with plat.profile_range("kiln_profile"):
                fn(*args, **kwargs)
                plat.synchronize()
        launches = plat.LAUNCHES.launches[first:]
        names = [l["name"] for l in launches]
        own = sorted({l["name"] for l in launches if l["own"]})   # what kiln profile --task keeps by default
        self.cases_out.append({"name": case, "profiled": True, "kernel_names": names, "own_kernel_names": own})
        print("kiln_profile kernels: " + " ".join(names), flush=True)
