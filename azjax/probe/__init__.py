"""Probing what a trained network represents: concepts, datasets, linear probes, TCAV, plots.

The workflow of the Breakthrough thesis, made reusable and controlled:

1. `dataset.collect` plays games (self-play of a checkpoint, or another agent) and records a
   state table (game id, ply, board, mover, chosen action, search policy and value, outcome,
   concept labels); `dataset.activations` adds every layer's activations ("input" = the raw
   observation); `dataset.save` / `dataset.load` write and read them (plain numpy files).
2. `concepts`: concept functions of a position from the mover's side (material, mobility,
   capture available, win in one, ...), pure jnp on one state, vmapped by `concepts.labels`.
3. `probes`: linear probes (SGDClassifier as in the thesis, LogisticRegression, Ridge for
   continuous concepts) with train/test splits grouped by game, over several seeds, with the
   same probe on a randomly initialised network and on the raw input as controls.
4. `tcav`: concept activation vectors, the TCAV score of the chosen action's loss, its t-test
   against CAVs of random labels, and a causal check (add `alpha * v` at the layer and watch
   the value and the policy).
5. `plots`: scores per layer with controls, what-when-where heatmaps, TCAV bars, causal curves.

`python -m experiments.export` and `python -m experiments.probe` drive these end to end.

Import the submodules directly (`from azjax.probe import concepts, probes`): they pull in
scikit-learn, scipy and matplotlib only where needed.
"""
