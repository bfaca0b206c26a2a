"""Max-flow between two sets of leaves of a (fat-tree) switch fabric, in time linear in its links.

The invariants prove a non-blocking backend by the max-flow from the first half of its leaves to the
second half. networkx's preflow-push took 2.8 s (and its import ~0.3 s) of a 98,304-GPU compile; this
module finds the same number from the tree's structure and proves it exact:

1. a feasible flow routed up and down the tiers (leaf 0, spine 1, core 2): bottom-up, each switch
   matches the supply its children offer against the demand they can take and offers the rest upwards,
   spread over its uplinks in proportion to their capacity (never more than an uplink holds); top-down,
   each switch scales what its children offered by the share it used. Exact rational arithmetic, and
   every link's flow is its capacity times a per-switch factor, so the work is one pass over the links;
2. optimality: no augmenting path from the source to the sink in the residual graph (one breadth-first
   search; with the per-switch factors each link's residual test is two comparisons). By max-flow
   min-cut the flow is then maximum.
When the fabric is not a clean tiered tree (a link within a tier or skipping one, a switch of another
role) or the proof finds an augmenting path (an irregular fabric, e.g. with missing uplinks, can need a
path that bounces through another leaf), networkx's max-flow answers instead, so the result is always
the exact max-flow. tests/test_bisection.py checks both against networkx on shipped and broken fabrics.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction

TIER = {"leaf": 0, "spine": 1, "core": 2}


class CapacityGraph:
    """Switch-level undirected graph: parallel links merged into one edge of summed capacity (Gbps).
    Nodes and edges keep first-seen order."""

    def __init__(self) -> None:
        self.adj: dict[str, dict[str, int]] = {}

    def add(self, a: str, b: str, capacity: int) -> None:
        row = self.adj.setdefault(a, {})
        row[b] = row.get(b, 0) + capacity
        other = self.adj.setdefault(b, {})
        other[a] = row[b]

    def edges(self) -> list[tuple[str, str, int]]:
        seen: set[str] = set()
        out = []
        for a, row in self.adj.items():
            out += [(a, b, c) for b, c in row.items() if b not in seen]
            seen.add(a)
        return out

    def components(self) -> list[set[str]]:
        """Connected components (union-find)."""
        parent = {n: n for n in self.adj}

        def root(n: str) -> str:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for a, row in self.adj.items():
            for b in row:
                ra, rb = root(a), root(b)
                if ra != rb:
                    parent[rb] = ra
        parts: dict[str, set[str]] = {}
        for n in self.adj:
            parts.setdefault(root(n), set()).add(n)
        return list(parts.values())


def max_flow(g: CapacityGraph, sources: dict[str, int], sinks: dict[str, int], tier: dict[str, int]) -> int:
    """Max-flow from a super-source feeding each source leaf its capacity to a super-sink fed by each
    sink leaf (each link carrying up to its capacity in each direction), exact."""
    fast = _tree_flow(g, sources, sinks, tier)
    return fast if fast is not None else networkx_max_flow(g, sources, sinks)


def networkx_max_flow(g: CapacityGraph, sources: dict[str, int], sinks: dict[str, int]) -> int:
    """The same max-flow by networkx's preflow-push, as the invariants computed it before: the fallback,
    and the tests' cross-check."""
    import networkx as nx  # only here: the compile path does not import networkx otherwise

    flow: nx.DiGraph[str] = nx.DiGraph()
    for u, v, c in g.edges():
        flow.add_edge(u, v, capacity=c)
        flow.add_edge(v, u, capacity=c)
    for leaf, c in sources.items():
        flow.add_edge("_src", leaf, capacity=c)
    for leaf, c in sinks.items():
        flow.add_edge(leaf, "_dst", capacity=c)
    return int(nx.maximum_flow_value(flow, "_src", "_dst", flow_func=nx.algorithms.flow.preflow_push))


def _tree_flow(g: CapacityGraph, sources: dict[str, int], sinks: dict[str, int], tier: dict[str, int]) -> int | None:
    """The flow of the module docstring, or None when it is not provably maximum."""
    nodes = set(g.adj) | set(sources) | set(sinks)
    if any(n not in tier for n in nodes) or set(sources) & set(sinks):
        return None
    parents: dict[str, list[tuple[str, int]]] = {n: [] for n in nodes}
    children: dict[str, list[tuple[str, int]]] = {n: [] for n in nodes}
    for a, row in g.adj.items():
        for b, c in row.items():
            step = tier[b] - tier[a]
            if step == 1:
                parents[a].append((b, c))
                children[b].append((a, c))
            elif step != -1:
                return None  # a link within a tier or across two: not a tiered tree
    levels: dict[int, list[str]] = {}
    for n in sorted(nodes, key=lambda n: tier[n]):
        levels.setdefault(tier[n], []).append(n)
    order = [n for t in sorted(levels) for n in levels[t]]

    # 1. offers, bottom-up: supply s_in from below, demand d_in deliverable below, matched m; each uplink
    # carries c * rho (supply) up and c * pi (demand) down
    s_in: dict[str, Fraction] = {}
    d_in: dict[str, Fraction] = {}
    rho, pi = _Factors(), _Factors()
    matched: dict[str, Fraction] = {}
    for n in order:
        s = Fraction(sources.get(n, 0)) + rho.weighted(children[n])
        d = Fraction(sinks.get(n, 0)) + pi.weighted(children[n])
        m = min(s, d)
        up = sum(c for _, c in parents[n])
        s_in[n], d_in[n], matched[n] = s, d, m
        rho[n] = min(Fraction(1), (s - m) / up) if up else Fraction(0)
        pi[n] = min(Fraction(1), (d - m) / up) if up else Fraction(0)
    # 2. use, top-down: alpha (beta) is the share of the supply (demand) offered into a switch that is used
    alpha, beta = _Factors(), _Factors()
    for n in reversed(order):
        used_s = matched[n] + rho[n] * alpha.weighted(parents[n])
        used_d = matched[n] + pi[n] * beta.weighted(parents[n])
        alpha[n] = used_s / s_in[n] if s_in[n] else Fraction(1)
        beta[n] = used_d / d_in[n] if d_in[n] else Fraction(1)
    value = sum(matched.values(), Fraction(0))
    # 3. optimality: breadth-first search of the residual graph from the super-source. Flow on the link
    # child c - parent p: up c * rho[c] * alpha[p], down c * pi[c] * beta[p]; all factors are in [0, 1]
    up_full = {n: rho[n] == 1 for n in nodes}  # rho * alpha == 1 needs both at 1
    used_all = {n: alpha[n] == 1 for n in nodes}
    down_full = {n: pi[n] == 1 for n in nodes}
    served_all = {n: beta[n] == 1 for n in nodes}
    up_some = {n: rho[n] > 0 for n in nodes}
    used_some = {n: alpha[n] > 0 for n in nodes}
    down_some = {n: pi[n] > 0 for n in nodes}
    served_some = {n: beta[n] > 0 for n in nodes}
    seen = {n for n, c in sources.items() if c and not used_all[n]}  # src -> leaf not saturated
    queue = deque(seen)
    while queue:
        u = queue.popleft()
        if sinks.get(u) and not served_all[u]:
            return None  # leaf -> sink not saturated: an augmenting path
        for p, _ in parents[u]:  # up u -> p: spare capacity, or down flow p -> u to cancel
            if p not in seen and (not (up_full[u] and used_all[p]) or (down_some[u] and served_some[p])):
                seen.add(p)
                queue.append(p)
        for ch, _ in children[u]:  # down u -> ch
            if ch not in seen and (not (down_full[ch] and served_all[u]) or (up_some[ch] and used_some[u])):
                seen.add(ch)
                queue.append(ch)
    if value.denominator != 1:
        return None  # cannot be, integer capacities have an integer max-flow; networkx then says so
    return int(value)


class _Factors(dict[str, Fraction]):
    """Per-switch factors, each also numbered by value: a fat tree's switches share a handful of values,
    so a sum over links adds integer capacities per value and multiplies once per value (Fraction
    arithmetic, or hashing a Fraction, per link would dominate the run)."""

    def __init__(self) -> None:
        super().__init__()
        self.cls: dict[str, int] = {}
        self.number: dict[Fraction, int] = {}
        self.distinct: list[Fraction] = []  # the values by number (not `values`: dict's method)

    def __setitem__(self, n: str, f: Fraction) -> None:
        super().__setitem__(n, f)
        k = self.number.get(f)
        if k is None:
            k = self.number[f] = len(self.distinct)
            self.distinct.append(f)
        self.cls[n] = k

    def weighted(self, links: list[tuple[str, int]]) -> Fraction:
        """Sum of capacity * factor[node] over links."""
        by: dict[int, int] = {}
        cls = self.cls
        for n, c in links:
            k = cls[n]
            by[k] = by.get(k, 0) + c
        return sum((self.distinct[k] * c for k, c in by.items()), Fraction(0))
