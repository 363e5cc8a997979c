"""What the world's words say each known thing is: the result words of the API's verbs."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from robomemory.core import VerbSpec
from robomemory.grounding.text import WORD, word_list

_VOWELS = "aeiou"


def result_forms(verb: str) -> set[str]:
    """A verb's past participles by the regular rules: opened, closed, stopped, dried."""
    w = verb.lower()
    forms = {f"{w}ed", f"{w}d"} if w.endswith("e") else {f"{w}ed"}
    if len(w) > 2 and w.endswith("y") and w[-2] not in _VOWELS:
        forms.add(f"{w[:-1]}ied")
    if len(w) > 2 and w[-1] not in _VOWELS + "wxy" and w[-2] in _VOWELS and w[-3] not in _VOWELS:
        forms.add(f"{w}{w[-1]}ed")
    return forms


def verb_results(verb: VerbSpec) -> set[str]:
    """The result words of a verb: of its name's first word and of each alias."""
    firsts = [word_list(form)[:1] for form in [verb.name, *verb.aliases]]
    return set().union(*(result_forms(first[0]) for first in firsts if first))


def update_states(
    states: Mapping[str, str], text: str, names: Collection[str], verbs: Sequence[VerbSpec]
) -> dict[str, str]:
    """``states`` after ``text``: result words right before a known name ("an opened red box")
    become its state; a bare mention ("the red box") leaves it as it was."""
    results = set().union(*(verb_results(v) for v in verbs))
    raw = WORD.findall(text.lower())
    # a name is read with the text's own word pattern ("type 7 portal" is read "type portal")
    known = sorted(((WORD.findall(n.lower()), n) for n in names), key=lambda k: -len(k[0]))
    known = [k for k in known if k[0]]
    out = dict(states)
    i = 0
    while i < len(raw):
        match = next((k for k in known if raw[i : i + len(k[0])] == k[0]), None)
        if match is None:
            i += 1
            continue
        start = i
        while start > 0 and raw[start - 1] in results:
            start -= 1
        if start < i:
            out[match[1]] = " ".join(raw[start:i])
        i += len(match[0])
    return out


def shows(states: Mapping[str, str], verb: VerbSpec, thing: str | None) -> bool:
    """Whether the world's words show ``verb``'s result on ``thing``."""
    return thing is not None and not verb_results(verb).isdisjoint(states.get(thing, "").split())
