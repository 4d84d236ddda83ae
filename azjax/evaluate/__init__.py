"""Evaluating agents: in-training evaluators, tournaments and Elo, the rollout-MCTS ladder,
learning curves against perfect play, and matches against OpenSpiel's bots.

`evaluators` (what a run scores while it trains), `tournament` (opponents from specs, round
robins, Elo over training), `ladder` (the source projects' doubling MCTS ladder), `curves`
(every snapshot of a run on the solver benchmark), `openspiel_bridge` (OpenSpiel bots as
opponents, move by move through notation). The command is `azjax evaluate` (`azjax.cli.evaluate`).
"""
