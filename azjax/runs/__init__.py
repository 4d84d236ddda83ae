"""Runs: a run directory and everything that trains, saves or resumes one.

`loop` (the outer training loop: progress, Ctrl-C, NaN stop, metrics, plots, compile cache),
`driver` (one AlphaZero run, `train_and_evaluate`), `gating` (the best-network gate),
`checkpoint` (orbax checkpoints and exported parameters), `memory` (the shape-only memory check
made before anything compiles).
"""
