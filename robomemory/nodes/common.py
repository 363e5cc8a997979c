"""What every node shares: the run's live context and per-node metering."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from robomemory.action_model import with_learned
from robomemory.config import AgentConfig
from robomemory.context import AgentContext, live_context
from robomemory.core import ActionSpace, TextLimits
from robomemory.state import learned_of


class NodeRun:
    """Meters one node invocation: model usage and wall time go to ``state['usage']``."""

    def __init__(self, name: str, runtime: Runtime[AgentContext] | None):
        self.name = name
        self.ctx = live_context(runtime.context if runtime is not None else None)
        self.llm = self.ctx.llm.for_node(name)
        self._t0 = time.perf_counter()

    def finish(self, update: dict[str, Any]) -> dict[str, Any]:
        usage = self.llm.usage.as_dict()
        usage["wall_s"] = round(time.perf_counter() - self._t0, 4)
        usage["runs"] = 1
        update["usage"] = {self.name: usage}
        return update


def text_limits(config: AgentConfig) -> TextLimits:
    """The configured bounds on what a world returns (observations, results)."""
    return TextLimits(
        text_chars=config.max_text_chars,
        images=config.max_images,
        image_chars=config.max_image_chars,
    )


def action_space(ctx: AgentContext, state: Mapping[str, Any]) -> ActionSpace:
    """The executor's action space now, with what the robot learned (:func:`learned_space`)."""
    return learned_space(ctx.executor.action_space(), state)


def learned_space(space: ActionSpace, state: Mapping[str, Any]) -> ActionSpace:
    """``space`` with its verbs that declare no effects given those the robot learned in
    worlds of its kind (recalled at the task's start)."""
    learned = learned_of(state)
    if not learned:
        return space
    return space.model_copy(update={"verbs": with_learned(space.verbs, learned)})
