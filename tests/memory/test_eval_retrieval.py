"""The retrieval evaluation harness (issue 17): metrics, loaders and a whole run on a tiny hand-made sample.

The real data is never in the repository; tests/data/retrieval_sample/ mimics its two schemas in a few lines.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "data" / "retrieval_sample"


def _harness():
    name = "eval_retrieval_under_test"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / "eval_retrieval.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_question_metrics_on_a_hand_made_ranking():
    h = _harness()
    m = h.question_metrics(["a", "x", "b", "y"], frozenset({"b", "c"}))
    assert m["r@5"] == 1.0 and m["r@10"] == 1.0
    assert m["rall@10"] == 0.0  # c is missing
    # one hit at rank 3 against an ideal of two hits at ranks 1 and 2
    assert m["ndcg@10"] == pytest.approx((1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_metrics_cut_at_five_and_ten_and_count_duplicates_once():
    h = _harness()
    ranked = ["n1", "n2", "n3", "n4", "n5", "n5", "rel"]
    m = h.question_metrics(ranked, frozenset({"rel"}))
    assert m["r@5"] == 0.0  # the duplicate n5 does not push rel out of the top 10, and rel is 6th
    assert m["r@10"] == 1.0 and m["rall@10"] == 1.0
    assert m["ndcg@10"] == pytest.approx(1 / math.log2(7))
    late = h.question_metrics([f"n{i}" for i in range(10)] + ["rel"], frozenset({"rel"}))
    assert late == {"r@5": 0.0, "r@10": 0.0, "rall@10": 0.0, "ndcg@10": 0.0}
    assert h.question_metrics([], frozenset({"rel"}))["r@10"] == 0.0


def test_aggregate_means_per_type_and_overall():
    h = _harness()
    full = {"r@5": 1.0, "r@10": 1.0, "rall@10": 1.0, "ndcg@10": 1.0}
    none = {"r@5": 0.0, "r@10": 0.0, "rall@10": 0.0, "ndcg@10": 0.0}
    rows = [
        {"dataset": "d", "split": "dev", "type": "a", "metrics": {"bm25": full, "engine": none}},
        {"dataset": "d", "split": "dev", "type": "a", "metrics": {"bm25": none, "engine": none}},
        {"dataset": "d", "split": "dev", "type": "b", "metrics": {"bm25": full, "engine": full}},
    ]
    out = h.aggregate(rows, ["bm25", "engine"])["d"]["dev"]
    assert out["a"]["n"] == 2 and out["a"]["bm25"]["r@10"] == 0.5 and out["a"]["engine"]["r@10"] == 0.0
    assert out["all"]["n"] == 3 and out["all"]["bm25"]["r@10"] == pytest.approx(0.6667, abs=1e-4)
    assert out["all"]["engine"]["ndcg@10"] == pytest.approx(0.3333, abs=1e-4)


def test_split_is_a_fixed_function_of_the_id():
    h = _harness()
    ids = [f"q{i}" for i in range(400)]
    splits = [h.split_of(i) for i in ids]
    assert splits == [h.split_of(i) for i in ids]
    assert 120 < splits.count("dev") < 280  # about half each


def test_longmemeval_loader_keeps_turns_and_evidence_and_drops_abstentions():
    h = _harness()
    convs, skipped = h.load(SAMPLE, "lme-oracle")
    assert skipped == {"abstention": 1, "no_evidence_turn": 1}
    (conv,) = convs
    assert [d.id for d in conv.docs] == [
        "sharegpt_s0_1",
        "sharegpt_s0_2",
        "answer_s1_1",
        "answer_s1_2",
        "answer_s1_3",
    ]
    (q,) = conv.questions
    assert q.relevant == {"answer_s1_3"} and q.type == "single-session-user"
    assert conv.docs[2].session_id == "answer_s1" and conv.docs[2].date == "2023/05/24 (Wed) 17:25"


def test_madial_loader_groups_memories_by_user_and_queries_with_the_dialogue_before_the_test_turn():
    h = _harness()
    convs, _ = h.load(SAMPLE, "madial-en")
    by_key = {c.key: c for c in convs}
    bart = by_key["madial-en:user1"]
    assert [d.id for d in bart.docs] == ["1", "2"]
    (q,) = bart.questions
    assert (
        q.query == "I will dance at the Christmas party again!"
        and q.relevant == {"1"}
        and q.type == "Activity"
    )
    zh, _ = h.load(SAMPLE, "madial-zh")
    assert zh[0].questions[0].query == "我又要在圣诞节晚会上跳舞了！" and zh[0].questions[0].type == "活动类"


def test_bm25_baseline_ranks_the_evidence_first():
    h = _harness()
    (conv,), _ = h.load(SAMPLE, "lme-oracle")
    bm25 = h.BM25(conv.docs)
    assert bm25.rank("name of my cat")[0] == "answer_s1_3"
    assert bm25.rank("") == [] and bm25.rank("!!!") == []


@pytest.mark.django_db
def test_a_whole_run_on_the_sample_through_the_engine():
    h = _harness()
    side = h.EngineSide()
    rows = []
    for dataset in ("lme-oracle", "madial-en"):
        convs, _ = h.load(SAMPLE, dataset)
        rows += h.evaluate(convs, dataset, dense=None, engine_side=side)
    assert side.count == 3  # one fresh agent per conversation (one LongMemEval question, two MADial users)
    summary = h.aggregate(rows, ["bm25", "engine"])
    cat = summary["lme-oracle"][rows[0]["split"]]["single-session-user"]
    assert cat["n"] == 1 and cat["engine"]["r@10"] == 1.0 and cat["bm25"]["r@10"] == 1.0
    text = h.table(summary, ["bm25", "engine"])
    assert "lme-oracle" in text and "madial-en" in text
    json.dumps(summary)  # the report is JSON


def test_subset_takes_the_first_questions_of_each_split():
    h = _harness()
    conv = h.Conversation(
        "c", [], [h.Question(f"q{i}", "t", "x", frozenset({"a"}), h.split_of(f"q{i}")) for i in range(20)]
    )
    out = h.subset([conv], 2)
    splits = [q.split for q in out[0].questions]
    assert splits.count("dev") == 2 and splits.count("heldout") == 2
