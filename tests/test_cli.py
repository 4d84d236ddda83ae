"""The front door `azjax` (azjax.cli.main): every command's help, dispatch, a mistyped command,
no JAX for `azjax --help`, and the scripts in experiments/ as thin shims over azjax.cli."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from azjax.cli import common
from azjax.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent


def _exit(argv, capsys) -> tuple[int, str, str]:
  """`cli.main(argv)`, which must exit; its status, stdout and stderr."""
  with pytest.raises(SystemExit) as info:
    cli.main(argv)
  out, err = capsys.readouterr()
  return info.value.code, out, err


def test_help_lists_every_command_with_one_line(capsys):
  code, out, _ = _exit(["--help"], capsys)
  assert code == 0
  assert out.startswith("usage: azjax COMMAND")
  listing = out[out.index("commands:"):].splitlines()
  for name, command in cli.COMMANDS.items():
    lines = [line for line in listing if line.split()[:1] == [name]]
    assert len(lines) == 1 and command.summary in lines[0], (name, listing)
  assert {"train", "evaluate", "play", "sweep", "probe", "export", "efficiency"} <= set(
      cli.COMMANDS)


@pytest.mark.parametrize("argv, usage", [
    (["train", "--help"], "usage: azjax train [-h] GAME"),
    (["train", "tic_tac_toe", "--help"], "usage: azjax train tic_tac_toe"),
    (["evaluate", "--help"], "usage: azjax evaluate"),
    (["play", "--help"], "usage: azjax play"),
    (["sweep", "--help"], "usage: azjax sweep"),
    (["probe", "--help"], "usage: azjax probe"),
    (["export", "--help"], "usage: azjax export"),
    (["efficiency", "--help"], "usage: azjax efficiency"),
])
def test_each_command_shows_its_own_help(argv, usage, capsys, monkeypatch):
  monkeypatch.setattr(sys, "argv", ["/usr/local/bin/azjax", *argv])  # As the console command.
  code, out, _ = _exit(argv, capsys)
  assert code == 0
  assert out.startswith(usage), out[:200]


def test_every_command_target_is_a_function():
  for name, command in cli.COMMANDS.items():
    module, _, function = command.target.partition(":")
    assert callable(getattr(__import__(module, fromlist=[function]), function)), name


def test_the_train_command_hands_its_options_to_the_game(capsys):
  assert cli.main(["train", "tic_tac_toe", "--print-config"]) == 0
  assert '"game": "tic_tac_toe"' in capsys.readouterr().out
  code, _, err = _exit(["train", "tic_tac_toe", "--set", "game=connect_four",
                        "--print-config"], capsys)
  assert code == 2 and "trains tic_tac_toe" in err
  code, _, err = _exit(["train", "chess"], capsys)
  assert code == 2 and "invalid choice: 'chess'" in err


def test_an_unknown_command_is_a_clear_error(capsys):
  code, out, err = _exit(["evalute", "--checkpoint", "x"], capsys)
  assert code == 2 and not out
  assert "unknown command 'evalute' (did you mean evaluate?)" in err
  assert "train, evaluate, play" in err
  code, _, err = _exit(["frobnicate"], capsys)
  assert code == 2 and "unknown command 'frobnicate'; the commands are:" in err


def test_no_command_prints_the_help(capsys):
  assert cli.main([]) == 2
  assert "commands:" in capsys.readouterr().out


def test_help_imports_no_jax():
  code = ("import sys\nfrom azjax.cli import main\ntry:\n  main.main(['--help'])\n"
          "except SystemExit as e:\n  assert e.code == 0\nassert 'jax' not in sys.modules\n"
          "assert not [m for m in sys.modules if m.startswith('azjax.cli.') and m not in "
          "('azjax.cli.main',)]\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
  assert result.returncode == 0, result.stderr


def test_names_and_recorded_commands_follow_the_way_in(monkeypatch):
  monkeypatch.setattr(sys, "argv", ["/usr/bin/azjax", "evaluate"])
  assert common.prog("evaluate") == "azjax evaluate"
  assert common.prog("train connect_four", "connect_four") == "azjax train connect_four"
  monkeypatch.setattr(sys, "argv", ["/repo/experiments/connect_four.py"])
  assert common.prog("train connect_four", "connect_four") == "python -m experiments.connect_four"
  assert common.prog("evaluate") == "python -m experiments.evaluate"
  assert (common.command_line("azjax evaluate", ["--pool", "runs/a b", "random"])
          == "azjax evaluate --pool 'runs/a b' random")


def test_the_console_command_is_declared():
  tomllib = pytest.importorskip("tomllib")
  project = tomllib.loads((ROOT / "pyproject.toml").read_text())
  assert project["project"]["scripts"]["azjax"] == "azjax.cli.main:main"
  # Only the library is installed; experiments/ and benchmarks/ are scripts of the checkout.
  assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["azjax*"]


def test_scripts_in_experiments_are_thin_shims():
  """Logic in a script cannot be imported or tested: each one imports its command's `main`."""
  for path in sorted((ROOT / "experiments").glob("*.py")):
    if path.name == "__init__.py":
      continue
    source = path.read_text()
    assert len(source.splitlines()) <= 30, f"{path.name}: move its code into azjax.cli"
    imports = [node.module for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.ImportFrom)]
    assert any(m and m.startswith(("azjax.cli.", "azjax.play.")) for m in imports), path.name


def test_a_script_runs_from_the_checkout():
  result = subprocess.run([sys.executable, "-m", "experiments.tic_tac_toe", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  assert result.stdout.startswith("usage: python -m experiments.tic_tac_toe")


def test_the_commands_after_training_are_the_readmes(monkeypatch):
  """The commands `azjax train` prints at its end are the README's, word for word."""
  from azjax.cli import train

  monkeypatch.setattr(sys, "argv", ["azjax"])
  lines = train.next_commands("azjax train breakthrough", "breakthrough",
                              "runs/breakthrough_cpu-<date>-<time>")
  readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
  assert "to go on with it:\n" + "\n".join(lines) + "\n```" in readme
