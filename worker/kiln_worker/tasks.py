"""Task loading for the four formats (kernelbench, tritonbench_g, tritonbench_t, kiln) into one shape:

    task.case_names                 every case the task offers
    task.default_cases()            the cases run when a request names none (interpreter: small ones)
    task.load_reference()           import the reference code
    task.load_candidate(src, name)  import candidate source as a fresh module (raises CandidateLoadError)
    task.inputs(case, seed)         fresh (args, kwargs) for a case, or None for self-contained cases
    task.reference(case) / task.candidate(case)   callables run as f(*args, **kwargs)
"""
from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import re
import sys
import tempfile
import types

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import guards
from . import platform as plat

# TritonBench's separator (docs/task-format.md, one rule with src/task FindSeparator): the first line made of
# exactly 146 '#' (trailing spaces, tabs or CR allowed) splits the module (above) from its test part (below).
# Every TritonBench-G and -T file uses it; a shorter or longer run of '#' is an ordinary comment.
SEP = "#" * 146
_SEP_LINE = re.compile(r"^#{146}[ \t\r]*$", re.M)
_counter = itertools.count()
_TMP = None


class CandidateLoadError(Exception):
    """The candidate could not be imported: `kind` is syntax_error, import_error or missing_entry."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class TaskError(Exception):
    """The task itself is broken (a protocol-level problem, not the candidate's)."""


class TaskFault(TaskError):
    """The task's own code (its harness: get_inputs, get_init_inputs, a bench's inputs(); its reference) raised.
    evaluate.Evaluator decides the blame: the task's (an error, no verdict) unless the candidate caused it."""

    def __init__(self, message, cause=None):
        super().__init__(message)
        self.cause = cause


# The temporary copy of every module load_module imported -> the file name the user knows it by.
SHOWN_NAMES = {}


def user_frame(e, files=None):
    """(shown name, line) of the innermost traceback frame of `e` (or of its causes) in a module kiln loaded
    (restricted to the temporary copies in `files` when given); None when there is none."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        tb, found = e.__traceback__, None
        while tb is not None:
            fn = tb.tb_frame.f_code.co_filename
            if fn in SHOWN_NAMES and (files is None or fn in files):
                found = (SHOWN_NAMES[fn], tb.tb_lineno)
            tb = tb.tb_next
        if found:
            return found
        e = e.__cause__ or e.__context__
    return None


def shown_paths(text):
    """`text` with the temporary copies' paths replaced by the names the user knows."""
    for tmp, shown in SHOWN_NAMES.items():
        text = text.replace(tmp, shown)
    return text


@contextlib.contextmanager
def harness(path, what):
    """Marks the task's own code: what it raises becomes a TaskFault naming the task (timeouts pass through)."""
    try:
        yield
    except TaskError:
        raise
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the task's code may raise anything
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        at = user_frame(e)
        where = f" (at {at[0]}:{at[1]})" if at else ""
        raise TaskFault(f"{path}: {what} raised {type(e).__name__}: {first}"[:600] + where, e) from e


def _tmpdir():
    global _TMP
    if _TMP is None:
        # KILN_WORKER_TMP: a directory the caller removes afterwards (kiln profile under ncu); else
        # $TMPDIR, which the C++ runner points at a directory of its own per worker process
        _TMP = tempfile.mkdtemp(prefix="kiln_worker_", dir=os.environ.get("KILN_WORKER_TMP") or None)
    return _TMP


def load_module(source: str, modname: str, filename: str, register_as=(), candidate=False, harness_after=None,
                harness_skip=(), harness_only=None, self_names=(), sibling_dir=None, as_main=False):
    """Imports `source` as a new module named `modname` from a real file (inspect/triton need source).
    as_main: its code sees `__name__ == "__main__"`, as a script run by `python FILE` does.
    harness_after: the functions defined after this line are the task's harness (guards.register_harness),
    except the top-level ones named in harness_skip (or not named in harness_only, when given)."""
    d = os.path.join(_tmpdir(), f"m{next(_counter)}")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, os.path.basename(filename) or "module.py")
    if not path.endswith(".py"):
        path += ".py"
    with open(path, "w") as f:
        f.write(source)
    SHOWN_NAMES[path] = os.path.basename(filename) or "module.py"
    if candidate:
        guards.FLAGS.candidate_files.add(path)
        plat.LAUNCHES.own_modules.add(modname)
    try:
        code = compile(source, path, "exec")
    except SyntaxError as e:
        raise CandidateLoadError("syntax_error", f"{os.path.basename(filename)}:{e.lineno}:{e.offset}: "
                                                 f"syntax error: {e.msg}") from e
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    if harness_after is not None:
        guards.register_harness(code, harness_after, harness_skip, harness_only)
    sys.modules[modname] = mod
    for alias in register_as:
        sys.modules[alias] = mod
    if self_names or sibling_dir:
        mod.__dict__["__builtins__"] = _scoped_builtins(mod, self_names, sibling_dir)
    if as_main:
        mod.__dict__["__name__"] = "__main__"
    exec(code, mod.__dict__)
    return mod


def _scoped_builtins(mod, self_names, sibling_dir):
    """builtins for one module whose __import__ resolves the module's own file name to the module itself
    (TritonBench-T's tanh_linear test does `from tanh_linear import tanh_linear`: the reference and the candidate
    each get their own), and a name of a sibling file in the task's directory to that file (loaded once)."""
    import builtins
    real = builtins.__import__

    def scoped_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            top = name.partition(".")[0]
            if name in self_names:
                return mod
            if sibling_dir and top not in sys.modules and top.isidentifier():
                path = os.path.join(sibling_dir, top + ".py")
                if os.path.isfile(path):
                    load_module(_read(path), top, top + ".py")
        return real(name, globals, locals, fromlist, level)
    b = dict(builtins.__dict__)
    b["__import__"] = scoped_import
    return b


@contextlib.contextmanager
def scratch_cwd():
    """The request runs in a fresh scratch directory: a module that writes files writes them there."""
    prev = os.getcwd()
    d = tempfile.mkdtemp(prefix="cwd", dir=_tmpdir())
    os.chdir(d)
    try:
        yield d
    finally:
        try:
            os.chdir(prev)
        except OSError:
            pass


def unique_name(prefix):
    return f"{prefix}_{os.getpid()}_{next(_counter)}"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise TaskError(f"cannot read {path}: {e}") from e


def clone_tree(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, tuple):
        return tuple(clone_tree(v) for v in x)
    if isinstance(x, list):
        return [clone_tree(v) for v in x]
    if isinstance(x, dict):
        return {k: clone_tree(v) for k, v in x.items()}
    return x


def to_device(x, device=None):
    """Every tensor of a nested structure on `device` (default: the worker's)."""
    if isinstance(x, torch.Tensor):
        return x.to(device or plat.DEVICE)
    if isinstance(x, tuple):
        return tuple(to_device(v, device) for v in x)
    if isinstance(x, list):
        return [to_device(v, device) for v in x]
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x


def seed_all(seed):
    import random
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np
        np.random.seed(seed % (1 << 32))
    except Exception:
        pass


def tree_bytes(x) -> int:
    """Bytes of every tensor in a nested structure."""
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(tree_bytes(v) for v in x)
    if isinstance(x, dict):
        return sum(tree_bytes(v) for v in x.values())
    return 0


class Task:
    format = "?"
    inputs_name = "the task's inputs"   # what makes a case's inputs, as error messages name it

    def __init__(self, spec: dict):
        self.spec = spec
        self.name = spec.get("name") or os.path.basename(spec.get("path", "task"))
        self.case_names = []
        self.tolerance = {}
        self.self_contained = set()   # cases whose callable makes its own inputs

    def default_cases(self, mode="check"):
        return list(self.case_names)

    def largest_cases(self, k, skip=0):
        """Cases for "@largest:K"; formats without a size sweep use all their cases (none below them: `skip`
        leaves nothing)."""
        return [] if skip > 0 else self.default_cases("time")

    def trials_for(self, case, trials):
        return trials

    def inputs_vary_with_seed(self, case):
        """Whether inputs(case, seed) draws other values for another seed (the timing stage draws a second
        set only then: a copy of the same values would cost memory and change nothing)."""
        return True

    # A baseline (kiln optimize's original, trusted): timed in place of the reference, interleaved with the
    # candidate in the same request, so that a candidate is compared with the original under one process,
    # one autotune pick of each and the same clocks. It is loaded like the reference (no candidate guards).
    def load_baseline(self, source, name):
        raise TaskError(f"a timing baseline is not supported for {self.format} tasks")

    def baseline(self, case):
        raise TaskError(f"a timing baseline is not supported for {self.format} tasks")

    # The race probe (evaluate._load_reference_probe): the reference module with its programs started in
    # reverse order, made by kiln from the task's file. Formats whose reference is the module's own code load
    # it; the others have none.
    def reference_probe(self, case):
        return None


# ----------------------------------------------------------------------------------------------
# KernelBench
# ----------------------------------------------------------------------------------------------

def _share_weights(ref, model):
    """The reference Model's weights into `model` when both have the same parameter names and shapes (a
    ModelNew usually mirrors the Model's layers); left as initialised otherwise."""
    try:
        rs, ms = ref.state_dict(), model.state_dict()
        if rs and set(rs) == set(ms) and all(rs[k].shape == ms[k].shape for k in rs):
            model.load_state_dict(rs)
    except Exception:  # noqa: BLE001 - a model without a usable state dict keeps its own weights
        pass


def _kernelbench_draw_device():
    """Where a KernelBench get_inputs() draws its tensors: on the host, then copied (the default), or with
    KILN_INPUTS_ON_DEVICE=1 on the worker's device itself (kiln datagen's GPU runs: KernelBench's 6 GB inputs
    took seconds per trial on the host). The values differ from the host's draw; the seed still fixes them."""
    if os.environ.get("KILN_INPUTS_ON_DEVICE") == "1" and plat.DEVICE != "cpu":
        return torch.device(plat.DEVICE)
    return contextlib.nullcontext()


class KernelBenchTask(Task):
    format = "kernelbench"
    inputs_name = "get_inputs()"

    def __init__(self, spec):
        super().__init__(spec)
        self.path = spec["path"]
        self.source = _read(self.path)
        sizes = spec.get("sizes") or {}
        if sizes and all(isinstance(v, dict) for v in sizes.values()):
            self.variants = dict(sizes)
        else:
            self.variants = {"default": dict(sizes)}
        self.case_names = list(self.variants)
        self.ref_mod = None
        self.cand_mod = None
        self._models = {}

    def load_reference(self):
        # get_inputs / get_init_inputs are the harness (the Model is the reference)
        self.ref_mod = load_module(self.source, unique_name("kiln_ref"), os.path.basename(self.path),
                                   harness_after=0, harness_only=("get_inputs", "get_init_inputs"))
        for attr in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(self.ref_mod, attr):
                raise TaskError(f"{self.path}: no {attr}")
        m = self.ref_mod.Model
        m.forward = guards.guard_reference(m.forward)

    def load_candidate(self, source, name):
        mod = load_module(source, unique_name("kiln_cand"), name or "candidate.py", candidate=True)
        if not hasattr(mod, "ModelNew"):
            raise CandidateLoadError("missing_entry", "the candidate defines no class ModelNew")
        self.cand_mod = mod

    def load_baseline(self, source, name):
        mod = load_module(source, unique_name("kiln_base"), name or "baseline.py")
        if not hasattr(mod, "ModelNew"):
            raise TaskError("the timing baseline defines no class ModelNew")
        self.base_mod = mod
        self._base_models = {}

    def baseline(self, case):
        if case not in self._base_models:
            ref = self._build(case)[0]
            self._apply_sizes(case)
            with guards.OpRecorder(poison=True):
                init = self.ref_mod.get_init_inputs()
            seed_all(12345)
            m = self.base_mod.ModelNew(*clone_tree(init)).to(plat.DEVICE)
            _share_weights(ref, m)
            m.eval()
            self._base_models[case] = m
        return self._base_models[case]

    def _apply_sizes(self, case):
        for k, v in self.variants[case].items():
            setattr(self.ref_mod, k, tuple(v) if isinstance(v, list) else v)   # a tuple constant: (32768,)

    def _build(self, case):
        if case in self._models:
            return self._models[case]
        self._apply_sizes(case)
        with harness(self.path, f"get_init_inputs() or Model(...) (case {case!r})"):
            with guards.OpRecorder(poison=True):   # harness allocations: ints zeroed, floats poisoned
                init = self.ref_mod.get_init_inputs()
            seed_all(12345)
            ref = self.ref_mod.Model(*clone_tree(init)).to(plat.DEVICE)
        cand = None
        if self.cand_mod is not None:
            seed_all(12345)
            with guards.candidate_running():
                cand = self.cand_mod.ModelNew(*clone_tree(init))
                cand = cand.to(plat.DEVICE)
            _share_weights(ref, cand)
        ref.eval()
        if cand is not None:
            cand.eval()
        self._models[case] = (ref, cand)
        return ref, cand

    def inputs(self, case, seed):
        self._apply_sizes(case)
        seed_all(seed)
        with _kernelbench_draw_device():
            args = to_device(self.ref_mod.get_inputs())
        return list(args), {}

    def reference(self, case):
        return self._build(case)[0]

    def candidate(self, case):
        return self._build(case)[1]


# ----------------------------------------------------------------------------------------------
# TritonBench G and T: module above the 146-'#' line, test_* function below, optional perf harness
# ----------------------------------------------------------------------------------------------

_GOLD_RE = re.compile(r"^\w+\s*=\s*test_\w+\(\)\s*$", re.M)
_TEST_RE = re.compile(r"^def (test_\w+)\s*\(", re.M)


def find_separator(text):
    """The separator line's match (start and end of its '#'s and trailing blanks), or None."""
    return _SEP_LINE.search(text)


def split_tritonbench(text):
    m = find_separator(text)
    if m is None:
        return text, ""
    return text[:m.start()], text[m.end():]


# Generated perf-harness inputs of the last task, kept between trusted requests of a warm worker
# (generating a sweep takes seconds: 2-6 s on a CPU core for matmul_triton2, add_example, rmsnorm_triton).
_PERF_CACHE = {}
_PERF_GPU_BYTES_MAX = 0.25   # of the GPU's memory: a perf sweep drawn on the GPU larger than this moves to the host


# A perf case fits when FIT_FACTOR x its input bytes fit the GPU's memory (TritonBenchTask.largest_cases).
FIT_FACTOR = 4


def _device_bytes():
    try:
        return torch.cuda.get_device_properties(plat.DEVICE_INDEX).total_memory
    except Exception:  # noqa: BLE001
        return 0


def _to_cpu(x):
    return to_device(x, "cpu")


def _perf_key(*paths):
    key = []
    for p in paths:
        try:
            st = os.stat(p)
            key.append((os.path.abspath(p), st.st_mtime_ns, st.st_size))
        except OSError:
            key.append((p, None, None))
    return tuple(key)


class _ZeroFresh(TorchDispatchMode):
    """While a perf harness draws its sweep on the GPU: fresh `empty*` allocations read as zeros, as the
    harness written for the CPU sees them (fresh pages). Harnesses leave index tables `torch.empty`
    (TritonBench-G context_attn_llama: `req_to_token_indexs = torch.empty((1000, N_CTX), dtype=torch.int32)`):
    the caching allocator's leftovers there were indices far out of range, an illegal memory access at the
    larger perf sizes, where the harness as written indexes row 0."""
    _OPS = ("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in self._OPS and isinstance(out, torch.Tensor):
            out.zero_()
        return out


class TritonBenchTask(Task):
    format = "tritonbench_g"
    inputs_name = "the performance harness's inputs"
    _pkgs = ("TritonBench_v1", "TorchBench_v1")

    def __init__(self, spec):
        super().__init__(spec)
        self.path = spec["path"]
        self.text = _read(self.path)
        self.top, bottom = split_tritonbench(self.text)
        m = _TEST_RE.search(bottom)
        if not m:
            raise TaskError(f"{self.path}: no test_* function below the separator")
        self.test_name = m.group(1)
        # drop the module-level harness code from the first top-level call of the test on (`result_gold =
        # test_x()`, prints of it); earlier lines (imports, helpers, the test itself) stay
        lines = bottom.split("\n")
        cut = len(lines)
        for i, line in enumerate(lines):
            if line[:1] not in ("", " ", "\t", "#") and not line.startswith(("def ", "class ", "@", "import ",
                                                                               "from ")) \
                    and re.search(r"\b" + re.escape(self.test_name) + r"\s*\(", line):
                cut = i
                break
        self.bottom = "\n".join(lines[:cut]) + "\n"
        self.modname = os.path.splitext(os.path.basename(self.path))[0]
        self.entry = spec.get("entry")
        self.perf_path = spec.get("perf_path")
        self.case_names = ["test"]
        self.self_contained = {"test"}
        self.perf = {}                # role -> perf instance
        self.perf_inputs = None
        if self.perf_path:
            self.perf_inputs_count = None
        self.ref_mod = None
        self.cand_mod = None

    # the perf sweep is only discovered when asked for (it can allocate gigabytes)
    def _ensure_perf(self):
        if not self.perf_path or self.perf_inputs is not None:
            return
        key = _perf_key(self.path, self.perf_path)
        if getattr(self, "reuse_inputs", False) and _PERF_CACHE.get("key") == key:
            self.perf_inputs = _PERF_CACHE["inputs"]
        else:
            inst = self._perf_instance("ref", self.ref_mod)
            self.perf_inputs = self._generate_perf_inputs(inst, keep_on_device=getattr(self, "reuse_inputs", False))
            _PERF_CACHE.clear()
            if getattr(self, "reuse_inputs", False):
                # one task at a time (the sweep can be gigabytes); every use clones (see inputs())
                _PERF_CACHE.update(key=key, inputs=self.perf_inputs)
        self.case_names = ["test"] + [f"perf_{i}" for i in range(len(self.perf_inputs))]

    @staticmethod
    def _generate_perf_inputs(inst, keep_on_device=False):
        """The harness's whole input sweep. Harnesses draw it on the CPU (torch.rand of up to gigabytes:
        4-12 s per process on an H100 host, paid again by every profile): on a GPU it is drawn there
        instead, with CUDA as the default device of the harness's factory calls (explicit devices are
        kept), then kept in host memory as the harness would have it, so that several check workers
        sharing a GPU do not each hold a sweep there. Only the one measuring worker of kiln optimize
        (`keep_on_device`, trusted requests) keeps it on the GPU, up to a quarter of its memory. A harness
        that needs its tensors on the CPU (numpy, an error) gets the CPU draw. Either way the inputs are
        seeded and the same for candidate and reference."""
        if not plat.INTERPRET:
            try:
                seed_all(4321)
                with torch.device(plat.DEVICE), _ZeroFresh():
                    inst.get_input_tensors()
                gen = list(inst.input_tensors)
                if keep_on_device and sum(tree_bytes(x) for x in gen) <= _PERF_GPU_BYTES_MAX * _device_bytes():
                    return gen
                # The harness instance lives on (its to_cuda and call_op serve every case): left holding
                # its own list, the whole sweep stayed on the GPU beside every case's copies (an H100-sized
                # run of TritonBench-G's fast_rope_embedding: 32 GiB of sweep held, out of memory at its
                # largest case; H200, session 15).
                inst.input_tensors = []
                host = []
                while gen:
                    host.append(_to_cpu(gen.pop(0)))   # one case at a time leaves the device
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                return host
            except Exception:  # noqa: BLE001 - the CPU draw below is the harness as written
                inst.input_tensors = []
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
        seed_all(4321)
        inst.get_input_tensors()
        return list(inst.input_tensors)

    def all_case_names(self):
        self._ensure_perf()
        return self.case_names

    def default_cases(self, mode="check"):
        # Correctness is TritonBench's own test (the `test` case); the perf harness's input sweep is for
        # timing: it runs in time modes (and in check mode only when a request names its cases).
        if plat.INTERPRET or not self.perf_path or mode in ("check", "compile"):
            return ["test"]
        return self.all_case_names()

    def trials_for(self, case, trials):
        return trials if case == "test" else 1

    def inputs_vary_with_seed(self, case):
        return False   # the perf harness's sweep is drawn once (seeded by kiln); `test` makes its own

    def largest_cases(self, k, skip=0):
        """The k perf-harness cases with the most input bytes that fit the GPU, in sweep order (the `test`
        case when the task has no perf harness); `skip`: after leaving out the `skip` largest that fit
        ("@largest:K:skip:S", kiln optimize's retry below sizes where the original fails; none left: []). A case whose inputs times FIT_FACTOR exceed the GPU's memory
        is skipped, and said in `self.skipped_cases` (a timed check holds the inputs, the candidate's clones
        and both outputs: an 80 GB H100 ran out of memory at the largest size of a harness written on a
        141 GB H200; issue 21)."""
        if not self.perf_path:
            return [] if skip > 0 else ["test"]
        self._ensure_perf()
        size = [tree_bytes(x) for x in self.perf_inputs]
        cap = 0 if plat.INTERPRET else _device_bytes()
        fits = [i for i in range(len(size)) if not cap or FIT_FACTOR * size[i] <= cap]
        self.skipped_cases = [
            f"perf_{i}: its inputs take {size[i]} bytes; {FIT_FACTOR}x that does not fit the GPU's {cap} bytes"
            for i in range(len(size)) if i not in fits]
        by_size = sorted(fits, key=lambda i: (size[i], i), reverse=True)[max(0, skip):]
        top = by_size[:max(1, k)]
        if skip > 0:
            return [f"perf_{i}" for i in sorted(top)]
        return [f"perf_{i}" for i in sorted(top)] or ["test"]

    def _load(self, top, role, name, candidate):
        top = top.rstrip("\n") + "\n"
        src = top + SEP + self.bottom
        modname = unique_name(f"kiln_{role}")
        # everything below the separator (the test_* function, its helpers) is the harness, in the reference's
        # module and in the candidate's (whose bottom is the task's, never the candidate's own)
        return load_module(src, modname, name, candidate=candidate, harness_after=top.count("\n") + 1,
                           self_names=(self.modname,), sibling_dir=os.path.dirname(os.path.abspath(self.path)))

    def _load_guarded(self, top, role):
        """A reference-side copy of the module (`top` above the task's separator): its test function and its entry
        run as the reference (guards.guard_reference)."""
        mod = self._load(top, role, os.path.basename(self.path), False)
        fn = getattr(mod, self.test_name, None)
        if not callable(fn):
            raise TaskError(f"{self.path}: the {role} module has no {self.test_name}")
        setattr(mod, self.test_name, guards.guard_reference(fn))
        if self.entry and hasattr(mod, self.entry):
            ent = getattr(mod, self.entry)
            # Only plain functions are wrapped: an entry that is a class (torch.autograd.Function, used as
            # `Entry.apply(...)`) or another object must keep its attributes.
            if isinstance(ent, types.FunctionType):
                setattr(mod, self.entry, guards.guard_reference(ent))
        return mod

    def load_reference(self):
        self.ref_mod = self._load_guarded(self.top, "ref")

    def load_reference_probe(self, source):
        self.probe_mod = self._load_guarded(split_tritonbench(source)[0], "refprobe")

    def reference_probe(self, case):
        mod = getattr(self, "probe_mod", None)
        if mod is None:
            return None
        if case == "test":
            return getattr(mod, self.test_name)
        return guards.guard_reference(self._perf_instance("refprobe", mod).call_op)

    def load_candidate(self, source, name):
        top = split_tritonbench(source)[0]
        mod = self._load(top, "cand", name or os.path.basename(self.path), True)
        if self.entry and not hasattr(mod, self.entry):
            raise CandidateLoadError("missing_entry", f"the candidate defines no {self.entry}")
        self.cand_mod = mod

    def load_baseline(self, source, name):
        top = split_tritonbench(source)[0]
        mod = self._load(top, "base", name or os.path.basename(self.path), False)
        if self.entry and not hasattr(mod, self.entry):
            raise TaskError(f"the timing baseline defines no {self.entry}")
        self.base_mod = mod

    def baseline(self, case):
        if case == "test":
            return getattr(self.base_mod, self.test_name)
        return self._perf_instance("base", self.base_mod).call_op

    def _perf_instance(self, role, mod):
        if role in self.perf:
            return self.perf[role]
        perf_dir = os.path.dirname(self.perf_path)
        if "performance_utils" not in sys.modules:
            load_module(_read(os.path.join(perf_dir, "performance_utils.py")), "performance_utils",
                        "performance_utils.py")
        for pkg in self._pkgs:
            if pkg not in sys.modules:
                p = types.ModuleType(pkg)
                p.__path__ = []
                sys.modules[pkg] = p
            sys.modules[f"{pkg}.{self.modname}"] = mod
            setattr(sys.modules[pkg], self.modname, mod)
        pm = load_module(_read(self.perf_path), unique_name(f"kiln_perf_{role}"), os.path.basename(self.perf_path),
                         candidate=(role == "cand"))
        inst = pm.performance_metrics()
        self.perf[role] = inst
        return inst

    def inputs(self, case, seed):
        if case == "test":
            return None
        self._ensure_perf()
        i = int(case.split("_")[1])
        inst = self._perf_instance("ref", self.ref_mod)
        return [to_device(inst.to_cuda(clone_tree(self.perf_inputs[i])))], {}

    def reference(self, case):
        if case == "test":
            return getattr(self.ref_mod, self.test_name)
        inst = self._perf_instance("ref", self.ref_mod)
        return guards.guard_reference(inst.call_op)

    def candidate(self, case):
        if case == "test":
            return getattr(self.cand_mod, self.test_name)
        return self._perf_instance("cand", self.cand_mod).call_op


class TritonBenchTTask(TritonBenchTask):
    format = "tritonbench_t"


# ----------------------------------------------------------------------------------------------
# kiln's own format: a module + entry function + a bench file (docs/task-format.md)
# ----------------------------------------------------------------------------------------------

class KilnTask(Task):
    format = "kiln"
    inputs_name = "the bench's inputs()"

    def __init__(self, spec):
        super().__init__(spec)
        self.path = spec["path"]
        self.entry = spec.get("entry")
        if not self.entry:
            raise TaskError("kiln task without entry")
        self.bench_path = spec.get("bench_path")
        if not self.bench_path:
            raise TaskError("kiln task without bench_path")
        self.source = _read(self.path)
        # the bench file's input code is the harness; its `reference` (if any) is not
        self.bench = load_module(_read(self.bench_path), unique_name("kiln_bench"), os.path.basename(self.bench_path),
                                 harness_after=0, harness_skip=("reference",))
        cases = getattr(self.bench, "CASES", None)
        if not isinstance(cases, dict) or not cases:
            raise TaskError(f"{self.bench_path}: CASES must be a non-empty dict name -> parameters")
        self.cases = dict(cases)
        small = getattr(self.bench, "INTERPRET_CASES", None)
        if isinstance(small, dict):
            for k, v in small.items():
                self.cases.setdefault(k, v)
        self.small = list(small) if small else None
        self.case_names = list(self.cases)
        sizes = spec.get("sizes") or {}
        for k in self.cases:
            self.cases[k] = {**self.cases[k], **{a: b for a, b in sizes.items() if not isinstance(b, dict)}}
        self.tolerance = dict(getattr(self.bench, "TOLERANCE", {}) or {})
        self.ref_mod = None
        self.cand_mod = None

    def default_cases(self, mode="check"):
        if plat.INTERPRET and self.small:
            return self.small
        if self.small:
            return [c for c in self.case_names if c not in self.small]
        return self.case_names

    def load_reference(self):
        self.ref_mod = load_module(self.source, unique_name("kiln_ref"), os.path.basename(self.path))
        if not hasattr(self.ref_mod, self.entry):
            raise TaskError(f"{self.path}: no entry {self.entry}")
        ref = getattr(self.bench, "reference", None)
        self._ref = guards.guard_reference(ref if callable(ref) else getattr(self.ref_mod, self.entry))

    def load_reference_probe(self, source):
        if callable(getattr(self.bench, "reference", None)):
            return   # the bench's own reference is what the candidate is compared with: no probe of the module
        mod = load_module(source, unique_name("kiln_refprobe"), os.path.basename(self.path))
        if not callable(getattr(mod, self.entry, None)):
            raise TaskError(f"the race probe has no entry {self.entry}")
        self.probe_mod = mod

    def reference_probe(self, case):
        mod = getattr(self, "probe_mod", None)
        return None if mod is None else guards.guard_reference(getattr(mod, self.entry))

    def load_candidate(self, source, name):
        mod = load_module(source, unique_name("kiln_cand"), name or os.path.basename(self.path), candidate=True)
        if not callable(getattr(mod, self.entry, None)):
            raise CandidateLoadError("missing_entry", f"the candidate defines no {self.entry}")
        self.cand_mod = mod

    def load_baseline(self, source, name):
        mod = load_module(source, unique_name("kiln_base"), name or os.path.basename(self.path))
        if not callable(getattr(mod, self.entry, None)):
            raise TaskError(f"the timing baseline defines no {self.entry}")
        self.base_mod = mod

    def baseline(self, case):
        return getattr(self.base_mod, self.entry)

    def inputs(self, case, seed):
        seed_all(seed)
        r = self.bench.inputs(dict(self.cases[case]), plat.DEVICE)
        if isinstance(r, dict):
            return [], to_device(r)
        if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], (list, tuple)) and isinstance(r[1], dict):
            return list(to_device(r[0])), to_device(r[1])
        return list(to_device(r if isinstance(r, (list, tuple)) else [r])), {}

    def reference(self, case):
        return self._ref

    def candidate(self, case):
        return getattr(self.cand_mod, self.entry)

    def work(self, case, args):
        out = {}
        for key, fn in (("bytes", "bytes_moved"), ("flops", "flops")):
            f = getattr(self.bench, fn, None)
            if callable(f):
                try:
                    out[key] = float(f(dict(self.cases[case]), *args))
                except Exception:
                    pass
        return out


FORMATS = {"kernelbench": KernelBenchTask, "tritonbench_g": TritonBenchTask, "tritonbench_t": TritonBenchTTask,
           "kiln": KilnTask}


def make_task(spec: dict) -> Task:
    fmt = spec.get("format")
    if fmt not in FORMATS:
        raise TaskError(f"unknown task format {fmt!r}")
    if not spec.get("path"):
        raise TaskError("task without path")
    return FORMATS[fmt](spec)
