"""GRPO smoke run: TRL's GRPOTrainer (from PyPI) trains a tiny randomly initialised causal LM with kiln's
reward, through kiln_client's TRL reward function, against a real `kiln serve` (Triton's interpreter on
the CPU unless the server has a GPU), a few steps; prints the rewards of every step.

The model cannot write Triton from scratch, so its vocabulary holds whole responses as single tokens
(an honest fenced ReLU kernel, a wrong one, a hacked one, prose without code, a decoy kernel that is
never launched): each completion is one of them, kiln scores it for real (worker, verdicts, format rules),
and GRPO should move the policy toward the honest kernel within a few steps. That is the plumbing of RL
training end to end: TRL's generation, kiln's rewards and advantages, TRL's policy update.

  python bench/serve/grpo_smoke.py [--kiln build/release/kiln | --url http://127.0.0.1:8080] [--steps 6]

Needs trl, transformers, accelerate and datasets beside torch (docs/serve.md says how to install them in a
venv of their own); exits 77 without them. Exit 1 when a step's rewards are missing or malformed, or (with
--expect-learning) when the last steps' mean reward is not above the first step's.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

import warnings

warnings.filterwarnings("ignore", category=FutureWarning)  # transformers 5's renames, not ours

try:
    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer
except ImportError as e:
    print(f"SKIP: {e} (pip install trl transformers accelerate datasets)")
    sys.exit(77)

from kiln_client import KilnClient, make_trl_reward  # noqa: E402


def candidate(rel):
    with open(os.path.join(ROOT, "tests", "candidates", rel), encoding="utf-8") as f:
        return f.read()


def fenced(code):
    return f"Here is my kernel.\n```python\n{code}```\n"


# The responses the policy can give (one token each), and the reward autotriton gives each.
ACTIONS = {
    "honest": (fenced(candidate("honest/relu_ok.py")), 1.0),
    "wrong": (fenced(candidate("faulty/nan_output.py")), 0.0),
    "hacked": (fenced(candidate("adversarial/torch_relu_decorated.py")), 0.0),
    "decoy": (fenced(candidate("adversarial/never_launched.py")), 0.0),
    "prose": ("I would write a Triton kernel for this.", 0.0),
}


def tokenizer():
    special = ["<pad>", "<eos>", "<bos>", "<unk>"]
    words = ["Write", "a", "Triton", "kernel", "for", "relu"]
    vocab = {w: i for i, w in enumerate(special + words + [text for text, _ in ACTIONS.values()])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>",
                                   unk_token="<unk>")


def model(tok):
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id)
    return LlamaForCausalLM(cfg)


class Server:
    """A `kiln serve` of our own on loopback (the test tasks, the interpreter on a host without a GPU)."""

    def __init__(self, kiln, args):
        self.dir = tempfile.mkdtemp(prefix="kiln_grpo_smoke_")
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        cmd = [kiln, "serve", "--port", "0", "--port-file", port_file, "--db", os.path.join(self.dir, "kiln.db"),
               "--tasks", os.path.join(ROOT, "tests", "candidates", "tasks")] + args
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        deadline = time.time() + 240
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                sys.exit(f"kiln serve did not start; its log: {os.path.join(self.dir, 'server.log')}")
            time.sleep(0.2)
        self.url = f"http://127.0.0.1:{int(open(port_file).read())}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


class Steps(TrainerCallback):
    """Prints TRL's own per-step reward figures beside the ones the reward function saw."""

    def __init__(self, seen):
        self.seen = seen

    def on_log(self, args, state, control, logs=None, **kw):
        if logs and "reward" in logs:
            print(f"  trl step {state.global_step}: reward {logs['reward']:.3f} (std {logs.get('reward_std', 0):.3f})",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "release", "kiln"))
    ap.add_argument("--url", help="an already running kiln serve (then --kiln is not started)")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--generations", type=int, default=8, help="completions per prompt (GRPO's group)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--expect-learning", action="store_true",
                    help="fail unless the last two steps' mean reward is above the first step's")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    worker_py = os.environ.get("KILN_PYTHON", "python3")
    if not a.url and subprocess.run([worker_py, "-c", "import torch, triton"], capture_output=True).returncode:
        print(f"SKIP: the worker's python ({worker_py}, $KILN_PYTHON) has no torch/triton")
        return 77
    srv = None if a.url else Server(a.kiln, ["--interpret", "--workers", "2"] if not torch.cuda.is_available()
                                    else [])
    url = a.url or srv.url
    print(f"kiln serve at {url}; TRL GRPOTrainer, {a.steps} steps of {a.generations} completions", flush=True)
    kiln_reward = make_trl_reward(client=KilnClient(url, timeout=600))
    steps, problems = [], []

    def reward(prompts, completions, **kw):
        t0 = time.time()
        r = kiln_reward(prompts, completions, **kw)
        # what each completion is: its tokens' names ("honest", "honest+wrong", "relu", ...)
        names = ["+".join(by_id.get(t, tok.convert_ids_to_tokens(t)) for t in ids if t != tok.eos_token_id) or "<eos>"
                 for ids in kw.get("completion_ids") or [[] for _ in completions]]
        for n, x in zip(names, r):  # a completion of one action has that action's reward
            if x is None or (n in ACTIONS and abs(x - ACTIONS[n][1]) > 1e-9):
                problems.append(f"step {len(steps) + 1}: {n} got {x}")
        steps.append(r)
        counts = {n: names.count(n) for n in sorted(set(names))}
        mean = sum(x for x in r if x is not None) / max(1, sum(x is not None for x in r))
        print(f"step {len(steps)}: rewards {r} mean {mean:.3f} ({time.time() - t0:.1f} s) {counts}", flush=True)
        return r

    reward.__name__ = "kiln_reward"
    tok = tokenizer()
    by_id = {tok.convert_tokens_to_ids(text): name for name, (text, _) in ACTIONS.items()}
    data = Dataset.from_dict({"prompt": ["Write a Triton kernel for relu"] * (a.steps * 2), "task": ["relu"] *
                              (a.steps * 2)})
    out = tempfile.mkdtemp(prefix="kiln_grpo_out_")
    cfg = GRPOConfig(output_dir=out, max_steps=a.steps, per_device_train_batch_size=a.generations,
                     num_generations=a.generations, max_completion_length=2, learning_rate=a.lr, logging_steps=1,
                     save_strategy="no", report_to="none", use_cpu=not torch.cuda.is_available(), seed=a.seed,
                     disable_tqdm=True)
    try:
        trainer = GRPOTrainer(model=model(tok), processing_class=tok, reward_funcs=[reward], args=cfg,
                              train_dataset=data, callbacks=[Steps(steps)])
        trainer.remove_callback(PrinterCallback)  # its dict per step: Steps prints the rewards instead
        trainer.train()
    finally:
        if srv:
            srv.stop()
    if len(steps) < a.steps:
        problems.append(f"{len(steps)} reward calls for {a.steps} steps")
    means = [sum(x or 0 for x in r) / len(r) for r in steps]
    print(f"mean reward per step: {[round(m, 3) for m in means]}")
    if a.expect_learning and len(means) >= 3 and not sum(means[-2:]) / 2 > means[0]:
        problems.append(f"no learning: first step {means[0]:.3f}, last two {means[-2:]}")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
