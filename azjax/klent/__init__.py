"""KLENT (Ota, Osa, Omura, Harada 2026, arXiv 2602.10894): search-free self-play with a policy
update regularised by a reverse KL divergence to the previous policy and an entropy bonus, and
lambda-returns for the value targets. docs/klent.md describes it as implemented.

    targets.py   the closed-form policy target and the lambda-returns (pure functions)
    config.py    `KlentConfig`, its settings declared by section
    learner.py   `Learner`: the jitted iteration and its `KlentState`
    runs.py      `train(config, run_dir)`: a run on the one outer loop (`azjax klent GAME`);
                 imported on its own (`from azjax.klent import runs`), as it pulls in the loop
"""

from azjax.klent.config import CONFIG_FILE, KlentConfig
from azjax.klent.learner import KlentState, Learner, Samples
from azjax.klent.targets import lambda_returns, policy_target, policy_target_logits

__all__ = ["CONFIG_FILE", "KlentConfig", "KlentState", "Learner", "Samples", "lambda_returns",
           "policy_target", "policy_target_logits"]
