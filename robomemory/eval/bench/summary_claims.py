"""`robomemory bench summary-claims`: the share of step summaries that claim an action not taken.

Given result folders, it checks every step summary of their episode traces (see
:mod:`robomemory.eval.summary_claims`). With ``--replay LOG`` (a ``$ROBOMEMORY_PROMPT_LOG``
file) it sends the logged summarizer calls again with today's summarizer prompt to the embedded
model and checks the logged and the new answers side by side: a prompt change measured without
a suite run.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import httpx
from rich.table import Table

from robomemory.commands.json_out import (
    add_json_flag,
    human_console,
    json_file,
    print_json,
    wants_json,
)
from robomemory.config import ModelConfig
from robomemory.eval.bench.local_model_bench import read_log
from robomemory.eval.summary_claims import (
    ClaimReport,
    SummaryCheck,
    check_traces,
    unsupported_claims,
)
from robomemory.executors.envs.textworld_verbs import BASE_VERBS, COOKING_VERBS, KEY_VERBS
from robomemory.local_model import ensure_model_file, slot_for, start_server
from robomemory.prompts.perceive import SUMMARIZER_SYSTEM

SCHEMA = "StepSummary"
_LAST = re.compile(r"^Last action: (.*)$\n?", re.M)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, nargs="*", help="result folders (with episodes/)")
    parser.add_argument("--replay", type=Path, default=None, help="replay a prompt log's summaries")
    parser.add_argument("--show", action="store_true", help="print each flagged summary")
    add_json_flag(parser, to_file=True)


def textworld_verb_words() -> dict[str, str]:
    """Each TextWorld verb's declared words (description and aliases)."""
    verbs = BASE_VERBS + KEY_VERBS + COOKING_VERBS
    return {v.name: " ".join([v.description, *v.aliases]) for v in verbs}


def logged_checks(calls: list[dict], answers: list[str], verb_words: dict[str, str]) -> ClaimReport:
    """The summaries ``answers`` of the logged summarizer ``calls``, checked against the last
    action and observation each call's user message shows."""
    report = ClaimReport()
    for i, (call, answer) in enumerate(zip(calls, answers, strict=True)):
        user = call["user"]
        found = _LAST.search(user)
        last = found.group(1).strip() if found else None
        last = None if last and last.startswith("none") else last
        observation = user.split("Observation:", 1)[-1]
        summary = json.loads(answer)["summary"] if answer.strip().startswith("{") else answer
        claims = unsupported_claims(summary, last, observation, verb_words)
        report.summaries += 1
        if claims:
            report.flagged.append(SummaryCheck("log", i, last, summary, claims))
    return report


def replay_answers(calls: list[dict]) -> list[str]:
    """Each logged summarizer call again, as today's summarizer sees it (its system prompt; no
    "Last action" line, which older logs have), on the embedded model."""
    server = start_server(ensure_model_file(), ModelConfig())
    try:
        base = server.start()
        answers = []
        for call in calls:
            body = {
                "model": "local",
                "messages": [
                    {"role": "system", "content": SUMMARIZER_SYSTEM},
                    {"role": "user", "content": _LAST.sub("", call["user"]).lstrip("\n")},
                ],
                "max_tokens": 400,
                "temperature": 0.0,
                "id_slot": slot_for(SCHEMA),
                "grammar": server.grammar_of(call["json_schema"]),
            }
            r = httpx.post(f"{base}/chat/completions", json=body, timeout=600)
            r.raise_for_status()
            answers.append(r.json()["choices"][0]["message"]["content"] or "")
    finally:
        server.stop()
    return answers


def _row(table: Table, label: str, report: ClaimReport) -> None:
    table.add_row(label, str(report.summaries), str(len(report.flagged)), f"{report.share:.3f}")


def main(args: argparse.Namespace) -> int:
    if not args.results and not args.replay:
        raise SystemExit("bench summary-claims: give result folders, --replay LOG, or both")
    console = human_console(args)
    words = textworld_verb_words()
    table = Table(title="step summaries claiming an action not taken")
    for col in ("traces", "summaries", "flagged", "share"):
        table.add_column(col)
    figures: dict[str, dict] = {}
    reports: list[tuple[str, ClaimReport]] = []
    for folder in args.results:
        episodes = sorted((folder / "episodes").glob("*.json"))
        if not episodes:
            raise SystemExit(f"bench summary-claims: {folder} has no episodes/*.json")
        reports.append((str(folder), check_traces(episodes, words)))
    if args.replay:
        calls = [c for c in read_log(args.replay) if c["schema"] == SCHEMA]
        logged = [str(c.get("answer") or "") for c in calls]
        console.print(f"replaying {len(calls)} summarizer calls with today's prompt")
        reports.append((f"{args.replay.name} (logged)", logged_checks(calls, logged, words)))
        new = replay_answers(calls)
        reports.append((f"{args.replay.name} (replayed)", logged_checks(calls, new, words)))
    for label, report in reports:
        _row(table, label, report)
        figures[label] = {
            "summaries": report.summaries,
            "flagged": len(report.flagged),
            "share": round(report.share, 4),
            "examples": [
                {
                    "episode": c.episode,
                    "step": c.step,
                    "last_action": c.last_action,
                    "summary": c.summary,
                    "unsupported": c.unsupported,
                }
                for c in report.flagged
            ],
        }
        if args.show:
            for c in report.flagged:
                console.print(
                    f"  {label} {c.episode} step {c.step} [{c.last_action}] "
                    f"{c.unsupported}: {c.summary}",
                    markup=False,
                )
    if wants_json(args):
        print_json(figures)
        return 0
    console.print(table)
    if json_file(args) is not None:
        json_file(args).write_text(json.dumps(figures, indent=1))
    return 0
