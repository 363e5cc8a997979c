"""TALES' TextWorldExpress and ScienceWorld settings as data, its protocol's record, and its
published scores: the suites ``tales-twx`` (16 games) and ``tales-sw`` (30 tasks).

TALES: Text-Adventure Learning Environment Suite (Cui et al. 2025, arXiv:2504.14128), repository
https://github.com/microsoft/tale-suite at commit fdbdf2beea278f62b73ae468de00316a480de77b.
What comes from where in it:

- :data:`TWX_TASKS`: ``tales/textworld_express/twx_data.py``, ``TASKS`` (name, game,
  gameParams, verbatim, spaces included: TextWorldExpress takes them); the environment is
  ``TWX<name>`` (``tales/textworld_express/__init__.py``).
- :data:`TWX_TEST_SEED`: ``tales/textworld_express/twx_env.py`` plays the first test seed
  (``getValidSeedsTest()[0]``; no game seed given) with ``gameFold="test"`` and
  ``envStepLimit=inf``; its score is ``int(score * 100)`` of 100.
- :data:`SW_TASKS`: ``tales/scienceworld/scienceworld_data.py`` (the tasks,
  ``ScienceWorldEnv().task_names``) and ``tales/scienceworld/scienceworld_env.py`` (the first
  test variation, ``get_variations_test()[0]``; ``simplificationStr=""``; ``envStepLimit=inf``;
  won: score 100, lost: score < 0); the environment is ``ScienceWorld`` and the task's name
  title-cased without dashes (``tales/scienceworld/__init__.py``).
- :data:`STEPS`: ``benchmark.py``, the ``--nb-steps`` default; its ``evaluate`` restarts a game
  that ends without a win at the max score, history kept, and scores the run's best
  (``norm_score = highscore / max_score``): see ``robomemory/executors/restarting.py``.
- :data:`PUBLISHED`: ``docs/website/_includes/table.md``, the TextWorld Express and
  ScienceWorld columns of every model row (TALES' agents, not ours).

The seed and the variations are those of textworld-express 1.1.0 and scienceworld 1.2.3
(tests/test_tales.py checks them against the installed worlds), kept as data: computing them
starts a JVM each time a suite is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robomemory.eval.metrics import EpisodeRecord
from robomemory.executors.restarting import RestartingExecutor

if TYPE_CHECKING:
    from robomemory.eval.suites import Suite

REPOSITORY = "microsoft/tale-suite"
COMMIT = "fdbdf2beea278f62b73ae468de00316a480de77b"
STEPS = 100  # benchmark.py: --nb-steps default

# tales/textworld_express/twx_data.py, TASKS: (TALES' name, game, gameParams)
TWX_TASKS: tuple[tuple[str, str, str], ...] = (
    (
        "CookingWorld",
        "cookingworld",
        "numLocations=1, numIngredients=2, numDistractorItems=5, includeDoors=0, "
        "limitInventorySize=0",
    ),
    (
        "TextWorldCommonsense",
        "twc",
        "numLocations=1,numItemsToPutAway=1,includeDoors=0,limitInventorySize=0",
    ),
    ("CoinCollector", "coin", "numLocations=1, numDistractorItems=5, limitInventorySize=0"),
    ("Arithmetic", "arithmetic", ""),
    (
        "MapReader",
        "mapreader",
        "numLocations=2, maxDistanceApart=1, maxDistractorItemsPerLocation=2, includeDoors=0, "
        "limitInventorySize=0",
    ),
    ("Sorting", "sorting", ""),
    ("SimonSays10", "simonsays", "gameLength=10, numDistractors=4, memorization=0"),
    ("SimonSays50", "simonsays", "gameLength=50, numDistractors=4, memorization=0"),
    ("SimonSays100", "simonsays", "gameLength=100, numDistractors=4, memorization=0"),
    (
        "SimonSaysWithMemory10",
        "simonsays",
        "gameLength=10, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory50",
        "simonsays",
        "gameLength=50, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory100",
        "simonsays",
        "gameLength=100, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory10Verbose",
        "simonsays",
        "gameLength=10, numDistractors=4, memorization=1, verbose=1",
    ),
    (
        "SimonSaysWithMemory50Verbose",
        "simonsays",
        "gameLength=50, numDistractors=4, memorization=1, verbose=1",
    ),
    (
        "SimonSaysWithMemory100Verbose",
        "simonsays",
        "gameLength=100, numDistractors=4, memorization=1, verbose=1",
    ),
    ("PeckingOrder", "peckingorder", ""),
)
TWX_FOLD = "test"  # twx_env.py: gameFold="test"
TWX_TEST_SEED = 20000  # getValidSeedsTest()[0] (textworld-express 1.1.0)

# The 30 tasks in ScienceWorld's order (ScienceWorldEnv().task_names) and the first of each
# one's test variations (get_variations_test()[0]; scienceworld 1.2.3).
SW_TASKS: tuple[tuple[str, int], ...] = (
    ("boil", 21),
    ("melt", 21),
    ("freeze", 21),
    ("change-the-state-of-matter-of", 21),
    ("use-thermometer", 405),
    ("measure-melting-point-known-substance", 327),
    ("measure-melting-point-unknown-substance", 225),
    ("power-component", 15),
    ("power-component-renewable-vs-nonrenewable-energy", 15),
    ("test-conductivity", 675),
    ("test-conductivity-of-unknown-substances", 450),
    ("find-living-thing", 225),
    ("find-non-living-thing", 225),
    ("find-plant", 225),
    ("find-animal", 225),
    ("grow-plant", 93),
    ("grow-fruit", 93),
    ("chemistry-mix", 24),
    ("chemistry-mix-paint-secondary-color", 27),
    ("chemistry-mix-paint-tertiary-color", 27),
    ("lifespan-longest-lived", 93),
    ("lifespan-shortest-lived", 93),
    ("lifespan-longest-lived-then-shortest-lived", 93),
    ("identify-life-stages-1", 9),
    ("identify-life-stages-2", 6),
    ("inclined-plane-determine-angle", 126),
    ("inclined-plane-friction-named-surfaces", 1038),
    ("inclined-plane-friction-unnamed-surfaces", 120),
    ("mendelian-genetics-known-plant", 90),
    ("mendelian-genetics-unknown-plant", 360),
)
SW_SIMPLIFICATIONS = ""  # scienceworld_env.py: simplificationStr=""

# docs/website/_includes/table.md: (model, TextWorld Express %, ScienceWorld %), in its order.
PUBLISHED: tuple[tuple[str, float, float], ...] = (
    ("o3 (medium)", 91.9, 93.0),
    ("o3 (high)", 89.6, 93.1),
    ("o3 (low)", 89.8, 88.3),
    ("claude-3.7-sonnet (thinking)", 91.3, 76.5),
    ("claude-3.7-sonnet", 95.8, 72.4),
    ("claude-3.5-sonnet-latest", 81.6, 82.3),
    ("gpt-4.1", 92.5, 76.1),
    ("o1", 70.2, 80.1),
    ("gpt-4o", 80.6, 61.4),
    ("claude-3.5-haiku", 79.8, 67.3),
    ("Llama-3.1-405B-Instruct", 79.2, 51.8),
    ("gemini-2.0-flash", 76.1, 57.1),
    ("Qwen3-32B", 68.9, 49.8),
    ("Llama-3.3-70B-Instruct", 77.2, 55.1),
    ("Llama-3.1-70B-Instruct", 81.9, 51.9),
    ("Qwen2.5-72B-Instruct", 83.8, 35.0),
    ("Mistral-Large-Instruct-2407", 68.3, 46.1),
    ("gpt-4.1-mini", 74.5, 41.9),
    ("gpt-4o-mini", 73.6, 27.2),
    ("Llama-4-Scout-17B-16E-Instruct", 68.4, 27.0),
    ("Llama-4-Maverick-17B-128E-Instruct-", 56.1, 11.5),  # the table's own spelling
    ("Mistral-Small-Instruct-2409", 27.3, 24.4),
    ("Llama-3.1-8B-Instruct", 50.3, 15.7),
    ("DeepSeek-R1", 38.6, 15.8),
    ("Qwen2.5-7B-Instruct", 45.6, 12.6),
    ("Llama-3.2-3B-Instruct", 42.0, 10.0),
    ("phi-4", 43.8, 8.9),
    ("gpt-4.1-nano", 38.7, 9.4),
    ("Mistral-Small-24B-Instruct-2501", 23.0, 15.8),
    ("DeepSeek-R1-Distill-Llama-70B", 39.8, 7.7),
    ("Ministral-8B-Instruct-2410", 22.8, 2.3),
    ("Mistral-Small-3.1-24B-Instruct-2503", 10.3, 10.5),
    ("Mixtral-8x22B-Instruct-v0.1", 8.4, 4.0),
    ("Llama-3.2-1B-Instruct", 19.0, 2.4),
    ("Phi-3-mini-128k-instruct", 9.4, 2.4),
    ("Phi-3.5-MoE-instruct", 7.0, 2.3),
    ("Phi-4-mini-instruct", 5.5, 2.3),
    ("Mixtral-8x7B-Instruct-v0.1", 1.6, 4.0),
    ("Phi-3.5-mini-instruct", 2.0, 2.4),
    ("Phi-3-medium-128k-instruct", 0.0, 2.3),
)
PUBLISHED_SOURCE = f"{REPOSITORY}@{COMMIT[:7]}:docs/website/_includes/table.md"
SUITE_FRAMEWORK = {"tales-twx": "TextWorld Express", "tales-sw": "ScienceWorld"}


def twx_env_name(name: str) -> str:
    """TALES' environment name of a TextWorldExpress task: ``TWXCookingWorld``."""
    return f"TWX{name}"


def sw_env_name(task: str) -> str:
    """TALES' environment name of a ScienceWorld task: ``boil`` -> ``ScienceWorldBoil``,
    ``identify-life-stages-1`` -> ``ScienceWorldIdentifyLifeStages1``."""
    return "ScienceWorld" + "".join(part.capitalize() for part in task.split("-"))


def tales_twx_suite() -> Suite:
    """``tales-twx``: TALES' 16 TextWorldExpress games at its test seed, 100 steps, restarts."""
    from robomemory.eval.suites import Suite, TaskSpec  # suites.py registers this one

    tasks = [
        TaskSpec(
            world="twx",
            id=twx_env_name(name),
            params={"game": game, "seed": TWX_TEST_SEED, "params": params, "fold": TWX_FOLD},
        )
        for name, game, params in TWX_TASKS
    ]
    return Suite(
        name="tales-twx",
        description=f"TALES' TextWorld Express games ({REPOSITORY}@{COMMIT[:7]})",
        tasks=tasks,
        max_steps=STEPS,
        protocol="tales",
        split="test",  # the worlds' test seeds: traces sealed, no rule written from them
    )


def tales_sw_suite() -> Suite:
    """``tales-sw``: TALES' 30 ScienceWorld tasks at their first test variation, no
    simplification, 100 steps, restarts."""
    from robomemory.eval.suites import Suite, TaskSpec  # suites.py registers this one

    tasks = [
        TaskSpec(
            world="scienceworld",
            id=sw_env_name(task),
            params={"task": task, "variation": variation, "simplifications": SW_SIMPLIFICATIONS},
        )
        for task, variation in SW_TASKS
    ]
    return Suite(
        name="tales-sw",
        description=f"TALES' ScienceWorld tasks ({REPOSITORY}@{COMMIT[:7]})",
        tasks=tasks,
        max_steps=STEPS,
        protocol="tales",
        split="test",  # the worlds' test seeds: traces sealed, no rule written from them
    )


def tales_gc(world: str, best: float, max_score: float | None) -> float:
    """TALES' normalized score of a run's best score, in [0, 1]: TextWorldExpress's [0, 1]
    score in whole points (``int(score * 100)`` of 100, as twx_env.py), the others' as is;
    a best below 0 counts 0 (its highscore starts at 0)."""
    if world == "twx":
        return max(int(best * 100), 0) / 100
    return min(max(best, 0.0) / max_score, 1.0) if max_score else 0.0


def tales_record(record: EpisodeRecord, world: str, executor: RestartingExecutor) -> EpisodeRecord:
    """``record`` under TALES' protocol: the best score over all restarts (a read-back
    episode's from its trajectory), its normalized score as GC, success when it reached the
    max, and the restarts."""
    scores = [s["score"] for s in record.trajectory if s.get("score") is not None]
    best = max([executor.best_score, *scores])
    top = record.max_score if record.max_score is not None else executor.max_score
    return record.model_copy(
        update={
            "protocol": "tales",
            "score": best,
            "max_score": top,
            "gc": tales_gc(world, best, top),
            "success": top is not None and best >= top,
            "restarts": executor.restarts,
        }
    )


def published(suite: str) -> list[tuple[str, float]]:
    """TALES' published scores (model, percent) of the framework ``suite`` plays, from
    :data:`PUBLISHED_SOURCE`: theirs, to print beside ours marked as such."""
    column = {"tales-twx": 1, "tales-sw": 2}.get(suite)
    if column is None:
        raise ValueError(f"no TALES scores for suite {suite!r}; choose tales-twx or tales-sw")
    return [(row[0], row[column]) for row in PUBLISHED]
