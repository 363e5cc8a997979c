"""Shared machinery for text worlds driven by typed commands (ScienceWorld, TextWorldExpress).

A world executor publishes the paper's action API (Table 4) plus the verbs its world needs,
translates each Action into the world's command through a template, rejects actions that do not
validate against the published space without sending them, and reports a FAILED outcome with
the world's own message when the world refuses a command.

Two modes (``actions``): ``listed`` offers the world's own list of valid commands as the
candidates and reads what the world tells beside its texts (the room and the inventory each
step, a digest of its state); ``free`` reads only the text each command returns, the score
and the game's end, and offers the commands the robot's own belief affords
(executors/perceived.py).
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from robomemory.core import (
    TASK_COMPLETE,
    Action,
    ActionResult,
    ActionSpace,
    Observation,
    Outcome,
    VerbSpec,
)
from robomemory.executors.base import rejected
from robomemory.executors.candidates import rank_candidates
from robomemory.executors.perceived import (
    ACTIONS_MODES,
    ActionsMode,
    Belief,
    Need,
    Seen,
    free_candidates,
)


@dataclass(frozen=True)
class Verb:
    """A verb of the action API and the world command it becomes (``{0}``, ``{1}`` = args)."""

    name: str
    arg_kinds: tuple[str, ...]
    template: str
    description: str = ""
    # what the verb means to the grounding (see VerbSpec)
    reads: bool = False
    moves: bool = False
    reverses: str | None = None
    irreversible: bool = False
    reveals: bool = False
    takes: bool = False
    aliases: tuple[str, ...] = ()  # the world's own words for it, as its tasks write them
    # free mode: what each argument needs of the robot's belief (perceived.NEEDS; not
    # VerbSpec.needs, the world's preconditions); default from the flags: a move a way out, a
    # take a thing here, a put a held thing, else near
    free_needs: tuple[Need, ...] = ()
    # preconditions and effects (robomemory.effects); where declared, the meanings above are
    # what they derive (each world's test checks the two agree)
    needs: tuple[str, ...] = ()
    adds: tuple[str, ...] = ()
    removes: tuple[str, ...] = ()

    def arg_needs(self) -> tuple[Need, ...]:
        """What each argument needs of the robot's belief in free mode."""
        if self.free_needs:
            return self.free_needs
        n = len(self.arg_kinds)
        if self.moves:
            return ("exit",) * n
        if self.takes:
            return ("here",) * n
        if self.reverses == "pick_up":
            return ("held", "support")[:n]
        if self.reverses == "open":
            return ("opened",) * n
        if self.name == "open":
            return ("closed",) * n
        return ("near",) * n

    def spec(self) -> VerbSpec:
        return VerbSpec(
            name=self.name,
            arg_kinds=list(self.arg_kinds),
            description=self.description,
            aliases=list(self.aliases),
            reads=self.reads,
            moves=self.moves,
            reverses=self.reverses,
            irreversible=self.irreversible,
            reveals=self.reveals,
            takes=self.takes,
            needs=list(self.needs),
            adds=list(self.adds),
            removes=list(self.removes),
        )


_WORD = re.compile(r"[a-z0-9]+")


def held_names(inventory: str, names: Iterable[str]) -> tuple[str, ...]:
    """The known ``names`` an inventory answer lists, each in the words of one of its items up
    to the item's first full stop ("a picture of a farm.  The artist ..." holds "picture")."""
    items = [line.split(".")[0] for line in inventory.splitlines()[1:] if line.strip()]
    known = [(n, _WORD.findall(n.lower())) for n in names]
    out: list[str] = []
    for item in items:
        said = _WORD.findall(item.lower())
        found = [
            (name, seq)
            for name, seq in known
            if seq and any(said[i : i + len(seq)] == seq for i in range(len(said)))
        ]
        # a name inside a longer one that ends in another word names a part of another
        # thing ("an apple tree" holds no apple); one that ends alike is the same ("a red
        # apple" is the apple)
        for name, seq in found:
            inside = any(o[-1] != seq[-1] and _within(seq, o) for _, o in found)
            if not inside and name not in out:
                out.append(name)
    return tuple(out)


def _within(part: list[str], whole: list[str]) -> bool:
    """Whether ``part``'s words are in ``whole``, one after another."""
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


@dataclass
class WorldReply:
    """What the world answered to one command."""

    text: str
    score: float
    done: bool
    won: bool = False
    lost: bool = False
    place: str | None = None  # where the agent is, when the world says
    world: str | None = None  # a digest of what the world shows (loop breaking)
    holding: tuple[str, ...] = ()  # the names of what the agent holds, when the world says
    exits: tuple[tuple[str, str], ...] = ()  # (move's argument, place it leads to) from here
    links: tuple[tuple[str, str], ...] = ()  # pairs of places the answer says are joined
    holding_known: bool | None = None  # None: the executor's ``reports_holding``


class CommandWorldExecutor(ABC):
    """Base executor for command-line text worlds; subclasses wire one world's API."""

    verbs: tuple[Verb, ...] = ()
    max_score: float = 1.0
    # the world's inventory comes with every answer: an empty ``holding`` is empty hands
    reports_holding: bool = False

    def __init__(self, actions: ActionsMode = "listed") -> None:
        if actions not in ACTIONS_MODES:
            raise ValueError(f"unknown actions mode {actions!r}; choose listed or free")
        self._seen: dict[str, dict[str, None]] = {}
        self._last: WorldReply | None = None
        self.task: str = ""
        self.commands: list[str] = []
        self.actions: ActionsMode = actions
        self.belief = Belief()  # free mode: what the robot believes from the texts it read

    @property
    def free(self) -> bool:
        """Whether this executor reads only what a player sees (``actions == "free"``)."""
        return self.actions == "free"

    @property
    def teleport(self) -> bool:
        """Whether a move may go to any place perceived (not only a way out seen here)."""
        return False

    def _perceive(self, text: str) -> Seen:
        """Free mode: what one of the world's texts shows (each world's parser)."""
        return Seen()

    # --- world hooks -------------------------------------------------------------------------
    @abstractmethod
    def _start(self) -> tuple[str, WorldReply]:
        """(Re)start the world; return the task text and the first reply."""

    @abstractmethod
    def _send(self, command: str) -> WorldReply:
        """Send one command to the world."""

    @abstractmethod
    def _visible(self) -> dict[str, list[str]]:
        """Names the agent can currently see, by argument kind."""

    @abstractmethod
    def _refused(self, text: str) -> bool:
        """True when the world's reply says it refused the command."""

    def _valid_commands(self) -> list[str]:
        """The world's own list of commands valid now (its affordances); none by default."""
        return []

    def _close_world(self) -> None:
        """Close the world's process when this executor started it."""
        env = getattr(self, "env", None)
        if getattr(self, "_own_env", False) and env is not None:
            env.close()

    def send_raw(self, command: str) -> WorldReply:
        """Send a raw world command (oracle replays, spatial-accuracy bench)."""
        reply = self._send(command)
        if self.free:
            if not self._refused(reply.text):
                self.belief.see(self._perceive(reply.text))
            reply = self._believed(reply)
        self._last = reply
        self._remember()
        return reply

    # --- Executor protocol -------------------------------------------------------------------
    def reset(self) -> tuple[str, Observation]:
        self._seen = {}
        self.commands = []
        self.belief = Belief()
        self.task, reply = self._start()
        if self.free:
            said = self._perceive(self.task)
            self.belief.noted = dict.fromkeys([*said.things, *said.mentioned])
            self.belief.see(self._perceive(reply.text))
            reply = self._believed(reply)
        self._last = reply
        self._remember()
        return self.task, self._observation(reply)

    def replay(self, actions: Sequence[Action]) -> list[ActionResult]:
        """Reset, then re-execute ``actions`` (the worlds are deterministic): restores a run."""
        self.reset()
        return [self.execute(a) for a in actions]

    def _space(self) -> ActionSpace:
        """Verbs and the names seen so far (no candidates)."""
        fallback = next((Action(verb=v.name) for v in self.verbs if v.name == "look"), None)
        return ActionSpace(
            verbs=[v.spec() for v in self.verbs],
            targets={kind: list(names) for kind, names in self._seen.items()},
            fallback=fallback,
        )

    def action_space(self) -> ActionSpace:
        """Verbs, seen names and the world's valid commands now as candidates (free mode:
        the commands the robot's belief affords)."""
        space = self._space()
        if self.free:
            verbs = [(v.name, v.arg_needs()) for v in self.verbs]
            space.candidates = free_candidates(self.belief, verbs, self.task, self.teleport)
            return space
        mapped = [self.command_to_action(c) for c in self._valid_commands()]
        mapped.append(Action(verb=TASK_COMPLETE))
        valid = [a for a in mapped if a is not None and self._validate(a) is None]
        # Fewer first: arguments neither held nor named by the task. The cap per verb keeps
        # the head of each verb's list (moving what is held to the box the task names).
        held = set(self._last.holding) if self._last else set()
        task = f" {' '.join(self.task.lower().split())} "

        def unconcerned(action: Action) -> int:
            return sum(1 for a in action.args if a not in held and f" {a.lower()} " not in task)

        space.candidates = rank_candidates(sorted(valid, key=unconcerned))
        return space

    def execute(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        started = time.perf_counter()
        problem = self._validate(action)
        if problem is not None:
            return rejected(action, problem)
        if cancel is not None and cancel.is_set():
            return ActionResult(action=action, outcome=Outcome.CANCELED, message="canceled")
        if action.verb == TASK_COMPLETE:
            return self._task_complete(action, started)
        verb = next(v for v in self.verbs if v.name == action.verb)
        command = verb.template.format(*action.args)
        self.commands.append(command)
        before = self._last
        reply = self._send(command)
        refused = self._refused(reply.text)
        if self.free:
            if not refused:
                seen = self._perceive(reply.text)
                self.belief.acted(action.verb, action.args, seen, moves=verb.moves)
            reply = self._believed(reply)
        self._last = reply
        self._remember()
        details: dict = {"command": command}
        if reply.world is not None and before is not None and before.world is not None:
            # a score that moved is a change too (a commitment the world's words do not show)
            details["changed"] = reply.world != before.world or reply.score != before.score
        return ActionResult(
            action=action,
            outcome=Outcome.FAILED if refused else Outcome.SUCCEEDED,
            message=reply.text.strip()[:500],
            observation=self._observation(reply),
            duration_s=time.perf_counter() - started,
            details=details,
        )

    def emergency_stop(self) -> None:
        """Nothing moves in a text world."""
        return None

    def close(self) -> None:
        self._close_world()

    def command_to_action(self, command: str) -> Action | None:
        """Map a world command back to an Action of this API (e.g. to replay an oracle path)."""
        for verb in self.verbs:
            if not verb.template:
                continue
            pattern = re.escape(verb.template)
            for i in range(len(verb.arg_kinds)):
                pattern = pattern.replace(re.escape(f"{{{i}}}"), "(.+?)")
            m = re.fullmatch(pattern, command.strip())
            if m:
                return Action(verb=verb.name, args=[g.strip() for g in m.groups()])
        return None

    # --- helpers -------------------------------------------------------------------------------
    def _validate(self, action: Action) -> str | None:
        """None when the action fits the published space (subclasses may accept aliases)."""
        return self._space().validate_action(action)

    def _task_complete(self, action: Action, started: float) -> ActionResult:
        """The agent declares the task over; nothing is sent and the world's verdict is kept."""
        last = self._last or WorldReply(text="", score=0.0, done=False)
        message = (
            f"{TASK_COMPLETE}: the world confirms the goal is reached"
            if last.won
            else f"{TASK_COMPLETE}: declared, but the world's goal is not reached"
        )
        return ActionResult(
            action=action,
            outcome=Outcome.SUCCEEDED,
            message=message,
            observation=self._observation(last),
            duration_s=time.perf_counter() - started,
            details={"won": last.won},
        )

    def _believed(self, reply: WorldReply) -> WorldReply:
        """``reply`` with where the robot is, what it holds, the ways out and a digest, all
        from its belief (free mode: the world's hidden state is never read)."""
        b = self.belief
        return replace(
            reply,
            place=b.place,
            world=b.digest(),
            holding=tuple(b.held),
            holding_known=b.held_known,
            exits=tuple((way, where) for way, where in b.ways().items() if where),
        )

    def _believed_names(self) -> dict[str, list[str]]:
        """Free mode's targets: every name perceived, by argument kind (a move's kind: the
        ways and places perceived)."""
        b = self.belief
        ways = [w for slot in b.exits.values() for w in slot]
        moving = {k for v in self.verbs if v.moves for k in v.arg_kinds}
        kinds = {k for v in self.verbs for k in v.arg_kinds}
        return {k: [*ways, *b.places] if k in moving else list(b.names) for k in kinds}

    def _remember(self) -> None:
        visible = self._believed_names() if self.free else self._visible()
        for kind, names in visible.items():
            slot = self._seen.setdefault(kind, {})
            for name in names:
                if name:
                    slot.setdefault(name, None)

    def _observation(self, reply: WorldReply) -> Observation:
        return Observation(
            text=reply.text,
            score=reply.score,
            max_score=self.max_score,
            done=reply.done,
            won=reply.won,
            lost=reply.lost,
            place=reply.place,
            world=reply.world,
            holding=list(reply.holding),
            holding_known=(
                self.reports_holding if reply.holding_known is None else reply.holding_known
            ),
            exits=dict(reply.exits),
            links=list(reply.links),
        )

    @property
    def score(self) -> float:
        return self._last.score if self._last else 0.0

    @property
    def gc(self) -> float:
        """Goal-condition rate: score / max_score clipped to [0, 1]."""
        return max(0.0, min(1.0, self.score / self.max_score)) if self.max_score else 0.0
