"""The Reconstruction report (PROTOCOL.md §3; issue 13): what ``manage.py reconstruction_report BENCHMARK --json``
prints, ``/api/benchmarks/<id>/reconstruction/`` returns and the results page shows. The figures come from the pure
statistics (``arena.stats.reconstruction``); this module only reads a benchmark's stored match labels and passes
them in, one row per (hypothesis, judge) in :data:`~arena.stats.reconstruction.LABEL_COLUMNS`.

Recusal. A recused judgment is stored with ``recused=True`` and no label (the import and the judge runs only allow
that for a judge of the proposer's family). It is passed on with its judge family, which is the hypothesis's family,
so ``hypothesis_labels`` drops it as recused: it is *missing*, never a No-match (the placeholder label it carries is
never read). A hypothesis whose every judgment is recused is unlabelled: left out of the rates and counted.

Exclusions. A case (seed, system) with fewer than five valid hypotheses is out of that system's rates (and so of the
controls) and counted in ``labels.excluded_cases``, as the protocol says (PROTOCOL.md §3): a hypothesis stored as
invalid, fewer than five stored (an import may carry fewer slots: the case is excluded all the same), or a proposer
run's answer that stayed invalid after every attempt (nothing stored). A pipeline's case with fewer than five
champions is excluded alike.

Proposers and pipelines. A selection pipeline is a system whose hypotheses were selected from the proposers' (a Swiss
selection's participant, or an imported system whose hypotheses name the one they were ``selected_from``); every
other system is a proposer. The controls (slot and top-5 oracles, the best single model per paper) are built over the
proposers only (``proposers=``), as the paper (App. E) defines them, and each pipeline is sign-tested against the best
single model per paper beside the pairwise tests.

Rules. ``label_rule`` (``"majority"``, the default, or the paper's ``"fraction"``) and ``rate`` (``"pooled"``, the
default, or the paper's ``"paper-mean"``) choose how a hypothesis scores and how a scope's rate is made of its papers
(``arena.stats.reconstruction``); the document's ``method`` names the rules in force.

Swiss selections. ``selections`` lists the benchmark's Swiss selections (their system is a row of the rates like any
proposer) with the champions drawn by lot (``reconstruction.swiss.selection_lots``): a slot whose tournament no vote
decided holds the seeded lot's pick, not a judged winner, and a reader of the selection's rates must know how many.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from arena.errors import NotFoundError
from arena.models import Benchmark

from .models import SLOTS, Hypothesis, MatchLabel, SwissSelection
from .swiss import selection_lots

if TYPE_CHECKING:
    import pandas as pd


#: Bootstrap replicates by default (the protocol's 2,000) and the default seed.
REPORT_REPLICATES = 2000
REPORT_SEED = 0
#: The rules a report may be asked for, default first (``arena.stats.reconstruction.LABEL_RULES`` / ``RATE_RULES``,
#: repeated here so that a page or the API can offer them without importing the statistics).
LABEL_RULES = ("majority", "fraction")
RATE_RULES = ("pooled", "paper-mean")
#: What a non-finite ratio (a rate divided by a rate of 0) is written as: JSON has no infinity.
INFINITY = "inf"


class ReportError(NotFoundError):
    """No report can be made as asked (no labels, inconsistent labels); the message says what to do. A
    :class:`~arena.errors.NotFoundError`: there is nothing to report, so the API answers 404."""


def label_frame(*, benchmark: Benchmark) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The benchmark's stored judgments as a :data:`LABEL_COLUMNS` frame, and counts of what was read.

    ``system_families`` is the hypothesis's model family: a proposer's own; a selection pipeline's champion keeps the
    family of the proposer hypothesis it was selected from, so a judge of the origin's family recuses on it (as the
    paper does), and a pipeline's champions may be of several families. A recused row keeps its judge family (the
    proposer's) and a placeholder label, so that ``hypothesis_labels`` drops it as recused. Raises :class:`ReportError` when a stored recused judgment is not of the proposer's family
    (it would otherwise be counted)."""
    import pandas as pd

    from arena.stats.reconstruction import LABEL_COLUMNS

    rows = (
        MatchLabel.objects.filter(hypothesis__seed__benchmark=benchmark, hypothesis__valid=True)
        .order_by(
            "hypothesis__seed__domain",
            "hypothesis__seed__external_id",
            "hypothesis__participant__name",
            "hypothesis__slot",
            "judge",
            "source",
        )
        .values_list(
            "hypothesis__seed__domain",
            "hypothesis__seed__external_id",
            "hypothesis__participant__name",
            "hypothesis__slot",
            "judge",
            "judge_family",
            "hypothesis__family",
            "label",
            "recused",
            "source",
        )
    )
    records: list[dict[str, Any]] = []
    sources: set[str] = set()
    n_recused = 0
    for domain, paper, system, slot, judge, judge_family, family, label, recused, source in rows:
        sources.add(source)
        if recused:
            n_recused += 1
            if judge_family != family:
                raise ReportError(
                    f"{benchmark}: judge {judge} ({judge_family}) is recorded as recused on {system}'s slot {slot} of {paper}, "
                    f"but that hypothesis is of family {family}; only a judge of the proposer's family recuses"
                )
            label = MatchLabel.Label.NO_MATCH  # placeholder, dropped as recused
        records.append(
            {
                "domain": domain,
                "paper": paper,
                "system": system,
                "slot": slot,
                "judge": judge,
                "judge_family": judge_family,
                "system_families": (family,),
                "label": label,
            }
        )
    frame = pd.DataFrame(records, columns=LABEL_COLUMNS)
    excluded = excluded_cases(benchmark=benchmark)
    if excluded and not frame.empty:
        # A case with fewer than five valid hypotheses is out of the rates for that system, and counted.
        keep = [(paper, system) not in excluded for paper, system in zip(frame["paper"], frame["system"], strict=True)]
        frame = frame[keep].reset_index(drop=True)
    by_system: dict[str, int] = {}
    for _paper, system in excluded:
        by_system[system] = by_system.get(system, 0) + 1
    return frame, {
        "judgments": len(records),
        "recused": n_recused,
        "sources": sorted(sources),
        "excluded_cases": dict(sorted(by_system.items())),
    }


def excluded_cases(*, benchmark: Benchmark) -> set[tuple[str, str]]:
    """(seed external id, system) cases with fewer than five valid hypotheses (the protocol's exclusion): a hypothesis
    stored as invalid (imported with ``"valid": false``), fewer than five stored (imported with fewer slots, or a
    pipeline with fewer champions), or a proposer run's answer that stayed invalid after every attempt (nothing stored
    for that case)."""
    from django.db.models import Count, Q

    from .models import ProposerTask

    counts = (
        Hypothesis.objects.filter(seed__benchmark=benchmark)
        .values("seed__external_id", "participant__name")
        .annotate(valid=Count("id", filter=Q(valid=True)))
    )
    out = {(c["seed__external_id"], c["participant__name"]) for c in counts if c["valid"] < len(SLOTS)}
    stored = {(c["seed__external_id"], c["participant__name"]) for c in counts}
    invalid = ProposerTask.objects.filter(run__benchmark=benchmark, status="done", last_error__startswith="invalid:").values_list(
        "seed__external_id", "participant__name"
    )
    out |= {case for case in invalid if case not in stored}
    return out


def pipelines(*, benchmark: Benchmark) -> set[str]:
    """The names of the benchmark's selection pipelines: the participants of its Swiss selections, and any participant
    with a hypothesis selected from another's (an imported selection)."""
    names = set(SwissSelection.objects.filter(benchmark=benchmark).values_list("participant__name", flat=True))
    names |= set(
        Hypothesis.objects.filter(seed__benchmark=benchmark, origin__isnull=False)
        .values_list("participant__name", flat=True)
        .distinct()
    )
    return names


def swiss_selections(*, benchmark: Benchmark) -> list[dict[str, Any]]:
    """Per Swiss selection of the benchmark: its system, status, tournaments, champions and those drawn by lot."""
    out = []
    for selection in SwissSelection.objects.filter(benchmark=benchmark).select_related("participant").order_by("id"):
        tournaments = list(selection.tournaments.values_list("champion_id", flat=True))
        out.append(
            {
                "system": selection.participant.name,
                "selection": selection.pk,
                "status": selection.status,
                "tournaments": len(tournaments),
                "champions": sum(c is not None for c in tournaments),
                "drawn_by_lot": [{k: lot[k] for k in ("seed", "slot", "votes", "why")} for lot in selection_lots(selection)],
            }
        )
    return out


def count_text(value: float) -> str:
    """A count of the document (``n_matches``, ``n_papers_with_match``) as text: a whole number as it is; a sum of
    fractional scores (the fraction rule) to 3 places without trailing zeros."""
    return str(value) if isinstance(value, int) else f"{value:.3f}".rstrip("0").rstrip(".")


def _finite(value: Any) -> Any:  # noqa: ANN401
    """The document with every infinite float written as :data:`INFINITY` (JSON, strict, has no infinity)."""
    if isinstance(value, float) and math.isinf(value):
        return INFINITY if value > 0 else "-" + INFINITY
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def benchmark_reconstruction_report(
    *,
    benchmark: Benchmark,
    replicates: int = REPORT_REPLICATES,
    seed: int = REPORT_SEED,
    level: float = 0.95,
    label_rule: str = LABEL_RULES[0],
    rate: str = RATE_RULES[0],
) -> dict[str, Any]:
    """Match rates and success@5 per system and domain (and pooled, ``"all"``) with paper-bootstrap intervals, paired
    rate ratios with intervals, exact sign tests over paper rates and the controls (slot and top-5 oracles, best single
    model per paper; over the proposers only) of a Reconstruction benchmark, under ``label_rule`` and ``rate``.

    Preconditions: ``benchmark`` is a Reconstruction benchmark, ``replicates >= 1``, ``label_rule`` in
    :data:`LABEL_RULES` and ``rate`` in :data:`RATE_RULES`. Raises :class:`ReportError` when it has no match label or
    the labels cannot be combined (a judge labelling one hypothesis under two run labels). The document names the
    systems (participants): it is for researchers."""
    from arena.stats.reconstruction import hypothesis_labels, reconstruction_report

    frame, read = label_frame(benchmark=benchmark)
    if frame.empty:
        raise ReportError(
            f"{benchmark} has no match label yet; import labels.jsonl with import_reconstruction (reconstruction/FORMAT.md)"
        )
    try:
        hypotheses = hypothesis_labels(frame)
        selecting = pipelines(benchmark=benchmark)
        report = reconstruction_report(
            hypotheses,
            replicates=replicates,
            seed=seed,
            level=level,
            proposers=sorted(set(hypotheses["system"].astype(str)) - selecting),
            label_rule=label_rule,
            rate=rate,
        )
    except ValueError as exc:
        raise ReportError(f"{benchmark}: {exc}") from None
    read |= {
        "hypotheses": len(hypotheses),
        "unlabelled": int(hypotheses["unlabelled"].sum()),
        "ties": int(hypotheses["tie"].sum()),
        "papers": int(hypotheses[["domain", "paper"]].drop_duplicates().shape[0]),
    }
    report["method"]["exclusion"] = (
        "a case (seed, system) with fewer than five valid hypotheses is left out of the rates and counted "
        "(labels.excluded_cases), imported or generated"
    )
    report["method"]["infinity"] = f'a ratio whose denominator rate is 0 (and numerator > 0) is written "{INFINITY}"'
    return _finite(
        {
            "benchmark": {
                "id": benchmark.pk,
                "name": benchmark.name,
                "version": benchmark.version,
                "protocol": benchmark.protocol,
            },
            "labels": read,
            **report,
            "selections": swiss_selections(benchmark=benchmark),
        }
    )
