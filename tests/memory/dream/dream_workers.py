"""Process side of ``test_loop_processes``: a dream run killed in the middle of applying an item, a probe that
reads its progress meanwhile, and the next run. Spawned children import this module before Django is set up, so
nothing here imports Django at module level; each child reports its result, or its traceback, on a queue.
"""

from __future__ import annotations

import threading
import traceback
from datetime import timedelta
from typing import Any

from tests.memory.concurrency_workers import setup_django

HANG_ON_APPLY = 2  # the second verdict the run applies never commits: its worker is killed inside it


def _report(queue: Any, fn: Any, *args: Any) -> None:
    try:
        queue.put(("ok", fn(*args)))
    except BaseException:
        queue.put(("error", traceback.format_exc()))


def seed(db_name: str, queue: Any) -> None:
    setup_django(db_name)

    def work() -> dict[str, str]:
        from memory import engine
        from tests.memory.dream import world

        ids = world.build()
        engine.dream_mode_set(agent_id=world.A, mode="apply", actor="user:ada")
        return ids

    _report(queue, work)


def hang_mid_apply(db_name: str, queue: Any) -> None:
    """Run the loop; inside the transaction of its HANG_ON_APPLY-th verdict, after the verdict's writes, say so
    and wait for SIGKILL."""
    setup_django(db_name)
    import time_machine

    from memory import engine
    from memory.engine import review_apply
    from tests.memory.dream import world

    original = review_apply.verdict_apply
    calls = {"n": 0}

    def hanging(**kwargs: Any) -> Any:
        applied = original(**kwargs)
        calls["n"] += 1
        if calls["n"] == HANG_ON_APPLY:
            queue.put(("hung", {"old_id": kwargs["old_id"], "new_id": kwargs["new_id"]}))
            threading.Event().wait()  # killed here, the item's transaction still open
        return applied

    review_apply.verdict_apply = hanging
    try:
        with time_machine.travel(world.NOW, tick=False):
            engine.dream_run(agent_id=world.A, force=True)
        queue.put(("error", "the run finished: it should have been killed"))
    except BaseException:
        queue.put(("error", traceback.format_exc()))


def probe(db_name: str, queue: Any) -> None:
    """What another process reads about the run while it works."""
    setup_django(db_name)

    def work() -> dict[str, Any]:
        from memory import engine
        from memory.models import DreamRun
        from tests.memory.dream import world

        run = DreamRun.objects.get(agent_id=world.A)
        return {
            "id": run.id,
            "status": run.status,
            "phase": run.phase,
            "done": run.done,
            "total": run.total,
            "phases": sorted(run.phases),
            "gate": engine.dream_gate(agent_id=world.A, at=world.NOW).reason,
        }

    _report(queue, work)


def resume(db_name: str, ids: dict[str, str], hung: dict[str, str], queue: Any) -> None:
    """After the kill: what the killed run left, then the next run, and what it all adds up to."""
    setup_django(db_name)

    def work() -> dict[str, Any]:
        import time_machine

        from memory import engine
        from memory.models import DreamRun, Memory, ReviewItem
        from tests.memory.dream import world

        pair = [hung["old_id"], hung["new_id"]]
        left = {
            "hung_items": sum(
                1 for ids in ReviewItem.objects.values_list("memory_ids", flat=True) if ids == pair
            ),
            "hung_rows_state": engine.state_fingerprint(list(Memory.objects.filter(id__in=pair))),
            "ana_now": _value("ana", "works_at", world.NOW),
        }
        later = world.NOW + timedelta(seconds=engine.HEARTBEAT_STALE_SECS + 60)
        with time_machine.travel(later, tick=False):
            run = engine.dream_run(agent_id=world.A, force=True)
        items = list(ReviewItem.objects.filter(agent_id=world.A, kind="conflict").order_by("id"))
        return {
            "left": left,
            "runs": sorted(DreamRun.objects.values_list("status", flat=True)),
            "next_status": run.status,
            "next_errors": {name: phase["errors"] for name, phase in run.phases.items()},
            "hung_items_after": [i.status for i in items if i.memory_ids == pair],
            "items_per_pair": sorted(
                (tuple(i.memory_ids), sum(1 for j in items if j.memory_ids == i.memory_ids)) for i in items
            ),
            "ana_now": _value("ana b.", "works_at", world.NOW),
            "cf_now": _value("svc", "deploy_target", world.NOW),
            "ids": ids,
        }

    _report(queue, work)


def _value(subject: str, predicate: str, at: Any) -> str | None:
    from memory import engine
    from tests.memory.dream import world

    row = engine.get_at(agent_id=world.A, subject=subject, predicate=predicate, at=at)
    return row.id if row else None
