"""Makes a larger GPU look like a smaller one to every other process: holds all of its memory but GIB GiB.

    python3 gpu_memory_cap.py GIB [--device N] &      # prints one line when held, then waits to be killed

The TritonBench-G time sweep (issue 16) was classified on an 80 GB H100; a session lent an H200 (141 GB)
runs it with GPU_MEMORY_GIB=80 so an out-of-memory verdict (or its fix) shows as it would there. The held
block is one allocation made before the other processes start; it is never touched, so it costs no
bandwidth, only capacity. Exits 2 with a message when there is no GPU or the GPU is already that small.
"""
import argparse
import signal
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gib", type=float, help="the memory (GiB) to leave to the other processes")
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("gpu_memory_cap: no GPU", file=sys.stderr)
        return 2
    free, total = torch.cuda.mem_get_info(a.device)
    hold = free - int(a.gib * (1 << 30))
    if hold <= 0:
        print(f"gpu_memory_cap: only {free / (1 << 30):.1f} GiB free of {total / (1 << 30):.1f}: nothing to hold",
              file=sys.stderr)
        return 2
    block = torch.empty(hold, dtype=torch.uint8, device=f"cuda:{a.device}")
    torch.cuda.synchronize(a.device)
    free_after, _ = torch.cuda.mem_get_info(a.device)
    print(f"gpu_memory_cap: holding {hold / (1 << 30):.1f} GiB of {total / (1 << 30):.1f}; "
          f"{free_after / (1 << 30):.1f} GiB free for the others", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:   # `block` stays held until the process is killed
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
