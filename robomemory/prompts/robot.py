"""Robot executor prompts: the skill success check (a model judges a fresh observation)."""

from __future__ import annotations

from pydantic import BaseModel, Field

SKILL_CHECK_SYSTEM = (
    "You watch a robot arm carry out one manipulation skill. From the camera images and the "
    "joint state, decide whether the skill is finished. Say done only when you are sure."
)


class SkillCheck(BaseModel):
    """Has the running skill achieved its goal?"""

    done: bool = Field(description="true when the skill's goal is achieved")
    reason: str = Field(default="", max_length=200)


def skill_check_user(instruction: str, steps: int, state: list[float]) -> str:
    joints = ", ".join(f"{v:.2f}" for v in state)
    return f"Skill: {instruction}\nControl steps so far: {steps}\nJoint state: [{joints}]"
