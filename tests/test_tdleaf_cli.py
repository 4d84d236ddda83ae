"""`azjax tdleaf GAME`: TD-Leaf's settings through the config system (--set, game options,
--config, --print-config), checked without training."""

import json
import sys

import pytest

from azjax.cli import main as cli
from azjax.cli import tdleaf as tdleaf_cli
from azjax.tdleaf import config as tdleaf_config


def _settings(argv, capsys) -> dict:
  tdleaf_cli.main([*argv, "--print-config", "json"])
  return json.loads(capsys.readouterr().out)


def test_settings_and_game_options_from_the_command_line(capsys):
  values = _settings(["slider", "--set", "size=7", "--set", "game.blocks=none", "--set",
                      "blocks=3", "--set", "learning.td_lambda=0.5", "--minutes", "3"], capsys)
  assert values["game"] == "slider" and values["game_options"] == {"size": 7, "blocks": "none"}
  assert values["blocks"] == 3  # The trunk's blocks; the board's are `game.blocks`.
  assert values["td_lambda"] == 0.5 and values["minutes"] == 3.0
  values = _settings(["connect_four"], capsys)  # No features: an MLP value head by default.
  assert values["game"] == "connect_four" and values["game_options"] == {}
  assert values["evaluation"] == "mlp" and _settings(["slider"], capsys)["evaluation"] == (
      "features")


@pytest.mark.parametrize("argv, error", [
    (["slider", "--set", "depht=3"], "unknown key 'depht'; did you mean depth"),
    (["slider", "--set", "play.td_lambda=0.5"], "td_lambda is in section 'learning'"),
    (["slider", "--set", "depth=0"], "depth=0: must be >= 1"),
    (["slider", "--set", "evaluation=nope"], "evaluation='nope': must be one of"),
    (["slider", "--set", "game=connect_four"], "learns slider"),
    (["slider", "--resume"], "--resume continues the run in --run-dir"),
])
def test_bad_settings_are_refused_naming_the_key(argv, error, capsys):
  with pytest.raises(SystemExit) as exit_info:
    tdleaf_cli.main(argv)
  assert exit_info.value.code == 2 and error in capsys.readouterr().err


def test_print_config_toml_reads_back_with_config(tmp_path, capsys):
  tdleaf_cli.main(["slider", "--set", "size=6", "--set", "depth=4", "--print-config", "toml"])
  toml = capsys.readouterr().out
  assert "[play]" in toml and "depth = 4" in toml and "game_options = {size = 6}" in toml
  path = tmp_path / "tdleaf.toml"
  path.write_text(toml)
  values = _settings(["slider", "--config", str(path)], capsys)
  assert values["depth"] == 4 and values["game_options"] == {"size": 6}


def test_the_committed_settings_files_load(tmp_path):
  """A committed run's tdleaf.json (results/slider/tdleaf's) loads, and saves back the same."""
  from pathlib import Path

  run = Path(__file__).resolve().parent.parent / "results" / "slider" / "tdleaf"
  config = tdleaf_config.Config.load(run)
  assert config.game_options == {"blocks": "random", "size": 5} and config.learning_rate == 5e-3
  config.save(tmp_path)
  assert tdleaf_config.Config.load(tmp_path) == config


def test_the_front_door_lists_tdleaf(capsys, monkeypatch):
  monkeypatch.setattr(sys, "argv", ["/usr/local/bin/azjax", "tdleaf", "--help"])
  with pytest.raises(SystemExit):
    cli.main(["tdleaf", "--help"])
  assert capsys.readouterr().out.startswith("usage: azjax tdleaf")
