"""What every solver reads from its sample and its run: the instance, the auditor,
and why a sample limit ended it."""

from __future__ import annotations

import anyio
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.solver import TaskState
from inspect_ai.util import LimitExceededError

from spatialstale.env import Instance, make_instance
from spatialstale.protocol import extension_instance

AUDITOR_ROLE = "auditor"
"""The model role of every audit (detection, SelfVerify, OMCD) and of the perception
probe; unbound, the task's model audits itself."""


def instance_of(state: TaskState) -> Instance:
    """The sample's instance, rebuilt from its metadata (a pure function of it), with
    the entries its extensions' axes in the metadata put in its store."""
    meta = state.metadata
    return extension_instance(make_instance(int(meta["seed"]), str(meta["regime"]), int(meta["size"])), meta)


def auditor_model(role: str) -> Model:
    """The model bound to ``role``, else the task's model (the SPEC's unbound auditor:
    the model audits itself), resolved inside the solver that calls it. The run's ``--seed`` is
    passed on, since Inspect gives a role model the run's connection settings but not
    its seed; a seed in the role's own spec wins."""
    # the lint's ``get_model_location``: solvers call this from inside their own body
    seed = get_model().config.seed  # inspect-evals-lint: ignore[get_model_location] -- called by solvers
    return get_model(  # inspect-evals-lint: ignore[model_role_resolution,get_model_location] -- see above
        role=role,
        config=GenerateConfig(seed=seed),
    )


def limit_errors() -> tuple[type[BaseException], ...]:
    """What a sample limit raises inside a solver: Inspect's LimitExceededError, or the
    cancellation a time or working limit sends into the sample's task."""
    return (LimitExceededError, anyio.get_cancelled_exc_class())


def limit_reason(ex: BaseException) -> str:
    """How a sample limit reads in the log: Inspect's message, or, for a time or
    working limit (which cancels the sample's task), a note saying so."""
    if isinstance(ex, LimitExceededError):
        return ex.message
    return "time or working limit (cancelled)"
