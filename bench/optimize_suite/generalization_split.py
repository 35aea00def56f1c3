"""Prints the generalization suite of issue 21 and its fixed development / held-aside split.

Suite: every TritonBench-G module with a perf harness (<corpus>/tritonbench/G/perf/<name>_perf.py).
Rule (fixed before any result was looked at; see generalization_split.md): a module is held aside when
int(sha256(name).hexdigest(), 16) % 3 == 0, unless it is one of the 15 kernels of the earlier optimize
suite (kernels.txt), on which kiln was already tuned: those are always in the development part.

  python3 bench/optimize_suite/generalization_split.py [CORPUS]        name<TAB>part, one a line
"""
import glob, hashlib, os, sys

here = os.path.dirname(os.path.abspath(__file__))


def tuned_before():
    rows = open(os.path.join(here, "kernels.txt")).read().splitlines()
    return {r.split()[0] for r in rows if r.strip() and not r.startswith("#")}


def part(name, seen):
    if name in seen:
        return "dev"
    return "held" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../shared/corpus")
    perf = sorted(glob.glob(os.path.join(corpus, "tritonbench/G/perf/*_perf.py")))
    if not perf:
        sys.exit(f"generalization_split.py: no perf harnesses under {corpus}/tritonbench/G/perf")
    seen = tuned_before()
    for p in perf:
        name = os.path.basename(p)[: -len("_perf.py")]
        print(f"{name}\t{part(name, seen)}")


if __name__ == "__main__":
    main()
