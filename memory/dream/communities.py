"""Communities of the entity edges (SPEC B4): Leiden on the composite weights, seeded, with ids that stay put.

The partition is igraph's Leiden (the C implementation in igraph's core, by the authors of ``leidenalg``; on a
million facts it runs in seconds where ``leidenalg`` takes over a minute), optimising modularity on the kept
edges' composite weights. igraph draws its random numbers from a ``random.Random`` seeded with ``SEED`` for the
call (never the process's global generator), so the same edges always give the same partition. The previous
run's communities are its starting point, which keeps most of them as they were when little changed.

Ids are kept stable by overlap: each new community takes the number (and the name) of the previous community
it overlaps most, by Jaccard, among those sharing at least ``MIN_OVERLAP`` of the smaller one's members; each
previous number is given at most once, greedily, best overlap first. A community that matches none gets the
next unused number and is named after its best-connected member. Entities without an edge belong to none, and
groups smaller than ``MIN_SIZE`` are not communities.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

SEED = 20240521
MIN_SIZE = 2
MIN_OVERLAP = 0.5
CONVERGE_BELOW_EDGES = 50_000  # smaller graphs iterate until the partition is stable; larger ones twice
_rng_lock = threading.Lock()  # igraph's random generator is process-wide


@dataclass(frozen=True)
class Group:
    """A community: its stable ``number``, ``name`` and members (entity names, sorted); ``new`` when no
    previous community matched it."""

    number: int
    name: str
    members: tuple[str, ...]
    new: bool = False


def leiden(
    n_nodes: int,
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
    *,
    seed: int = SEED,
    initial: np.ndarray | None = None,
) -> np.ndarray:
    """Community index of each node (-1 for a node without an edge). ``initial``: a starting membership
    (-1 where unknown)."""
    import igraph as ig

    membership = np.full(n_nodes, -1, dtype=np.int64)
    if a.size == 0:
        return membership
    nodes = np.unique(np.concatenate([a, b]))
    local = np.full(n_nodes, -1, dtype=np.int64)
    local[nodes] = np.arange(nodes.size)
    graph = ig.Graph(n=int(nodes.size), edges=np.column_stack([local[a], local[b]]).tolist())
    start = None
    if initial is not None:
        given = initial[nodes]
        fresh = given < 0
        start_arr = given.copy()
        start_arr[fresh] = given.max(initial=-1) + 1 + np.arange(int(fresh.sum()))
        _, start_arr = np.unique(start_arr, return_inverse=True)
        start = start_arr.astype(int).tolist()
    iterations = -1 if a.size <= CONVERGE_BELOW_EDGES else 2
    with _rng_lock:
        ig.set_random_number_generator(random.Random(seed))
        try:
            found = graph.community_leiden(
                objective_function="modularity",
                weights=np.asarray(weights, dtype=np.float64).tolist(),
                n_iterations=iterations,
                initial_membership=start,
            )
        finally:
            ig.set_random_number_generator(random)
    membership[nodes] = np.asarray(found.membership, dtype=np.int64)
    return membership


def groups_of(
    membership: np.ndarray,
    names: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
) -> list[tuple[list[str], str]]:
    """The partition as (sorted member names, best-connected member) per group of at least ``MIN_SIZE``,
    largest first (then by best member's name)."""
    if membership.size == 0:
        return []
    strength = np.zeros(membership.size)
    np.add.at(strength, a, weights)
    np.add.at(strength, b, weights)
    out = []
    order = np.argsort(membership, kind="stable")
    sorted_m = membership[order]
    starts = np.flatnonzero(np.r_[True, sorted_m[1:] != sorted_m[:-1]])
    ends = np.r_[starts[1:], sorted_m.size]
    for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
        if sorted_m[lo] < 0 or hi - lo < MIN_SIZE:
            continue
        nodes = order[lo:hi]
        best = min(nodes.tolist(), key=lambda i: (-strength[i], names[i]))
        out.append((sorted(names[i] for i in nodes.tolist()), names[best]))
    out.sort(key=lambda g: (-len(g[0]), g[1]))
    return out


def match_numbers(
    groups: Sequence[tuple[Sequence[str], str]],
    previous: Mapping[int, tuple[str, Sequence[str]]],
    *,
    next_number: int,
) -> list[Group]:
    """Stable ids: ``groups`` (members, best member) matched against ``previous`` (number → (name, members))
    by overlap; see the module's docstring."""
    owner: dict[str, int] = {}
    sizes: dict[int, int] = {}
    for number, (_, members) in previous.items():
        sizes[number] = len(members)
        for m in members:
            owner[m] = number
    candidates = []
    for k, (members, _) in enumerate(groups):
        shared = Counter(owner[m] for m in members if m in owner)
        for number, inter in shared.items():
            smaller = min(len(members), sizes[number])
            if inter / smaller < MIN_OVERLAP:
                continue
            jaccard = inter / (len(members) + sizes[number] - inter)
            candidates.append((-jaccard, -inter, number, k))
    candidates.sort()
    taken: dict[int, int] = {}
    used: set[int] = set()
    for _, _, number, k in candidates:
        if k in taken or number in used:
            continue
        taken[k] = number
        used.add(number)
    out = []
    for k, (members, best) in enumerate(groups):
        if k in taken:
            number = taken[k]
            out.append(Group(number, previous[number][0], tuple(members)))
        else:
            out.append(Group(next_number, best, tuple(members), new=True))
            next_number += 1
    return out
