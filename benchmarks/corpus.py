"""A deterministic, realistic-looking memory corpus for one agent (no downloads: everything is generated here).

Plain memories are English sentences whose words follow a Zipf law over a fixed vocabulary (rank 1 is very
common, rank 500 is rare), 5 % of them carry a Chinese clause (searchable by 2–3 character substrings).
Facts are triples on a pool of keys (``user:N`` / ``project:N`` × a handful of predicates) whose objects come
from small per-predicate sets, so a write is a supersession, a reaffirm or a first value depending on chance,
as with a real agent that keeps re-learning the same things.
"""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass
from typing import Any

# Roughly in order of how often they would show up in an assistant's notes (rank 1 first).
VOCABULARY = """
user project meeting team deploy code issue review time work data api service update test release
customer server database email report plan document week build config question call design
feature bug change support error task version note model branch account price order file backup access
budget schedule client office travel invoice contract vendor policy laptop password network
dashboard metric alert incident ticket sprint roadmap milestone deadline priority estimate
coffee lunch dinner breakfast weekend holiday birthday family friend doctor dentist gym
morning evening afternoon monday tuesday wednesday thursday friday saturday sunday
london paris berlin tokyo sydney toronto madrid rome lisbon dublin oslo vienna prague
python rust golang java typescript kotlin swift ruby elixir haskell scala clojure
postgres redis kafka nginx docker kubernetes terraform ansible grafana prometheus sentry
vercel cloudflare netlify heroku aws azure gcp linode hetzner fastly akamai
preference reminder decision summary outcome feedback request approval rollback hotfix
staging production sandbox preview canary cluster region zone bucket queue worker cron
invoice receipt refund payment subscription trial upgrade downgrade renewal discount
manager engineer designer analyst director founder intern recruiter lawyer accountant
keyboard monitor headphones charger printer router camera microphone tablet phone
tea juice water soda beer wine whisky cocktail espresso latte cappuccino smoothie
running cycling swimming hiking climbing skiing surfing rowing boxing yoga pilates
novel poetry history science fiction biography memoir thriller mystery fantasy comic
guitar piano violin drums cello trumpet flute saxophone harp banjo ukulele clarinet
apple banana cherry grape lemon mango orange peach pear plum melon kiwi papaya
garden kitchen bedroom balcony garage basement attic hallway studio terrace porch
allergy vaccine prescription insurance appointment surgery therapy checkup diagnosis
migration schema index query cache latency throughput outage capacity quota limit
onboarding offboarding interview promotion salary bonus equity vacation parental leave
compliance audit security privacy encryption certificate token secret credential rotation
newsletter webinar conference workshop keynote panel podcast blog tutorial handbook
airline airport hotel hostel train ferry taxi subway visa passport luggage itinerary
spreadsheet slides whiteboard notebook calendar inbox thread channel mention reaction
refactor benchmark profiler linter formatter compiler debugger notebook container
hypothesis experiment baseline regression variance median percentile histogram
wallet mortgage pension savings stocks bonds crypto taxes donation charity rent
puppy kitten parrot hamster goldfish tortoise rabbit pony lizard ferret gecko
quinoa tofu tempeh lentils hummus falafel ramen sushi tacos burrito paella risotto
volcano glacier canyon prairie savanna tundra lagoon archipelago fjord peninsula
telescope microscope spectrometer oscilloscope centrifuge pipette beaker thermometer
""".split()
VOCABULARY = list(dict.fromkeys(VOCABULARY))  # ~400 distinct words

CHINESE = [
    "我喜欢在周末去公园散步",
    "项目部署到生产环境之前需要审批",
    "明天下午三点开会讨论预算",
    "用户偏好使用深色主题",
    "数据库迁移计划在下周执行",
    "客户要求提供详细的发票",
    "服务器在凌晨出现了故障",
    "团队决定采用新的代码审查流程",
    "他每天早上喝一杯咖啡",
    "我们的办公室搬到了上海",
    "测试覆盖率需要提高到百分之八十",
    "年度旅行计划去日本东京",
]

PREDICATES: dict[str, list[str]] = {
    "lives_in": ["london", "paris", "berlin", "tokyo", "sydney", "toronto", "madrid", "lisbon"],
    "works_at": ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka"],
    "prefers_drink": ["coffee", "tea", "espresso", "latte", "water", "juice"],
    "favourite_editor": ["vim", "emacs", "vscode", "helix", "zed", "nano"],
    "deploy_target": ["vercel", "cloudflare", "netlify", "heroku", "aws", "hetzner"],
    "primary_language": ["python", "rust", "golang", "typescript", "kotlin", "swift"],
    "timezone": ["utc", "cet", "jst", "est", "pst", "aest"],
    "manager": ["alice", "bob", "carol", "dave", "erin", "frank", "grace"],
}
SUBJECT_KINDS = ("user", "project")

# Zipf(s≈1.05) cumulative weights over VOCABULARY.
_CUM = list(itertools.accumulate(1.0 / (rank**1.05) for rank in range(1, len(VOCABULARY) + 1)))


def zipf_word(rng: random.Random) -> str:
    return VOCABULARY[bisect.bisect_left(_CUM, rng.random() * _CUM[-1])]


def sentence(rng: random.Random, n_min: int = 8, n_max: int = 20) -> str:
    words = [zipf_word(rng) for _ in range(rng.randint(n_min, n_max))]
    text = " ".join(words).capitalize() + "."
    if rng.random() < 0.05:
        text += " " + rng.choice(CHINESE) + "。"
    return text


def key_pool(n_keys: int) -> list[tuple[str, str]]:
    """``n_keys`` distinct (subject, predicate) keys."""
    preds = list(PREDICATES)
    keys = []
    i = 0
    while len(keys) < n_keys:
        subject = f"{SUBJECT_KINDS[i % 2]}:{i // len(preds)}"
        keys.append((subject, preds[i % len(preds)]))
        i += 1
    return keys


def fact(rng: random.Random, keys: list[tuple[str, str]], *, event: str) -> dict[str, Any]:
    subject, predicate = rng.choice(keys)
    obj = rng.choice(PREDICATES[predicate])
    kind, _, num = subject.partition(":")
    content = f"{kind.capitalize()} {num} {predicate.replace('_', ' ')} {obj}"
    return {
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "content": content,
        "source_event": event,
        "origin": "user_direct",
    }


@dataclass(frozen=True)
class Item:
    kind: str  # "fact" | "memory"
    args: dict[str, Any]


def corpus_items(
    *, start: int, stop: int, n_keys: int, seed: int = 42, fact_share: float = 0.4
) -> list[Item]:
    """Items ``start``..``stop`` of an endless deterministic stream (so a corpus can be extended)."""
    keys = key_pool(n_keys)
    out = []
    for i in range(start, stop):
        rng = random.Random(seed * 1_000_003 + i)
        if rng.random() < fact_share:
            out.append(Item("fact", fact(rng, keys, event=f"corpus-{i}")))
        else:
            out.append(
                Item(
                    "memory",
                    {
                        "content": sentence(rng),
                        "layer": rng.choice(("episodic", "episodic", "semantic")),
                        "importance": float(rng.randint(1, 9)),
                        "source_event": f"corpus-{i}",
                        "tags": [zipf_word(rng)] if rng.random() < 0.3 else [],
                        # conversations of 16 items, so a search hit has neighbouring turns (issue 17)
                        "session_id": f"corpus-session-{i // 16}",
                    },
                )
            )
    return out


def store_sample(*, n: int, n_keys: int, seed: int) -> list[dict[str, Any]]:
    """The facts timed by the store benchmark (valid_from = now: supersede, reaffirm or first value)."""
    rng = random.Random(seed)
    keys = key_pool(n_keys)
    return [fact(rng, keys, event=f"sample-{seed}-{i}") for i in range(n)]


def queries() -> list[tuple[str, str]]:
    """(label, query text): English words of varying frequency, a pair, a question, CJK substrings, junk."""
    junk = ('"(*)" OR NEAR(a b) ^x -y AND {col}: \\\' ; DROP TABLE memories; -- ' * 300)[:10_240]
    return [
        ("frequent word (rank 2)", VOCABULARY[1]),
        ("common word (rank 12)", VOCABULARY[11]),
        ("medium word (rank 60)", VOCABULARY[59]),
        ("uncommon word (rank 200)", VOCABULARY[199]),
        ("rare word (rank 380)", VOCABULARY[379]),
        ("two words", f"{VOCABULARY[29]} {VOCABULARY[149]}"),
        ("question", "where does user 42 deploy the project"),
        ("fact words", "favourite editor vim"),
        ("CJK 2 chars", "部署"),
        ("CJK 3 chars", "生产环"),
        ("no match", "zyxwvutsrq"),
        ("junk 10 KB", junk),
    ]
