"""Create a migrated SQLite file with the agents' tokens the MCP tests use; print them as JSON.

Run in a child process (``python -m tests.mcp.provision``) with ``MEMDESK_SQLITE_PATH`` pointing at the file,
so the tokens are made by the engine exactly as ``manage.py token create`` makes them.
"""

from __future__ import annotations

import json
import os
import sys

# name -> (agent, scopes, external)
TOKENS: dict[str, tuple[str, str, bool]] = {
    "a_rw": ("agent-a", "memory:read,memory:write", False),
    "a_read": ("agent-a", "memory:read", False),
    "b_rw": ("agent-b", "memory:read,memory:write", False),
    "q_write": ("agent-q", "memory:write", False),  # the daily-limit agent; write scope only
    "adm": ("agent-adm", "admin", False),
    "a_adm": ("agent-a", "admin", False),  # wiki_search needs admin (SPEC A3)
    "r_rw": ("agent-r", "memory:read,memory:write", False),  # revoked by a test
    "x_ext": ("agent-x", "memory:read,memory:write", True),
    "a_ext": ("agent-a", "memory:read,memory:write", True),  # an external source writing into agent-a
    "w_rw": ("agent-w", "memory:read,memory:write", False),  # the wiki's daily-limit agent
}


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from memory import engine

    call_command("migrate", verbosity=0, interactive=False)
    out = {}
    for name, (agent, scopes, external) in TOKENS.items():
        token, secret = engine.token_create(agent_id=agent, scopes=scopes, external=external, name=name)
        out[name] = {"id": token.id, "agent": agent, "secret": secret}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
