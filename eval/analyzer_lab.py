#!/usr/bin/env python3
"""Analyzer choices for the keyword side, measured on `dev` outside the index.

usage: doc-bm25 INDEX_DIR --dump > docs.jsonl
       python3 eval/analyzer_lab.py docs.jsonl [--split dev] [--kinds ru,mixed]

Whole-document BM25 (text, plus the title at TITLE_WEIGHT) over the
documents the index rebuilds, with the analyzer as a variable: the same
words, joiners and identifiers as adapters/analyzer, then each stemming,
folding, field and parameter choice that README's Quality section lists.
Its `snowball` row equals eval/run.py's `document` mode. Needs the Snowball
stemmers from PyPI (`pip install snowballstemmer`), the same algorithms as
the rust-stemmers crate; the dictionary-lemma rows need `pip install
pymorphy3 pymorphy3-dicts-ru` (OpenCorpora's dictionary) and are left out
without it.
"""
import argparse
import collections
import json
import math
import os
import re

import snowballstemmer

HERE = os.path.dirname(os.path.abspath(__file__))
EN = snowballstemmer.stemmer("english")
RU = snowballstemmer.stemmer("russian")
try:
    import pymorphy3
    MORPH = pymorphy3.MorphAnalyzer()
except ImportError:
    MORPH = None
JOINERS = set("_-.:/#+")
RU_STOP = set("""и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот
от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам ведь там
потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под
будет ж тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем
всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве три
эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между который
которая которое которые которого которой которых которым""".split())


def is_word_char(c):
    return c.isalnum() or 0x300 <= ord(c) <= 0x36F


def cyrillic(w):
    return any(0x400 <= ord(c) <= 0x4FF for c in w)


def analyzer(stem="snowball", fold_yo=True, surface=False, prefix=0):
    """Terms of a text; `stem`: snowball, none, light or prefix5."""
    cache = {}

    def word_terms(w):
        if w in cache:
            return cache[w]
        f = w.lower()
        if fold_yo:
            f = f.replace("ё", "е")
        if cyrillic(f):
            s = {"snowball": RU.stemWord(f), "none": f, "prefix5": f[:5]}.get(stem)
            if stem in ("lemma", "lemma_stem", "lemma_and_stem"):
                lemma = MORPH.parse(f)[0].normal_form.replace("ё", "е")
                s = lemma if stem == "lemma" else RU.stemWord(lemma)
            if stem == "light":
                s = RU.stemWord(f)
                s = s if len(f) - len(s) <= 3 else f[:-3]
        elif any("a" <= c <= "z" for c in f) and stem != "none":
            s = EN.stemWord(f)
        else:
            s = f
        out = [s]
        if stem == "lemma_and_stem" and RU.stemWord(f) != s:
            out.append(RU.stemWord(f))
        if surface and s != f:
            out.append("=" + f)
        if prefix and cyrillic(f) and len(f) > prefix:
            out.append("~" + f[:prefix])
        cache[w] = out
        return out

    def terms(text):
        out = []
        for raw in text.split():
            i, j = 0, len(raw)
            while i < j and not is_word_char(raw[i]):
                i += 1
            while j > i and not is_word_char(raw[j - 1]):
                j -= 1
            token = raw[i:j]
            if not token:
                continue
            parts = [p for p in re.split(r"[^\w\u0300-\u036f]|_", token) if p]
            if any(c in JOINERS for c in token) and len(parts) > 1:
                whole = token.lower()
                out.append(whole.replace("ё", "е") if fold_yo else whole)
            for p in parts:
                out.extend(word_terms(p))
        return out

    return terms


class Bm25:
    def __init__(self, docs, terms, fields):
        self.docs, self.terms, self.fields = docs, terms, {}
        for name, get in fields.items():
            postings, lengths = collections.defaultdict(list), []
            for i, d in enumerate(docs):
                ts = terms(get(d))
                lengths.append(len(ts))
                for t, n in collections.Counter(ts).items():
                    postings[t].append((i, n))
            self.fields[name] = (postings, lengths, sum(lengths) / max(1, len(lengths)))

    def rank(self, query, weights, k1=1.2, b=0.75, term_weight=lambda t: 1.0):
        n, acc = len(self.docs), collections.defaultdict(float)
        for t in dict.fromkeys(self.terms(query)):
            for name, w in weights.items():
                postings, lengths, avg = self.fields[name]
                pl = postings.get(t)
                if not pl:
                    continue
                idf = math.log(1 + (n - len(pl) + 0.5) / (len(pl) + 0.5))
                for i, tf in pl:
                    norm = tf + k1 * (1 - b + b * lengths[i] / avg)
                    acc[i] += w * term_weight(t) * idf * tf * (k1 + 1) / norm
        return [self.docs[i]["source"] for i, _ in sorted(acc.items(), key=lambda x: -x[1])[:30]]


def ndcg(ranked, relevant):
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    return dcg / sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docs")
    ap.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    ap.add_argument("--kinds", default=None, help="only these query kinds, comma-separated")
    a = ap.parse_args()
    corpus = os.path.join(HERE, "corpus")
    docs = [json.loads(line) for line in open(a.docs, encoding="utf-8")]
    for d in docs:
        d["source"] = os.path.relpath(d["source"], corpus)
        d["name"] = re.sub(r"\.(html|txt|md|pdf|docx)$", "", os.path.basename(d["source"]))
    queries = []
    for line in open(os.path.join(HERE, "queries.tsv"), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        kind, q, rel, split = line.rstrip("\n").split("\t")
        if a.split in ("all", split) and (not a.kinds or kind in a.kinds.split(",")):
            queries.append((kind, q, set(rel.split(","))))
    text_title = {"text": lambda d: d["text"], "title": lambda d: d["title"]}
    with_name = dict(text_title, name=lambda d: d["name"])
    tw = {"text": 1, "title": 0.5}
    drop_stop = lambda q: " ".join(w for w in q.split() if w.strip(",.:?!").lower().replace("ё", "е") not in RU_STOP)
    rows = [
        ("Snowball EN + RU, ё→е (today)", dict(), text_title, tw, {}, None),
        ("no stemming", dict(stem="none"), text_title, tw, {}, None),
        ("dictionary lemma (pymorphy3)", dict(stem="lemma"), text_title, tw, {}, None),
        ("Snowball stem of the dictionary lemma", dict(stem="lemma_stem"), text_title, tw, {}, None),
        ("stem of the lemma and stem of the word", dict(stem="lemma_and_stem"), text_title, tw, {}, None),
        ("stem and surface form both indexed", dict(surface=True), text_title, tw, {}, None),
        ("lighter Russian stemmer (at most 3 letters cut)", dict(stem="light"), text_title, tw, {}, None),
        ("5-letter prefix instead of the stem", dict(stem="prefix5"), text_title, tw, {}, None),
        ("stem plus a 7-letter prefix key at 0.2", dict(prefix=7), text_title, tw,
         dict(term_weight=lambda t: 0.2 if t.startswith("~") else 1.0), None),
        ("ё not folded", dict(fold_yo=False), text_title, tw, {}, None),
        ("b 0.5", dict(), text_title, tw, dict(b=0.5), None),
        ("b 0.9", dict(), text_title, tw, dict(b=0.9), None),
        ("k1 0.9, b 0.4 (Anserini's default)", dict(), text_title, tw, dict(k1=0.9, b=0.4), None),
        ("k1 2.0", dict(), text_title, tw, dict(k1=2.0), None),
        ("title weight 1.0", dict(), text_title, {"text": 1, "title": 1.0}, {}, None),
        ("title weight 0.3", dict(), text_title, {"text": 1, "title": 0.3}, {}, None),
        ("file-name words as a field at 0.5", dict(), with_name, dict(tw, name=0.5), {}, None),
        ("Russian stop words dropped from queries", dict(), text_title, tw, {}, drop_stop),
    ]
    if MORPH is None:
        rows = [r for r in rows if not r[1].get("stem", "").startswith("lemma")]
    built = {}
    print("| analyzer choice | " + " | ".join(sorted({k for k, _, _ in queries})) + " | all |")
    for label, opts, fields, weights, params, rewrite in rows:
        key = (json.dumps(opts, sort_keys=True), tuple(fields))
        if key not in built:
            built[key] = Bm25(docs, analyzer(**opts), fields)
        index = built[key]
        per = collections.defaultdict(list)
        for kind, q, rel in queries:
            per[kind].append(ndcg(index.rank(rewrite(q) if rewrite else q, weights, **params), rel))
        every = [v for vs in per.values() for v in vs]
        cells = " | ".join(f"{sum(per[k]) / len(per[k]):.3f}" for k in sorted(per))
        print(f"| {label} | {cells} | {sum(every) / len(every):.3f} |", flush=True)


if __name__ == "__main__":
    main()
