"""kiln datagen's compiler route, worker side: run a KernelBench-format program in eager torch, compile it with
torch.compile (TorchInductor) and capture what Inductor generated, so that kiln (C++) can turn it into a
standalone ModelNew of plain @triton.jit kernels (src/datagen/inductor.cc, docs/datagen.md).

What one capture holds (one JSON object per program):
  codes        the output modules Inductor wrote (torch._inductor.utils.run_and_get_code's hook,
               GraphLowering.save_output_code): the `async_compile.triton(...)` kernels and `def call(args)`
  launches     every kernel launch of the second compiled call, in order: kernel name, the autotuner's
               chosen config (block sizes, num_warps, num_stages) and the grid it launched
  call_args    what each argument of `call` is: a forward input (by position), a parameter or buffer of the
               model (by its dotted name), or an int
  outputs      which `call` output is each tensor of the forward's result
  eager        the eager run's facts (output shapes/dtypes); `matches_eager` compares compiled and eager
  dynamic      true for a `--dynamic` capture (torch.compile(dynamic=True), no duck sizing): `call` binds size
               symbols from int arguments (`s77 = arg0_1`) and the inputs' asserted sizes, the kernels take numels

Modes: `--eager-only` runs the program in eager torch only (any device: the composer's check on CPU);
otherwise the program is compiled on the GPU. `--list FILE` runs many programs over `--jobs` child processes
(each serves programs one by one; a child that dies or overruns `--timeout` is a recorded reject and is
replaced), writing JSON lines to `--out`. The processes share the GPU's memory as a budget: each program's need is
estimated from its sizes on the meta device first, and it starts when that fits beside the programs running (one
larger than the budget runs alone). Nothing here is imported by the eval path.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
import traceback


def _configure_inductor(max_mm_configs):
    import torch._inductor.config as cfg
    cfg.fx_graph_cache = False           # every program goes through codegen, so the hook sees its code
    cfg.compile_threads = 1              # the parallelism is ours (one process per core)
    cfg.max_autotune_gemm = True         # GEMMs from Inductor's Triton templates, never extern_kernels
    cfg.max_autotune_gemm_backends = "TRITON"
    cfg.autotune_fallback_to_aten = False
    try:
        cfg.test_configs.max_mm_configs = max_mm_configs
    except AttributeError:
        pass


_ACTIVE = [None]   # the recorder of the capture under way: what a wrapped `call` reports to


class _Recorder:
    """Hooks Inductor's output-code callback, the compiled module's `call` and the autotuner's `run`. A wrapped
    `call` outlives the capture (PyCodeCache keeps its module): it reaches the recorder only through _ACTIVE,
    so that no program's inputs and outputs stay alive in the process after its capture (they did: 8 GB a
    KernelBench program, until the GPU was full)."""

    def __init__(self):
        self.codes = []
        self.calls = []          # (args list copy, result) per call of a compiled module
        self.launches = []
        self.recording = False
        self._undo = []

    def __enter__(self):
        from torch._inductor.graph import GraphLowering
        from torch._inductor.codecache import PyCodeCache
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
        rec = self

        old_save = GraphLowering.save_output_code
        GraphLowering.save_output_code = staticmethod(lambda code: rec.codes.append(code))
        self._undo.append(lambda: setattr(GraphLowering, "save_output_code", old_save))

        old_load = PyCodeCache.load_by_key_path.__func__

        def load_by_key_path(cls, *a, **k):
            mod = old_load(cls, *a, **k)
            call = getattr(mod, "call", None)
            if call is not None and not getattr(call, "_kiln_wrapped", False):
                def wrapped(args, _call=call):
                    active = _ACTIVE[0]
                    seen = list(args) if active is not None and active.recording else None
                    out = _call(args)
                    if seen is not None:
                        active.calls.append((seen, out))
                    return out
                wrapped._kiln_wrapped = True
                mod.call = wrapped
            return mod
        PyCodeCache.load_by_key_path = classmethod(load_by_key_path)
        self._undo.append(lambda: setattr(PyCodeCache, "load_by_key_path", classmethod(old_load)))

        old_run = CachingAutotuner.run

        def run(self_, *args, stream, **kwargs):
            out = old_run(self_, *args, stream=stream, **kwargs)
            if rec.recording:
                rec.launches.append(_launch_record(self_, args))
            return out
        CachingAutotuner.run = run
        self._undo.append(lambda: setattr(CachingAutotuner, "run", old_run))
        _ACTIVE[0] = self
        return self

    def __exit__(self, *exc):
        _ACTIVE[0] = None
        for undo in reversed(self._undo):
            undo()
        return False


def _launch_record(autotuner, args):
    import torch
    launcher = autotuner.launchers[0]
    cfg = launcher.config
    rec = {"kernel": autotuner.fn.__name__, "config": dict(cfg.kwargs), "num_warps": cfg.num_warps,
           "num_stages": cfg.num_stages, "grid": None,
           "args": [("tensor" if isinstance(a, torch.Tensor) else repr(a)) for a in args]}
    try:
        _, grid = autotuner._interpret_args_grid(args, cfg)
        rec["grid"] = [int(g) for g in grid]
    except Exception as e:  # noqa: BLE001 - a grid we cannot evaluate drops the sample later, with this reason
        rec["grid_error"] = f"{type(e).__name__}: {e}"
    return rec


def _load_program(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"kiln_datagen_prog_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, attr):
            raise ValueError(f"{path}: no {attr}")
    return mod


def _describe(x):
    import torch
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""), "stride": list(x.stride())}
    if isinstance(x, (list, tuple)):
        return [_describe(v) for v in x]
    return repr(x)


def _flat_tensors(x):
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _flat_tensors(v)]
    return []


def _same_tensor(a, b):
    return a is b or (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
                      and a.dtype == b.dtype)


def _map_call_args(seen, inputs, model):
    import torch
    named = [("param", n, p) for n, p in model.named_parameters()] + \
            [("buffer", n, b) for n, b in model.named_buffers()]
    out = []
    for a in seen:
        if isinstance(a, torch.Tensor):
            hit = next(({"kind": "input", "index": i} for i, t in enumerate(inputs)
                        if isinstance(t, torch.Tensor) and _same_tensor(a, t)), None)
            if hit is None:
                hit = next(({"kind": k, "name": n} for k, n, t in named if _same_tensor(a, t)), None)
            out.append(hit or {"kind": "unknown_tensor", **_describe(a)})
        elif isinstance(a, (int, float, bool)):
            out.append({"kind": "scalar", "value": a})
        else:
            out.append({"kind": "unknown", "repr": repr(a)[:200]})
    return out


def _map_outputs(call_out, result):
    flat = list(call_out) if isinstance(call_out, (list, tuple)) else [call_out]
    mapped = []
    for t in _flat_tensors(result):
        idx = next((i for i, c in enumerate(flat) if hasattr(c, "data_ptr") and _same_tensor(t, c)), None)
        mapped.append({"call_output": idx, **_describe(t)})
    return mapped


def _close(a, b):
    import torch
    fa, fb = _flat_tensors(a), _flat_tensors(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        tol = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-3
        xf, yf = x.reshape(-1), y.reshape(-1)
        for at in range(0, xf.numel(), _CLOSE_CHUNK):   # in chunks: allclose's temporaries are 3x its inputs
            a, b = xf[at:at + _CLOSE_CHUNK].float(), yf[at:at + _CLOSE_CHUNK].float()
            if not torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=True):
                return False
    return True


_CLOSE_CHUNK = 1 << 26


def _compile(model, dynamic):
    """torch.compile of the model; dynamic: every input dim symbolic (sizes 0 and 1 still specialised) and no duck
    sizing, so that two dims of equal size at the capture stay two symbols (one would tie them at other shapes)."""
    import torch
    if not dynamic:
        return torch.compile(model)
    import torch.fx.experimental._config as fx_config
    fx_config.use_duck_shape = False
    return torch.compile(model, dynamic=True)


def capture_one(path, eager_only=False, seed=1234, max_mm_configs=2, dynamic=False):
    """One program: eager run, then (unless eager_only) compile and capture. Returns the record. dynamic: the
    capture of torch.compile(dynamic=True): kernels and `call` take sizes as symbols (src/datagen/inductor_dynamic.cc
    binds them to the inputs' shapes)."""
    import torch
    t0 = time.time()
    rec = {"path": path, "ok": False, "stage": "load"}
    device = "cuda" if (torch.cuda.is_available() and not eager_only) else "cpu"
    try:
        mod = _load_program(path)
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        # drawn on the device itself: KernelBench's GB-sized inputs took seconds per program on the host
        with torch.device(device):
            torch.manual_seed(seed)
            init = mod.get_init_inputs()
            torch.manual_seed(12345)
            model = mod.Model(*init).to(device).eval()
            torch.manual_seed(seed)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
        rec["stage"] = "eager"
        with torch.no_grad():
            ref = model(*inputs)
        flat = _flat_tensors(ref)
        if not flat:
            raise ValueError("the forward returns no tensor")
        for t in flat:
            if t.is_floating_point() and not torch.isfinite(t).all():
                raise ValueError("the eager output holds inf or nan")
        rec["eager"] = {"device": device, "output": _describe(ref), "inputs": _describe(inputs)}
        if eager_only:
            rec["ok"] = True
            return rec
        if device != "cuda":
            rec["stage"] = "no_gpu"
            raise RuntimeError("no GPU: Inductor emits Triton for CUDA only (record captures on a GPU host)")
        rec["stage"] = "compile"
        torch._dynamo.reset()
        with _Recorder() as r, torch.no_grad():
            compiled = _compile(model, dynamic)
            compiled(*inputs)                      # compiles and autotunes
            rec["stage"] = "run"
            r.recording = True
            out = compiled(*inputs)                # the recorded call: chosen configs, grids, arguments
            r.recording = False
        rec["codes"] = list(dict.fromkeys(r.codes))
        rec["launches"] = r.launches
        rec["dynamic"] = bool(dynamic)
        rec["matches_eager"] = _close(out, ref)
        rec["stage"] = "map"
        if len(r.calls) != 1:
            raise ValueError(f"{len(r.calls)} compiled graphs ran (graph breaks); one is needed")
        seen, call_out = r.calls[0]
        rec["call_args"] = _map_call_args(seen, inputs, model)
        rec["outputs"] = _map_outputs(call_out, out)
        rec["ok"] = True
    except Exception as e:  # noqa: BLE001 - every failure is a recorded reject, never a stopped run
        rec["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
        rec["traceback"] = traceback.format_exc()[-3000:]
        rec["out_of_memory"] = _is_oom(rec["error"])
    finally:
        rec["seconds"] = round(time.time() - t0, 3)
        if device == "cuda":
            try:
                rec["gpu_peak_bytes"] = torch.cuda.max_memory_allocated()
            except Exception:  # noqa: BLE001 - a figure for the report, never a lost record
                pass
    return rec


# A program's GPU memory while captured, from its sizes: its inputs and weights once, its result four times (the
# eager result, the compiled one, the copy of output buffers Inductor's autotuner benchmarks on, and the eager
# run's temporaries), three times what its largest intermediate exceeds the result by (a convolution's output
# before a pooling), and 1 GiB for Inductor's workspace and the allocator's rounding. On an H100 (session 10, 139
# KernelBench modules): 22.5 GB at the peak for the 6 GB activations (estimate 25), the peak above the estimate
# for 11 small ones (at most 1.8x; it was 30, up to 5.4x, without the intermediate's term).
_IN_FACTOR, _OUT_FACTOR, _MID_FACTOR, _OVERHEAD = 1, 4, 3, 1 << 30
_CONTEXT_BYTES = 512 << 20       # each capture process's own CUDA context, outside the budget


def _tree_bytes(x):
    return sum(t.numel() * t.element_size() for t in _flat_tensors(x))


def estimate_bytes(path):
    """The program's GPU memory while captured, estimated without allocating anything: get_init_inputs, Model,
    get_inputs and the forward on the meta device. None when they do not run there (a data-dependent size,
    .item()): the program is then admitted as small (an out-of-memory error still runs it again alone)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Largest(TorchDispatchMode):
        """The largest tensor an operator of the forward makes."""
        bytes = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.bytes = max(self.bytes, _tree_bytes(out))
            return out

    try:
        mod = _load_program(path)
        with torch.device("meta"), torch.no_grad():
            model = mod.Model(*mod.get_init_inputs())
            inputs = list(mod.get_inputs())
            held = _tree_bytes(inputs) + _tree_bytes(list(model.parameters()) + list(model.buffers()))
            largest = Largest()
            try:
                with largest:
                    out = _tree_bytes(model(*inputs))
            except Exception:  # noqa: BLE001 - a forward meta tensors cannot run: its result as large as its inputs
                out = _tree_bytes(inputs)
        mid = max(0, largest.bytes - out)
        return _IN_FACTOR * held + _OUT_FACTOR * out + _MID_FACTOR * mid + _OVERHEAD
    except Exception:  # noqa: BLE001 - the capture itself reports the program's errors
        return None


def _gpu_memory():
    """(free, total) bytes of the GPU this process uses; (0, 0) without one."""
    import torch
    if not torch.cuda.is_available():
        return 0, 0
    return torch.cuda.mem_get_info()


class _Admission:
    """GPU memory as a budget shared by the capture processes: a program starts when its estimate fits beside
    those running, or when nothing runs (one larger than the whole budget runs alone). Disabled (every program
    admitted) when the capacity is 0 (no GPU, and no --gpu-memory)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.in_use = 0
        self.running = 0
        self.max_in_use = 0
        self.max_running = 0
        self.cv = threading.Condition()

    def fits(self, need, reserve=0):
        """(Under self.cv.) Whether `need` bytes may start now, leaving `reserve` bytes for a program that waits
        (so that a large program waiting aside is not starved by smaller ones that keep starting before it)."""
        return not self.capacity or not self.running or self.in_use + (need or 0) + reserve <= self.capacity

    def take(self, need):
        """(Under self.cv.) Starts a program of `need` bytes."""
        self.in_use += need or 0
        self.running += 1
        self.max_in_use = max(self.max_in_use, self.in_use)
        self.max_running = max(self.max_running, self.running)

    def try_acquire(self, need, reserve=0):
        with self.cv:
            if not self.fits(need, reserve):
                return False
            self.take(need)
            return True

    def release(self, need):
        with self.cv:
            self.in_use -= need or 0
            self.running -= 1
            self.cv.notify_all()


def _is_oom(error):
    return any(m in error for m in ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "OutOfMemoryError"))


def _release():
    """Between programs: drop compiled graphs and give cached GPU memory back, so that the processes sharing the
    GPU see it free (a cached program's tensors made its neighbours run out of memory)."""
    import gc
    import torch
    torch._dynamo.reset()
    try:
        from torch._inductor.codecache import PyCodeCache
        PyCodeCache.cache_clear()          # the program's output modules (and what they hold)
    except Exception:  # noqa: BLE001 - an Inductor without it: the modules stay, their recorder does not
        pass
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _serve(args):
    """Child: one program path per stdin line -> one JSON record per stdout line."""
    import torch
    _configure_inductor(args.max_mm_configs)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                       # whatever a program prints goes to stderr, not the protocol
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("probe"):
            free, total = _gpu_memory()
            out.write(json.dumps({"estimate_bytes": estimate_bytes(req["path"]), "gpu_free": free,
                                  "gpu_total": total}) + "\n")
            out.flush()
            continue
        rec = capture_one(req["path"], eager_only=args.eager_only, seed=args.seed,
                          max_mm_configs=args.max_mm_configs, dynamic=args.dynamic)
        _release()
        rec["id"] = req["id"]
        rec["versions"] = {"torch": torch.__version__}
        out.write(json.dumps(rec) + "\n")
        out.flush()


class _Child:
    def __init__(self, args, visible=None):
        cmd = [sys.executable, "-m", "kiln_worker.inductor_capture", "--serve", "--seed", str(args.seed),
               "--max-mm-configs", str(args.max_mm_configs)] + (["--eager-only"] if args.eager_only else []) + \
              (["--dynamic"] if args.dynamic else [])
        env = None if visible is None else dict(os.environ, CUDA_VISIBLE_DEVICES=visible)
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, start_new_session=True, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, item, timeout):
        self.p.stdin.write(json.dumps(item) + "\n")
        self.p.stdin.flush()
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None, "timeout"
        return (json.loads(line), None) if line else (None, f"crashed (exit {self.p.wait()})")

    def kill(self):
        try:
            os.killpg(self.p.pid, 9)
        except OSError:
            pass
        self.p.wait()


def _visible_gpus(limit):
    """The GPUs the capture processes spread over, as CUDA_VISIBLE_DEVICES entries: those the environment's
    CUDA_VISIBLE_DEVICES lists, else every device torch counts; the first `limit` of them (0: all; 1: no need to
    look, the environment's GPU)."""
    if limit == 1:
        return [None]
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        ids = [d.strip() for d in env.split(",") if d.strip()]
    else:
        import torch
        ids = [str(i) for i in range(torch.cuda.device_count())]
    return ids[:limit] if limit > 0 else ids


class _Gpu:
    """One GPU's share of a list capture: the CUDA_VISIBLE_DEVICES its processes get (None: the environment's,
    one GPU or none), how many processes it has, its memory budget (made from its first probe, or --gpu-memory)
    and the programs waiting for its memory: (item, estimate, need, since), under the budget's lock."""

    def __init__(self, visible, jobs):
        self.visible = visible
        self.jobs = jobs
        self.admission = None
        self.deferred = []


def run_list(args):
    # The processes spread over the GPUs (process i on GPU i mod n), each GPU a memory budget of its own; found
    # before the deadline's clock starts (counting them may import torch).
    jobs = max(1, args.jobs)
    ids = _visible_gpus(args.gpus)
    n = min(len(ids), jobs)
    if n > 1:
        gpus = [_Gpu(ids[i], len(range(i, jobs, n))) for i in range(n)]
    else:
        gpus = [_Gpu(None, jobs)]
    items = [json.loads(l) for l in open(args.list) if l.strip()]
    done = set()
    if os.path.exists(args.out):               # resumable: programs already recorded are skipped
        for l in open(args.out):
            try:
                rec = json.loads(l)
                # a GPU host captures what a CPU run could not; a program that ran out of memory beside
                # others is tried again
                if rec.get("stage") != "no_gpu" and not rec.get("out_of_memory"):
                    done.add(rec["id"])
            except (ValueError, KeyError):
                pass
    todo = queue.Queue()
    for it in items:
        if it["id"] not in done:
            todo.put(it)
    lock = threading.Lock()
    outf = open(args.out, "a")
    counts = {"ok": 0, "rejected": 0}
    t0 = time.time()

    alone = {}                                 # ran out of memory beside others: tried again by itself

    def write(it, rec):
        with lock:
            outf.write(json.dumps(rec) + "\n")
            outf.flush()
            counts["ok" if rec["ok"] else "rejected"] += 1
            n = counts["ok"] + counts["rejected"]
            print(f"[{n}/{len(items) - len(done)}] {it['id']}: "
                  f"{'ok' if rec['ok'] else 'reject ' + rec.get('stage', '') + ' ' + rec.get('error', '')[:120]}"
                  f" ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)

    def admission_for(gpu, probe):
        with lock:
            if gpu.admission is None:
                cap = int(args.gpu_memory)
                if not cap and probe.get("gpu_total"):
                    cap = int(0.9 * probe["gpu_total"]) - gpu.jobs * _CONTEXT_BYTES
                gpu.admission = _Admission(max(0, cap))
            return gpu.admission

    def past_deadline():
        return bool(args.deadline) and time.time() - t0 > args.deadline

    # Programs that did not fit beside those running when drawn wait here, so that their process takes another
    # one meanwhile (a KernelBench module of 30 GB must not hold a process, nor the small programs behind it);
    # they come first once they fit, and when nothing new is left their processes wait for them. The first one
    # waiting, once it has waited --reserve-after seconds, holds a reservation: another program starts only if it
    # fits beside it, so memory freed by those running goes to it (an H100 run of session 11 left 10 KernelBench
    # modules of 25 to 35 GB waiting until the deadline while smaller ones kept taking the memory).
    def reserve_for(gpu, i):
        """(Under the GPU's budget lock.) The bytes kept for the first program waiting, for the one at index i
        of `gpu.deferred` (or a new program: i = len(gpu.deferred))."""
        deferred = gpu.deferred
        if i == 0 or not deferred or time.time() - deferred[0][3] < args.reserve_after:
            return 0
        return deferred[0][2]

    def take_deferred(gpu, block):
        adm = gpu.admission
        if adm is None:
            return None
        with adm.cv:
            while True:
                for i, (it, est, need, _) in enumerate(gpu.deferred):
                    if adm.fits(need, reserve_for(gpu, i)):
                        del gpu.deferred[i]
                        adm.take(need)
                        return it, est, need
                if not block or not gpu.deferred or past_deadline():
                    return None
                adm.cv.wait(0.5)

    def slot(source, retry_oom, gpu):
        child = None
        while not past_deadline():             # past it, the rest stays uncaptured; a later run resumes there
            got = take_deferred(gpu, block=False)
            if got is None:
                try:
                    it = source.get_nowait()
                except queue.Empty:
                    got = take_deferred(gpu, block=True)
                    if got is None:
                        break
            if got is None:
                if child is None:
                    child = _Child(args, gpu.visible)
                # its memory first (sizes on the meta device): it starts when that fits beside those running
                probe, err = child.ask({**it, "probe": True}, args.timeout)
                if probe is None:
                    child.kill()
                    child = None
                    write(it, {"id": it["id"], "path": it["path"], "ok": False, "stage": "load",
                               "error": f"estimating its GPU memory: {err}"})
                    continue
                adm = admission_for(gpu, probe)
                est = probe.get("estimate_bytes")
                need = (est or 0) if adm.capacity else 0
                with adm.cv:
                    if not adm.try_acquire(need, reserve_for(gpu, len(gpu.deferred))):
                        gpu.deferred.append((it, est, need, time.time()))
                        continue
                got = (it, est, need)
            it, est, need = got
            adm = gpu.admission
            if child is None:
                child = _Child(args, gpu.visible)
            try:
                rec, err = child.ask(it, args.timeout)
            finally:
                adm.release(need)
            if rec is None:
                child.kill()
                child = None
                rec = {"id": it["id"], "path": it["path"], "ok": False, "stage": "compile", "error": err}
            rec["estimate_bytes"] = est
            if retry_oom and rec.get("out_of_memory"):
                with lock:
                    alone[it["id"]] = (it, rec)
                    # without a memory budget, the GPU is full at this concurrency: one process fewer (down to
                    # one); with one, this program's estimate was short (it alone runs again, by itself)
                    retire = not adm.capacity and active[0] > 1
                    if retire:
                        active[0] -= 1
                if retire:
                    print(f"{it['id']} ran out of memory beside others: {active[0]} process(es) go on",
                          file=sys.stderr, flush=True)
                    break
                continue
            if not retry_oom:
                alone.pop(it["id"], None)
                rec["retried_alone"] = True
            write(it, rec)
        if child is not None:
            child.p.stdin.close()
            child.p.wait()

    active = [jobs]                            # processes still taking programs
    threads = [threading.Thread(target=slot, args=(todo, jobs > 1, gpus[i % len(gpus)])) for i in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A GPU is shared by its processes: a program that ran out of memory beside the others runs again with
    # the first GPU to itself (one process, after the others finished). Those the deadline leaves keep their
    # out-of-memory record (captured again by a later run).
    if alone:
        print(f"{len(alone)} program(s) ran out of memory beside others: again, one at a time",
              file=sys.stderr, flush=True)
        again = queue.Queue()
        for it, _ in list(alone.values()):
            again.put(it)
        slot(again, False, gpus[0])
        for it, rec in list(alone.values()):
            rec["retry_skipped"] = "deadline"
            write(it, rec)
    outf.close()
    summary = {"ok": counts["ok"], "rejected": counts["rejected"], "seconds": round(time.time() - t0, 1)}
    if len(gpus) > 1:
        summary["gpus"] = len(gpus)
    budgets = [g.admission for g in gpus if g.admission and g.admission.capacity]
    if budgets:                                # per GPU: the first one's budget, the most any one held
        summary.update(gpu_budget_bytes=budgets[0].capacity, max_admitted_bytes=max(a.max_in_use for a in budgets),
                       max_running=max(a.max_running for a in budgets))
    print(json.dumps(summary))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kiln_worker.inductor_capture")
    ap.add_argument("--list", help="JSON lines {id, path}: programs to capture")
    ap.add_argument("--out", help="JSON lines written (appended; ids already there are skipped)")
    ap.add_argument("--program", help="one program: print its record")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per program")
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="--list: start no program after this many seconds (0: no limit)")
    ap.add_argument("--gpu-memory", type=float, default=0,
                    help="--list: bytes of GPU memory the programs share (0: 90%% of the GPU's, less each "
                         "process's context; no budget without a GPU)")
    ap.add_argument("--gpus", type=int, default=0,
                    help="--list: spread the processes over this many GPUs (0: every one CUDA_VISIBLE_DEVICES "
                         "lists, else every one torch counts); --gpu-memory is then each GPU's budget")
    ap.add_argument("--reserve-after", type=float, default=10.0,
                    help="seconds a program waits for GPU memory before the memory freed is kept for it")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--max-mm-configs", type=int, default=2, help="GEMM template configs Inductor autotunes")
    ap.add_argument("--eager-only", action="store_true", help="check that programs run in eager torch only")
    ap.add_argument("--dynamic", action="store_true",
                    help="compile with torch.compile(dynamic=True): kernels and call take the sizes as symbols")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        _serve(args)
        return 0
    if args.program:
        if not args.eager_only:
            _configure_inductor(args.max_mm_configs)
        print(json.dumps(capture_one(args.program, eager_only=args.eager_only, seed=args.seed,
                                     max_mm_configs=args.max_mm_configs, dynamic=args.dynamic)))
        return 0
    if not (args.list and args.out):
        ap.error("--list and --out (or --program) are required")
    return run_list(args)


if __name__ == "__main__":
    sys.exit(main())
