"""House rule (DESIGN.md): only ``memory/engine/`` writes memory rows.

Walks the source tree and fails on any ORM write to memory tables outside the engine and migrations.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the engine's tables: memory rows, their write log and every companion table whose rules the engine owns
MEMORY_MODELS = {
    "Memory",
    "FactWrite",
    "GraphGeneration",
    "AuditEvent",
    "ApprovalRequest",
    "GuardCounter",
    "OutboundEvent",
    "EntityAlias",
    "ReviewItem",
    "ReviewPolicy",
    "DreamRun",
    "DreamState",
    "DiscoveryRun",
    "EntityEdge",
    "Community",
    "DiscoveryItem",
    "QueryJournal",
    "FeedbackWeight",
    "KnowledgeGap",
    "InterestSnapshot",
    "Attitude",
    "Skill",
    "MemoryTier",
}
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


# --- the engine reaches nothing outward; no import cycles -------------------------------------------------------

SOURCE_PACKAGES = ("memory", "dashboard", "review", "wiki", "web", "config")
# what the engine must never import: the job layer, the project's configuration, the job backends
ENGINE_FORBIDDEN = (
    "memory.tasks",
    "memory.delivery",
    "config",
    "celery",
    "django_q",
    "urllib.request",
    "requests",
)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _top_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for imports a module runs when it is imported: module level and class bodies,
    not inside functions (a function-level import is a deliberate late edge, and cannot form an import cycle)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    up = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for a in node.names:
                    found.append((node.lineno, f"{base}.{a.name}" if base else a.name))
            elif isinstance(node, ast.ClassDef | ast.If | ast.Try | ast.With):
                body = list(getattr(node, "body", []))
                for extra in ("orelse", "finalbody", "handlers"):
                    for sub in getattr(node, extra, []) or []:
                        body.extend(getattr(sub, "body", [sub]))
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                visit(body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _source_modules() -> dict[str, Path]:
    out = {}
    for pkg in SOURCE_PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            out[_module_name(path)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The source module an imported name lives in (``a.b.c`` may be module ``a.b.c`` or a name in ``a.b``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _module_graph() -> dict[str, set[str]]:
    modules = _source_modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for _, name in _top_level_imports(path):
            target = _resolve(name, modules)
            if target and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def _package_graph(graph: dict[str, set[str]], depth: int, within: str = "") -> dict[str, set[str]]:
    """The graph collapsed to package names of ``depth`` parts (modules under ``within`` only, if given)."""

    def name(m: str) -> str:
        return ".".join(m.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for src, targets in graph.items():
        if within and not src.startswith(within):
            continue
        for t in targets:
            if within and not t.startswith(within):
                continue
            if name(src) != name(t):
                out.setdefault(name(src), set()).add(name(t))
    return out


def test_the_engine_imports_nothing_from_jobs_or_config():
    offenders = []
    for path in sorted((ROOT / "memory" / "engine").rglob("*.py")):
        for line, name in _top_level_imports(path) + _function_imports(path):
            if any(name == f or name.startswith(f + ".") for f in ENGINE_FORBIDDEN):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert offenders == [], "the engine reaches outward:\n" + "\n".join(offenders)


def _function_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_no_import_cycle_between_modules():
    cycles = _cycles(_module_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_import_cycle_between_the_engines_packages_or_between_apps():
    graph = _module_graph()
    engine = _cycles(_package_graph(graph, 3, within="memory.engine"))
    apps = _cycles(_package_graph(graph, 1))
    assert engine == [] and apps == [], f"engine packages: {engine}; apps: {apps}"


def test_the_cycle_finder_finds_a_cycle_and_collapses_packages():
    graph = {"a.x": {"b.y"}, "b.y": {"a.z"}, "a.z": set(), "c.w": {"c.v"}, "c.v": set()}
    assert _cycles(graph) == []
    assert _cycles(_package_graph(graph, 1)) == [["a", "b"]]
    assert _cycles({"m": {"n"}, "n": {"m"}, "o": {"m"}}) == [["m", "n"]]
