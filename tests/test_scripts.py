"""The analysis scripts of benchmarks/ (moved there from results/, #56): each imports against
today's library and answers `--help`, and the ones that only read files run on a tiny input."""

import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The analysis scripts that made tables and plots in results/ (results/README.md cites them).
ANALYSIS = ("connect_four_tdleaf", "conv_bench", "equal_minutes", "first_player",
            "join_sessions", "plot_checkers", "plot_connect_four_mlp",
            "plot_connect_four_openings", "search_settings", "slider_compare_evaluations",
            "slider_pool_sum", "solver_windows", "thin_metrics", "time_iteration",
            "time_tdleaf_iteration")


def test_results_holds_no_scripts():
  assert not sorted(ROOT.glob("results/**/*.py")), "scripts belong in benchmarks/"


@pytest.mark.parametrize("name", ANALYSIS)
def test_script_answers_help(name, capsys):
  module = importlib.import_module(f"benchmarks.{name}")
  with pytest.raises(SystemExit) as exit_info:
    module.main(["--help"])
  assert exit_info.value.code == 0
  out = capsys.readouterr().out
  assert out.startswith("usage:") and module.__doc__.splitlines()[0] in " ".join(out.split())


def _metrics(run: Path, rows: list[dict]) -> Path:
  run.mkdir(parents=True, exist_ok=True)
  (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
  return run / "metrics.jsonl"


def test_thin_metrics_keeps_every_nth_evaluations_and_the_last(tmp_path):
  from benchmarks import thin_metrics

  rows = [{"iteration": i, "seconds": i} for i in range(1, 26)]
  rows[6]["eval/random/score"] = 1.0
  _metrics(tmp_path, rows)
  thin_metrics.main([str(tmp_path), "--every", "10"])
  kept = [json.loads(line)["iteration"] for line in (tmp_path / "metrics.jsonl").open()]
  assert kept == [7, 10, 20, 25]


def test_join_sessions_makes_counters_cumulative(tmp_path):
  from benchmarks import join_sessions

  counters = dict.fromkeys(join_sessions.COUNTERS, 0)
  first = [{**counters, "iteration": i, "seconds": 10 * i} for i in range(3)]
  second = [{**counters, "iteration": i, "seconds": 5 * i} for i in range(3)]
  _metrics(tmp_path / "a", first)
  _metrics(tmp_path / "b", second)
  rows = join_sessions.join([tmp_path / "a", tmp_path / "b"])
  assert [(r["iteration"], r["seconds"], r["session"]) for r in rows] == [
      (0, 0, 1), (1, 10, 1), (2, 20, 1), (3, 25, 2), (4, 30, 2)]


def test_solver_windows_table(tmp_path, capsys):
  from benchmarks import solver_windows

  rows = [{"iteration": i, "seconds": 60 * i, "positions": 8 * i,
           "solver/policy/mistake_rate": 0.1, "solver/search32/mistake_rate": 0.05}
          for i in range(0, 101, 50)]
  path = _metrics(tmp_path, rows)
  solver_windows.main(["--windows", "1-60,61-100", f"run={path}", "--plot",
                       str(tmp_path / "curves.png")])
  assert "| run | 10.0 / 5.0 (1) | 10.0 / 5.0 (1) | 100.0 |" in capsys.readouterr().out
  assert solver_windows.curve(path) == [
      {"positions": 8 * i, "policy/mistake_rate": 0.1, "search32/mistake_rate": 0.05}
      for i in (50, 100)]
  assert (tmp_path / "curves.png").stat().st_size > 0


@pytest.mark.slow
def test_search_payoff_tables_a_trained_run(trained_run, tmp_path):
  """benchmarks.search_payoff end to end on a tiny Connect Four run and 20 strong positions."""
  import numpy as np

  from azjax.solver import benchmark as sb
  from benchmarks import search_payoff

  strong = sb.Positions.load(sb.positions_path("connect_four", "strong"))
  path = strong.subset(np.arange(0, len(strong), 50)).save(tmp_path / "strong20.npz")
  out = tmp_path / "payoff.md"
  search_payoff.main(["--run", str(trained_run("connect_four")), "--positions", str(path),
                      "--simulations", "4", "--out", str(out)])
  text = out.read_text()
  assert "| positions | decisive | raw policy | gumbel 4 |" in text, text
  assert "(20; " in text
