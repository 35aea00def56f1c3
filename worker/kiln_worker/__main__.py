"""`python -m kiln_worker [--isolation shared|fork|fresh] [--device N] [--interpret]`
   `python -m kiln_worker --request FILE.json [--out FILE.json]`   (one-shot, e.g. under ncu)

The mode (interpreter or compiled) is decided here, before triton is imported."""
import argparse
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kiln_worker")
    ap.add_argument("--isolation", choices=["shared", "fork", "fresh"],
                    default=os.environ.get("KILN_ISOLATION", "fork"))
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--interpret", action="store_true", help="force Triton's interpreter (CPU tensors)")
    ap.add_argument("--request", help="one-shot: read one request from this JSON file")
    ap.add_argument("--out", help="one-shot: write the response here (default: stdout)")
    a = ap.parse_args(argv)
    from . import platform as plat
    plat.select_mode(a.interpret, a.device)
    import triton  # noqa: F401  (after select_mode: TRITON_INTERPRET is read at import)
    from . import server
    if a.request:
        return server.one_shot(a.request, a.out, "fresh" if a.isolation == "fork" else a.isolation)
    return server.serve(a.isolation)


if __name__ == "__main__":
    sys.exit(main())
