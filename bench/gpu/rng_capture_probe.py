#!/usr/bin/env python3
"""What a failed CUDA graph capture does to torch's CUDA generator, and whether the timer's repair
(kiln_worker.timing.renew_rng) undoes it. On a GPU host, from the repository root:

    PYTHONPATH=worker python3 bench/gpu/rng_capture_probe.py

Prints one line per step: a draw before, a capture that fails (a host sync inside it), a draw after it
(torch 2.11: "Offset increment outside graph capture encountered unexpectedly"), the repair, a draw after
the repair; then whether the timer sees a drawing call (rng_probe_start/end) and a plain one."""
import torch

from kiln_worker import timing


def draw(label):
    try:
        torch.rand(4, device="cuda")
        torch.cuda.synchronize()
        print(f"{label}: draw ok")
    except Exception as e:  # noqa: BLE001
        print(f"{label}: draw raised {type(e).__name__}: {str(e)[:120]}")


def main():
    draw("before")
    x = torch.zeros(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            x.add_(1)
            float(x.sum())   # a host sync: not allowed while capturing
        print("capture: succeeded (unexpected)")
    except Exception as e:  # noqa: BLE001
        print(f"capture: failed with {type(e).__name__}: {str(e)[:120]}")
    torch.cuda.synchronize()
    draw("after the failed capture")
    print("renew_rng:", timing.renew_rng())
    draw("after renew_rng")
    p = timing.rng_probe_start()
    torch.rand(16, device="cuda")
    print("probe sees a draw:", timing.rng_probe_end(p))
    p = timing.rng_probe_start()
    x.add_(1)
    print("probe sees a plain call as drawing:", timing.rng_probe_end(p))
    p = timing.rng_probe_start()
    torch.manual_seed(7)
    torch.rand(16, device="cuda")
    print("probe sees reseed + draw:", timing.rng_probe_end(p))


if __name__ == "__main__":
    main()
