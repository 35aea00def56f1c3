"""bench/optimize_suite/static_reach.py on a small corpus made of the rewrite test cases: a module's row is
its kernel with the most editable block sizes, fixed ones carry their reason, a module kiln cannot analyse
is an error row (not a crash), and the summary counts the modules that have an editable block size."""
import os
import shutil
import subprocess
import sys
import tempfile

CASES = {"shared_block_var": "shared_block_var.py", "hidden_computed": "hidden_computed.py",
         "shared_chunk_var": "shared_chunk_var.py"}


def main(script, kiln, tool, cases):
    with tempfile.TemporaryDirectory() as d:
        kern = os.path.join(d, "tritonbench", "G", "kernels")
        perf = os.path.join(d, "tritonbench", "G", "perf")
        os.makedirs(kern)
        os.makedirs(perf)
        for name, f in CASES.items():
            shutil.copy(os.path.join(cases, f), os.path.join(kern, name + ".py"))
        open(os.path.join(kern, "broken_module.py"), "w").write("def f(:\n")
        for name in list(CASES) + ["broken_module"]:
            open(os.path.join(perf, name + "_perf.py"), "w").write("")
        out = ""
        for part in ("dev", "held"):
            p = subprocess.run([sys.executable, script, kiln, tool, d, part], capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
            out += p.stdout
        rows = {l.split()[0]: l for l in out.splitlines() if l and not l.startswith(" ") and ":" not in l.split()[0]}
        # the kernel with two editable block sizes (a variable shared by BLOCK_M and BLOCK_N) is the row's
        assert "tile_rowsum_kernel" in rows["shared_block_var"] and "BLOCK_M,BLOCK_N" in rows["shared_block_var"], out
        assert "rowsum_kernel" in rows["hidden_computed"] and "editable BLOCK " in rows["hidden_computed"], out
        # CHUNK also sizes a buffer: fixed, with the reason
        assert "editable -" in rows["shared_chunk_var"] and "also read by other host code" in rows["shared_chunk_var"], out
        assert "error:" in rows["broken_module"], out
        reached = [l for l in out.splitlines() if "modules have an editable block size" in l]
        assert len(reached) == 2, out
        total = sum(int(l.split(" of ")[0].split()[-1]) for l in reached)
        assert total == 2, out
        assert any("also read by other host code" in l for l in out.splitlines() if l.startswith("  ")), out
    print("ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
