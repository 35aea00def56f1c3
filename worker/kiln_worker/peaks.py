"""`device_peaks`: DRAM bandwidth from a large device-to-device copy and dense matmul throughput per dtype."""
from __future__ import annotations

from . import platform as plat


def measure(req):
    if plat.INTERPRET:
        return {"ok": True, "interpreter": True, "dram_bytes_per_s": None, "matmul_flops_per_s": {},
                "sm_clock_mhz": [None, None], "note": "no peaks under the interpreter"}
    import torch
    dev = plat.DEVICE
    before = plat.sm_clock_mhz()

    def time_ms(fn, reps):
        fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = float("inf")
        for _ in range(3):
            s.record()
            for _ in range(reps):
                fn()
            e.record()
            torch.cuda.synchronize()
            best = min(best, s.elapsed_time(e) / reps)
        return best

    n = 1 << 28  # 1 GiB of fp32
    a = torch.empty(n, dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    ms = time_ms(lambda: b.copy_(a), 10)
    dram = 2 * a.numel() * 4 / (ms / 1e3)
    del a, b
    flops = {}
    dtypes = req.get("dtypes") or ["float32", "tf32", "bfloat16", "float16"]
    size = 8192
    for name in dtypes:
        try:
            tf32 = name == "tf32"
            dt = torch.float32 if tf32 else getattr(torch, name)
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                if name == "int8":  # integer operations per second (cuBLASLt's int8 GEMM: int32 results)
                    x = torch.randint(-64, 64, (size, size), device=dev, dtype=torch.int8)
                    y = torch.randint(-64, 64, (size, size), device=dev, dtype=torch.int8).t()
                    fn = lambda: torch._int_mm(x, y)
                elif name.startswith("float8"):
                    x = torch.randn(size, size, device=dev).to(dt)
                    y = torch.randn(size, size, device=dev).to(dt).t()
                    one = torch.tensor(1.0, device=dev)
                    fn = lambda: torch._scaled_mm(x, y, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                else:
                    x = torch.randn(size, size, device=dev, dtype=dt)
                    y = torch.randn(size, size, device=dev, dtype=dt)
                    fn = lambda: torch.mm(x, y)
                ms = time_ms(fn, 10)
                flops[name] = 2 * size ** 3 / (ms / 1e3)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
        except Exception as e:  # a dtype the device cannot do
            flops[name] = None
    return {"ok": True, "dram_bytes_per_s": dram, "matmul_flops_per_s": flops,
            "sm_clock_mhz": [before, plat.sm_clock_mhz()]}
