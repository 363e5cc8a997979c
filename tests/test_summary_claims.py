"""Step summaries that claim an action not taken: the lexical check and the bench around it."""

from __future__ import annotations

import json
from pathlib import Path

from robomemory.cli import main as cli_main
from robomemory.eval.bench.summary_claims import logged_checks, textworld_verb_words
from robomemory.eval.summary_claims import (
    check_traces,
    claimed_verbs,
    episode_checks,
    unsupported_claims,
)


def test_past_tense_verbs_are_claims_but_states_and_perceptions_are_not():
    summary = "The robot opened the box, which was placed on a red shelf, and found a key."
    assert claimed_verbs(summary) == ["opened"]
    assert claimed_verbs("The robot took the mug and ate the bread.") == ["took", "ate"]
    # relations and outcomes describe things or the score, not an act of the robot
    assert claimed_verbs("The robot read a list, which included soap, and gained a point.") == [
        "read"
    ]


def test_a_claim_of_the_last_action_is_supported():
    assert unsupported_claims("The robot opened the box.", "open(box)", "It is open.") == []
    assert unsupported_claims("The robot chopped the log.", "chop(log)", "Done.") == []
    assert unsupported_claims("The robot picked up the cup.", "pick_up(cup)", "Taken.") == []


def test_a_claim_the_observation_states_is_supported():
    # "You take the milk" supports "took" though the action is called pick_up
    assert (
        unsupported_claims("The robot took the milk.", "pick_up(milk)", "You take the milk.") == []
    )


def test_an_action_neither_taken_nor_observed_is_flagged():
    summary = "The robot examined the manual, which it then used to repair the pump."
    flagged = unsupported_claims(summary, "examine(manual)", "Step 1: repair the pump.")
    assert flagged == ["used"]
    assert unsupported_claims("The robot rolled the onion.", "dice(onion)", "You dice it.") == [
        "rolled"
    ]


def test_declared_verb_words_support_a_paraphrase():
    words = {"navigate_to": "walk to a known room"}
    summary = "The robot walked to the hall."
    assert unsupported_claims(summary, "navigate_to(hall)", "Hall.", words) == []
    assert unsupported_claims(summary, "navigate_to(hall)", "Hall.") == ["walked"]


def test_each_summary_is_checked_against_the_step_before_it(tmp_path: Path):
    trajectory = [
        {
            "step": 1,
            "action": "examine(note)",
            "message": "The note says: fix the lamp.",
            "summary": "The robot is in the hall.",
        },
        {
            "step": 2,
            "action": "pick_up(lamp)",
            "message": "You take the lamp.",
            "summary": "The robot examined the note and fixed the lamp.",
        },
        {
            "step": 3,
            "action": "look()",
            "message": "A hall.",
            "summary": "The robot took the lamp.",
        },
    ]
    checks = episode_checks("ep", trajectory)
    assert [(c.step, c.unsupported) for c in checks] == [(2, []), (3, [])]
    # "fixed" is in the note's words ("fix"): the lexical check is a lower bound
    trajectory[1]["summary"] = "The robot examined the note and repaired the lamp."
    checks = episode_checks("ep", trajectory)
    assert [(c.step, c.unsupported) for c in checks] == [(2, ["repaired"]), (3, [])]
    episodes = tmp_path / "episodes"
    episodes.mkdir()
    (episodes / "robomemory.json").write_text(json.dumps({"trajectory": trajectory}))
    (episodes / "react.json").write_text(json.dumps({"trajectory": [{"step": 1}, {"step": 2}]}))
    report = check_traces(sorted(episodes.glob("*.json")))
    assert report.summaries == 2
    assert len(report.flagged) == 1
    assert report.share == 0.5


def test_logged_summarizer_calls_are_checked_from_their_user_message():
    calls = [
        {"user": "Last action: none (task start)\nObservation:\nA hall with a lamp."},
        {"user": "Last action: dice(onion) -> succeeded\nObservation:\nYou dice the onion."},
    ]
    answers = [
        '{"summary": "The robot is in a hall with a lamp."}',
        '{"summary": "The robot rolled the onion."}',
    ]
    report = logged_checks(calls, answers, textworld_verb_words())
    assert report.summaries == 2
    assert [c.unsupported for c in report.flagged] == [["rolled"]]


def test_the_bench_reports_result_folders(tmp_path: Path, capsys):
    episodes = tmp_path / "run" / "episodes"
    episodes.mkdir(parents=True)
    trajectory = [
        {"step": 1, "action": "open(box)", "message": "You open the box.", "summary": "Start."},
        {"step": 2, "action": "look()", "message": "", "summary": "The robot rolled the box."},
    ]
    (episodes / "a.json").write_text(json.dumps({"trajectory": trajectory}))
    out = tmp_path / "claims.json"
    assert cli_main(["bench", "summary-claims", str(tmp_path / "run"), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures[str(tmp_path / "run")]["flagged"] == 1
    assert figures[str(tmp_path / "run")]["share"] == 1.0
