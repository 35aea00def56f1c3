"""TRL's reward function form: GRPOTrainer(reward_funcs=[kiln_client.trl_reward_func]) with a dataset
column "task" (a task name, or a reference module's source), or make_trl_reward(...) for options."""

import logging

from kiln_client.client import InfrastructureError, KilnClient, KilnError

log = logging.getLogger("kiln_client")


def _text(completion):
    if isinstance(completion, list):  # conversational: the last message's content
        return completion[-1].get("content", "") if completion else ""
    return completion


def make_trl_reward(client=None, task_column="task", reward=None, mode=None):
    """A `(prompts, completions, **kwargs) -> list[float | None]`; None marks an infrastructure
    failure (TRL ignores it in the mean) and is logged. All completions go in one request, grouped by
    prompt so the server also reports GRPO advantages."""
    state = {"client": client}

    def kiln_reward(prompts, completions, **kwargs):
        c = state["client"] = state["client"] or KilnClient()
        tasks = kwargs.get(task_column)
        if tasks is None:
            raise ValueError(f"the dataset needs a '{task_column}' column (a task name or a reference source)")
        items = []
        for i, comp in enumerate(completions):
            t = tasks[i]
            items.append({"id": i, "task": {"reference": t} if "\n" in t else t, "response": _text(comp),
                          "group": str(prompts[i]) if prompts is not None else "0"})
        try:
            out = c.rewards(items, reward=reward, mode=mode)
        except (InfrastructureError, KilnError) as e:
            log.warning("kiln reward failed for %d completions: %s", len(items), e)
            return [None] * len(items)
        rewards = []
        for r in out["items"]:
            if r.get("reward") is None:
                log.warning("kiln reward infrastructure failure: %s", r.get("error"))
            rewards.append(r.get("reward"))
        return rewards

    kiln_reward.__name__ = "kiln_reward"
    return kiln_reward


def trl_reward_func(prompts, completions, **kwargs):
    """make_trl_reward() with the environment's configuration ($KILN_SERVE_URLS, ...)."""
    global _default
    try:
        _default
    except NameError:
        _default = make_trl_reward()
    return _default(prompts, completions, **kwargs)
