#!/usr/bin/env python3
"""Is a ranking change more than noise? Paired comparison of two run.py reports.

usage: compare.py BEFORE.json AFTER.json [--mode hybrid] [--before-mode MODE] [--rounds 20000]

`--before-mode document` with the same file twice compares two modes of one
run (is hybrid above whole-document BM25 by more than noise?).

For each query kind and for all queries: the mean nDCG@10 before and after,
the difference, how many queries rose and fell, and a two-sided paired
randomization p-value (each query's difference flips sign at random;
Smucker, Allan and Carterette 2007 recommend it for IR). A dev difference
with p above 0.05 is not evidence that the change will hold on test.
Standard library only; the seed is fixed so the p-values repeat.
"""
import argparse
import json
import random


def per_query(path, mode):
    report = json.load(open(path, encoding="utf-8"))
    rows = report["modes"][mode]["queries"]
    return {r["query"]: (r["category"], r["ndcg@10"]) for r in rows}


def p_value(diffs, rounds, rng):
    observed = abs(sum(diffs))
    if observed == 0:
        return 1.0
    hits = 0
    for _ in range(rounds):
        if abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (rounds + 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--before-mode", default=None, help="the mode read from BEFORE (default: --mode)")
    ap.add_argument("--rounds", type=int, default=20000)
    a = ap.parse_args()
    before, after = per_query(a.before, a.before_mode or a.mode), per_query(a.after, a.mode)
    common = [q for q in before if q in after]
    if not common:
        raise SystemExit("the two reports share no query: were they run on the same split?")
    kinds = {}
    for q in common:
        kinds.setdefault(before[q][0], []).append(q)
    kinds["all"] = common
    rng = random.Random(7)
    print("| kind | n | before | after | difference | rose / fell | p |")
    print("|---|---|---|---|---|---|---|")
    for kind, qs in kinds.items():
        diffs = [after[q][1] - before[q][1] for q in qs]
        b = sum(before[q][1] for q in qs) / len(qs)
        print(f"| {kind} | {len(qs)} | {b:.3f} | {b + sum(diffs) / len(qs):.3f} | {sum(diffs) / len(qs):+.3f} "
              f"| {sum(d > 1e-9 for d in diffs)} / {sum(d < -1e-9 for d in diffs)} | {p_value(diffs, a.rounds, rng):.3f} |")


if __name__ == "__main__":
    main()
