"""GPU test (CTest label gpu; exit 77 without CUDA): precompile.py with Triton's real compiler. An autotuned
matmul over 6 configs meets two keys: at the first, all 6 compile on kiln's threads, side by side (two compiles
overlap in time), before the autotuner times them; the autotuner then times all 6 and compiles none itself;
the result is right. Then the same kernel at a third key with kiln's launch recording on (platform.py): the
autotuner's timing launches are neither recorded nor seen by the launch hook (their Python work was timed with
them and made the picks random), the launch that computes the result is, once. Timings are not asserted here
(bench/gpu/autotune_precompile.sh and bench/gpu/plain_autotune.py measure them)."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))


def main() -> int:
    try:
        import torch
        import triton
        import triton.language as tl
    except Exception as e:  # noqa: BLE001
        print(f"skip: {e}")
        return 77
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        print("skip: no GPU")
        return 77
    from kiln_worker import precompile
    os.environ["KILN_AUTOTUNE_COMPILE_THREADS"] = "6"
    os.environ["TRITON_CACHE_DIR"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"kiln_pc_{os.getpid()}")
    precompile.install()

    cfgs = [triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=s)
            for bm, bn, bk, w, s in [(64, 64, 32, 4, 3), (128, 64, 32, 4, 3), (64, 128, 32, 4, 4),
                                     (128, 128, 32, 8, 3), (128, 128, 64, 8, 3), (64, 64, 64, 4, 2)]]

    @triton.autotune(configs=cfgs, key=["M", "N", "K"])
    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    jit = mm.fn
    jit.device_caches[torch.cuda.current_device()]   # Triton sets jit.compile when it makes the device's binder
    spans, lock = [], threading.Lock()
    real_compile = jit.compile

    def compile_recorded(*a, **k):
        t0 = time.perf_counter()
        try:
            return real_compile(*a, **k)
        finally:
            with lock:
                spans.append((threading.current_thread().name, t0, time.perf_counter()))
    jit.compile = compile_recorded

    fails = []
    for M, N, K in [(512, 512, 256), (1024, 768, 512)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        before, n_spans = precompile.STATS["configs"], len(spans)
        mm[lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))](a, b, c, M, N, K)
        torch.cuda.synchronize()
        ref = (a.float() @ b.float()).half()
        if not torch.allclose(c.float(), ref.float(), atol=5e-2, rtol=1e-2):
            fails.append(f"{M}x{N}x{K}: wrong result")
        if precompile.STATS["configs"] - before != 6:
            fails.append(f"{M}x{N}x{K}: {precompile.STATS['configs'] - before} configs compiled ahead, expected 6")
        if len(mm.configs_timings) != 6:
            fails.append(f"{M}x{N}x{K}: the autotuner timed {len(mm.configs_timings)} configs, expected 6")
        new = spans[n_spans:]
        own = [s for s in new if not s[0].startswith("kiln-autotune-compile")]
        if own:
            fails.append(f"{M}x{N}x{K}: {len(own)} compile(s) on {own[0][0]}, not on kiln's threads")
        if M == 512:   # the first key compiles for real (a fresh cache); the second finds them compiled
            overlap = any(s1 < e2 and s2 < e1 for i, (_, s1, e1) in enumerate(new) for (_, s2, e2) in new[i + 1:])
            if len(new) != 6 or not overlap:
                fails.append(f"first key: {len(new)} compiles, overlapping in time: {overlap}")
        print(f"{M}x{N}x{K}: {len(new)} compiles, {sum(e - s for _, s, e in new):.2f} s of compile, "
              f"pick {mm.best_config}")
    from kiln_worker import platform as plat
    plat.install_launch_instrumentation()
    plat.LAUNCHES.reset()
    plat.LAUNCHES.active = True
    try:
        M, N, K = 768, 512, 384
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        mm[lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))](a, b, c, M, N, K)
        torch.cuda.synchronize()
    finally:
        plat.LAUNCHES.active = False
    log = plat.LAUNCHES
    if len(mm.configs_timings) != 6:
        fails.append(f"recorded key: the autotuner timed {len(mm.configs_timings)} configs, expected 6")
    if len(log.launches) != 1 or log.counts["mm"] != 1 or log.hook_launches != 1:
        fails.append(f"recorded key: {len(log.launches)} launches recorded ({log.counts['mm']} of mm), "
                     f"{log.hook_launches} seen by the hook; expected 1 (the autotuner's timing launches unseen)")
    if log.kernels.get("mm", {}).get("launches") != 1:
        fails.append(f"recorded key: kernel facts say {log.kernels.get('mm', {}).get('launches')} launches")
    if not torch.allclose(c.float(), (a.float() @ b.float()), atol=5e-2, rtol=1e-2):
        fails.append("recorded key: wrong result")
    print(f"recorded key: {len(log.launches)} launch recorded, {log.hook_launches} seen by the hook, "
          f"pick {mm.best_config}")
    for f in fails:
        print("FAIL", f)
    print("ok" if not fails else f"{len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
