"""What the burst guard counts by (SPEC P5): a subject as the entity it names, and who counts together.

A subject is counted as the graph's entity (``normalize_entity``: NFKC, lower case, whitespace runs folded;
then alias-resolved), with look-alike letters folded to Latin (a Greek or Cyrillic ``О`` is an ``o``) and
punctuation around the name dropped (``Acme Corp.`` is ``acme corp``): respelling a subject never splits its
count. Writes from origin classes trusted at most ``LOW_TRUST`` are also counted per class, so a campaign
spread over several tokens of one class is one burst. Plain memories (no subject) from such classes are counted
per origin under ``PLAIN_SUBJECT``.
"""

from __future__ import annotations

import re

from memory.models import EntityAlias

from ..graph.names import normalize_entity
from ..provenance import ceiling, origin_class

LOW_TRUST = 0.6
PLAIN_SUBJECT = "(plain memories)"  # never a guard key of a fact: those lose their surrounding punctuation

# Look-alikes NFKC leaves alone, lower case (the key is lower-cased first): Cyrillic, Greek, Armenian and
# Latin small capitals / IPA letters that render like Latin letters.
_CONFUSABLE_PAIRS = (
    ("аеорсухѕіїјһԁԛԝӏкмнтвгпьшёɡ", "aeopcyxsiijhdqwlkmhtbrnbweg"),
    ("αβεηικνοπρτυχγωμςζ", "abenikvonptuxywucz"),
    ("օսոհցա", "ounhga"),
    ("ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıɑ", "abcdeghijklmnoprstuvwyzia"),
)
_CONFUSABLES = str.maketrans({a: b for src, dst in _CONFUSABLE_PAIRS for a, b in zip(src, dst, strict=True)})
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def fold(name: str) -> str:
    """A normalised entity name with look-alikes folded and surrounding punctuation dropped."""
    folded = name if name.isascii() else name.translate(_CONFUSABLES)
    stripped = _EDGE_PUNCTUATION.sub("", folded)
    return " ".join(stripped.split()) or folded


def guard_subject(agent_id: str, subject: str) -> str:
    """The key a fact's subject is counted under: the entity it names (alias-resolved), folded."""
    name = normalize_entity(subject)
    names = list(dict.fromkeys((name, fold(name))))
    found = dict(
        EntityAlias.objects.filter(agent_id=agent_id, alias__in=names).values_list("alias", "canonical")
    )
    name = next((found[n] for n in names if n in found), name)
    return fold(name)[:512]


def class_counter(origin: str) -> str | None:
    """The counter an origin shares with the rest of its class (``<class>:*``), for classes trusted at most
    ``LOW_TRUST``; None for trusted classes."""
    if ceiling(origin) > LOW_TRUST:
        return None
    return f"{origin_class(origin)}:*"
