"""The demo's discovery story (``seed_demo``): people and offices of the support bot whose facts never say how
some of them connect, so that a discovery run finds one item of each kind with evidence a person can follow.

Haruka Ueda leads the Tokyo team; the four people of the Osaka office all met her in four visits (one session
each) but no fact links her to the Osaka office: a bridge between the Tokyo and Osaka communities. The Berlin
team works alone, except that Hugo knows Emi (Osaka).
"""

from __future__ import annotations

from memory.management.demo_data import Fact

TOKYO = ("Ken Sato", "Mio Ito", "Ryo Kato", "Sora Abe", "Yui Mori")
OSAKA = ("Ben Suzuki", "Chie Yamada", "Daisuke Ono", "Emi Kudo")
BERLIN = ("Finn Weber", "Greta Braun", "Hugo Keller")


def _slug(name: str) -> str:
    return name.lower().replace(" ", "-")


def discovery_story() -> list[Fact]:
    """The facts, in the order the engine learns them (world times in days before the seeding day)."""
    facts = [
        Fact("disc-haruka-tokyo", "Haruka Ueda", "works_at", "Tokyo HQ",
             "Haruka Ueda leads the support team at Tokyo HQ.", 40, "import", tags=("people",),
             session="demo-tokyo-standup"),
        Fact("disc-haruka-slack", "Haruka Ueda", "uses_tool", "Slack",
             "Haruka Ueda runs the Tokyo stand-ups in Slack.", 40, "user_direct", tags=("people",),
             session="demo-tokyo-standup"),
    ]  # fmt: skip
    for k, who in enumerate(TOKYO):
        s, session = _slug(who), "demo-tokyo-standup"
        facts += [
            Fact(f"disc-{s}-works", who, "works_at", "Tokyo HQ", f"{who} works at Tokyo HQ.", 38 - k, "import",
                 tags=("people",), session=session),
            Fact(f"disc-{s}-slack", who, "uses_tool", "Slack", f"{who} is on the Tokyo Slack.", 38 - k,
                 "user_direct", tags=("people",), session=session),
            Fact(f"disc-{s}-reports", who, "reports_to", "Haruka Ueda", f"{who} reports to Haruka Ueda.", 37 - k,
                 "import", tags=("people",), session=session),
        ]  # fmt: skip
    for k, who in enumerate(OSAKA):
        s, visit = _slug(who), f"demo-osaka-visit-{k}"
        facts += [
            Fact(f"disc-{s}-works", who, "works_at", "Osaka office",
                 f"{who} works at the Osaka office (met during Haruka's visit).", 30 - k, "user_direct",
                 tags=("people",), session=visit),
            Fact(f"disc-{s}-knows", who, "knows", "Haruka Ueda",
                 f"{who} knows Haruka Ueda from her visit to Osaka.", 30 - k, "user_direct", tags=("people",),
                 session=visit),
            Fact(f"disc-{s}-tool", who, "uses_tool", "Freshdesk", f"{who} answers tickets in Freshdesk.", 29,
                 "import", tags=("people",), session="demo-osaka-standup"),
            Fact(f"disc-{s}-city", who, "located_in", "Osaka", f"{who} is based in Osaka.", 29, "import",
                 tags=("people",), session="demo-osaka-standup"),
        ]  # fmt: skip
    for who in BERLIN:
        s = _slug(who)
        facts += [
            Fact(f"disc-{s}-works", who, "works_at", "Berlin office", f"{who} works at the Berlin office.", 35,
                 "import", tags=("people",), session="demo-berlin-standup"),
            Fact(f"disc-{s}-tool", who, "uses_tool", "Jira", f"{who} tracks escalations in Jira.", 35, "import",
                 tags=("people",), session="demo-berlin-standup"),
        ]  # fmt: skip
    facts.append(
        Fact("disc-hugo-emi", "Hugo Keller", "knows", "Emi Kudo", "Hugo Keller and Emi Kudo trained together.",
             12, "user_direct", tags=("people",))
    )  # fmt: skip
    return facts
