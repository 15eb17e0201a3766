"""One provisioned SQLite file per test session; each transport module serves its own copy of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .harness import copy_db, provision


@pytest.fixture(scope="session")
def mcp_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """A migrated database with the tokens of ``tests.mcp.provision`` (secrets and ids)."""
    path = tmp_path_factory.mktemp("mcp-template") / "memdesk.sqlite3"
    return path, provision(path)


@pytest.fixture(scope="module")
def mcp_db(mcp_template, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    template, tokens = mcp_template
    path = tmp_path_factory.mktemp("mcp") / "memdesk.sqlite3"
    copy_db(template, path)
    return path, tokens
