"""Output comparison (shape, dtype, NaN/Inf positions, allclose with per-dtype tolerances), input hashing and
aliasing checks. Nested outputs (tuples, lists, dicts) are walked in a stable order."""
from __future__ import annotations

import hashlib
import math

import torch

from . import guards

DEFAULT_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-7, 1e-7), "float16": (1e-2, 1e-2),
               "bfloat16": (1e-2, 1e-2), "float8_e4m3fn": (1e-1, 1e-1), "float8_e5m2": (2e-1, 2e-1)}
# A kernel that uses tl.dot on fp32 runs the tensor cores in TF32 by default (10-bit mantissa), so its
# results differ from an IEEE fp32 reference by about 1e-3 relative. When the candidate's source uses
# tl.dot and the output is fp32, the fp32 tolerance is widened to this (documented in docs/verdicts.md).
TF32_TOL = (1e-2, 1e-2)
# Named tolerance protocols (request field `protocol`): defaults per float dtype under the request's and the
# task's own overrides. kernelbench: upstream KernelBench's per-precision tolerances (the default); legacy:
# 1e-2 for every float dtype, as the AutoTriton paper's evaluation used.
PROTOCOLS = {
    "kernelbench": {},
    "legacy": {k: (1e-2, 1e-2) for k in ("float32", "float64", "float16", "bfloat16")},
}
# Elements compared per step: a comparison in float64 of two 6 GiB fp32 tensors would need 25 GiB at once.
CHUNK = 1 << 24
MIN_CHUNK = 1 << 18


def flatten(x, path="out"):
    """-> list of (path, leaf) in a stable order; leaves are tensors or plain values."""
    if isinstance(x, torch.Tensor):
        return [(path, x)]
    if isinstance(x, (list, tuple)):
        out = []
        for i, v in enumerate(x):
            out += flatten(v, f"{path}[{i}]")
        return out
    if isinstance(x, dict):
        out = []
        for k in sorted(x, key=str):
            out += flatten(x[k], f"{path}[{k!r}]")
        return out
    return [(path, x)]


def structure(x):
    if isinstance(x, torch.Tensor):
        return "T"
    if isinstance(x, (list, tuple)):
        return "[" + ",".join(structure(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ",".join(f"{k!r}:{structure(x[k])}" for k in sorted(x, key=str)) + "}"
    return "v"


def tensor_hash(t: torch.Tensor) -> str:
    t = t.detach()
    h = hashlib.blake2b(digest_size=16)
    h.update(str((tuple(t.shape), str(t.dtype), tuple(t.stride()))).encode())
    c = t.contiguous().cpu()
    if c.dtype in (torch.bfloat16, torch.float16):
        c = c.view(torch.int16)
    elif c.dtype.is_floating_point and c.element_size() == 1:
        c = c.view(torch.uint8)
    elif c.dtype == torch.bool:
        c = c.to(torch.uint8)
    try:
        h.update(c.numpy().tobytes())
    except Exception:
        h.update(repr(c.tolist()).encode())
    return h.hexdigest()


def hash_tree(x) -> list:
    return [(p, tensor_hash(v)) for p, v in flatten(x) if isinstance(v, torch.Tensor)]


_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    it = _INT_OF_SIZE.get(t.element_size())
    return t.view(it) if it is not None and t.dtype != it else t


def changed_paths(a, b) -> list:
    """Paths of tensor leaves of `a` whose bits or shape differ from `b`'s (same tree), compared
    on the tensors' own device: NaNs compare by their bits, so a tensor equals an untouched copy of itself.
    (Replaces hashing on the CPU, which copied every input to the host several times per trial.)"""
    out = []
    la = [(p, v) for p, v in flatten(a) if isinstance(v, torch.Tensor)]
    lb = [(p, v) for p, v in flatten(b) if isinstance(v, torch.Tensor)]
    if len(la) != len(lb):
        return [p for p, _ in la] or ["out"]
    for (p, x), (_, y) in zip(la, lb):
        if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
            out.append(p)
            continue
        try:
            if not _equal_bits(_bits(x), _bits(y)):
                out.append(p)
        except Exception:
            if tensor_hash(x) != tensor_hash(y):
                out.append(p)
    return out


def _equal_bits(x, y) -> bool:
    """torch.equal, about CHUNK elements at a time (on a GPU, torch.equal of whole tensors makes a boolean
    tensor as large as them: 1.5 GiB more for a 6 GiB fp32 input; see blocks() for strided tensors)."""
    if x.shape != y.shape or x.numel() <= chunk_for(x.numel()):
        return torch.equal(x, y)
    return all(torch.equal(a, b) for a, b in chunk_pairs(x, y))


def storages(x):
    """-> list of (path, (start, end)) byte ranges of every tensor leaf."""
    out = []
    for p, v in flatten(x):
        if isinstance(v, torch.Tensor) and v.numel() > 0:
            try:
                start = v.data_ptr()
                span = 0
                for size, stride in zip(v.shape, v.stride()):
                    span += (size - 1) * abs(stride)
                out.append((p, (start, start + (span + 1) * v.element_size())))
            except Exception:
                pass
    return out


def overlaps(a, b):
    """Paths in a whose memory overlaps any range in b."""
    hits = []
    for p, (s, e) in a:
        for q, (s2, e2) in b:
            if s < e2 and s2 < e:
                hits.append((p, q))
                break
    return hits


def tol_for(dtype, tolerance, tf32):
    name = str(dtype).replace("torch.", "")
    atol, rtol = (tolerance or {}).get(name) or DEFAULT_TOL.get(name, (0.0, 0.0))
    if tf32 and name == "float32":
        atol, rtol = max(atol, TF32_TOL[0]), max(rtol, TF32_TOL[1])
    return float(atol), float(rtol)


_PLAIN = (int, float, bool, complex, str, bytes, type(None))


class Mismatch(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def numpy_to_torch(x):
    """Outputs given as numpy (TritonBench tests often return `t.cpu().numpy()`) compare like tensors:
    arrays become tensors, numpy scalars Python numbers; containers are rebuilt."""
    if isinstance(x, list):
        return [numpy_to_torch(v) for v in x]
    if isinstance(x, tuple):
        return tuple(numpy_to_torch(v) for v in x)
    if isinstance(x, dict):
        return {k: numpy_to_torch(v) for k, v in x.items()}
    if type(x).__module__ == "numpy":
        try:
            import numpy as np
            if isinstance(x, np.ndarray):
                if x.dtype == object:
                    return [numpy_to_torch(v) for v in x.tolist()]
                return torch.from_numpy(np.ascontiguousarray(x))
            if isinstance(x, np.generic):
                return x.item()
        except Exception:
            return x
    return x


def compare(cand, ref, tolerance=None, tf32=False):
    """Raises Mismatch(code, message) on the first difference. Returns stats dict otherwise."""
    cand, ref = numpy_to_torch(cand), numpy_to_torch(ref)
    if structure(cand) != structure(ref):
        raise Mismatch("structure_mismatch",
                       f"output structure {structure(cand)[:80]} differs from the reference's {structure(ref)[:80]}")
    max_abs, num, den = 0.0, 0.0, 0.0
    shapes, dtypes = [], []
    for (p, c), (_, r) in zip(flatten(cand), flatten(ref)):
        if isinstance(c, torch.Tensor) and type(c) not in (torch.Tensor, torch.nn.Parameter):
            # a subclass's __torch_function__ could answer the comparison's own operations
            raise Mismatch("tensor_subclass", f"{p}: a {type(c).__name__} (a torch.Tensor subclass) where "
                                              "a plain tensor is expected")
        if not isinstance(r, torch.Tensor):
            if isinstance(c, torch.Tensor):
                raise Mismatch("structure_mismatch", f"{p}: a tensor where the reference has {type(r).__name__}")
            if type(c) not in _PLAIN and type(c).__qualname__ != type(r).__qualname__:
                # an object of its own could define __eq__/__ne__ to agree with anything
                raise Mismatch("structure_mismatch", f"{p}: a {type(c).__name__} where the reference has "
                                                     f"{type(r).__name__}")
            if isinstance(r, float) and isinstance(c, (int, float)):
                if not (math.isclose(c, r, rel_tol=1e-4, abs_tol=1e-4) or (math.isnan(c) and math.isnan(r))):
                    raise Mismatch("value_mismatch", f"{p}: {c!r} != {r!r}")
            elif c != r:
                raise Mismatch("value_mismatch", f"{p}: {str(c)[:60]} != {str(r)[:60]}")
            continue
        if not isinstance(c, torch.Tensor):
            raise Mismatch("structure_mismatch", f"{p}: {type(c).__name__} where the reference has a tensor")
        shapes.append(list(c.shape))
        dtypes.append(str(c.dtype).replace("torch.", ""))
        if c.shape != r.shape:
            raise Mismatch("shape_mismatch", f"{p}: shape {list(c.shape)} != reference {list(r.shape)}")
        if c.dtype != r.dtype:
            raise Mismatch("dtype_mismatch", f"{p}: dtype {c.dtype} != reference {r.dtype}".replace("torch.", ""))
        if c.device.type != r.device.type:
            raise Mismatch("device_mismatch", f"{p}: device {c.device} != reference {r.device}")
        if c.numel() == 0:
            continue
        c_d, r_d = c.detach(), r.detach()
        if c_d.dtype == torch.bool or not (c_d.dtype.is_floating_point or c_d.dtype.is_complex):
            if not torch.equal(c_d, r_d):
                n = int((c_d != r_d).sum())
                raise Mismatch("value_mismatch", f"{p}: {n} of {c.numel()} elements differ (exact dtype {c.dtype})")
            continue
        if c_d.is_complex():
            c_d, r_d = torch.view_as_real(c_d), torch.view_as_real(r_d)
        m, n2, d2 = _compare_float(p, c_d, r_d, c.dtype, tolerance, tf32)
        max_abs, num, den = max(max_abs, m), num + n2, den + d2
    rel = math.sqrt(num / den) if den > 0 else math.sqrt(num)
    return {"max_abs_err": max_abs, "rel_l2_err": rel, "shapes": shapes, "dtypes": dtypes}


def chunk_for(numel: int) -> int:
    """Elements per chunk for a tensor of `numel`: CHUNK at most, and small beside the tensor (1/64 of it, at
    least MIN_CHUNK), so that a comparison's temporaries stay a small share of the task's footprint."""
    return max(1, min(CHUNK, max(MIN_CHUNK, numel // 64)))


def blocks(shape, step):
    """Index tuples that cover a tensor of `shape` in row-major order, each selecting at most `step` elements
    as a view (whole trailing rows where they fit, else slices of the first dimension that does not)."""
    shape = tuple(int(n) for n in shape)

    def rec(prefix, dims):
        if not dims:
            yield prefix
            return
        n, inner = dims[0], math.prod(dims[1:])
        if inner <= step:
            k = max(1, step // max(inner, 1))
            for i in range(0, n, k):
                yield prefix + (slice(i, min(i + k, n)),)
        else:
            for i in range(n):
                yield from rec(prefix + (i,), dims[1:])
    if math.prod(shape) <= step:
        yield ()
        return
    yield from rec((), shape)


def chunk_pairs(c_d, r_d):
    """The same elements of two tensors of one shape, about chunk_for(numel) at a time, as 1-D tensors in
    row-major order. Contiguous tensors are sliced flat (views); a strided one (a transposed output, as
    TritonBench-G's fast_rope_embedding returns) block by block, each block copied alone: reshape(-1) of the
    whole tensor was a copy as large as it (two 8 GiB copies beside both 16 GiB outputs, out of memory on an
    80 GB budget; session 16)."""
    step = chunk_for(c_d.numel())
    if c_d.is_contiguous() and r_d.is_contiguous():
        c1, r1 = c_d.reshape(-1), r_d.reshape(-1)
        for i in range(0, c1.numel(), step):
            yield c1[i:i + step], r1[i:i + step]
        return
    for idx in blocks(c_d.shape, step):
        yield c_d[idx].reshape(-1), r_d[idx].reshape(-1)


def _compare_float(p, c_d, r_d, dtype, tolerance, tf32):
    """Floating-point leaves, CHUNK elements at a time: NaN (poison first), Inf, then values.
    -> (max abs err, sum of squared errors, sum of squared reference values)."""
    poisoned = nan_pos = 0
    inf_bad = False
    rsq, rfin = 0.0, 0
    for c, r in chunk_pairs(c_d, r_d):
        poison = guards.is_poison(c) if c_d.is_contiguous() else None
        cf, rf = c.double(), r.double()
        c_nan, r_nan = torch.isnan(cf), torch.isnan(rf)
        if not torch.equal(c_nan, r_nan):
            if poison is not None:
                poisoned += int((poison & ~r_nan).sum())
            nan_pos += int((c_nan != r_nan).sum())
        c_inf, r_inf = torch.isinf(cf), torch.isinf(rf)
        if not torch.equal(c_inf, r_inf) or not torch.equal(cf[c_inf], rf[r_inf]):
            inf_bad = True
        if tf32 and dtype == torch.float32:
            fin = torch.isfinite(rf)
            rsq += float(rf[fin].pow(2).sum())
            rfin += int(fin.sum())
    if poisoned:
        raise Mismatch("uninitialized_output",
                       f"{p}: {poisoned} of {c_d.numel()} elements were never written (still hold the poison pattern)")
    if nan_pos:
        raise Mismatch("nan_mismatch", f"{p}: NaN at {nan_pos} positions where the reference differs")
    if inf_bad:
        raise Mismatch("inf_mismatch", f"{p}: Inf positions or signs differ from the reference")
    atol, rtol = tol_for(dtype, tolerance, tf32)
    if tf32 and dtype == torch.float32 and rfin:
        # TF32 rounds each operand to a 10-bit mantissa, so a dot's absolute error grows with the
        # magnitude of its result (a sum of K products), not with each element's own value: the
        # allowance scales atol by the reference's RMS (see docs/verdicts.md).
        atol = max(atol, TF32_TOL[0] * math.sqrt(rsq / rfin))
    max_abs, num, den, nb = 0.0, 0.0, 0.0, 0
    for c, r in chunk_pairs(c_d, r_d):
        cf, rf = c.double(), r.double()
        fin = torch.isfinite(cf)
        diff = (cf - rf).abs()[fin]
        if not diff.numel():
            continue
        rfin_v = rf[fin]
        max_abs = max(max_abs, float(diff.max()))
        num += float((diff ** 2).sum())
        den += float((rfin_v ** 2).sum())
        nb += int((diff > atol + rtol * rfin_v.abs()).sum())
    if nb:
        raise Mismatch("value_mismatch",
                       f"{p}: {nb} of {c_d.numel()} elements outside atol={atol:g} rtol={rtol:g}; "
                       f"max abs err {max_abs:.3g}")
    return max_abs, num, den


def close(a, b, tolerance=None, tf32=False) -> bool:
    try:
        compare(a, b, tolerance, tf32)
        return True
    except Mismatch:
        return False
    except Exception:
        return False


# ----------------------------------------------------------------------------------------------
# Reference instability: elements on which two runs of the reference disagree (docs/verdicts.md)
# ----------------------------------------------------------------------------------------------

def unstable_elements(r1, r2, tolerance=None, tf32=False):
    """-> one mask per leaf of r1 (a bool tensor for a tensor leaf, a bool for a plain value): True where the
    second run r2 of the reference disagrees with the first (NaN position, Inf, a difference beyond the dtype's
    tolerance, any difference for exact dtypes). None when the runs differ in structure, shape or dtype."""
    r1, r2 = numpy_to_torch(r1), numpy_to_torch(r2)
    if structure(r1) != structure(r2):
        return None
    masks = []
    for (p, a), (_, b) in zip(flatten(r1), flatten(r2)):
        if not isinstance(a, torch.Tensor):
            try:
                same = bool(a == b) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                                        and math.isnan(b))
            except Exception:
                same = False
            masks.append(not same)
            continue
        if a.shape != b.shape or a.dtype != b.dtype or a.device.type != b.device.type:
            return None
        dtype = a.dtype
        a, b = a.detach(), b.detach()
        if dtype == torch.bool or not (dtype.is_floating_point or dtype.is_complex):
            masks.append(a != b)
            continue
        if dtype.is_complex:
            a, b = torch.view_as_real(a), torch.view_as_real(b)
        atol, rtol = tol_for(dtype, tolerance, tf32)
        m = torch.empty(a.shape, dtype=torch.bool, device=a.device)
        for idx in blocks(a.shape, chunk_for(a.numel())):
            # block by block (whole-tensor double copies were 4x an fp32 output, twice)
            m[idx] = _unstable_block(a[idx], b[idx], atol, rtol)
        if dtype.is_complex:
            m = m.any(-1)
        masks.append(m)
    return masks


def _unstable_block(a, b, atol, rtol):
    af, bf = a.double(), b.double()
    a_nan, b_nan = torch.isnan(af), torch.isnan(bf)
    a_inf, b_inf = torch.isinf(af), torch.isinf(bf)
    fin = ~(a_nan | b_nan | a_inf | b_inf)
    return (a_nan != b_nan) | ((a_inf | b_inf) & ~a_nan & ~b_nan & (af != bf)) | \
        (fin & ((af - bf).abs() > atol + rtol * af.abs()))


def union_masks(a, b):
    """Element-wise OR of two mask lists from unstable_elements (same structure)."""
    out = []
    for x, y in zip(a, b):
        if isinstance(x, bool) or isinstance(y, bool):
            out.append(bool(x) or bool(y) if isinstance(x, bool) and isinstance(y, bool) else (x | y))
        else:
            out.append(x | y)
    return out


def count_masked(masks) -> int:
    """Number of True elements in a mask list from unstable_elements."""
    return sum(int(m) if isinstance(m, bool) else int(m.sum()) for m in masks)


def replace_unstable(cand, r1, masks):
    """-> (a copy of the candidate's output with the elements in `masks` taken from r1, number of such elements,
    number of elements in all). The candidate's structure must be r1's (it is, after a value-level mismatch)."""
    cand, r1 = numpy_to_torch(cand), numpy_to_torch(r1)
    leaves, n, total = [], 0, 0
    for (p, c), (_, r), m in zip(flatten(cand), flatten(r1), masks):
        if isinstance(m, bool):
            total += 1
            n += int(m)
            leaves.append(r if m else c)
            continue
        total += m.numel()
        k = int(m.sum())
        n += k
        if k and isinstance(c, torch.Tensor) and c.shape == r.shape and c.dtype == r.dtype:
            c = c.detach().clone()
            c[m] = r.detach()[m].to(c.device)
        leaves.append(c)
    it = iter(leaves)

    def rebuild(x):
        if isinstance(x, torch.Tensor):
            return next(it)
        if isinstance(x, (list, tuple)):
            vals = [rebuild(v) for v in x]
            return vals if isinstance(x, list) else tuple(vals)
        if isinstance(x, dict):
            return {k: rebuild(x[k]) for k in sorted(x, key=str)}
        return next(it)
    return rebuild(cand), n, total
