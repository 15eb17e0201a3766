"""Text normalisation for full-text search: one tokeniser for documents and queries (SPEC R3).

CJK has no spaces, so runs of CJK characters are indexed as overlapping bigrams; a query run of two or more CJK
characters becomes a phrase of its bigrams, which matches any substring of two or more characters. Every query
token is quoted, so user text can never be read as FTS syntax.
"""

from __future__ import annotations

import re
import unicodedata

# Han (incl. ext. A, compatibility), Hiragana, Katakana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
MAX_QUERY_TOKENS = 32
MAX_QUERY_CHARS = 10_000
# A row's document is cut here once normalised (NFKC can make 18 characters of one): bounded indexing work per
# row. Text a write accepts as ASCII (64 KB of content, a 512-character subject, a 4,096-character object)
# never lengthens, so it is never cut. PostgreSQL's memdesk_fts_doc cuts at the same length (migration 0012).
MAX_DOC_CHARS = 72_000


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower()


def _bigrams(run: str) -> list[str]:
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[list[str]]:
    """Return query/document units: a list per token; a CJK run gives its bigram list (a phrase)."""
    out: list[list[str]] = []
    for match in _TOKEN.finditer(normalise(text)):
        tok = match.group(0)
        if CJK_RUN.fullmatch(tok):
            out.append(_bigrams(tok))
        else:
            out.append([tok])
    return out


def _bigram_run(match: re.Match[str]) -> str:
    return " " + " ".join(_bigrams(match.group(0))) + " "


def document(*parts: str | None) -> str:
    """The text handed to the FTS index for a row (called by the SQLite trigger on every insert).

    FTS5's unicode61 tokenizer splits words and folds case itself, so plain text passes through; non-ASCII text
    is NFKC-normalised like queries are, and CJK runs become space-separated bigrams.
    """
    text = " ".join(part for part in parts if part)
    if text.isascii():
        return text[:MAX_DOC_CHARS]
    text = normalise(text[: MAX_DOC_CHARS * 2])[:MAX_DOC_CHARS]
    return CJK_RUN.sub(_bigram_run, text) if CJK_RUN.search(text) else text


def _query_units(query: str) -> list[list[str]]:
    if not isinstance(query, str):
        return []
    query = query.replace("\x00", " ")[:MAX_QUERY_CHARS]
    seen: set[tuple[str, ...]] = set()
    units: list[list[str]] = []
    for unit in tokens(query):
        key = tuple(unit)
        if key in seen:
            continue
        seen.add(key)
        units.append(unit)
        if len(units) >= MAX_QUERY_TOKENS:
            break
    return units


# Function words of English: a long query (a dialogue, a pasted paragraph; ``LONG_QUERY_UNITS``) leaves them out,
# so its content words decide. A short question keeps
# them: in a conversation memory "I", "my" and "me" mark the user's own turns, and dropping them cost recall.
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in"
    " into is it its me my of on or our she so than that the their them then there these they this to was we"
    " were what when where which who whom why will with would you your".split()
)
# A query's CJK run of up to this many characters (a name, a word) stays one phrase; a longer run is a sentence
# (CJK has no spaces), and its bigrams are OR-ed like the words of an English sentence, so a memory that shares
# some of its words is found and ranked by how many (bm25) instead of needing the whole sentence verbatim.
CJK_PHRASE_MAX_CHARS = 4


# A query of more distinct units than this is long (a dialogue, a pasted paragraph): its stopwords are left out.
LONG_QUERY_UNITS = 32
# The most units a search ORs (the last ones are kept): bounds the FTS work of a 10 KB query.
MAX_SEARCH_UNITS = 256


def search_units(query: str) -> list[list[str]]:
    """The OR-ed terms of a memory search: the query's distinct units, a long CJK run split into its bigrams. A
    query of more than ``LONG_QUERY_UNITS`` units leaves its stopwords out (unless nothing else is left); past
    ``MAX_SEARCH_UNITS`` the last units are kept: a long query is most often a conversation, whose latest lines
    say what is wanted now.

    Measured on MADial-Bench (dialogue queries; benchmarks/eval_retrieval.py, recall@10, dev split en / zh): the
    old cap of 32 units cut a dialogue to its last few lines (.718 / .659, BM25 over every unit .692 / .894);
    every unit without stopwords .821 / .871 (held-out .854 / .773, BM25 .780 / .813). 128 units lost .012 on zh
    dev, 256 matched no cap. Repeating a unit as often as the query says it (FTS5 counts a repeated phrase) was
    better on zh and worse on en dev, so units stay distinct."""
    if not isinstance(query, str):
        return []
    query = query.replace("\x00", " ")[:MAX_QUERY_CHARS]
    seen: set[tuple[str, ...]] = set()
    units: list[list[str]] = []
    for unit in tokens(query):
        for part in [[b] for b in unit] if len(unit) >= CJK_PHRASE_MAX_CHARS else [unit]:
            key = tuple(part)
            if key not in seen:
                seen.add(key)
                units.append(part)
    if len(units) > LONG_QUERY_UNITS:
        units = [u for u in units if not (len(u) == 1 and u[0] in STOPWORDS)] or units
    return units[-MAX_SEARCH_UNITS:]


def sqlite_match(query: str) -> str | None:
    """An FTS5 MATCH expression for ``query`` (terms OR-ed, short CJK runs as phrases), or None if nothing to
    search."""
    units = search_units(query)
    if not units:
        return None
    return " OR ".join('"' + " ".join(unit) + '"' for unit in units)


def pg_tsquery(query: str) -> str | None:
    """A to_tsquery('simple', …) expression for ``query``; lexemes quoted, short CJK runs' bigrams joined with
    <->."""
    units = search_units(query)
    if not units:
        return None
    parts = []
    for unit in units:
        quoted = ["'" + u.replace("'", "''").replace("\\", "\\\\") + "'" for u in unit]
        parts.append("(" + " <-> ".join(quoted) + ")" if len(quoted) > 1 else quoted[0])
    return " | ".join(parts)
