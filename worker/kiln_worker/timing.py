"""The timing protocol (compiled path only; the interpreter has no timing).

Per case: warm up until compile/autotune is done (the first call, then `warmup_ms` of calls); estimate one
call with CUDA events; kernels under ~50 us of GPU time are timed by replaying a captured CUDA graph of
several calls (launch overhead would hide them otherwise), longer ones with CUDA events per call, with the
L2 cleared before each sample by writing a buffer of 2x the L2 size (`cold_l2`). The choice is made on GPU
time: an event estimate under 1 ms can be the host's launch time (a few kernels behind ~50 us of Python),
so such a call is captured and its graph replay timed, and that decides. A timed graph holds about 0.5 ms
of GPU work (at most 200 calls), sized on that GPU time, so the replay's own launch cost is a small share
of each sample. A call that draws random numbers from the CUDA generator (or reseeds it) is never
captured: it is timed with events and its method says so (`events_cold_l2_rng`); a failed capture leaves
the generator marked as capturing (every later draw raises "Offset increment outside graph capture"),
so the generator's state is renewed after one, and the method says the capture failed
(`events_cold_l2_nocapture`). Candidate and reference are measured
in `rounds` interleaved rounds (A B A B ...); the speedup is the ratio of medians over all samples and its
spread the min/max of the per-round ratios. The SM clock is recorded before and after.
"""
from __future__ import annotations

import statistics
import time

import torch

from . import compare
from . import platform as plat
from . import tasks as tasks_mod

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
# Bound at import, before any candidate runs: a candidate that replaces Event methods on the class while
# it is being timed does not reach these (and the patch checks after timing report it).
_record = torch.cuda.Event.record
_elapsed = torch.cuda.Event.elapsed_time
_CUDAGraph = torch.cuda.CUDAGraph
_graph = torch.cuda.graph
GRAPH_THRESHOLD_MS = 0.05   # GPU time per call under which a CUDA graph times it
# Event estimates under this may be host launch time rather than GPU time: the graph replay decides. (On an
# H100 a 2 us add behind ~50 us of Python flipped between the two methods from run to run: 0.002 ms by
# graph, 0.02-0.04 ms by events; a 24x spread of the medians of one candidate timed 5 times.)
GRAPH_PROBE_MS = 1.0
GRAPH_TARGET_MS = 0.5    # GPU time of one graph replay (its launch cost is shared by the calls in it)
GRAPH_MAX_CALLS = 200
_l2_buf = None
RNG_SUFFIX = "_rng"      # appended to an events method: the call draws random numbers, no graph can replay it
NOCAPTURE_SUFFIX = "_nocapture"  # appended to an events method: the CUDA-graph capture failed (a host sync, ...)


def _cuda_generator():
    try:
        return torch.cuda.default_generators[plat.DEVICE_INDEX]
    except Exception:  # noqa: BLE001 - no CUDA
        return None


def rng_probe_start():
    """Moves the default CUDA generator's Philox offset to a value of its own (4 past where it is) and
    returns (generator, seed, offset) for rng_probe_end; None without a CUDA generator."""
    gen = _cuda_generator()
    if gen is None:
        return None
    try:
        off = gen.get_offset() + 4
        gen.set_offset(off)
        return gen, gen.initial_seed(), off
    except Exception:  # noqa: BLE001
        return None


def rng_probe_end(probe) -> bool:
    """Whether the calls since rng_probe_start drew random numbers from the default CUDA generator or
    reseeded it (a call that seeds and then draws returns the generator to the same state every time:
    only a state it did not set itself shows that)."""
    if probe is None:
        return False
    gen, seed, off = probe
    try:
        return gen.get_offset() != off or gen.initial_seed() != seed
    except Exception:  # noqa: BLE001
        return False


def _draw_ok():
    try:
        torch.empty(1, device=plat.DEVICE).uniform_()
        return True
    except Exception:  # noqa: BLE001
        return False


def renew_rng():
    """After a failed CUDA graph capture: the default CUDA generator stays marked as capturing (torch's
    capture_end raises before its epilogue), and every later draw outside a capture raises "Offset increment
    outside graph capture encountered unexpectedly" (bench/gpu/rng_capture_probe.py). The generator is given
    a copy of its state (same seed and offset, not capturing): `clone_state()`. (Handing it its own
    `graphsafe_get_state()` does not: that shares the marked state; seen on an H100.) -> whether a draw
    works afterwards."""
    gen = _cuda_generator()
    if gen is None:
        return False
    if _draw_ok():
        return True
    try:
        gen.graphsafe_set_state(gen.clone_state())
    except Exception:  # noqa: BLE001
        pass
    return _draw_ok()


def _l2_buffer():
    global _l2_buf
    if _l2_buf is None:
        try:
            l2 = torch.cuda.get_device_properties(plat.DEVICE_INDEX).L2_cache_size
        except Exception:
            l2 = 64 << 20
        n = max(2 * int(l2 or (64 << 20)), 128 << 20)
        _l2_buf = torch.empty(n // 4, dtype=torch.int32, device=plat.DEVICE)
    return _l2_buf


def _quantile(xs, q):
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summarize(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "p20": _quantile(xs, 0.2),
            "p80": _quantile(xs, 0.8), "n": len(xs)}


def _gpu_ms(work, times=1):
    """GPU milliseconds of `work()` run `times` times between two events, synchronized."""
    s, e = _Event(enable_timing=True), _Event(enable_timing=True)
    _record(s)
    for _ in range(times):
        work()
    _record(e)
    _synchronize()
    return _elapsed(s, e)


class _NotShort(Exception):
    """The captured graph showed a call of GPU time above GRAPH_THRESHOLD_MS."""


class Timer:
    """Times one callable with a chosen method; `samples(n)` returns per-call milliseconds."""

    def __init__(self, fn, opts):
        self.fn = fn
        self.opts = opts
        self.method = "events"
        self.graph = None
        self.per_graph = 1
        self.graph_ms = None   # GPU time per call from one replay of the probe graph (auto mode)
        self.draws_random = False
        self.capture_failed = False

    def warmup(self):
        probe = rng_probe_start()
        self.fn()                          # compile + autotune happen here
        _synchronize()
        self.draws_random = rng_probe_end(probe)
        # The warmup is sized in GPU time from one timed call. (A loop on host time does not bound it:
        # launches are asynchronous, so 25 ms of host time queued up to 1000 calls of a 20 ms kernel.)
        one = max(_gpu_ms(self.fn), 1e-4)
        n = max(1, min(1000, int(float(self.opts.get("warmup_ms", 25)) / one)))
        for _ in range(n):
            self.fn()
        _synchronize()
        # estimate
        k = 5 if one < 10 else 2
        self.est_ms = max(_gpu_ms(self.fn, k) / k, 1e-4)
        self.warmup_calls = 2 + n + k
        mode = self.opts.get("cuda_graph", "auto")
        want_graph = mode in (True, "always", "on") or (mode == "auto" and self.est_ms < GRAPH_PROBE_MS)
        if want_graph and not self.draws_random:
            try:
                self.per_graph = max(1, min(GRAPH_MAX_CALLS, int(GRAPH_TARGET_MS / self.est_ms)))
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(2):
                        self.fn()
                torch.cuda.current_stream().wait_stream(side)
                g = self._capture(self.per_graph)
                self.graph_ms = _gpu_ms(g.replay) / self.per_graph
                # The graph was sized from the event estimate, which for a launch-bound call is the
                # host's time (~50 us for a 2 us kernel: 10 calls per graph, and the replay's own launch
                # cost counted in every sample). Sized again on GPU time: ~0.5 ms of work per replay, and
                # measured again before the method is decided: behind 0.26 ms of Python per call, one
                # call per probe replay read 38 us of GPU work as over 50 us with the replay's own cost
                # (on an H200, rms_rbe_matmul's finalist was timed by events there, host-bound, 0.26 ms: a
                # 10.8x kernel measured 1.5x; the same config inside an autotune was graph-timed at 10.8x).
                want = max(1, min(GRAPH_MAX_CALLS, int(GRAPH_TARGET_MS / max(self.graph_ms, 1e-4))))
                if want > 2 * self.per_graph:
                    g = self._capture(want)
                    self.per_graph = want
                    self.graph_ms = _gpu_ms(g.replay) / self.per_graph
                if mode == "auto" and self.graph_ms >= GRAPH_THRESHOLD_MS:
                    raise _NotShort()   # GPU-bound: events with a cold L2 time it
                self.graph = g
                self.method = "cuda_graph"
                return
            except Exception as e:  # noqa: BLE001 - not capturable (or not short): events
                self.graph = None
                self.per_graph = 1
                _synchronize()
                if not isinstance(e, _NotShort):
                    renew_rng()
                    self.capture_failed = True
        self.method = "events_cold_l2" if self.opts.get("cold_l2", True) else "events"
        if self.draws_random:
            self.method += RNG_SUFFIX
        if self.capture_failed:
            self.method += NOCAPTURE_SUFFIX

    def _capture(self, calls):
        """A CUDA graph of `calls` calls, replayed once (the first replay is not timed)."""
        g = _CUDAGraph()
        with _graph(g):
            for _ in range(calls):
                self.fn()
        g.replay()
        _synchronize()
        return g

    def samples(self, n):
        out = []
        if self.method == "cuda_graph":
            evs = [(_Event(enable_timing=True), _Event(enable_timing=True)) for _ in range(n)]
            for s, e in evs:
                _record(s)
                self.graph.replay()
                _record(e)
            _synchronize()
            return [_elapsed(s, e) / self.per_graph for s, e in evs]
        buf = _l2_buffer() if self.method.startswith("events_cold_l2") else None
        evs = [(_Event(enable_timing=True), _Event(enable_timing=True)) for _ in range(n)]
        for s, e in evs:
            if buf is not None:
                buf.zero_()
            _record(s)
            self.fn()
            _record(e)
        _synchronize()  # device-wide: work left on other streams is waited for (and flagged by the checks)
        return [_elapsed(s, e) for s, e in evs]


def measure_pair(cand, ref, opts, between_rounds=None):
    """Times `cand` against `ref` in interleaved rounds; `between_rounds(k)` runs after round k (all but the
    last), outside the timed regions."""
    rounds = max(1, int(opts.get("rounds", 5)))
    tc = Timer(cand, opts)
    tc.warmup()
    if isinstance(cand, _Watched):
        cand.timer = tc   # the graph that was timed, for the timed-output check
    tr = None
    # Timed with events, the candidate's output is let go before the reference runs (its warmup too), and
    # the last round times the reference first, so that the output the timed-output check reads is a timed
    # call's and no round holds the candidate's output while the reference makes its own: the pair needs
    # the two input sets and one output in flight, not two outputs (an 80 GB budget and TritonBench-G's
    # fast_rope_embedding, 16 GiB of inputs and 16 of outputs). A replayed graph keeps its output memory in
    # its own pool either way, and the check poisons and replays that output: held as it is.
    drop = ref is not None and isinstance(cand, _Watched) and tc.method != "cuda_graph"
    if ref is not None:
        tr = Timer(ref, dict(opts, cuda_graph=("always" if tc.method == "cuda_graph" else
                                               ("never" if opts.get("cuda_graph", "auto") == "auto"
                                                else opts.get("cuda_graph")))))
        if drop:
            cand.last = None
        tr.warmup()
    est = max(tc.est_ms, tr.est_ms if tr else 0)
    rep_ms = float(opts.get("rep_ms", 100))
    n_total = int(rep_ms / max(est, 1e-3))
    n_total = max(int(opts.get("min_reps", 10)), min(int(opts.get("max_reps", 1000)), n_total))
    per_round = max(2, n_total // rounds)
    cs, rs, ratios = [], [], []
    for k in range(rounds):
        if k > 0 and between_rounds is not None:
            between_rounds(k - 1)
        if drop and k == rounds - 1:
            cand.last = None
            b = tr.samples(per_round)
            a = tc.samples(per_round)
        else:
            a = tc.samples(per_round)
            b = None
            if tr is not None:
                if drop:
                    cand.last = None
                b = tr.samples(per_round)
        cs += a
        if b is not None:
            rs += b
            ratios.append(statistics.median(b) / statistics.median(a))
    res = {"candidate_ms": summarize(cs), "timing_method": tc.method}
    if tr is not None:
        res["reference_ms"] = summarize(rs)
        res["reference_timing_method"] = tr.method
        res["speedup"] = res["reference_ms"]["median"] / res["candidate_ms"]["median"]
        res["speedup_spread"] = [min(ratios), max(ratios)]
    return res


class _Watched:
    """A timed callable whose Triton launches are counted (launch hook only: no per-launch records, so the
    cost is the hook's few microseconds on the host, the same for candidate and reference). Calls that run
    under a CUDA graph replay are not Python calls and are not counted."""

    def __init__(self, fn, keep=True):
        self.fn = fn
        self.keep = keep   # False: nothing reads the output (the reference's): let go as soon as it returns
        self.calls = 0
        self.without_launch = 0
        self.last = None   # the latest output (checked after timing)
        self.timer = None  # the Timer that measured it (its graph, when one was replayed)

    def __call__(self):
        log = plat.LAUNCHES
        before = log.hook_launches
        # The previous output is let go before the call, not after: held through the next call, it kept
        # one output more alive at the peak (on an H100, TritonBench-G's fast_rope_embedding at its largest
        # case: two 16 GiB input sets, the candidate's last output and the reference's previous one while the
        # reference's next call made its 16 GiB of copies ran out of memory, 72.6 GiB held).
        self.last = None
        out = self.fn()
        if self.keep:
            self.last = out
        del out
        self.calls += 1
        if log.hook_launches == before:
            self.without_launch += 1


def _poison_output(out):
    """Overwrite every tensor of an output with values no kernel computes by accident (NaN for floats, the
    dtype's minimum + 7 for integers, flipped bools)."""
    for _, v in compare.flatten(out):
        if not isinstance(v, torch.Tensor) or v.numel() == 0:
            continue
        with torch.no_grad():
            if v.dtype.is_floating_point or v.dtype.is_complex:
                v.fill_(float("nan"))
            elif v.dtype == torch.bool:
                v.logical_not_()
            else:
                v.fill_(torch.iinfo(v.dtype).min + 7)


def rewrite_by_graph(out, graph):
    """Timed by CUDA-graph replay, the candidate's Python code ran only while the graph was captured; what
    was timed is the graph. The output of the last captured call is poisoned and the graph replayed once:
    the output must come back from the timed work itself. (A candidate that sees the capture, e.g. through
    torch.cuda.is_current_stream_capturing, could launch a token kernel and return a result computed
    earlier: its Python return value would be right, the timed graph empty.)"""
    _poison_output(out)
    graph.replay()
    _synchronize()


def copy_values(dst, src) -> bool:
    """Copies the tensor values of `src` into the tensors of `dst` in place (same structure, shapes and
    dtypes); -> whether every tensor was copied (False: left as far as it got, nothing raised)."""
    try:
        d, s_ = compare.flatten(dst), compare.flatten(src)
        if len(d) != len(s_):
            return False
        with torch.no_grad():
            for (p, a), (_, b) in zip(d, s_):
                if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor):
                    return False
                if isinstance(a, torch.Tensor):
                    if a.shape != b.shape or a.dtype != b.dtype:
                        return False
                    a.copy_(b)
        return True
    except Exception:  # noqa: BLE001 - e.g. an expanded (stride-0) input: no refresh
        return False


def _reference_run(ref_fn, args, kwargs, unwritten, clone=True):
    """The reference on fresh clones of `args` (`clone` False: on `args` themselves), with memory nobody
    writes holding NaN (`unwritten` "nan": fresh allocations poisoned and the allocator flooded, as in the
    check's calls and as a timed graph's output is before its replay) or a finite value ("finite": the same
    with guards.ALT_FLOAT)."""
    from . import guards   # (imported here: guards imports torch's dispatch machinery)
    a, k = (tasks_mod.clone_tree(args), tasks_mod.clone_tree(kwargs)) if clone else (args, kwargs)
    alt = unwritten != "nan"
    # Fresh allocations are filled in both runs (NaN, or the finite ALT_FLOAT): flooding the allocator alone
    # leaves a recycled block holding what an earlier poisoning wrote (NaN), and elements the reference never
    # writes then look determined (NaN in both runs; block_sparse_attn on an H100, session 11).
    try:
        guards.ALT_FILL["on"] = alt
        plat.poison_allocator(value=guards.ALT_FLOAT if alt else float("nan"))
        with guards.OpRecorder(poison=True):
            out = ref_fn(*a, **k)
    finally:
        guards.ALT_FILL["on"] = False
    return out


def _nan_masks(r1, masks):
    """`masks` (compare.unstable_elements) restricted to the elements that are NaN in r1; None when r1's
    leaves do not line up with them."""
    leaves = compare.flatten(compare.numpy_to_torch(r1))
    if len(leaves) != len(masks):
        return None
    out = []
    for (_, v), m in zip(leaves, masks):
        if isinstance(m, bool):
            out.append(m and isinstance(v, float) and v != v)
        elif isinstance(v, torch.Tensor) and (v.dtype.is_floating_point or v.dtype.is_complex):
            nan = torch.isnan(torch.view_as_real(v).any(-1) if v.dtype.is_complex else v)
            out.append(m & nan.to(m.device))
        else:
            out.append(torch.zeros_like(m))
    return out


def check_timed_output(out, ref_fn, args, kwargs, tolerance, tf32):
    """The output of the candidate's last timed call against the reference on fresh clones of the same
    inputs (a candidate that counts its calls could be correct while checked and cut work once timed).
    -> a description of the difference, or None. Elements on which the reference disagrees with itself
    (atomics, races, output elements it never writes: its second run has that memory holding finite values
    instead of NaN) are not the candidate's doing and are not compared; no verdict when no element is
    stable. (TritonBench-G's block_sparse_attn leaves rows of its `torch.empty` output unwritten; the NaN
    of a replayed graph's poisoned output there was taken for a wrong timed output against a reference
    run that read the allocator's leftovers.)
    Large inputs (fingerprinted, as the check's master inputs are) are not cloned: this check runs only for
    a reference that left its inputs alone in the check, so it runs on them, fingerprinted before and
    after; should it change them after all, the check gives no verdict (never a false mismatch). A clone
    of 16 GiB of inputs was 16 GiB more beside the candidate's output and the reference's.
    (An output sharing memory with the inputs keeps the clones: the reference must not write into it.)"""
    from . import memory
    snap = None
    if memory.tree_bytes((args, kwargs)) > memory.SNAPSHOT_CLONE_BYTES and not compare.overlaps(
            compare.storages(out), compare.storages((args, kwargs))):
        snap = memory.snapshot((args, kwargs))   # (fingerprints: the inputs are past the clone size)
    clone = snap is None

    def run(unwritten):
        r = _reference_run(ref_fn, args, kwargs, unwritten, clone=clone)
        if not clone and memory.changed((args, kwargs), snap):
            raise _InputsChanged()
        return r
    try:
        return _check_timed_output(out, run, tolerance, tf32)
    except _InputsChanged:
        return None


class _InputsChanged(Exception):
    """The reference changed the (uncloned) inputs of the timed-output check: no verdict from it."""


def _check_timed_output(out, run, tolerance, tf32):
    r1 = run("nan")
    try:
        compare.compare(out, r1, tolerance, tf32)
        return None
    except compare.Mismatch as m:
        first = str(m)
    r2 = run("finite")
    masks = compare.unstable_elements(r1, r2, tolerance, tf32)
    if masks is None:
        return None
    n_masked = compare.count_masked(masks)
    if n_masked == 0:
        return first
    # Only memory the reference never writes (NaN in its first run, a value in its second) is set aside;
    # a reference whose written values change from run to run (a test that draws its own random inputs,
    # atomics) decides nothing here.
    unwritten = _nan_masks(r1, masks)
    if unwritten is None or compare.count_masked(unwritten) != n_masked:
        return None
    stable, n, total = compare.replace_unstable(out, r1, masks)
    if n >= total:
        return None
    try:
        compare.compare(stable, r1, tolerance, tf32)
        return None
    except compare.Mismatch as m:
        return f"{m} (on the {total - n} of {total} elements the reference determines)"


def time_cases(ev, cases):
    """Times every case of an Evaluator `ev` (after its check passed); returns the speedups.

    Runtime checks while timing (the candidate could behave differently once it is timed): every Python
    call of the candidate must launch a Triton kernel (`no_triton_launch`), no launch may go to a stream
    other than the current one (`foreign_stream`), and the last timed call's output must match the
    reference's (`timed_output_mismatch`)."""
    opts = ev.timing_opts
    task = ev.task
    speedups = []
    log = plat.LAUNCHES
    log.active = False
    before = plat.sm_clock_mhz()
    for ci, case in enumerate(cases):
        t_in = _perf_counter()
        inp = task.inputs(case, ev.seed + ci)
        ev._phase("timing_inputs", t_in)
        args, kwargs = inp if inp is not None else ([], {})
        # A second draw only where the task's inputs vary with the seed (a TritonBench perf case is one
        # fixed input: a second copy of it would change nothing and cost its bytes, gigabytes at the
        # largest sizes). Without one, the candidate is timed on the draw itself (one copy fewer).
        vary = getattr(task, "inputs_vary_with_seed", None)
        refreshable = inp is not None and int(opts.get("rounds", 5)) > 1 and (vary is None or vary(case))
        ca, ck = (tasks_mod.clone_tree(args), tasks_mod.clone_tree(kwargs)) if refreshable else (args, kwargs)
        ra, rk = tasks_mod.clone_tree(args), tasks_mod.clone_tree(kwargs)
        cf, rf = task.candidate(case), task.reference(case)
        cand = _Watched(lambda: cf(*ca, **ck))
        if getattr(ev, "has_baseline", False):
            # kiln optimize: the original, timed interleaved with its variant in the same process (the
            # reference still decides correctness, below)
            bf = task.baseline(case)
            ref = _Watched(lambda: bf(*ra, **rk), keep=False)
        else:
            ref = _Watched(lambda: rf(*ra, **rk), keep=False) if opts.get("time_reference", True) else None
        # Between rounds the timed inputs take other values in place, alternating between a second draw of
        # the case and the first so that the last round runs on the second: same memory, new contents. An
        # output cached by input address (computed once, returned around a token kernel) is then stale,
        # and the timed-output check below sees it.
        draws = [(args, kwargs)]
        if refreshable:
            try:
                alt = task.inputs(case, ev.seed + ci + 104729)
            except Exception:  # noqa: BLE001 - e.g. no memory for a second set: time without refreshing
                alt = None
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
            if alt is not None:
                draws.append(tuple(alt))

        n_rounds = max(1, int(opts.get("rounds", 5)))

        def refresh(k):  # after round k of n_rounds; the last refresh (k = n_rounds - 2) copies the second draw
            if len(draws) < 2:
                return
            src = draws[(n_rounds - 1 - k) % 2]
            for dst in ((ca, ck), (ra, rk)):
                if not copy_values(dst, src):
                    draws[1:] = []   # inputs that cannot be refreshed: keep them as they are
                    return
            _synchronize()

        fs_before = log.foreign_stream_launches
        log.timing_watch = True
        try:
            res = measure_pair(cand, ref, opts, between_rounds=refresh)
        finally:
            log.timing_watch = False
        ev.runtime["timing_calls"] = ev.runtime.get("timing_calls", 0) + cand.calls
        # The reference's timed inputs (a clone of the draw), its last output and its captured graph are not
        # needed past this point: freed before the timed-output check clones the inputs again and runs the
        # reference once more. (On an H100, TritonBench-G's context_attn_nopad and fast_rope_embedding, 16 GiB
        # footprints at their largest perf sizes, ran out of memory in this check with them still held.)
        timed_against_baseline = ref is not None and getattr(ev, "has_baseline", False)
        ref = None
        ra = rk = None
        if cand.without_launch:
            ev.reasons.add("no_triton_launch", f"while timed, {cand.without_launch} of {cand.calls} calls of the "
                                               f"candidate launched no Triton kernel (case {case!r})")
        if log.foreign_stream_launches > fs_before:
            ev.runtime["foreign_streams"] = True
            ev.reasons.add("foreign_stream", f"while timed, a kernel was launched on a stream other than the "
                                             f"current one (case {case!r})")
        if not getattr(ev, "ref_mutates_inputs", True):
            by_graph = cand.timer is not None and cand.timer.method == "cuda_graph" and cand.timer.graph is not None
            # (an output sharing memory with the timed inputs is left alone: poisoning it would poison them)
            by_graph = by_graph and cand.last is not None and not compare.overlaps(
                compare.storages(cand.last), compare.storages((ca, ck)))
            if by_graph:
                rewrite_by_graph(cand.last, cand.timer.graph)
            # against the reference on the values the timed inputs hold now
            problem = check_timed_output(cand.last, rf, ca, ck, ev.tolerance, ev.tf32)
            if problem:
                ev.reasons.add("timed_output_mismatch", f"while timed, the candidate's output was wrong "
                                                        f"(case {case!r}"
                                                        f"{'; the replayed CUDA graph, not its Python return' if by_graph else ''}"
                                                        f"): {problem}")
        cand.last = None
        if timed_against_baseline:
            res["reference_is"] = "baseline"
        for st in ev.cases_out:
            if st["name"] == case:
                st.update(res)
        if "speedup" in res:
            speedups.append(res["speedup"])
    after = plat.sm_clock_mhz()
    ev.clocks = {"sm_mhz_before": before, "sm_mhz_after": after}
    if before and after and abs(before - after) > 0.05 * before:
        ev.reasons.add("clock_changed", f"SM clock moved from {before} to {after} MHz during timing")
    return speedups
