"""The background track's public entry points that live in ``memory.dream`` (SPEC 11): ``dream_run``,
``dream_execute`` and ``lint``.

``memory.dream`` builds on the engine (it imports ``memory.engine``), so the engine cannot import it while it
is being imported. These functions are the one deliberate late import: they load ``memory.dream`` when
called, never at import time, so ``from memory import engine`` stays free of cycles.
"""

from __future__ import annotations

from typing import Any

from . import common as c
from .dream_runs import DreamRunRecord, dream_start


def dream_run(
    *, agent_id: str, force: bool = False, dry_run: bool | None = None, actor: str = "system"
) -> DreamRunRecord:
    """Start a dream run and execute it here, to the end (``gate_closed`` unless the gate is open or ``force``;
    ``already_running`` while another run of the agent is in progress). ``dry_run=None`` takes the agent's mode.
    Returns the finished run with its report (``.phases``)."""
    run = dream_start(agent_id=agent_id, force=force, dry_run=dry_run, actor=actor)
    return dream_execute(run_id=run.id)


def dream_execute(*, run_id: int) -> DreamRunRecord:
    """Execute a started run to the end (the job ``memory.tasks.dream_execute`` calls this); a run that is not
    queued any more (taken by another worker, finished, abandoned) is returned as it is."""
    from memory.dream.loop import execute  # the deliberate late import (see the module docstring)

    return execute(run_id=run_id)


def lint(*, agent_id: str, **options: Any) -> Any:
    """Knowledge lint over the agent's current memory (SPEC B3): a ``LintReport`` whose ``findings`` have
    ``.kind .severity .ids .message`` and the proposed fix. Reads only."""
    from memory.dream.lint import lint as run_lint  # the deliberate late import (see the module docstring)

    return run_lint(agent_id=c.check_agent_id(agent_id), **options)
