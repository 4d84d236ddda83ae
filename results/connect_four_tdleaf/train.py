"""The TD-Leaf Connect Four run of results/connect_four_tdleaf: python results/connect_four_tdleaf/train.py (a new directory, so move this one away first)."""
from azjax import tdleaf
config = tdleaf.Config(game="connect_four", evaluation="mlp", hidden=64, blocks=1, depth=3, batch=64,
                       max_plies=42, learning_rate=0.003, sgd_steps=16, minutes=30.0, eval_every=0,
                       checkpoint_every=10)
tdleaf.train(config, "results/connect_four_tdleaf")
