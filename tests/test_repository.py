"""The repository itself: what is committed, and what is not (issue #56, DESIGN.md's Layout).

`results/` is the record of real runs, not a warehouse: no file that `.gitignore` excludes is
tracked (force-added snapshots and checkpoints), no file there is larger than `MAX_RESULT_BYTES`,
and no committed text names an absolute path of the machine it was written on (a work tree, a
temporary or a home directory) where a path relative to the repository belongs.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The largest file a run may commit under results/: today's largest is a final network of 6.7 MB
# (results/checkers_gpu/model); a run with a larger one is too big for the record.
MAX_RESULT_BYTES = 8 * 2**20
# The whole of results/ at the tip (51 MB in session 61, after the exploratory runs' networks
# left it): a clone must stay light; a run that needs more keeps its networks elsewhere.
MAX_RESULTS_TOTAL = 60 * 10**6
# An absolute path of a machine: /work/..., /tmp/..., /root/..., /home/... (and macOS's /Users/,
# /mnt/, /scratch/), not preceded by a character that makes it part of a relative path, a URL or
# a variable (`runs/work/`, `https://x.org/home/`, `$TMPDIR/`, `~/`).
MACHINE_PATH = re.compile(rb"(?<![\w.~$/:-])/(?:work|tmp|root|home|Users|mnt|scratch)/")

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(),
    reason="needs git and a checkout of the repository")


def _git(*args: str) -> list[str]:
  out = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True).stdout
  return [name for name in out.decode().split("\0") if name]


def test_no_tracked_file_matches_gitignore():
  ignored = _git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
  assert not ignored, (f"{len(ignored)} tracked files match .gitignore (remove them with git rm "
                       f"--cached, or change .gitignore), e.g. {ignored[:5]}")


def test_results_files_are_small():
  large = [(name, size) for name in _git("ls-files", "-z", "results")
           if (ROOT / name).is_file() and (size := (ROOT / name).stat().st_size) > MAX_RESULT_BYTES]
  assert not large, f"files under results/ over {MAX_RESULT_BYTES / 2**20:.0f} MiB: {large}"


def test_results_fit_their_budget():
  total = sum((ROOT / name).stat().st_size for name in _git("ls-files", "-z", "results")
              if (ROOT / name).is_file())
  assert total < MAX_RESULTS_TOTAL, (f"results/ holds {total / 1e6:.1f} MB, over its "
                                     f"{MAX_RESULTS_TOTAL / 1e6:.0f} MB budget")


def test_no_committed_text_names_a_machine_path():
  found = []
  for name in _git("ls-files", "-z"):
    path = ROOT / name
    if path == Path(__file__).resolve():  # Its examples below.
      continue
    if not path.is_file() or path.stat().st_size > MAX_RESULT_BYTES:
      continue
    data = path.read_bytes()
    if b"\0" in data[:8192]:  # Binary (a network, a plot): not text.
      continue
    for number, line in enumerate(data.splitlines(), 1):
      if MACHINE_PATH.search(line):
        found.append(f"{name}:{number}: {line[:120].decode(errors='replace')}")
  assert not found, ("committed text names absolute machine paths (write them relative to the "
                     "repository, e.g. runs/<name>, or $TMPDIR/<name>):\n" + "\n".join(found[:20]))


@pytest.mark.parametrize("line, machine", [
    (b"--run-dir /work/runs/bt8", True), (b"(`/tmp/ck_lo`)", True), (b" /home/u/x", True),
    (b'File "/root/.pyenv/x.py"', True), (b"--run-dir runs/bt8", False),
    (b"https://example.org/home/x", False), (b"$TMPDIR/sw", False), (b"~/work/x", False),
    (b"results/work/x", False)])
def test_machine_path_pattern(line, machine):
  assert bool(MACHINE_PATH.search(line)) == machine
