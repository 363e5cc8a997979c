"""Step summaries that claim an action the robot did not take.

A step summary describes the last action and what the world answered. A *claim* is a verb in
the past tense ("picked up", "found", "used"); it is *supported* when its stem is a word of the
last action (``pick_up(milk)``), of the verb's declared description or aliases, or of the
observation ("You take the milk" supports "took"). An unsupported claim is an action the summary
asserts without evidence: what the issue calls a hallucinated action. The check is lexical, so it
is a lower bound (a claim that copies a word of the observation passes); its flags are read by
hand before they are reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# English irregular past forms and their base: grammar, not any world's vocabulary.
IRREGULAR_PAST = {
    "ate": "eat",
    "began": "begin",
    "bought": "buy",
    "brought": "bring",
    "came": "come",
    "caught": "catch",
    "cut": "cut",
    "did": "do",
    "drew": "draw",
    "drank": "drink",
    "fell": "fall",
    "found": "find",
    "gave": "give",
    "got": "get",
    "held": "hold",
    "hid": "hide",
    "kept": "keep",
    "left": "leave",
    "made": "make",
    "met": "meet",
    "put": "put",
    "ran": "run",
    "read": "read",
    "saw": "see",
    "set": "set",
    "shook": "shake",
    "spent": "spend",
    "stood": "stand",
    "struck": "strike",
    "threw": "throw",
    "took": "take",
    "went": "go",
    "won": "win",
    "wrote": "write",
}
# Before a participle these make it a state ("is located", "was placed"), not an action claimed.
STATE_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "being", "remains", "seems"})
# Words ending in -ed that are not past tenses.
NOT_PAST = frozenset(
    {"bed", "red", "shed", "need", "seed", "speed", "feed", "weed", "deed", "hundred", "sacred"}
)
# Verbs of perception report what the observation shows ("found a sofa"), not an action taken.
PERCEIVES = frozenset({"find", "see", "notice", "discover", "spot", "observe", "encounter"})
# Verbs of relation and outcome describe things or the score ("which included", "increased its
# score"), not an act of the robot.
RELATES = frozenset(
    {"include", "contain", "consist", "require", "fit", "result", "seem", "appear", "remain",
     "become", "increase", "gain", "earn", "designate"}
)  # fmt: skip
_WORD = re.compile(r"[a-z]+")


def _stems(word: str) -> set[str]:
    """Stems a past form may come from: opened → open, examined → examine, chopped → chop."""
    if word in IRREGULAR_PAST:
        return {IRREGULAR_PAST[word], word}
    stems = {word[:-2], word[:-1]}  # opened → open, examined → examine
    if word.endswith("ied"):
        stems.add(word[:-3] + "y")  # carried → carry
    if len(word) > 4 and word[-3] == word[-4]:
        stems.add(word[:-3])  # chopped → chop
    return {s for s in stems if len(s) >= 3}


def claimed_verbs(summary: str) -> list[str]:
    """The past-tense verbs of ``summary`` used as actions: not states ("is located"),
    perceptions ("found", "saw") or relations and outcomes ("included", "gained")."""
    words = _WORD.findall(summary.lower())
    claims = []
    for i, word in enumerate(words):
        past = word in IRREGULAR_PAST or (
            word.endswith("ed") and len(word) >= 4 and word not in NOT_PAST
        )
        perceives = bool(_stems(word) & (PERCEIVES | RELATES))
        if past and not perceives and not (i > 0 and words[i - 1] in STATE_WORDS):
            claims.append(word)
    return claims


def _supports(stem: str, words: set[str]) -> bool:
    return any(w.startswith(stem) or (len(w) >= 4 and stem.startswith(w)) for w in words)


def unsupported_claims(
    summary: str,
    last_action: str | None,
    observation: str,
    verb_words: Mapping[str, str] | None = None,
) -> list[str]:
    """Claims of ``summary`` that neither the last action nor the observation support.

    ``verb_words`` maps a verb name to its declared description and aliases, so that a claim
    in the API's own words ("walked" for ``navigate_to``: "walk to a known room") is supported.
    """
    evidence = set(_WORD.findall((last_action or "").lower().replace("_", " ")))
    if last_action and verb_words:
        verb = last_action.split("(", 1)[0].strip()
        evidence |= set(_WORD.findall(verb_words.get(verb, "").lower()))
    evidence |= set(_WORD.findall(observation.lower()))
    return [c for c in claimed_verbs(summary) if not any(_supports(s, evidence) for s in _stems(c))]


@dataclass
class SummaryCheck:
    """One step summary and the claims it makes without evidence."""

    episode: str
    step: int
    last_action: str | None
    summary: str
    unsupported: list[str]


@dataclass
class ClaimReport:
    """Step summaries of a set of traces and the share that claim an action not taken."""

    summaries: int = 0
    flagged: list[SummaryCheck] = field(default_factory=list)

    @property
    def share(self) -> float:
        return len(self.flagged) / self.summaries if self.summaries else 0.0


def episode_checks(
    name: str, trajectory: Sequence[Mapping], verb_words: Mapping[str, str] | None = None
) -> list[SummaryCheck]:
    """The summary of each step after the first, checked against the step before it.

    A trajectory row holds the summary perception wrote *before* that step's action, so it
    describes the previous row's action and the message the world answered to it. The first
    row's summary describes the start, whose observation a trace does not keep: it is skipped.
    """
    checks = []
    for before, row in zip(trajectory, trajectory[1:], strict=False):
        summary = str(row.get("summary") or "")
        if not summary:
            continue
        last = str(before.get("action") or "")
        claims = unsupported_claims(summary, last, str(before.get("message") or ""), verb_words)
        checks.append(SummaryCheck(name, int(row.get("step", 0)), last, summary, claims))
    return checks


def check_traces(paths: Iterable[Path], verb_words: Mapping[str, str] | None = None) -> ClaimReport:
    """Every step summary of the episode files ``paths`` (agents without summaries add none)."""
    report = ClaimReport()
    for path in paths:
        record = json.loads(Path(path).read_text())
        for check in episode_checks(Path(path).stem, record.get("trajectory") or [], verb_words):
            report.summaries += 1
            if check.unsupported:
                report.flagged.append(check)
    return report
