"""A real TextWorld game as an executor: the action API of paper Table 4 over game commands.

It publishes only what the agent knows: objects its observations have shown (not those only
the objective names), rooms it has stood in or that remembered routes lead to, the compass
directions. ``navigate_to`` path-finds over the map learned by moving (:mod:`textworld_map`)
and the routes the agent's spatial memory gives it (:meth:`learn_routes`), never over the
game's hidden map."""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import textworld
from jericho.jericho import UnsupportedGameWarning
from textworld.core import GameState
from textworld.logic import Proposition

from robomemory.core import (
    TASK_COMPLETE,
    Action,
    ActionResult,
    ActionSpace,
    Observation,
    Outcome,
    Route,
)
from robomemory.executors.base import join_names, rejected, world_digest
from robomemory.executors.candidates import rank_candidates
from robomemory.executors.envs.textworld_effects import with_effects
from robomemory.executors.envs.textworld_games import (
    PORTABLE_TYPES,
    GameFileError,
    bundled_game,
    check_game_file,
    command_to_action,
    list_bundled_games,
    resolve_game,
    walkthrough_actions,
    walkthrough_commands,
    world_locations,
)
from robomemory.executors.envs.textworld_map import DIRECTIONS, KnownMap
from robomemory.executors.envs.textworld_text import GAME_INFOS, REFUSAL, clean_text, norm_name
from robomemory.executors.envs.textworld_verbs import BASE_VERBS, COOKING_VERBS, KEY_VERBS

__all__ = [
    "TextWorldExecutor",
    "bundled_game",
    "list_bundled_games",
    "resolve_game",
    "walkthrough_actions",
    "walkthrough_commands",
    "world_locations",
]

_RECEPTACLE_PARENTS = ["c", "s"]
_APPLIANCE_TYPES = frozenset({"oven", "stove", "toaster", "bbq"})
_CUT_VERBS = ("slice", "dice", "chop")
_READ_VERBS = frozenset({"examine", "look", "inventory"})
_CLOSED_DOOR = re.compile(r"You have to open the (.+?) first", re.IGNORECASE)


def _as_action(command: str) -> Action | None:
    """The action-API form of an admissible command; None when the API has no verb for it."""
    try:
        return command_to_action(command)
    except ValueError:
        return None


class TextWorldExecutor:
    """Executor over a real TextWorld game (``.z8`` with its ``.json`` beside it).

    ``timeout_s`` is accepted but unused (a game step is instant); ``cancel`` is honoured before
    each game command. ``emergency_stop`` is a no-op: nothing moves in a text world.
    """

    def __init__(self, game_path: str | Path) -> None:
        self.game_path = check_game_file(game_path)  # a bad story would exit() the process
        with warnings.catch_warnings():
            # Jericho's own score detection does not know TextWorld games; TextWorld scores them.
            warnings.simplefilter("ignore", UnsupportedGameWarning)
            self._env = textworld.start(str(self.game_path), request_infos=GAME_INFOS)
        self._state: GameState | None = None
        self._map = KnownMap()
        self._learned: list[Route] = []
        self._known: dict[str, None] = {}
        self._types: dict[str, str] = {}
        self._room = ""
        self._done = False
        self._changed = False
        self._history: list[Action] = []

    # ----- episode -----
    def reset(self) -> tuple[str, Observation]:
        """Restart the game; return its objective and the first observation."""
        self._state = self._env.reset()
        if self._state.score is None or self._state.max_score is None:
            # a story whose header checks out but whose code is garbage starts no game
            raise GameFileError(f"game file {self.game_path} cannot be played: it started no game")
        game = self._state["game"]
        self._types = {norm_name(v.name): v.type for v in game.infos.values() if v.name}
        self._map = KnownMap()
        self._learned: list[Route] = []
        self._known = {}
        self._done = False
        self._history = []
        self._room = self._locate()
        self._map.visit(self._room)
        self._changed = True
        objective = self._state.objective.strip()
        feedback = self._state.feedback
        start = feedback.find(objective[:40]) if objective else -1
        text = clean_text(feedback[start:] if start >= 0 else feedback)
        # what the objective names ("check the cookbook in the kitchen") is not seen here
        scene = text.replace(clean_text(objective), "") if objective else text
        self._observe(scene)
        self._observe_admissible()
        return objective, self._observation(text, scene)

    def _observe_admissible(self) -> None:
        """Names in the admissible commands are in reach now: the agent can see them."""
        self._observe(" | ".join(self._require_state().admissible_commands or []))

    def replay(self, actions: Iterable[Action]) -> list[ActionResult]:
        """Reset, then re-execute ``actions`` (TextWorld is deterministic): restores a run,
        with the routes it had learned at its start."""
        learned = self._learned
        self.reset()
        self.learn_routes(learned)
        return [self.execute(a) for a in actions]

    def learn_routes(self, routes: Sequence[Route]) -> int:
        """Add remembered ways between rooms to the map navigation uses this episode (as if
        walked); a route whose ends are not both rooms of this game, or whose direction is
        not a compass direction, is left out. Return how many were added."""
        rooms = {name for name, kind in self._types.items() if kind == "r"}
        usable = [
            r
            for r in routes
            if r.src in rooms and r.dst in rooms and r.src != r.dst and r.direction in DIRECTIONS
        ]
        for route in usable:
            self._map.record_move(route.src, route.direction, route.dst)
            if route not in self._learned:
                self._learned.append(route)
        return len(usable)

    @property
    def history(self) -> list[Action]:
        """Actions executed since the last reset (rejected ones excluded)."""
        return list(self._history)

    # ----- knowledge -----
    @property
    def current_room(self) -> str:
        return self._room

    def known_rooms(self) -> list[str]:
        """Rooms visited so far, and those routes remembered from earlier tasks lead to."""
        return self._map.rooms

    def known_objects(self) -> list[str]:
        """Objects named in the observations received so far."""
        return list(self._known)

    def current_facts(self) -> list[Proposition]:
        """The game's ground-truth facts (for tests and benchmarks, not for the agent)."""
        return list(self._require_state().facts)

    def world_locations(self) -> dict[str, tuple[str, str]]:
        """Ground-truth ``object -> (relation, holder)`` now."""
        return world_locations(self.current_facts())

    # ----- action space -----
    def action_space(self) -> ActionSpace:
        """Verbs and the targets the agent knows now."""
        types = set(self._types.values())
        verbs = list(BASE_VERBS)
        if "k" in types:
            verbs += KEY_VERBS
        if "meal" in types:
            verbs += COOKING_VERBS
        game = self._require_state()["game"]
        kb = game.kb.types
        verbs = with_effects(verbs, game.kb)  # what each verb needs and does, by the game's rules
        known = self.known_objects()
        receptacles = [
            n for n in known if kb.is_descendant_of(self._types.get(n, ""), _RECEPTACLE_PARENTS)
        ]
        space = ActionSpace(
            verbs=verbs,
            targets={
                "object": known,
                "receptacle": receptacles,
                "appliance": [n for n in known if self._types.get(n) in _APPLIANCE_TYPES],
                "place": self.known_rooms(),
                "direction": list(DIRECTIONS),
            },
            fallback=Action(verb="look"),
        )
        space.candidates = self._candidates(space)
        return space

    def _candidates(self, space: ActionSpace) -> list[Action]:
        """The game's admissible commands now, in the action API, plus routes to known rooms.
        An exit already walked is offered as ``navigate_to`` its room, so every ``go`` left
        in the list leads somewhere new (the model sees which moves explore)."""
        walked = self._map.exits(self._room)
        actions = [
            a
            for a in map(_as_action, self._require_state().admissible_commands or [])
            if a is not None and not (a.verb == "go" and a.args and walked.get(a.args[0]))
        ]
        # The game reads what the robot holds too, though it lists no examine for it.
        actions += [Action(verb="examine", args=[norm_name(h)]) for h in self._held()]
        actions += [
            Action(verb="navigate_to", args=[room])
            for room in self.known_rooms()
            if room != self._room and self._map.route(self._room, room)
        ]
        # The game ends itself when won: offered, finishing could only give up a game the
        # robot may still win (the verb stays in the API for whoever calls it).
        valid = [a for a in actions if space.validate_action(a) is None]
        # Ordered, not cut: the game's list is short, and the grounding cuts it after ranking
        # it against what was read (a cut here dropped the recipe's potato for an apple).
        return rank_candidates(valid, max_per_verb=len(valid), limit=len(valid))

    # ----- execution -----
    def execute(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        """Carry out one action; never raises for an invalid, rejected or failed action."""
        start = time.monotonic()
        self._changed = False
        result = self._execute(action, cancel)
        result.duration_s = time.monotonic() - start
        if result.outcome != Outcome.REJECTED:
            self._history.append(action)
        return result

    def _execute(self, action: Action, cancel: threading.Event | None) -> ActionResult:
        if self._state is None:
            return rejected(action, "the game is not started; call reset() first")
        norm = Action(verb=action.verb.strip(), args=[norm_name(a) for a in action.args])
        problem = self.action_space().validate_action(norm)
        if norm.verb == TASK_COMPLETE and problem is None:
            return self._complete(action)
        if problem is None and self._done:
            problem = f"the episode is over; only {TASK_COMPLETE}() is accepted"
        if problem is not None:
            result = rejected(action, problem)
            result.observation = self._observation("")
            return result
        if cancel is not None and cancel.is_set():
            return self._result(action, Outcome.CANCELED, "canceled before sending", "")
        if norm.verb == "navigate_to":
            return self._navigate(action, norm.args[0], cancel)
        command = self._command_for(norm)
        if isinstance(command, ActionResult):
            return command
        ok, text = self._send(command)
        if not ok and norm.verb in _READ_VERBS and not REFUSAL.match(text):
            ok = True  # a read answered (e.g. examining a held book) changes nothing, yet worked
        outcome = Outcome.SUCCEEDED if ok else Outcome.FAILED
        return self._result(action, outcome, text, text, commands=[command])

    def _command_for(self, action: Action) -> str | ActionResult:
        """The game command for an action, or a FAILED result when it cannot be formed."""
        verb, args = action.verb, action.args
        admissible = self._require_state().admissible_commands or []
        if verb == "go":
            return f"go {args[0]}"
        if verb == "pick_up":
            pattern = re.compile(rf"^take {re.escape(args[0])}( from .+)?$")
            return next((c for c in admissible if pattern.match(c)), f"take {args[0]}")
        if verb == "put_down_to":
            obj, holder = args
            options = [f"put {obj} on {holder}", f"insert {obj} into {holder}"]
            found = next((c for c in options if c in admissible), None)
            return found or options[1 if self._types.get(holder) == "c" else 0]
        if verb in _CUT_VERBS:
            knife = next((n for n in self._held() if "knife" in n), None)
            if knife is None:
                msg = f"{verb} needs a knife in hand; pick up a knife first."
                return self._result(action, Outcome.FAILED, msg, msg)
            return f"{verb} {args[0]} with {knife}"
        if verb == "turn_on":
            return f"switch on {args[0]}"
        if verb == "turn_off":
            return f"switch off {args[0]}"
        if verb == "cook":
            return f"cook {args[0]} with {args[1]}"
        if verb == "unlock":
            return f"unlock {args[0]} with {args[1]}"
        if verb == "prepare_meal":
            return "prepare meal"
        return " ".join([verb, *args])  # drop, open, close, eat, examine, look, inventory

    def _navigate(self, action: Action, place: str, cancel: threading.Event | None) -> ActionResult:
        if place == self._room:
            msg = f"You are already in the {place}."
            return self._result(action, Outcome.SUCCEEDED, msg, msg)
        route = self._map.route(self._room, place)
        if route is None:
            msg = (
                f"No known route from {self._room} to {place}; visited rooms: "
                f"{join_names(self.known_rooms())}. Explore with go(direction)."
            )
            return self._result(action, Outcome.FAILED, msg, msg)
        commands: list[str] = []
        texts: list[str] = []
        for direction in route:
            if cancel is not None and cancel.is_set():
                return self._result(
                    action,
                    Outcome.CANCELED,
                    f"canceled in {self._room}",
                    "\n".join(texts),
                    commands=commands,
                )
            command = f"go {direction}"
            commands.append(command)
            ok, text = self._send(command)
            texts.append(text)
            door = _CLOSED_DOOR.search(text)
            opening = f"open {door.group(1)}" if door else ""
            if not ok and opening in (self._require_state().admissible_commands or []):
                # a closed door on a known way is opened, as walking there means: retried
                # alone, a small planner asked for the walk fourteen times, never the door
                commands.append(opening)
                opened, text = self._send(opening)
                texts.append(text)
                if opened:
                    commands.append(command)
                    ok, text = self._send(command)
                    texts.append(text)
            if not ok:
                msg = f"Stopped in {self._room} on the way to {place}: {text}"
                return self._result(action, Outcome.FAILED, msg, text, commands=commands)
        return self._result(action, Outcome.SUCCEEDED, texts[-1], texts[-1], commands=commands)

    def _complete(self, action: Action) -> ActionResult:
        state = self._require_state()
        self._done = True
        won = bool(state.won)
        msg = (
            "Task complete: the game is won."
            if won
            else f"Task declared complete but the game is not won (score {state.score}/"
            f"{state.max_score})."
        )
        outcome = Outcome.SUCCEEDED if won else Outcome.FAILED
        return self._result(action, outcome, msg, msg)

    def _send(self, command: str) -> tuple[bool, str]:
        """Step the game; return (whether the game accepted it, cleaned text)."""
        before = self._require_state()
        admissible = command in (before.admissible_commands or [])
        facts_before = set(before.facts)
        room_before = self._room
        self._state, _, _ = self._env.step(command)
        self._room = self._locate()
        if self._room != room_before and command.startswith("go "):
            self._map.record_move(room_before, command.removeprefix("go "), self._room)
        self._map.visit(self._room)
        if self._state.won or self._state.lost:
            self._done = True
        text = clean_text(self._state.feedback)
        self._observe(text)
        self._observe_admissible()
        self._changed = set(self._state.facts) != facts_before
        return admissible or self._changed, text

    # ----- helpers -----
    def _require_state(self) -> GameState:
        if self._state is None:
            raise RuntimeError("the game is not started; call reset() first")
        return self._state

    def _locate(self) -> str:
        for fact in self._require_state().facts:
            if fact.name == "at" and fact.arguments[0].type == "P":
                return fact.arguments[1].name
        return ""

    def _held(self) -> list[str]:
        return [
            f.arguments[0].name
            for f in self._require_state().facts
            if f.name == "in" and f.arguments[1].type == "I"
        ]

    def _hands(self) -> int | None:
        """How many things the robot can hold: a game with a limited inventory has one slot
        fact per thing it can hold (``used(slot_0: slot)``); None when it has no limit."""
        slots = {
            a.name for f in self._require_state().facts for a in f.arguments if a.type == "slot"
        }
        return len(slots) or None

    def _visible(self) -> set[str]:
        """Things the robot can perceive now: held, in this room, or on or in something
        visible (inside only when it is open), and the doors of this room."""
        facts = self._require_state().facts
        here = self._locate()
        opened = {f.arguments[0].name for f in facts if f.name == "open"}
        holder_of = {
            f.arguments[0].name: (f.name, f.arguments[1])
            for f in facts
            if f.name in ("at", "in", "on") and len(f.arguments) == 2
            and f.arguments[0].type != "P"
        }  # fmt: skip

        def seen(thing: str, depth: int = 0) -> bool:
            relation, holder = holder_of.get(thing, (None, None))
            if holder is None or depth > len(holder_of):
                return False
            if holder.type == "I":
                return True
            if relation == "at":
                return holder.name == here
            if relation == "in" and holder.name not in opened:
                return False
            return seen(holder.name, depth + 1)

        doors = {
            a.name
            for f in facts
            if f.name == "link" and here in (f.arguments[0].name, f.arguments[-1].name)
            for a in f.arguments
            if a.type == "d"
        }
        return {norm_name(n) for n in holder_of if seen(n)} | {norm_name(d) for d in doors}

    def _observe(self, text: str) -> None:
        """Remember every non-room entity named in ``text``."""
        for name in self._names_in(text):
            self._known.setdefault(name, None)

    def _names_in(self, text: str) -> list[str]:
        """Entities (rooms excluded) that ``text`` names, in the game's own words."""
        lowered = text.lower()
        return [
            name
            for name, kind in self._types.items()
            if kind not in ("r", "P", "I")
            and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lowered)
        ]

    def _observation(self, text: str, scene: str | None = None) -> Observation:
        """The observation of ``text``; its names come from ``scene`` (default: the text)."""
        state = self._require_state()
        held = {norm_name(n) for n in self._held()}
        scene = text if scene is None else scene
        # A read text names things that are elsewhere or do not exist yet (a recipe's carrot in
        # a closed fridge, its meal): perception reports only what the robot can perceive, so
        # the map never places them where the text was read.
        visible = self._visible()
        shown = [n for n in self._names_in(scene) if n in visible]
        names = shown + [n for n in held if n not in scene.lower()]
        return Observation(
            text=text,
            score=float(state.score),
            max_score=float(state.max_score),
            done=self._done,
            won=bool(state.won),
            lost=bool(state.lost),
            place=self._room or None,
            world=world_digest(str(f) for f in state.facts),
            holding=sorted(held),
            holding_known=True,  # read from the game's facts at every step
            hands=self._hands(),
            names=names,
            fixtures=[n for n in names if not self._portable(n)],
        )

    def _portable(self, name: str) -> bool:
        """Whether the game's rules let the thing ``name`` be carried (its type is an object's)."""
        kind = self._types.get(name, "")
        kb = self._require_state()["game"].kb.types
        return kind in PORTABLE_TYPES or kb.is_descendant_of(kind, ["o"])

    def _result(
        self,
        action: Action,
        outcome: Outcome,
        message: str,
        text: str,
        commands: list[str] | None = None,
    ) -> ActionResult:
        return ActionResult(
            action=action,
            outcome=outcome,
            message=message,
            observation=self._observation(text),
            details={"commands": commands or [], "room": self._room, "changed": self._changed},
        )

    def emergency_stop(self) -> None:
        """Nothing moves in a text world."""

    def close(self) -> None:
        self._env.close()
