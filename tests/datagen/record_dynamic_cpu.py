"""Records DYNAMIC-shape Inductor captures on a machine WITHOUT a GPU, as test data for the conversion of
`kiln datagen --dynamic-shapes` (src/datagen/inductor_dynamic.cc): torch.compile(dynamic=True) of each program
with Inductor's *Triton CPU backend*, the same record as kiln_worker.inductor_capture's --dynamic mode writes.

    .venv/bin/python3 tests/datagen/record_dynamic_cpu.py OUT.jsonl PROGRAM.py...

What differs from a CUDA capture (bench/gpu/datagen_dynamic.sh records those on a GPU host):
  - the output module allocates with `empty_strided_cpu`, takes `get_raw_stream(None)`, and its kernels carry
    device 'cpu' in triton_meta and `triton_helpers.set_driver_to_cpu()` (the conversion drops both);
  - no kernel is compiled or launched (this Triton has no CPU driver): CachingAutotuner.precompile and .run are
    replaced, so the launch records are made HERE, with the autotuner's FIRST config (no autotuning) and the
    grid Inductor's own grid expression gives for it at the captured sizes; `call`'s buffers hold garbage, so
    `matches_eager` is null (the candidates are verified against eager torch by the tests instead);
  - `device` in `eager` is 'cpu'.
Two patches make Inductor write Triton for the CPU (the lead tested them): triton_hash_with_backend and
config.cpu_backend = "triton". Everything else (codes, call_args, outputs, dynamic) is recorded by the worker's
own code (inductor_capture._Recorder and its helpers).
"""
import json
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))


def _patch():
    import torch
    import torch.utils._triton
    torch.utils._triton.triton_hash_with_backend = lambda: "0" * 64
    import torch._inductor.config as cfg
    cfg.cpu_backend = "triton"
    cfg.fx_graph_cache = False
    cfg.compile_threads = 1
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    def precompile(self, *a, **k):   # no compile: the first config stands for the autotuner's choice
        self.launchers = [types.SimpleNamespace(config=self.configs[0])]

    def run(self, *args, stream, **kwargs):   # no launch (the _Recorder wraps this and records the launch)
        return None
    CachingAutotuner.precompile = precompile
    CachingAutotuner.run = run


def record(path):
    import torch
    from kiln_worker import inductor_capture as ic
    rec = {"id": os.path.splitext(os.path.basename(path))[0], "path": path, "ok": False,
           "recorded_with": "Inductor's Triton CPU backend (tests/datagen/record_dynamic_cpu.py): "
                            "launch configs are the autotuner's first, not autotuned"}
    try:
        mod = ic._load_program(path)
        torch.manual_seed(1234)
        model = mod.Model(*mod.get_init_inputs()).eval()
        inputs = list(mod.get_inputs())
        with torch.no_grad():
            ref = model(*inputs)
        rec["eager"] = {"device": "cpu", "output": ic._describe(ref), "inputs": ic._describe(inputs)}
        torch._dynamo.reset()
        with ic._Recorder() as r, torch.no_grad():
            compiled = ic._compile(model, dynamic=True)
            compiled(*inputs)
            r.recording = True
            out = compiled(*inputs)
            r.recording = False
        rec["codes"] = list(dict.fromkeys(r.codes))
        rec["launches"] = r.launches
        rec["dynamic"] = True
        rec["matches_eager"] = None
        if len(r.calls) != 1:
            raise ValueError(f"{len(r.calls)} compiled graphs ran (graph breaks); one is needed")
        seen, call_out = r.calls[0]
        rec["call_args"] = ic._map_call_args(seen, inputs, model)
        rec["outputs"] = ic._map_outputs(call_out, out)
        rec["ok"] = True
    except Exception as e:  # noqa: BLE001 - a recorded reject
        rec["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
    return rec


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    _patch()
    with open(sys.argv[1], "w") as f:
        for p in sys.argv[2:]:
            rec = record(p)
            print(rec["id"], "ok" if rec["ok"] else rec["error"][:200], file=sys.stderr)
            f.write(json.dumps(rec, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
