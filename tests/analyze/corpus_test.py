#!/usr/bin/env python3
"""Corpus test for `kiln analyze`, independent of the analyzer: Python's own `ast` module finds the
@triton.jit functions and the kernels each module launches; kiln must agree.

Usage: corpus_test.py KILN_BINARY CORPUS_KERNELS_DIR

Checks, for every *.py file in the folder:
  1. kiln reports no error for it (it parses without error nodes and has kernels);
  2. kiln finds exactly the @triton.jit functions ast finds (names, in any order);
  3. every kernel that ast sees launched (`k[grid](...)`, `mod.k[grid](...)`, or through a simple
     alias `f = k` / `f = a if c else b`) has a launch site in kiln's model;
  4. every constexpr and launch option at every launch has an origin other than `missing`
     (exceptions: EXCEPTIONS below, each justified).
"""
import ast
import json
import os
import subprocess
import sys

# (file, kernel, name) triples whose origin is legitimately undeterminable. Keep tiny.
EXCEPTIONS = set()


def leaf(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def is_jit_decorator(d):
    if isinstance(d, ast.Call):
        d = d.func
    return leaf(d) == "jit"


def ast_facts(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    jit = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(is_jit_decorator(d) for d in n.decorator_list):
            jit.append(n.name)
    names = set(jit)
    # simple aliases: x = k, x = a if c else b
    alias = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            t = leaf(n.targets[0])
            vals = [n.value]
            if isinstance(n.value, ast.IfExp):
                vals = [n.value.body, n.value.orelse]
            ks = [leaf(v) for v in vals if leaf(v) in names]
            if t and ks:
                alias.setdefault(t, set()).update(ks)
    launched = set()
    jit_nodes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in names]
    inside = set()
    for f in jit_nodes:
        for n in ast.walk(f):
            inside.add(id(n))
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and id(n) not in inside:
            l = leaf(n.func.value)
            if l in names:
                launched.add(l)
            elif l in alias:
                launched.update(alias[l])
    return jit, launched


def main():
    kiln, corpus = sys.argv[1], sys.argv[2]
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(".py"))
    if not files:
        print("no corpus files in", corpus)
        return 1
    p = subprocess.run([kiln, "analyze", "--json", *files], capture_output=True, text=True)
    out = json.loads(p.stdout)
    failures = []
    for e in out["errors"]:
        failures.append(f"{e['file']}: kiln error: {e['message']}")
    mods = {m["path"]: m for m in out["modules"]}
    n_kernels = n_launches = n_bindings = 0
    for f in files:
        jit, launched = ast_facts(f)
        m = mods.get(f)
        if m is None:
            failures.append(f"{f}: no model")
            continue
        kk = sorted(k["name"] for k in m["kernels"])
        if kk != sorted(jit):
            failures.append(f"{f}: jit functions differ: kiln {kk} ast {sorted(jit)}")
        n_kernels += len(kk)
        kl = set()
        for l in m["launches"]:
            kl.add(l["kernel"])
            kl.update(l.get("kernel_candidates", []))
            n_launches += 1
            for b in l["bindings"]:
                n_bindings += 1
                if b["origin"]["kind"] == "missing" and (os.path.basename(f), l["kernel"], b["name"]) not in EXCEPTIONS:
                    failures.append(f"{f}:{l['span']['line']}: {l['kernel']}: {b['name']} has no origin")
        for k in sorted(launched - kl):
            failures.append(f"{f}: ast sees {k} launched, kiln has no launch site for it")
    print(f"{len(files)} files, {n_kernels} jit functions, {n_launches} launch sites, {n_bindings} bindings")
    for x in failures:
        print("FAIL:", x)
    return 1 if failures or p.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
