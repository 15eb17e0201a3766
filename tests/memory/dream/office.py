"""A small office world for discovery tests (and the browser journey's provisioning), written through the engine."""

from __future__ import annotations

from memory import engine


def fact(agent: str, s: str, p: str, o: str, session: str | None = None) -> str:
    return engine.store_temporal(
        agent_id=agent, content=f"{s} {p} {o}", subject=s, predicate=p, object=o, origin="user_direct",
        session_id=session,
    ).id  # fmt: skip


def office(agent: str) -> None:
    """Aiko Tanaka leads a team in Tokyo; the Osaka office's people all know her, from four sessions she was in;
    a Berlin team aside. Aiko and the Osaka office share four neighbours and four sessions, no fact links
    them, and they sit in different communities (Tokyo's and Osaka's)."""
    tokyo = ("Ken", "Mio", "Ryo", "Sora", "Yui")
    fact(agent, "Aiko Tanaka", "works_at", "Tokyo HQ", session="t0")
    fact(agent, "Aiko Tanaka", "uses_tool", "Slack", session="t0")
    for k, who in enumerate(tokyo):
        fact(agent, who, "works_at", "Tokyo HQ", session=f"t{k}")
        fact(agent, who, "uses_tool", "Slack", session=f"t{k}")
        fact(agent, who, "reports_to", "Aiko Tanaka", session=f"t{k}")
    for k, who in enumerate(("Ben", "Chie", "Daisuke", "Emi")):
        fact(agent, who, "works_at", "Osaka office", session=f"s{k}")
        fact(agent, who, "knows", "Aiko Tanaka", session=f"s{k}")
        fact(agent, who, "uses_tool", "Zendesk", session="osaka")
        fact(agent, who, "located_in", "Osaka", session="osaka")
    for who in ("Finn", "Greta", "Hugo"):
        fact(agent, who, "works_at", "Berlin office", session="b1")
        fact(agent, who, "uses_tool", "Jira", session="b1")
    fact(agent, "Hugo", "knows", "Emi")
