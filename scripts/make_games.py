"""Generate the bundled TextWorld games with fixed seeds into robomemory/data/games/.

Usage: python scripts/make_games.py [--out DIR] [--only NAME ...]

Each game is made by ``tw-make`` (TextWorld 1.7.0); its ``.z8`` and ``.json`` are kept side by side,
the Inform 7 source (``.ni``) and other build leftovers are removed. Generation is deterministic
for a given seed and TextWorld version.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

GAMES_DIR = Path(__file__).resolve().parents[1] / "robomemory" / "data" / "games"

# name -> tw-make arguments (the seed is part of the arguments), in increasing difficulty.
GAMES: dict[str, list[str]] = {
    name: args.split()
    for name, args in {
        "cooking_1room": "tw-cooking --recipe 1 --take 1 --go 1 --seed 1",
        "cooking_1room_cut": "tw-cooking --recipe 1 --take 1 --go 1 --cut --seed 2",
        "cooking_6rooms": "tw-cooking --recipe 1 --take 1 --go 6 --seed 3",
        "cooking_6rooms_open": "tw-cooking --recipe 1 --take 1 --go 6 --open --seed 13",
        "cooking_6rooms_cut_cook": (
            "tw-cooking --recipe 2 --take 1 --go 6 --open --cut --cook --seed 5"
        ),
        "custom_3rooms": "custom --world-size 3 --nb-objects 5 --quest-length 3 --seed 7",
    }.items()
}


def tw_make() -> str:
    """The ``tw-make`` script of the running interpreter's environment."""
    local = Path(sys.executable).parent / "tw-make"
    found = str(local) if local.exists() else shutil.which("tw-make")
    if not found:
        raise SystemExit("tw-make not found: pip install textworld==1.7.0")
    return found


def make_game(name: str, out_dir: Path) -> Path:
    """Generate one game; return the path of its ``.z8``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    z8 = out_dir / f"{name}.z8"
    cmd = [tw_make(), *GAMES[name], "--output", str(z8), "--force", "--silent"]
    subprocess.run(cmd, check=True)
    for leftover in out_dir.glob(f"{name}.*"):
        if leftover.suffix not in (".z8", ".json"):
            leftover.unlink()
    return z8


def walkthrough_length(z8: Path) -> int:
    data = json.loads(z8.with_suffix(".json").read_text())
    return len(data.get("metadata", {}).get("walkthrough") or [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=GAMES_DIR)
    parser.add_argument("--only", nargs="*", choices=sorted(GAMES), default=None)
    args = parser.parse_args(argv)
    for name in args.only or list(GAMES):
        z8 = make_game(name, args.out)
        print(f"{name}: {z8} (walkthrough {walkthrough_length(z8)} commands)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
