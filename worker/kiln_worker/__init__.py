"""kiln's worker: compiles, checks and times candidate Triton kernels (see docs/worker-protocol.md).

Only stdlib + torch + triton. `python -m kiln_worker` starts the JSON-lines server."""
PROTOCOL = 1
__version__ = "0.1.0"
