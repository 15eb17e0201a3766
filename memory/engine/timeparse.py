"""Time expressions in search queries (issue 17 item 5): "last June", "in March", "2023", "two weeks ago",
"last Tuesday", "去年6月", "2023年", "三天前", "上周" become intervals of world time, relative to ``now``.

A small parser of its own, for English and Chinese: dateparser (the maintained general parser) pulls in regex
and tz databases and parses a *date*, not the expressions of a question ("how many weeks ago did I …" must not
become a date at all, "a month ago" is a window around one). ``dateutil`` parses the stored dates
(``memory_time``). Each interval is half-open ``[start, end)`` in UTC; an expression counted back from now
("three days ago") is widened by a tolerance, since people round.

Event-relative expressions ("before the move") name no date; they are not parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
WEEKDAYS = {
    d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3, "several": 3,
}  # fmt: skip
CN_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
UNIT_DAYS = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}
CN_UNITS = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "个星期": "week",
    "个月": "month",
    "月": "month",
    "年": "year",
}
MAX_QUERY_CHARS = 2_000
MAX_INTERVALS = 4

_NUM = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few|several)"
_AGO = re.compile(rf"\b{_NUM}\s+(day|week|month|year)s?\s+ago\b")
_LAST_UNIT = re.compile(r"\b(last|this|past|previous)\s+(week|month|year|weekend)\b")
_PAST_N = re.compile(rf"\b(?:past|last)\s+{_NUM}\s+(day|week|month|year)s?\b")
_MONTH = re.compile(
    r"\b(?:(last|this|next)\s+)?("
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")\b(?:\s+(?:of\s+)?((?:19|20)\d\d))?"
)
_WEEKDAY = re.compile(r"\b(last|this|on|past)\s+(" + "|".join(WEEKDAYS) + r")\b")
_YEAR = re.compile(r"(?<![\d/.-])((?:19|20)\d\d)(?![\d/.-])")
_DAYWORD = re.compile(r"\b(yesterday|today|tonight|the day before yesterday)\b")
_CN_NUM = "[0-9零一二两三四五六七八九十]{1,3}"
_CN_AGO = re.compile(f"({_CN_NUM})(个星期|星期|个月|天|日|周|年)(?:以)?前")
_CN_YEAR_MONTH = re.compile(f"(?:((?:19|20)\\d\\d)年|(去年|今年|前年))?({_CN_NUM})月")
_CN_YEAR = re.compile(r"((?:19|20)\d\d)年|(去年|今年|前年)")
_CN_WORDS = {"昨天": (1, 1), "前天": (2, 1), "今天": (0, 1), "上周": (7, 7), "上个星期": (7, 7), "上星期": (7, 7),
             "上个月": (30, 30), "上月": (30, 30)}  # fmt: skip


@dataclass(frozen=True)
class Interval:
    start: datetime
    end: datetime
    text: str  # the expression it came from


def _cn_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if "十" in text:
        tens, _, ones = text.partition("十")
        return CN_DIGITS.get(tens, 1) * 10 + (CN_DIGITS.get(ones, 0) if ones else 0)
    return CN_DIGITS.get(text)


def _day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _ago(now: datetime, n: float, unit: str, text: str) -> Interval:
    """``n`` units back from today, widened by a quarter of the span each way (at least one day)."""
    days = n * UNIT_DAYS[unit]
    centre = _day(now) - timedelta(days=days)
    slack = timedelta(days=max(1.0, days / 4 if unit != "day" else days / 7))
    return Interval(centre - slack, centre + timedelta(days=1) + slack, text)


def parse(query: Any, now: datetime) -> list[Interval]:
    """The time expressions of ``query`` as intervals (at most ``MAX_INTERVALS``, in query order); [] when it
    names no time or is not a string."""
    if not isinstance(query, str) or not query:
        return []
    q = query[:MAX_QUERY_CHARS].lower()
    now = now.astimezone(UTC)
    today = _day(now)
    found: list[tuple[int, Interval]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], interval: Interval) -> None:
        if any(a < m.end() and m.start() < b for a, b in taken):
            return  # a longer expression already covers these words
        taken.append((m.start(), m.end()))
        found.append((m.start(), interval))

    for m in _AGO.finditer(q):
        add(m, _ago(now, NUMBERS.get(m.group(1)) or int(m.group(1)), m.group(2), m.group(0)))
    for m in _PAST_N.finditer(q):
        n = NUMBERS.get(m.group(1)) or int(m.group(1))
        add(
            m,
            Interval(
                today - timedelta(days=n * UNIT_DAYS[m.group(2)]), today + timedelta(days=1), m.group(0)
            ),
        )
    for m in _LAST_UNIT.finditer(q):
        which, unit = m.group(1), m.group(2)
        if unit == "weekend":
            sat = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
            add(m, Interval(sat - timedelta(days=1), sat + timedelta(days=2), m.group(0)))
        elif which == "this":
            days = {"week": 7, "month": 31, "year": 366}[unit]
            add(m, Interval(today - timedelta(days=days), today + timedelta(days=1), m.group(0)))
        else:
            add(m, _ago(now, 1, unit, m.group(0)))
    for m in _WEEKDAY.finditer(q):
        back = (today.weekday() - WEEKDAYS[m.group(2)]) % 7 or 7
        if m.group(1) == "last" and back < 3:
            back += 7  # "last Tuesday" said on a Wednesday: most people mean the week before
        day = today - timedelta(days=back)
        add(m, Interval(day - timedelta(days=1), day + timedelta(days=2), m.group(0)))
    for m in _DAYWORD.finditer(q):
        back = {"yesterday": 1, "today": 0, "tonight": 0, "the day before yesterday": 2}[m.group(1)]
        day = today - timedelta(days=back)
        add(m, Interval(day, day + timedelta(days=1), m.group(0)))
    for m in _MONTH.finditer(q):
        which, name, year = m.group(1), m.group(2), m.group(3)
        if name == "may" and not (which or year):
            continue  # "may" is mostly the verb
        if name in (
            "mar",
            "jun",
            "jan",
            "dec",
            "oct",
            "sept",
            "sep",
            "aug",
            "apr",
            "nov",
            "feb",
            "jul",
        ) and not (which or year):
            continue  # short forms alone are too often other words
        month = MONTHS[name]
        if year:
            y = int(year)
        elif which == "next":
            y = now.year + (month <= now.month)
        elif which == "this":
            y = now.year
        else:  # "last June", "in June": the latest June that has begun ("last" on a June day: the one before)
            y = now.year if month < now.month or (month == now.month and which != "last") else now.year - 1
        add(m, Interval(*_month_span(y, month), m.group(0)))
    _parse_chinese(query[:MAX_QUERY_CHARS], now, add)  # before bare years: "2023年3月" is a month
    for m in _YEAR.finditer(q):
        y = int(m.group(1))
        add(m, Interval(datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC), m.group(0)))
    found.sort(key=lambda t: t[0])
    return [i for _, i in found[:MAX_INTERVALS]]


def _parse_chinese(q: str, now: datetime, add: Any) -> None:
    today = _day(now)
    for m in _CN_AGO.finditer(q):
        n = _cn_number(m.group(1))
        if n:
            add(m, _ago(now, n, CN_UNITS[m.group(2)], m.group(0)))
    for word, (back, span) in _CN_WORDS.items():
        for m in re.finditer(word, q):
            if span == 1:
                day = today - timedelta(days=back)
                add(m, Interval(day, day + timedelta(days=1), word))
            else:
                add(m, _ago(now, 1, "week" if span == 7 else "month", word))
    for m in _CN_YEAR_MONTH.finditer(q):
        month = _cn_number(m.group(3))
        if not month or not 1 <= month <= 12:
            continue
        if m.group(1):
            y = int(m.group(1))
        elif m.group(2):
            y = now.year - {"今年": 0, "去年": 1, "前年": 2}[m.group(2)]
        else:
            y = now.year if month <= now.month else now.year - 1
        add(m, Interval(*_month_span(y, month), m.group(0)))
    for m in _CN_YEAR.finditer(q):
        y = int(m.group(1)) if m.group(1) else now.year - {"今年": 0, "去年": 1, "前年": 2}[m.group(2)]
        add(m, Interval(datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC), m.group(0)))


# --- the time a memory is about --------------------------------------------------------------------------------

DATE_KEYS = ("date", "session_date", "event_date")
_DATE = re.compile(r"((?:19|20)\d\d)[/.-](\d{1,2})[/.-](\d{1,2})(?:\D+(\d{1,2}):(\d{2}))?")


def memory_time(
    metadata: Any, valid_from: datetime | None, subject: str | None, timestamp: datetime | None
) -> datetime | None:
    """When a memory happened: the date its writer gave (``metadata`` ``date``, ``session_date`` or ``event_date``:
    a conversation's session date), else a fact's valid-from (world time), else when it was written."""
    if isinstance(metadata, dict):
        for key in DATE_KEYS:
            value = metadata.get(key)
            if isinstance(value, str) and (m := _DATE.search(value[:64])):
                try:
                    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
                    hh, mm = int(m.group(4) or 0), int(m.group(5) or 0)
                    return datetime(y, mo, d, min(hh, 23), min(mm, 59), tzinfo=UTC)
                except ValueError:
                    continue
    if subject and valid_from is not None:
        return valid_from
    return timestamp


def closeness(when: datetime | None, intervals: list[Interval]) -> float:
    """1.0 inside one of ``intervals``, falling off outside as exp(−distance / the interval's length); 0.0 for
    no time."""
    if when is None or not intervals:
        return 0.0
    best = 0.0
    for iv in intervals:
        if iv.start <= when < iv.end:
            return 1.0
        span = max(1.0, (iv.end - iv.start).total_seconds() / 86400)
        dist = ((iv.start - when) if when < iv.start else (when - iv.end)).total_seconds() / 86400
        best = max(best, 2.718281828 ** (-dist / span))
    return best
