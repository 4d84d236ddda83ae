"""The named presets: a configuration per game and machine, each what made a committed run
(`results/`) or a smoke-size run for tests. Game names are data here (as in the per-game entry
scripts)."""

from __future__ import annotations

import jax

from azjax.config.fields import Config

PRESETS: dict[str, Config] = {
    # A smoke-size run, for tests.
    "tiny": Config(),
    "tic_tac_toe": Config(
        game="tic_tac_toe", net="mlp", hidden=64, blocks=2, simulations=32, selfplay_batch=128,
        selfplay_steps=9, buffer_size=16384, train_batch=256, sgd_steps=8, iterations=300,
        eval_every=50, eval_games=100, eval_simulations=32, eval_mcts_simulations=100),
    # Connect Four on 2 CPU cores, four hours: what made results/connect_four_cpu (issue #55's
    # race, which also set eval_every=0 and checkpoint_every=2000). Symmetry augmentation,
    # value targets from outcome and search value, and 32 SGD steps an iteration (replay ratio
    # 4) halved its mistakes against perfect play at equal training time; games that start
    # after up to 24 random moves cut them by half again; and an MLP 256x3 in place of the
    # ResNet 32x3 (whose 3x3 convolutions on a 6x7 board are slow on a CPU) runs an iteration
    # 8x faster and reached the ResNet's two-hour mistake rate in about a quarter of the time
    # (docs/efficiency.md). Noiseless moves after a game's 12th and three quarters of the value
    # target from the outcome gave the searched players their best short runs on the positions
    # strong play reaches (docs/efficiency/connect_four_strong_play.md), so the outcomes the
    # value learns are those of strong play. Since session 73 the MLP is residual (two
    # pre-LayerNorm blocks of two dense layers, 1.36x the plain MLP's time an iteration): at
    # equal minutes it made 2.6% / 1.7% mistakes with 32 / 128 simulations where the plain
    # one made 3.2% / 2.8% (docs/efficiency/connect_four_strong_play.md). The cosine learning
    # rate spans the 44000 iterations four hours give on a 2-core machine at 0.33 s each;
    # --minutes caps a slower machine's run. solver_every draws the curve on the strong-play
    # positions.
    "connect_four": Config(
        game="connect_four", net="mlp", hidden=256, blocks=2, residual=True, simulations=16,
        selfplay_batch=128, selfplay_steps=16, buffer_size=65536, train_batch=256,
        sgd_steps=32, augment=True, value_target_mix=0.25, gumbel_moves=12, opening_moves=24,
        lr_schedule="cosine", iterations=44000, minutes=240.0, eval_every=3000, eval_games=64,
        eval_simulations=32, eval_mcts_simulations=200, solver_every=1000,
        solver_positions="strong", checkpoint_every=1500),
    # Connect Four on one GPU: ResNet 128x6 in bfloat16, 1024 games at a time.
    # The GPU presets check against few rollout-MCTS simulations during training: those
    # simulations run one after another, each a whole random game, which is thousands of tiny
    # sequential steps on an accelerator (checkers' first evaluation, 128 games against
    # MCTS-200, outlasted a whole 8-minute budget on an H100 shared with another run).
    # `experiments.evaluate` plays the strong opponents.
    "connect_four_gpu": Config(
        game="connect_four", net="resnet", channels=128, blocks=6, compute_dtype="bfloat16",
        simulations=32, selfplay_batch=1024, selfplay_steps=32, buffer_size=1048576,
        min_buffer=32768, train_batch=4096, sgd_steps=32, learning_rate=2e-3,
        iterations=100000, minutes=9.0, eval_every=50, eval_games=128, eval_simulations=32,
        eval_mcts_simulations=200, checkpoint_every=50),
    # Breakthrough 6x6 on 2 CPU cores within about 15 minutes.
    "breakthrough_cpu": Config(
        game="breakthrough", game_options={"rows": 6, "cols": 6}, net="resnet", channels=32,
        blocks=3,
        policy_head="conv", simulations=16, selfplay_batch=128, selfplay_steps=16,
        buffer_size=65536, min_buffer=1024, train_batch=256, sgd_steps=16, learning_rate=2e-3,
        iterations=10000, minutes=15.0, eval_every=75, eval_games=64, eval_simulations=32,
        eval_mcts_simulations=200, checkpoint_every=25),
    # Breakthrough 8x8 on 2 CPU cores, under two hours (results/breakthrough8_cpu): the Connect
    # Four recipe (mirror augmentation, value targets from outcome and search value, replay
    # ratio 4, random openings, a cosine learning rate over the run) on an MLP 256x3, as the
    # Connect Four preset: 0.6-0.7 s an iteration against 8.6 s for the ResNet 32x4 of session
    # 12 (results/efficiency/breakthrough8/resnet_run). Positions are what a two-hour run is
    # short of (session 20), so self-play is cheap: 8 simulations, 512 games x 4 moves an
    # iteration (0.37 s against 0.55 s for 16 simulations and 128 x 16), and a buffer of four
    # times as many positions (about 50 s of self-play). 14500 iterations took 95 minutes in
    # session 21; with the SGD loop rolled (session 22) an iteration takes 0.29 s. Sequential
    # Halving considers 4 root actions, not 16 (session 31): with 8 simulations and 16 it
    # visits 8 actions once each, a one-ply search; with 4 it gives the best two 3 visits
    # each, and a 1-core run beat its 16-action twin 97-3 at 8000 iterations. 17500 iterations
    # (session 32): 0.39 s each on both cores, so the cosine spans about 114 of the 120 minutes.
    # No matches during training: random play and rollout MCTS no longer discriminate on 8x8
    # (`evaluate --progress` rates the snapshots against fixed networks instead). Since session
    # 40 the search's best move after a game's 20th action (gumbel_moves, session 38) and three
    # quarters of the value target from the outcome: 339-161 against five runs without them
    # (session 39). The outcome alone (session 40) scored 320-180 against the same five and
    # 52-48 against it: level, so 0.25 stays. results/breakthrough8_cpu is the preset's seed-1
    # run (session 41): 0.54 and 0.53 against the H100 network.
    "breakthrough8_cpu": Config(
        game="breakthrough", game_options={"rows": 8, "cols": 8}, net="mlp", hidden=256,
        blocks=2,
        policy_head="dense", simulations=8, selfplay_batch=512, selfplay_steps=4,
        buffer_size=262144, min_buffer=1024, train_batch=256, sgd_steps=32, learning_rate=2e-3,
        lr_schedule="cosine", augment=True, value_target_mix=0.25, opening_moves=8,
        max_num_considered_actions=4, gumbel_moves=20, iterations=17500, minutes=120.0,
        eval_every=0, eval_games=0, checkpoint_every=500),
    # Breakthrough 8x8 on one GPU: the pgx AlphaZero example's network and search.
    "breakthrough_gpu": Config(
        game="breakthrough", game_options={"rows": 8, "cols": 8}, net="resnet", channels=128,
        blocks=6,
        policy_head="conv", compute_dtype="bfloat16", simulations=32, selfplay_batch=1024,
        selfplay_steps=32, buffer_size=1048576, min_buffer=32768, train_batch=4096,
        sgd_steps=32, learning_rate=2e-3, iterations=100000, minutes=9.0, eval_every=20,
        eval_games=128, eval_simulations=32, eval_mcts_simulations=200, checkpoint_every=10),
    # Slider 5x5 with the course's random blocks, on 2 CPU cores (azjax.cli.slider compares it
    # with TD-Leaf). No training-time evaluation: rollout MCTS games can last thousands of
    # plies here; the comparison plays alpha-beta with the hand-written evaluation instead.
    "slider_cpu": Config(
        game="slider", game_options={"size": 5, "blocks": "random"}, net="resnet",
        channels=32, blocks=3,
        simulations=16, selfplay_batch=128, selfplay_steps=16, buffer_size=65536,
        train_batch=256, sgd_steps=32, value_target_mix=0.5, iterations=100000, minutes=60.0,
        eval_every=0, checkpoint_every=25),
    # Checkers on 2 CPU cores, three hours (results/checkers_cpu): the Connect Four and
    # Breakthrough 8x8 recipe (value targets half outcome and half search value, replay ratio
    # 4, random openings, a cosine learning rate over the run; checkers has no symmetry to
    # augment with) on a ResNet 32x4. 2200 iterations: a probe gave 4.7 s an iteration. The
    # earlier 14-minute run (results/checkers) is `--config results/checkers/config.json`.
    "checkers_cpu": Config(
        game="checkers", net="resnet", channels=32, blocks=4, policy_head="conv",
        simulations=16, selfplay_batch=128, selfplay_steps=16, buffer_size=65536,
        min_buffer=1024, train_batch=256, sgd_steps=32, value_target_mix=0.5,
        opening_moves=8, lr_schedule="cosine", iterations=2200, minutes=180.0, eval_every=0,
        eval_games=0, checkpoint_every=25),
    "checkers_gpu": Config(
        game="checkers", net="resnet", channels=128, blocks=6, policy_head="conv",
        compute_dtype="bfloat16", simulations=32, selfplay_batch=1024, selfplay_steps=32,
        buffer_size=1048576, min_buffer=32768, train_batch=4096, sgd_steps=32,
        learning_rate=2e-3, iterations=100000, minutes=9.0, eval_every=50, eval_games=64,
        eval_simulations=32, eval_mcts_simulations=50, checkpoint_every=50),
}


def has_accelerator() -> bool:
  return jax.default_backend() in ("gpu", "tpu")


def resolve_preset_name(name: str, game: str | None = None) -> str:
  """"auto" becomes `<game>_gpu` with an accelerator, else `<game>_cpu` (or just `<game>`)."""
  if name != "auto":
    return name
  if game is None:
    raise ValueError("preset 'auto' needs a game")
  suffix = "gpu" if has_accelerator() else "cpu"
  return f"{game}_{suffix}" if f"{game}_{suffix}" in PRESETS else game


def preset(name: str, game: str | None = None) -> Config:
  """The preset `name` (see `resolve_preset_name` for "auto")."""
  name = resolve_preset_name(name, game)
  if name not in PRESETS:
    raise ValueError(f"unknown preset {name!r}; available: auto, {', '.join(PRESETS)}")
  return PRESETS[name]


