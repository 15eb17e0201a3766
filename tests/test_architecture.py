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


# --- the engine's public surface -------------------------------------------------------------------------------

ENGINE_DIR = ROOT / "memory" / "engine"
PUBLIC_ENGINE_MODULES = {"types", "public"}  # what ``memory.engine`` re-exports from; the rest is private
# No exceptions: what other apps need is re-exported from ``memory.engine``.
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str]] = set()


def _engine_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) for each import of a ``memory.engine`` submodule, however it is spelled."""
    submodules = {p.stem for p in ENGINE_DIR.glob("*.py") if p.stem != "__init__"}
    submodules |= {p.parent.name for p in ENGINE_DIR.glob("*/__init__.py")}  # packages such as importer/
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("memory.engine.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("memory.engine."):
                found.append((node.lineno, node.module))
            elif node.module == "memory.engine":
                found += [
                    (node.lineno, f"memory.engine.{a.name}") for a in node.names if a.name in submodules
                ]
            elif node.module == "memory":
                found += [(node.lineno, "memory.engine") for a in node.names if a.name == "engine"]
    return found


def _private(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 2 and parts[2] not in PUBLIC_ENGINE_MODULES


def test_apps_outside_memory_use_only_the_engines_public_surface():
    """Other apps (wiki, dashboard, config) import ``memory.engine`` and its types, never a private module such
    as ``memory.engine.common``: what they need is re-exported (e.g. ``engine.audit_record``)."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".venv/", "var/", "memory/", "tests/", "benchmarks/")):
            continue
        for line, module in _engine_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _private(module) and (rel, module) not in KNOWN_PRIVATE_IMPORTS:
                offenders.append(f"{rel}:{line}: {module}")
    assert offenders == [], "private engine modules imported outside memory/:\n" + "\n".join(offenders)


def test_the_import_checker_sees_every_spelling():
    sample = ast.parse(
        "from memory.engine import common as c\nfrom memory.engine.common import audit\n"
        "import memory.engine.text\nfrom memory.engine import text, EngineError\n"
        "from memory.engine.types import EngineError\nfrom memory import engine\n"
        "from memory.engine import importer\n"  # a package
    )
    found = [m for _, m in _engine_imports(sample)]
    assert [m for m in found if _private(m)] == [
        "memory.engine.common",
        "memory.engine.common",
        "memory.engine.text",
        "memory.engine.text",
        "memory.engine.importer",
    ]
    assert "memory.engine.types" in found and "memory.engine" in found


# --- memory does not depend on the apps built on it ---------------------------------------------------------

MEMORY_DIR = ROOT / "memory"
# Apps that build on memory: they import memory, never the other way round (their MCP tools reach the server
# through memory.mcp_registry, their demo data through memory.contrib).
NOT_IMPORTED_BY_MEMORY = {"wiki"}


def _app_imports(tree: ast.AST, apps: set[str]) -> list[tuple[int, str]]:
    """(line, module) for each import of one of ``apps`` (or a module inside it), however it is spelled."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] in apps]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in apps:
                found.append((node.lineno, node.module))
    return found


def test_memory_imports_no_app_built_on_it():
    offenders = []
    for path in sorted(MEMORY_DIR.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, module in _app_imports(ast.parse(path.read_text(encoding="utf-8")), NOT_IMPORTED_BY_MEMORY):
            offenders.append(f"{rel}:{line}: {module}")
    assert offenders == [], "memory/ imports an app that depends on it:\n" + "\n".join(offenders)


def test_the_app_import_checker_sees_every_spelling():
    sample = ast.parse(
        "import wiki\nimport wiki.services as s\nfrom wiki import services\nfrom wiki.selectors import search\n"
        "def f():\n    from wiki.mcp_tools import tools\n"
        "from wikipedia import x\nfrom memory import wiki_thing\nfrom . import wiki\n"
    )
    assert [m for _, m in _app_imports(sample, {"wiki"})] == [
        "wiki",
        "wiki.services",
        "wiki",
        "wiki.selectors",
        "wiki.mcp_tools",
    ]


# --- web apps: views are nobody else's, web/ is everybody's ------------------------------------------------------

APPS = ("dashboard", "review", "wiki")
WEB_PACKAGES = (*APPS, "web")


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, dotted module) for each absolute import; ``from app import x`` is the module ``app.x``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if "." in node.module:
                found.append((node.lineno, node.module))
            else:
                found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _is_views(module: str) -> bool:
    parts = module.split(".")
    return len(parts) >= 2 and (parts[1] == "views" or parts[1].endswith("_views"))


def _offenders(package: str, tree: ast.AST) -> list[tuple[int, str]]:
    """Imports of another app's views module; for ``web``, of any app at all."""
    out = []
    for line, module in _imported_modules(tree):
        top = module.split(".")[0]
        if top not in APPS or top == package:
            continue
        if package == "web" or _is_views(module):
            out.append((line, module))
    return out


def test_no_app_imports_another_apps_views_and_web_imports_no_app():
    """What pages share (the HTMX request, rendering, access, role gates, error statuses) lives in web/; an app
    that needs another app's view code is a sign that code belongs in web/ (or in a selector)."""
    offenders = []
    for package in WEB_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rel = path.relative_to(ROOT).as_posix()
            offenders += [f"{rel}:{line}: {module}" for line, module in _offenders(package, tree)]
    assert offenders == [], "imports across the web layer's boundaries:\n" + "\n".join(offenders)


def test_the_web_import_checker_sees_every_spelling():
    sample = ast.parse(
        "from dashboard.views import render_page\nfrom dashboard import views\nimport wiki.views\n"
        "from dashboard import graph_views as g\nfrom dashboard import selectors\nfrom review.views import x\n"
        "from web.http import render_page\nfrom memory import engine\n"
    )
    assert [m for _, m in _offenders("review", sample)] == [
        "dashboard.views",
        "dashboard.views",
        "wiki.views",
        "dashboard.graph_views",
    ]
    assert [m for _, m in _offenders("web", sample)] == [
        "dashboard.views",
        "dashboard.views",
        "wiki.views",
        "dashboard.graph_views",
        "dashboard.selectors",
        "review.views",
    ]
    assert _offenders("dashboard", ast.parse("from dashboard.views import x\nfrom . import views\n")) == []
