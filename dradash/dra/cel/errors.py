"""The errors an evaluation raises, worded as cel-go words them."""

from __future__ import annotations

import math


class CelEvalError(Exception):
    """A CEL runtime error. Kubernetes aborts allocation when a selector raises one."""


class CostLimitExceeded(CelEvalError):
    def __init__(self) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")


class Interrupted(CelEvalError):
    """Not upstream: dradash's time safety net stopped the evaluation (see budget.py). Not a
    verdict Kubernetes would give: the outcome is unknown."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"dradash stopped evaluating after {max(1, math.ceil(seconds))} s of CPU time "
            "(its own limit, not Kubernetes')"
        )


class MemoryBudgetExceeded(CelEvalError):
    """Not upstream: the values one evaluation creates would exceed dradash's memory budget
    (see budget.py)."""

    def __init__(self, what: str, budget: int) -> None:
        super().__init__(
            f"operation cancelled: {what} would take the values this evaluation creates over "
            f"dradash's memory budget of {budget // (1024 * 1024)} MiB"
        )
