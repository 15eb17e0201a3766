"""The injection package as it is at a git ref, loaded beside the working tree's (no Django), for speed work:

    from injection_reference import load_at
    ref = load_at("main")          # memory/engine/injection at main, as the package ``memdesk_injection_ref``
    ref_scan = importlib.import_module(f"{ref.__name__}.scan").scan_text

The ref's files are extracted with ``git archive`` into a temporary folder (its model and rules file included),
so the reference needs no second worktree (the folder is removed at exit).
"""

from __future__ import annotations

import atexit
import importlib.util
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
PACKAGE_PATH = "memory/engine/injection"


def load_at(ref: str, name: str = "memdesk_injection_ref") -> ModuleType:
    """``memory/engine/injection`` at ``ref`` as the top-level package ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref, PACKAGE_PATH],
        check=True,
        capture_output=True,
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="injection-ref-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(folder, filter="data")
    package = folder / PACKAGE_PATH
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
