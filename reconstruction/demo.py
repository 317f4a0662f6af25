"""A small synthetic Reconstruction benchmark made by a seeded generator, so that ``make demo`` shows its pages.

What is generated (constants of this module): :data:`DOMAINS` (two), :data:`SEEDS_PER_DOMAIN` seeds each, dated
T0 in 2024. Each seed has :data:`CLEAN_REFS` clean references dated before T0 plus leaking ones built to be caught
by the audit (:data:`LEAKS`): one the same day as T0, one undated, one after T0, one repeating the seed's abstract,
and one clean reference with a DOI and a URL in its abstract (scrubbed, still shown). The last seed of each domain
instead has one clean reference (two eligible with the scrubbed one), so it is not frozen (too few eligible). :data:`SYSTEMS` three proposers
(synthetic names) give five hypotheses per frozen seed, each citing an eligible reference; two judge families
(:data:`JUDGES`) label every valid hypothesis, recusing on their own family's. A hypothesis "matches" with a seeded
probability per system (:data:`MATCH_P`), and each judge agrees with that truth with probability :data:`AGREE`.

The generator writes the files of ``FORMAT.md`` and imports them: a second run imports the same lines and changes
nothing.
"""

from __future__ import annotations

import random
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write

from .importing import ImportSummary, import_files, reconstruction_import

DEMO_NAME = "reconstruction-demo"
SEED = 20260413
DOMAINS = ("materials", "neuroscience")
SEEDS_PER_DOMAIN = 3
CLEAN_REFS = 6
LEAKS = ("same-day", "undated", "after", "repeats-abstract", "doi-in-text")
#: (model, family)
SYSTEMS: tuple[tuple[str, str], ...] = (("Aster-L", "aster"), ("Birch-M", "birch"), ("Cedar-S", "cedar"))
MATCH_P = {"Aster-L": 0.3, "Birch-M": 0.15, "Cedar-S": 0.08}
#: (judge model, judge family, run label): Birch-J recuses on Birch-M's hypotheses.
JUDGES: tuple[tuple[str, str, str], ...] = (("Oak-J", "oak", "demo-match-1"), ("Birch-J", "birch", "demo-match-2"))
AGREE = 0.9
_WORDS = {
    "materials": (
        "perovskite",
        "grain boundary",
        "dopant",
        "annealing",
        "lattice strain",
        "ionic conductivity",
        "thin film",
        "defect density",
    ),
    "neuroscience": (
        "hippocampal",
        "place cell",
        "replay",
        "dopamine",
        "cortical layer",
        "spike timing",
        "synaptic scaling",
        "oscillation",
    ),
}


def _sentence(rng: random.Random, domain: str, n: int = 14) -> str:
    words = _WORDS[domain]
    return (
        " ".join(
            rng.choice(words)
            if i % 3 == 0
            else rng.choice(("of", "in", "shows", "with", "under", "for", "and", "affects", "the", "a"))
            + f" w{rng.randint(1, 999)}"
            for i in range(n)
        ).capitalize()
        + "."
    )


def demo_files(directory: Path, *, seed: int = SEED) -> None:
    """Write the demo's files into ``directory``."""
    rng = random.Random(seed)
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in ("seeds", "references", "hypotheses", "labels")}
    for domain in DOMAINS:
        for i in range(SEEDS_PER_DOMAIN):
            seed_id = f"{domain[:3]}-{i + 1}"
            t0 = date(2024, 1, 1) + timedelta(days=rng.randint(0, 300))
            title = f"{_WORDS[domain][i].capitalize()} controls {rng.choice(_WORDS[domain])} in {domain} systems {seed_id}"
            abstract = " ".join(_sentence(rng, domain) for _ in range(4))
            rows["seeds"].append(
                {"seed_id": seed_id, "domain": domain, "title": title, "abstract": abstract, "t0": t0.isoformat()}
            )
            starved = i == SEEDS_PER_DOMAIN - 1
            refs: list[dict[str, Any]] = []
            for j in range(1 if starved else CLEAN_REFS):
                refs.append(
                    {
                        "ref_id": f"W{seed_id}-{j}",
                        "title": _sentence(rng, domain, 6),
                        "abstract": _sentence(rng, domain),
                        "published": (t0 - timedelta(days=rng.randint(30, 2000))).isoformat(),
                    }
                )
            for leak in LEAKS:
                ref = {
                    "ref_id": f"W{seed_id}-{leak}",
                    "title": _sentence(rng, domain, 6),
                    "abstract": _sentence(rng, domain),
                    "published": (t0 - timedelta(days=90)).isoformat(),
                }
                if leak == "same-day":
                    ref["published"] = t0.isoformat()
                elif leak == "undated":
                    ref["published"] = None
                elif leak == "after":
                    ref["published"] = (t0 + timedelta(days=40)).isoformat()
                elif leak == "repeats-abstract":
                    ref["abstract"] = "We extend: " + abstract
                elif leak == "doi-in-text":
                    ref["abstract"] += (
                        f" Available at https://example.org/{seed_id} (doi:10.1234/demo.{seed_id}); see Smith et al. in NeurIPS 2021."
                    )
                refs.append(ref)
            # The references the audit keeps are numbered first (R1..Rk), as the import numbers those it draws: a gap
            # in the shown ids would tell that references were excluded.
            kept = [r["ref_id"].split("-")[-1].isdigit() or r["ref_id"].endswith("doi-in-text") for r in refs]
            low, high = list(range(1, sum(kept) + 1)), list(range(sum(kept) + 1, len(refs) + 1))
            rng.shuffle(low)
            rng.shuffle(high)
            numbers = [(low if k else high).pop() for k in kept]
            for ref, n in zip(refs, numbers, strict=True):
                rows["references"].append({"seed_id": seed_id, "anon_id": f"R{n}"} | ref)
            if starved:
                continue
            eligible = [f"R{n}" for k, n in zip(kept, numbers, strict=True) if k]
            for model, family in SYSTEMS:
                for slot in range(1, 6):
                    truth = rng.random() < MATCH_P[model]
                    rows["hypotheses"].append(
                        {
                            "seed_id": seed_id,
                            "model": model,
                            "family": family,
                            "slot": slot,
                            "title": f"{model} idea {slot} for {seed_id}",
                            "summary": _sentence(rng, domain),
                            "cited": sorted(rng.sample(eligible, 2), key=lambda a: int(a[1:])),
                        }
                    )
                    for judge, judge_family, label in JUDGES:
                        line = {
                            "seed_id": seed_id,
                            "model": model,
                            "slot": slot,
                            "judge": judge,
                            "judge_family": judge_family,
                            "run_label": label,
                        }
                        if judge_family == family:
                            rows["labels"].append(line | {"recused": True, "label": None})
                        else:
                            said = truth if rng.random() < AGREE else not truth
                            rows["labels"].append(
                                line
                                | {
                                    "label": "match" if said else "no_match",
                                    "reason": "same mechanism" if said else "different idea",
                                }
                            )
    for kind, records in rows.items():
        jsonl_write(directory / f"{kind}.jsonl", records)


def demo_build(*, seed: int = SEED, name: str = DEMO_NAME) -> ImportSummary:
    """Generate the demo's files and import them (idempotent)."""
    with tempfile.TemporaryDirectory() as tmp:
        demo_files(Path(tmp), seed=seed)
        return reconstruction_import(
            name=name,
            files=import_files(Path(tmp)),
            description="Synthetic Reconstruction demo (reconstruction/demo.py); no real paper.",
        )


#: The demo's Swiss selection: its name (the selection system), its judges (model, family) and the word on every run.
DEMO_SELECTION = "Swiss-ABC"
SWISS_JUDGES: tuple[tuple[str, str], ...] = (("Oak-J", "oak"), ("Birch-J", "birch"))
HEURISTIC = "demo-heuristic (not a language model)"


def demo_swiss(*, name: str = DEMO_NAME, seed: int = SEED) -> str:
    """A Swiss selection among the demo's three proposers, judged round by round by a seeded heuristic instead of a
    model (the candidate whose hypothesis "matches" more often in the demo's labels wins, ties by a seeded coin), so the
    bracket page and the selection's row in the results have something to show. Each round's votes belong to one
    completed run per judge labelled :data:`HEURISTIC`; the same pairing and finalising code as a real selection
    (``reconstruction.swiss.round_pair``) moves it on. The champions inherit their origin's demo labels. Idempotent:
    returns what it did."""
    from django.db import transaction

    from arena.models import Benchmark, JudgeRun

    from .judging import SWISS_KIND, _swiss_matches, swiss_eligible
    from .models import Hypothesis, MatchLabel, SwissSelection, SwissVote
    from .swiss import round_pair, selection_create

    benchmark = Benchmark.objects.filter(name=name).order_by("-id").first()
    if benchmark is None:
        return "no demo benchmark"
    if SwissSelection.objects.filter(benchmark=benchmark).exists():
        return "nothing new: the demo selection exists"
    rng = random.Random(seed)
    with transaction.atomic():
        selection = selection_create(
            benchmark=benchmark,
            name=DEMO_SELECTION,
            proposers=[m for m, _ in SYSTEMS],
            seed=seed % 1000,
            launch=False,
            judges=[{"model": j, "family": f} for j, f in SWISS_JUDGES],
            provider=JudgeRun.Provider.RECORDED,
        )
        selection = SwissSelection.objects.select_for_update().get(pk=selection.pk)
        matches_of = {
            h.pk: sum(lab.label == MatchLabel.Label.MATCH for lab in h.labels.all())
            for h in Hypothesis.objects.filter(seed__benchmark=benchmark).prefetch_related("labels")
        }
        while round_pair(selection):
            matches = _swiss_matches(selection=selection.pk, round_no=selection.round)
            for judge, family in SWISS_JUDGES:
                mine = swiss_eligible(matches, family)
                if not mine:
                    continue
                run = JudgeRun.objects.create(
                    benchmark=benchmark,
                    label=f"swiss-{selection.pk}-round-{selection.round}-{judge}",
                    run_type="swiss",
                    judge_model=judge,
                    provider=JudgeRun.Provider.RECORDED,
                    prompt_version="",
                    status=JudgeRun.Status.COMPLETED,
                    subjects=SWISS_KIND,
                    parameters={
                        "options": {"selection": selection.pk, "round": selection.round, "judge_family": family},
                        "note": HEURISTIC,
                    },
                )
                votes = []
                for m in mine:
                    for order in ("original", "reverse"):
                        diff = matches_of[m.a_id] - matches_of[m.b_id]
                        winner = "a" if diff > 0 else "b" if diff < 0 else rng.choice(("a", "b", "tie"))
                        shown = {"original": {"a": "A", "b": "B"}, "reverse": {"a": "B", "b": "A"}}[order]
                        votes.append(
                            SwissVote(
                                run=run,
                                match=m,
                                order=order,
                                judge=judge,
                                verdict=shown.get(winner, "TIE"),
                                winner=winner,
                                reason=HEURISTIC,
                            )
                        )
                SwissVote.objects.bulk_create(votes)
        champions = Hypothesis.objects.filter(participant=selection.participant).select_related("origin")
        labels = {
            h.pk: list(h.labels.all())
            for h in Hypothesis.objects.filter(pk__in=[c.origin_id for c in champions]).prefetch_related("labels")
        }
        MatchLabel.objects.bulk_create(
            [
                MatchLabel(
                    hypothesis=c,
                    source=f"{lab.source}-champions",
                    judge=lab.judge,
                    judge_family=lab.judge_family,
                    label=lab.label,
                    recused=lab.recused,
                    reason=lab.reason,
                )
                for c in champions
                for lab in labels[c.origin_id]
            ]
        )
    return f"Swiss selection {DEMO_SELECTION}: {selection.tournaments.count()} tournaments, {champions.count()} champions ({HEURISTIC})"
