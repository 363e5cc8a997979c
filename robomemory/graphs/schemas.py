"""What a user of the served graph (Studio, the LangGraph API) gives a run and gets back.

The graph's state (:class:`robomemory.state.AgentState`) is the agent's working memory: some
thirty internal fields. A served graph takes :class:`RunInput` and returns :class:`RunOutput`
instead, each field described, so Studio's input form asks only what a run reads from its
caller and a run's result is its outcome. The thread's full state stays readable (Studio's
state view, ``get_state``). The run's settings are its context,
:class:`robomemory.context.RunContext`.

Python callers (``build_agent``) keep the full state as input and output: RoboMemoryAgent
passes the episode id it claimed in the episode log (``handles``), which a served run must not
choose (an id used before would overwrite that episode's step records).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from robomemory.episode import TrajectoryStep


class RunInput(TypedDict, total=False):
    """What a run takes from you: the task, or nothing (the served world's own task).

    The world, the robot and the model are the operator's (the server's environment); the
    run's settings (steps, plan length, ablations) are its context."""

    task: Annotated[
        str,
        Field(
            description="The task to pursue, in words. Optional: left out or empty, the served "
            "world's own task (what it says at reset) is used. The world judges success, so a "
            "task it does not know is pursued but not scored. Kept whole; prompts show a long "
            "one condensed, its first and last sentences verbatim. Refused over "
            "max_task_chars (64,000 by default).",
        ),
    ]


class RunOutput(TypedDict, total=False):
    """A run's outcome. The thread's state holds everything else the agent kept."""

    task: Annotated[str, Field(description="The task the run pursued.")]
    done: Annotated[
        bool,
        Field(description="Whether the episode ended (false: the run stopped before its end)."),
    ]
    success: Annotated[
        bool,
        Field(
            description="Whether the task was achieved: the world's verdict (a won game); "
            "where the world gives none (no score, not done), the agent's own task_complete().",
        ),
    ]
    end_reason: Annotated[
        str,
        Field(
            description="Why the episode ended: task_complete (the agent said it finished), "
            "won, lost, env_done (the world ended it) or max_steps (the step budget was spent); "
            "absent while it runs.",
        ),
    ]
    score: Annotated[
        float | None,
        Field(description="The world's score at the end; null where the world keeps none."),
    ]
    max_score: Annotated[
        float | None,
        Field(description="The highest score the world gives; null where it says none."),
    ]
    step: Annotated[int, Field(description="How many actions the agent took.")]
    plan_reason: Annotated[
        str, Field(description="The planner's reason for its last plan, in its words.")
    ]
    summary: Annotated[str, Field(description="The agent's summary of what it last perceived.")]
    trajectory: Annotated[
        list[TrajectoryStep],
        Field(
            description="The last steps (at most 8): action, outcome, the world's answer, "
            "score, place. Every step's full record is in the robot's episode log under "
            "handles.episode_id.",
        ),
    ]
    handles: Annotated[
        dict[str, str],
        Field(
            description="Where this run's memories are: robot_id, episode_id (its records in "
            "the episode log), the spatial graph and the long-term collections.",
        ),
    ]
    usage: Annotated[
        dict[str, dict[str, Any]],
        Field(
            description="Per node, summed over the run: runs, model calls, prompt, cached and "
            "completion tokens, fallbacks (answers the model could not give), timeouts, "
            "seconds in model calls (seconds) and in the node (wall_s).",
        ),
    ]
    consolidation: Annotated[
        dict[str, Any],
        Field(
            description="What the end of the task wrote to long-term memory (semantic and "
            "episodic items, utility updates); empty when the run stopped before its end.",
        ),
    ]
