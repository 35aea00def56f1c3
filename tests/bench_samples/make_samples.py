#!/usr/bin/env python3
"""Builds the `kiln bench` end-to-end sample set from src/ (run it after editing a source; the outputs are
committed): one task per channel, five samples each (correct, wrong, hacked, crashing, unparsable).

    tbg.jsonl  TritonBench-G add_example      raw responses (markdown fences, prose, a <think> section)
    tbt.jsonl  TritonBench-T abs              raw responses
    kb1/       KernelBench level 1, 19_ReLU   KernelBench's generation layout (sample 4 is an empty file)
    kb2.jsonl  KernelBench level 2, 76_Gemm_Add_ReLU     with interpreter sizes per sample
    kb3.jsonl  KernelBench level 3, 2_ShallowWideMLP     with interpreter sizes per sample
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
KINDS = ["correct", "wrong", "hacked", "crash"]
UNPARSABLE = "I am sorry, I cannot write a Triton kernel for this operator. Try torch.compile instead."


def code(name):
    out = []
    for line in open(os.path.join(SRC, name)).read().splitlines(keepends=True):
        if line.startswith("#INCLUDE "):
            out.append(open(os.path.join(SRC, line.split()[1])).read())
        else:
            out.append(line)
    return "".join(out)


def response(text, i):
    if i % 2:
        return f"<think>The user wants a kernel. ```python\nimport os\n```</think>\nHere it is:\n```python\n{text}```\n"
    return f"Sure. The Triton version:\n\n```python\n{text}```\n\nIt launches one program per block.\n"


def jsonl(name, task, prefix, sizes=None):
    with open(os.path.join(HERE, name), "w") as f:
        for i, kind in enumerate(KINDS):
            line = {"task": task, "sample": kind, "response": response(code(f"{prefix}_{kind}.py"), i)}
            if sizes:
                line["sizes"] = sizes
            f.write(json.dumps(line) + "\n")
        line = {"task": task, "sample": "unparsable", "response": UNPARSABLE}
        if sizes:
            line["sizes"] = sizes
        f.write(json.dumps(line) + "\n")


def main():
    jsonl("tbg.jsonl", "add_example", "tbg")
    jsonl("tbt.jsonl", "abs.py", "tbt")
    jsonl("kb2.jsonl", "76", "kb2", {"batch_size": 4, "in_features": 32, "out_features": 48, "bias_shape": [48]})
    jsonl("kb3.jsonl", "2_ShallowWideMLP", "kb3",
          {"batch_size": 2, "input_size": 16, "hidden_layer_sizes": [32, 32], "output_size": 16})
    d = os.path.join(HERE, "kb1")
    os.makedirs(d, exist_ok=True)
    for i, kind in enumerate(KINDS):
        with open(os.path.join(d, f"level_1_problem_19_sample_{i}_kernel.py"), "w") as f:
            f.write(code(f"kb1_{kind}.py"))
    open(os.path.join(d, "level_1_problem_19_sample_4_kernel.py"), "w").close()


if __name__ == "__main__":
    main()
