"""Runtime anti-hacking instruments: identity snapshots of functions a candidate could patch, a dispatch
mode that records aten operators (and poisons fresh allocations), stream-creation and reference-call
guards, and an audit hook for introspection, file writes, processes, sockets and ctypes."""
from __future__ import annotations

import builtins
import collections
import contextlib
import math
import os
import sys
import sysconfig
import threading
import time
import types

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import platform as plat

# ----------------------------------------------------------------------------------------------
# Identity snapshots
# ----------------------------------------------------------------------------------------------

_TIMER_NAMES = {
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "torch.cuda.Event", "torch.cuda.synchronize",
    "torch.cuda.Event.elapsed_time", "torch.cuda.Event.record", "torch.cuda.Event.synchronize",
    "triton.testing.do_bench", "triton.testing.do_bench_cudagraph", "torch.cuda.graph",
    "torch.cuda.CUDAGraph", "torch.cuda.CUDAGraph.replay",
}


def _namespaces():
    import triton
    import triton.language as tl
    import triton.testing
    import torch.nn.functional as F
    import torch.testing
    spaces = {
        "time": time, "torch": torch, "torch.Tensor": torch.Tensor, "torch.nn.functional": F,
        "torch.testing": torch.testing, "torch.cuda": torch.cuda, "torch.nn.Module": torch.nn.Module,
        "torch.cuda.Event": torch.cuda.Event, "triton": triton, "triton.language": tl,
        "triton.testing": triton.testing, "builtins": builtins, "math": math, "torch.linalg": torch.linalg,
        "torch.fft": torch.fft, "torch.special": torch.special, "torch.cuda.CUDAGraph": torch.cuda.CUDAGraph,
        "triton.runtime.jit.JITFunction": __import__("triton.runtime.jit", fromlist=["x"]).JITFunction,
        "torch._C._TensorBase": torch._C.TensorBase,
    }
    return spaces


_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__matmul__",
            "__getitem__", "__setitem__", "__bool__", "__float__", "__abs__", "__sub__", "__truediv__", "__init__",
            "__call__", "__new__")


def _attrs(obj):
    try:
        d = dict(vars(obj))
    except TypeError:
        d = {}
    if isinstance(obj, type):  # classes: also the operators they inherit (a patch may add them to the class)
        for k in _DUNDERS:
            if k not in d:
                for base in obj.__mro__[1:]:
                    if k in vars(base):
                        d[k] = vars(base)[k]   # stable objects (getattr would make a new wrapper)
                        break
    return d


def _watchable(v) -> bool:
    """Functions, classes and modules are watched; plain data (flags such as torch.cuda._initialized,
    counters, caches) legitimately changes when CUDA initialises lazily and is not a patch."""
    return callable(v) or isinstance(v, (type, types.ModuleType))


# The worker's own lazily filled module state (None until first use, then set by the worker itself: the
# cold-L2 buffer at the first cold-L2 timing, the task temp directory, the interpreter's device shim). A
# candidate is only ever run between two snapshots, so the first use inside a candidate's evaluation would
# read as a patch (on the GPU the first candidate timed with cold-L2 events was rejected `patched_worker`).
_WORKER_LAZY = frozenset({"kiln_worker.timing._l2_buf", "kiln_worker.tasks._TMP", "kiln_worker.platform._shim_mode"})


def snapshot() -> dict:
    """Identity of every attribute of the watched namespaces and of the worker's own modules (less the
    worker's lazily filled state, _WORKER_LAZY)."""
    snap = {}
    for ns_name, ns in _namespaces().items():
        for k, v in _attrs(ns).items():
            if k.startswith("__") and k not in _DUNDERS:
                continue
            if not _watchable(v):
                continue
            snap[f"{ns_name}.{k}"] = id(v)
    for mname, m in list(sys.modules.items()):
        if mname == "kiln_worker" or mname.startswith("kiln_worker."):
            for k, v in _attrs(m).items():
                if not k.startswith("__") and f"{mname}.{k}" not in _WORKER_LAZY:
                    snap[f"{mname}.{k}"] = id(v)
    return snap


def _global_settings():
    """(name, getter, setter) of torch's process-wide settings that change how fast (or how precisely) the
    reference runs: a candidate that turns off cuDNN or flash attention slows the reference it is compared
    with. Missing ones (older torch, no CUDA) are skipped."""
    b = torch.backends
    out = []

    def attr(name, obj, field):
        if obj is not None and hasattr(obj, field):
            out.append((name, lambda: getattr(obj, field), lambda v: setattr(obj, field, v)))

    attr("torch.backends.cudnn.enabled", b.cudnn, "enabled")
    attr("torch.backends.cudnn.benchmark", b.cudnn, "benchmark")
    attr("torch.backends.cudnn.deterministic", b.cudnn, "deterministic")
    attr("torch.backends.cudnn.allow_tf32", b.cudnn, "allow_tf32")
    m = getattr(b.cuda, "matmul", None)
    for f in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        attr(f"torch.backends.cuda.matmul.{f}", m, f)
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        get, put = getattr(b.cuda, f"{kind}_sdp_enabled", None), getattr(b.cuda, f"enable_{kind}_sdp", None)
        if get and put:
            out.append((f"torch.backends.cuda.{kind}_sdp_enabled", get, put))
    out.append(("torch.get_float32_matmul_precision", torch.get_float32_matmul_precision,
                torch.set_float32_matmul_precision))
    out.append(("torch.are_deterministic_algorithms_enabled", torch.are_deterministic_algorithms_enabled,
                lambda v: torch.use_deterministic_algorithms(v)))
    out.append(("torch.is_grad_enabled", torch.is_grad_enabled, torch.set_grad_enabled))
    out.append(("torch.get_default_dtype", torch.get_default_dtype, torch.set_default_dtype))
    out.append(("torch.get_num_threads", torch.get_num_threads, torch.set_num_threads))
    return out


_SETTINGS = _global_settings()   # bound at import, before any candidate


def global_state() -> dict:
    st = {}
    for name, get, _ in _SETTINGS:
        try:
            st[name] = get()
        except Exception:
            pass
    return st


def restore_global_state(saved: dict) -> list:
    """Puts back every setting that differs from `saved`; -> the names that had changed."""
    changed = []
    for name, get, put in _SETTINGS:
        if name not in saved:
            continue
        try:
            if get() != saved[name]:
                changed.append(name)
                put(saved[name])
        except Exception:
            pass
    return changed


_PRISTINE = {}


def save_pristine():
    """At worker start: the values of every watched attribute, to undo a candidate's patches afterwards."""
    for ns_name, ns in _namespaces().items():
        for k, v in _attrs(ns).items():
            if _watchable(v):
                _PRISTINE[(ns_name, k)] = (ns, v)
    for mname, m in list(sys.modules.items()):
        if mname == "kiln_worker" or mname.startswith("kiln_worker."):
            for k, v in _attrs(m).items():
                if _watchable(v):
                    _PRISTINE[(mname, k)] = (m, v)


def restore_pristine():
    """Puts back every watched attribute a candidate replaced or deleted (shared/fresh isolation)."""
    restored = 0
    for (ns_name, k), (ns, v) in _PRISTINE.items():
        try:
            cur = vars(ns).get(k, _MISSING)
        except TypeError:
            continue
        if cur is _MISSING and isinstance(ns, type) and k in _DUNDERS:
            continue  # inherited, never in the class dict
        if cur is not v:
            try:
                setattr(ns, k, v)
                restored += 1
            except (AttributeError, TypeError):
                pass
    for (ns_name, k), (ns, v) in list(_PRISTINE.items()):
        if isinstance(ns, type) and k in _DUNDERS and k in vars(ns) and vars(ns)[k] is not v:
            try:
                delattr(ns, k)   # a candidate added an operator to the class dict: drop it
                restored += 1
            except (AttributeError, TypeError):
                pass
    return restored


_MISSING = object()


def reset_flags():
    FLAGS.streams_created = 0
    FLAGS.reference_called = 0
    FLAGS.events.clear()
    FLAGS.event_detail.clear()
    FLAGS.in_candidate = False
    FLAGS.host_elements = 0
    HARNESS_CODE.clear()   # the next task registers its own


def compare_snapshots(before: dict, after: dict):
    """-> list of (code, name) for changed identities (additions are ignored: lazy imports add)."""
    out = []
    for name, ident in before.items():
        if name in after and after[name] != ident:
            out.append((classify_patch(name), name))
    # deleted attributes also count
    for name in before:
        if name not in after and not name.startswith("kiln_worker"):
            out.append((classify_patch(name), name))
    return out


def classify_patch(name: str) -> str:
    if name in _TIMER_NAMES or name.startswith("time."):
        return "patched_timer"
    if name.startswith("kiln_worker"):
        return "patched_worker"
    if name.startswith("builtins.") or name.startswith("math."):
        return "patched_builtins"
    if name.startswith("triton"):
        return "patched_triton"
    return "patched_torch"


# ----------------------------------------------------------------------------------------------
# Dispatch recording (aten ops) + poisoning of fresh allocations
# ----------------------------------------------------------------------------------------------

STRUCTURAL = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones",
    "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "fill", "fill_", "zero_", "zero",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "as_strided_", "expand", "permute",
    "transpose", "transpose_", "t", "squeeze", "unsqueeze", "squeeze_", "unsqueeze_", "flatten", "unflatten",
    "contiguous", "clone", "copy_", "_to_copy", "to", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "slice", "select", "narrow", "split", "split_with_sizes", "chunk", "unbind", "set_", "resize_",
    "arange", "randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal_", "uniform_",
    "random_", "bernoulli_", "_local_scalar_dense", "item", "sym_size", "sym_stride", "sym_numel",
    "is_nonzero", "view_as", "expand_as", "reshape_as", "stride", "size", "numel", "dim", "_copy_from",
    "_copy_from_and_resize", "scalar_tensor", "tensor", "linspace", "detach_", "_has_compatible_shallow_copy_type",
    "cat", "stack", "movedim", "diagonal", "unfold", "split_copy", "select_copy", "slice_copy",
    "is_same_size", "_unsafe_index", "resolve_conj", "resolve_neg", "_conj", "record_stream",
}

HEAVY = {
    "mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "linear", "convolution", "_convolution",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cudnn_convolution", "mkldnn_convolution", "_softmax", "_log_softmax", "softmax", "log_softmax",
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "native_group_norm", "_fused_rms_norm", "rms_norm", "cumsum", "cumprod", "sort", "topk", "einsum",
    "max_pool2d_with_indices", "avg_pool2d", "max_pool3d_with_indices", "avg_pool3d", "_cdist_forward",
    "_weight_int8pack_mm", "_int_mm", "_scaled_mm", "embedding_bag", "_embedding_bag", "dot", "vdot", "mv",
    "addmv", "tensordot", "kron", "fft_r2c", "fft_c2c", "_fft_r2c", "_fft_c2c", "_fft_c2r", "logsumexp",
}

_POISON_INT = {torch.float32: (torch.int32, 0x7FC0DEAD - (1 << 32) if 0x7FC0DEAD >= (1 << 31) else 0x7FC0DEAD),
               torch.float16: (torch.int16, 0x7E5A),
               torch.bfloat16: (torch.int16, 0x7FDA),
               torch.float64: (torch.int64, 0x7FF8DEADBEEFDEAD)}


# The other fill for the reference-instability probe (evaluate._compare_stable): finite values and other
# sentinels, so a reference output that depends on memory nobody wrote changes between the two fills.
ALT_FILL = {"on": False}
ALT_FLOAT = 1.5e3


def poison_fill(t: torch.Tensor):
    """Fill a fresh tensor with a recognisable NaN (floats) or a sentinel (ints)."""
    try:
        if t.numel() == 0 or not t.is_contiguous():
            return
        if ALT_FILL["on"]:
            if t.dtype.is_floating_point or t.dtype.is_complex:
                t.fill_(ALT_FLOAT)
            elif t.dtype != torch.bool:
                t.fill_(37)
            return
        spec = _POISON_INT.get(t.dtype)
        if spec is not None:
            t.view(spec[0]).fill_(spec[1])
        elif t.dtype in (torch.int32, torch.int64, torch.int16):
            t.fill_(-0x5A5A5A5)
        elif t.dtype == torch.int8:
            t.fill_(-91)
        elif t.dtype == torch.uint8:
            t.fill_(0xA5)
    except Exception:
        pass


def is_poison(t: torch.Tensor) -> torch.Tensor | None:
    """Bool mask of elements still holding the poison pattern (floats only)."""
    spec = _POISON_INT.get(t.dtype)
    if spec is None or not t.is_contiguous():
        return None
    return t.view(spec[0]) == spec[1]


_FRESH = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}

# Code objects of the task's harness (TritonBench's test_* code below the separator, KernelBench's get_inputs /
# get_init_inputs, a kiln bench file's input code), registered when a task's module loads. An integer or bool
# tensor the harness itself allocates with torch.empty* is zero-filled instead of sentinel-filled: test authors
# saw fresh cudaMalloc memory (zeros) and some use such tensors as indices. Floats keep the NaN poison, and
# allocations made by candidate (or reference) code keep the full poisoning.
HARNESS_CODE = set()
_SKIP_DIRS = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(os.path.abspath(__file__)) + os.sep)


def register_harness(code, after_line=0, skip_names=(), only_names=None):
    """Registers the code objects nested in the module code `code` that start after line `after_line`, with
    everything nested in them; top-level functions (or classes) named in `skip_names`, or not named in
    `only_names` when given, are left out."""
    def add(c):
        HARNESS_CODE.add(c)
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                add(k)

    def visit(c, top):
        for k in c.co_consts:
            if not isinstance(k, types.CodeType):
                continue
            if top and (k.co_name in skip_names or (only_names is not None and k.co_name not in only_names)):
                continue
            if k.co_firstlineno > after_line:
                add(k)
            else:
                visit(k, False)
    visit(code, True)


def _harness_caller() -> bool:
    """True when the nearest frame outside torch and the worker is harness code."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_SKIP_DIRS):
        f = f.f_back
    return f is not None and f.f_code in HARNESS_CODE


def _shapes(args, kwargs):
    shapes = []

    def visit(a):
        if isinstance(a, torch.Tensor):
            shapes.append(tuple(a.shape))
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)
    for a in args:
        visit(a)
    for a in kwargs.values():
        visit(a)
    return tuple(shapes)


class OpRecorder(TorchDispatchMode):
    """Records (op, input shapes) for every aten op outside Triton launches; poisons fresh allocations."""

    def __init__(self, poison: bool):
        super().__init__()
        self.poison = poison
        self.ops = collections.Counter()          # "aten::mm" -> count
        self.calls = []                           # (short name, shapes, max numel)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if plat.LAUNCHES.in_launch:
            return out
        try:
            short = func.overloadpacket.__name__.rstrip("_") if not func.overloadpacket.__name__.endswith("__") \
                else func.overloadpacket.__name__
            base = func.overloadpacket.__name__
            self.ops["aten::" + base] += 1
            if base in _FRESH and self.poison and isinstance(out, torch.Tensor):
                if not (out.dtype.is_floating_point or out.dtype.is_complex) and _harness_caller():
                    out.zero_()   # harness index tables and counters (see HARNESS_CODE)
                else:
                    poison_fill(out)
            if base not in STRUCTURAL and short not in STRUCTURAL and not _harness_caller():
                # (ops of the task's harness, e.g. a TritonBench test preparing inputs, are not the candidate's)
                numel = 0
                for a in list(args) + list(kwargs.values()):
                    if isinstance(a, torch.Tensor):
                        numel = max(numel, a.numel())
                    elif isinstance(a, (list, tuple)):
                        for x in a:
                            if isinstance(x, torch.Tensor):
                                numel = max(numel, x.numel())
                if isinstance(out, torch.Tensor):
                    numel = max(numel, out.numel())
                self.calls.append((short, _shapes(args, kwargs), numel))
        except Exception:
            pass
        return out


# ----------------------------------------------------------------------------------------------
# Streams and reference calls
# ----------------------------------------------------------------------------------------------

class Flags:
    def __init__(self):
        self.streams_created = 0
        self.reference_called = 0
        self.events = collections.Counter()      # audit: code -> count
        self.event_detail = {}
        self.in_candidate = False
        self.candidate_files = set()
        self.host_elements = 0                   # tensor elements the candidate turned into numpy/lists


FLAGS = Flags()


def _counting_host_copy(name, orig):
    """Tensor.numpy / __array__ / tolist, counting the elements a running candidate takes out of torch:
    numpy (or Python) computing the result is invisible to the dispatcher (torch_compute). Conversions
    inside a Triton launch (the interpreter hands kernels numpy views) are not the candidate's."""
    def wrapper(self, *a, **k):
        # the task's harness (a TritonBench test returning `.cpu().numpy()`) is not the candidate
        if FLAGS.in_candidate and not plat.LAUNCHES.in_launch and not _harness_caller():
            try:
                FLAGS.host_elements += int(self.numel())
            except Exception:
                pass
        return orig(self, *a, **k)
    wrapper.__name__ = name
    wrapper.__qualname__ = "Tensor." + name
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    return wrapper


# Installed once, at import: part of the pristine state the patch checks compare against.
for _name in ("numpy", "__array__", "tolist"):
    _orig = getattr(torch.Tensor, _name, None)
    if _orig is not None and not getattr(_orig, "_kiln_counting", False):
        _w = _counting_host_copy(_name, _orig)
        _w._kiln_counting = True
        setattr(torch.Tensor, _name, _w)


@contextlib.contextmanager
def watch_streams():
    """While a candidate runs, creating a torch.cuda.Stream is recorded (then allowed)."""
    orig = torch.cuda.Stream
    orig_ext = getattr(torch.cuda, "ExternalStream", None)

    class WatchedStream(orig):  # type: ignore[misc,valid-type]
        def __new__(cls, *a, **k):
            # torch.cuda.current_stream() / default_stream() wrap an existing stream by passing
            # stream_id: that is not a new stream. Only a stream created from scratch counts.
            if "stream_id" not in k:
                FLAGS.streams_created += 1
            return orig(*a, **k)

    torch.cuda.Stream = WatchedStream
    try:
        yield
    finally:
        torch.cuda.Stream = orig
        if orig_ext is not None:
            torch.cuda.ExternalStream = orig_ext


def guard_reference(fn):
    """Wraps a reference callable: calling it while the candidate runs is recorded."""
    def guarded(*a, **k):
        if FLAGS.in_candidate:
            FLAGS.reference_called += 1
        return fn(*a, **k)
    guarded.__name__ = getattr(fn, "__name__", "reference")
    guarded.__qualname__ = getattr(fn, "__qualname__", "reference")
    return guarded


# ----------------------------------------------------------------------------------------------
# Audit hook: introspection, file writes, processes, sockets, ctypes (only while a candidate runs)
# ----------------------------------------------------------------------------------------------

_STDLIB = sysconfig.get_paths()["stdlib"]
_AUDIT_MAP = {
    "sys._getframe": "introspection", "sys._current_frames": "introspection",
    "gc.get_objects": "introspection", "gc.get_referrers": "introspection", "gc.get_referents": "introspection",
    "os.system": "process_spawn", "subprocess.Popen": "process_spawn", "os.exec": "process_spawn",
    "os.posix_spawn": "process_spawn", "os.spawn": "process_spawn", "os.fork": "process_spawn",
    "os.forkpty": "process_spawn", "os.kill": "process_spawn", "os.killpg": "process_spawn",
    "socket.connect": "network", "socket.bind": "network", "socket.sendto": "network",
    "ctypes.dlopen": "ctypes", "ctypes.dlsym": "ctypes", "ctypes.cdata": "ctypes", "ctypes.call_function": "ctypes",
    "ctypes.string_at": "ctypes", "ctypes.addressof": "ctypes",
    "os.remove": "file_write", "os.rename": "file_write", "os.unlink": "file_write", "os.rmdir": "file_write",
    "os.truncate": "file_write", "shutil.rmtree": "file_write", "os.chmod": "file_write",
}
_installed_audit = False


def _candidate_frame():
    f = sys._getframe(3)  # 0 this, 1 _audit_event, 2 _audit, 3 the code that raised the audit event
    while f is not None:
        fn = f.f_code.co_filename
        if fn in FLAGS.candidate_files:
            return True
        if fn.startswith(_STDLIB) and (fn.endswith("inspect.py") or fn.endswith("traceback.py")):
            f = f.f_back
            continue
        return False
    return False


def _direct_candidate_caller():
    """True when the nearest frame that is not the stdlib/inspect helper belongs to candidate code."""
    f = sys._getframe(3)
    while f is not None:
        fn = f.f_code.co_filename
        if fn in FLAGS.candidate_files:
            return True
        if fn.startswith(_STDLIB):
            f = f.f_back
            continue
        return False
    return False


# Per thread: our own sys._getframe below raises audit events too, and a flag shared by all threads would let
# an event of one thread (the candidate's) pass unseen while another (an autotune compile thread,
# precompile.py) is inside the hook.
_in_audit = threading.local()


def _audit(event, args):
    if not FLAGS.in_candidate or getattr(_in_audit, "on", False):
        return
    _in_audit.on = True
    try:
        _audit_event(event, args)
    finally:
        _in_audit.on = False


def _audit_event(event, args):
    code = _AUDIT_MAP.get(event)
    if code is None:
        if event == "open":
            try:
                mode = args[1] if len(args) > 1 else "r"
                flags = args[2] if len(args) > 2 else 0
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                          (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            except Exception:
                writing = False
            if not writing:
                return
            code = "file_write"
        else:
            return
    try:
        if code == "introspection":
            if not _candidate_frame():
                return
        elif not _direct_candidate_caller():
            return
    except Exception:
        return
    FLAGS.events[code] += 1
    FLAGS.event_detail.setdefault(code, f"{event}{tuple(str(a)[:80] for a in args[:2])}")


def install_audit_hook():
    global _installed_audit
    if not _installed_audit:
        sys.addaudithook(_audit)
        _installed_audit = True


@contextlib.contextmanager
def candidate_running():
    prev = FLAGS.in_candidate
    FLAGS.in_candidate = True
    try:
        yield
    finally:
        FLAGS.in_candidate = prev
