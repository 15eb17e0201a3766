"""House rule (DESIGN.md): only ``memory/engine/`` writes memory rows.

Walks the source tree and fails on any ORM write to memory tables outside the engine and migrations.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_MODELS = {"Memory", "FactWrite", "GraphGeneration", "AuditEvent"}
WRITE_METHODS = {
    "create",
    "update",
    "delete",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
    "save",
}
ALLOWED = ("memory/engine/", "memory/migrations/", "tests/", "benchmarks/")


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITE_METHODS
        ):
            chain = ast.unparse(node.func.value)
            if any(chain.startswith(f"{model}.") or chain == model for model in MEMORY_MODELS):
                found.append((node.lineno, ast.unparse(node.func)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MEMORY_MODELS:
            found.append((node.lineno, f"{node.func.id}(...) instance"))
    return found


def test_only_the_engine_writes_memory_rows():
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".venv/", "var/")) or rel.startswith(ALLOWED):
            continue
        for line, call in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{rel}:{line}: {call}")
    assert offenders == [], "memory rows written outside memory/engine/:\n" + "\n".join(offenders)


def test_the_checker_sees_a_write():
    sample = ast.parse(
        "Memory.objects.filter(id=1).update(content='x')\nFactWrite.objects.create()\nMemory(id=1)"
    )
    assert len(_writes(sample)) == 3
