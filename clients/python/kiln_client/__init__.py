"""Client of `kiln serve` (docs/serve.md): stdlib only (urllib).

- KilnClient: several servers (one per GPU host) behind one client; each request goes to the server
  with the fewest outstanding requests; 429 is retried after Retry-After with the same idempotency key
  (a retried request is never evaluated twice); 202 is polled until done or the client's own timeout.
- compute_score / compute_score_async: verl's `reward.custom_reward_function` (returns a dict with
  `score` and the same keys every time; an infrastructure failure sets `kiln_infra_error` 1 and logs).
- trl_reward_func: TRL's GRPOTrainer(reward_funcs=...) form (None for an infrastructure failure).
"""

from kiln_client.client import KilnClient, KilnError, InfrastructureError
from kiln_client.verl import compute_score, compute_score_async, SCORE_KEYS
from kiln_client.trl import trl_reward_func, make_trl_reward

__all__ = [
    "KilnClient",
    "KilnError",
    "InfrastructureError",
    "compute_score",
    "compute_score_async",
    "SCORE_KEYS",
    "trl_reward_func",
    "make_trl_reward",
]
