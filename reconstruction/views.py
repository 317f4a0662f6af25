"""Reconstruction's researcher pages: the seed list of a benchmark, one seed with its frozen bibliography and the
anti-leakage audit (what was excluded or scrubbed, and why), and the results table (match rates, success@5, ratios,
sign tests, oracle controls). Researcher-side only: these pages show the held-out
seed and the original reference ids."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from arena import formatting
from arena.models import Benchmark
from arena.numbers import whole_number
from arena.permissions import researcher_required
from arena.protocol_reports import protocol_benchmark_or_404

from . import leakage
from .models import PROTOCOL, BibliographyFreeze, Hypothesis, SeedPaper, SwissMatch, SwissSelection, SwissTournament, SwissVote
from .reports import (
    LABEL_RULES,
    RATE_RULES,
    REPORT_REPLICATES,
    REPORT_SEED,
    ReportError,
    benchmark_reconstruction_report,
    count_text,
)
from .swiss import UNJUDGED, lot_note, selection_lots


def _benchmark_get(benchmark_id: int) -> Benchmark:
    return protocol_benchmark_or_404(benchmark_id, PROTOCOL)


@require_GET
@researcher_required
def seed_list_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The seeds of a benchmark with their references, eligible counts and freeze state."""
    from django.db.models import Count, Q

    benchmark = _benchmark_get(benchmark_id)
    seeds = (
        SeedPaper.objects.filter(benchmark=benchmark)
        .annotate(
            n_refs=Count("references", distinct=True),
            n_eligible=Count("references", filter=Q(references__eligible=True), distinct=True),
            n_hypotheses=Count("hypotheses", distinct=True),
        )
        .select_related("freeze")
        .order_by("domain", "external_id")
    )
    selections = SwissSelection.objects.filter(benchmark=benchmark).select_related("participant")
    return render(
        request,
        "reconstruction/seed_list.html",
        {"benchmark": benchmark, "seeds": seeds, "min_eligible": leakage.MIN_ELIGIBLE, "selections": selections},
    )


@require_GET
@researcher_required
def seed_page(request: HttpRequest, benchmark_id: int, seed_id: int) -> HttpResponse:
    """One seed: its held-out title and abstract, its frozen bibliography (as every prompt shows it) and the audit."""
    benchmark = _benchmark_get(benchmark_id)
    seed = SeedPaper.objects.filter(benchmark=benchmark, pk=seed_id).first()
    if seed is None:
        raise Http404(f"no seed {seed_id} in {benchmark}")
    freeze = BibliographyFreeze.objects.filter(seed=seed).first()
    references = sorted(seed.references.all(), key=lambda r: (not r.eligible, r.number))
    context = {
        "benchmark": benchmark,
        "seed": seed,
        "freeze": freeze,
        "references": references,
        "n_eligible": sum(r.eligible for r in references),
        "min_eligible": leakage.MIN_ELIGIBLE,
        "thresholds": {"span": leakage.SPAN_N, "jaccard_n": leakage.JACCARD_N, "jaccard_max": leakage.JACCARD_MAX},
    }
    return render(request, "reconstruction/seed.html", context)


def _value(value: Any, digits: int = 3) -> str:  # noqa: ANN401
    """A share or ratio as the document has it: a number to ``digits`` places, ``—`` when missing, ``inf`` kept."""
    return value if isinstance(value, str) else formatting.number(value, digits)


def _interval(ci: list[Any] | None, digits: int = 3) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return formatting.NONE
    return f"[{_value(ci[0], digits)}, {_value(ci[1], digits)}]"


def results_sections(doc: dict[str, Any]) -> dict[str, Any]:
    """The report as rows: one per system (then one per control) with a cell per domain and the pooled scope (match
    rate and success@5 with their intervals, and the counts behind them); one row per scope and pair (rate ratio with
    its interval, the sign test's counts and p)."""
    by_key = {(r["system"], r["domain"]): r for r in doc["rates"]}

    def cells(system: str) -> list[dict[str, Any]]:
        out = []
        for domain in doc["domains"]:
            r = by_key.get((system, domain))
            out.append(
                None
                if r is None
                else r
                | {
                    "rate_text": _value(r["match_rate"]),
                    "rate_ci_text": _interval(r["match_rate_ci"]),
                    "success_text": _value(r["success_at_5"]),
                    "success_ci_text": _interval(r["success_at_5_ci"]),
                    "matches_text": count_text(r["n_matches"]),
                    "papers_text": count_text(r["n_papers_with_match"]),
                }
            )
        return out

    pairs = [
        p
        | {
            "ratio_text": _value(p["ratio"]),
            "ratio_ci_text": _interval(p["ratio_ci"]),
            "p_text": formatting.NONE if p["sign_test"]["p_value"] is None else f"{p['sign_test']['p_value']:.3g}",
        }
        for p in doc["pairs"]
    ]
    return {
        "system_rows": [{"name": s, "cells": cells(s)} for s in doc["systems"]],
        "control_rows": [{"name": c, "cells": cells(c)} for c in doc["controls"]],
        "pair_rows": pairs,
    }


def _choice_option(request: HttpRequest, name: str, choices: tuple[str, ...], problems: list[str]) -> str:
    """A query option among ``choices`` (the first is the default); anything else shows the default and says so in
    ``problems`` (a page shows what it can rather than refusing)."""
    raw = request.GET.get(name, "").strip()
    if raw and raw not in choices:
        problems.append(f"{name} must be one of {', '.join(choices)}, not {raw!r}; showing {choices[0]}.")
    return raw if raw in choices else choices[0]


@require_GET
@researcher_required
def results_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The results table of a benchmark (the document of ``manage.py reconstruction_report --json``, at the default
    replicates and seed, under the rules ``?label_rule=majority|fraction&rate=pooled|paper-mean``, the command's
    ``--label-rule`` and ``--rate``): Match rate and success@5 per system × domain with paper-bootstrap intervals and
    counts, the controls in the same layout, and the paired ratios with exact sign tests. Names the systems:
    researcher-side only."""
    benchmark = _benchmark_get(benchmark_id)
    problems: list[str] = []
    rules = {
        "label_rule": _choice_option(request, "label_rule", LABEL_RULES, problems),
        "rate": _choice_option(request, "rate", RATE_RULES, problems),
    }
    context: dict[str, Any] = {
        "benchmark": benchmark,
        "replicates": REPORT_REPLICATES,
        "seed": REPORT_SEED,
        "rules": rules,
        "label_rules": LABEL_RULES,
        "rate_rules": RATE_RULES,
        "problems": problems,
    }
    try:
        doc = benchmark_reconstruction_report(benchmark=benchmark, replicates=REPORT_REPLICATES, seed=REPORT_SEED, **rules)
    except ReportError as exc:
        context["report_problem"] = str(exc)
    else:
        context |= {"doc": doc, **results_sections(doc)}
    return render(request, "reconstruction/results.html", context)


def _bracket_slot(
    t: SwissTournament, matches: list[SwissMatch], votes: dict[int, list[SwissVote]], hyps: dict[int, Hypothesis]
) -> dict[str, Any]:
    """One slot of the bracket page: its rounds (each match with its votes, points, and why it got none when its
    finalising step recorded that), standings, champion and, when the lot picked it, why."""
    rounds: dict[int, list[dict[str, Any]]] = {}
    unjudged = {mid: UNJUDGED[why] for why, ids in ((t.tie_break or {}).get("unjudged") or {}).items() for mid in ids}
    for m in matches:
        for v in votes.get(m.pk, []):  # the side a vote went to, by its proposer's name
            v.who = {
                "a": hyps[m.a_id].participant.name,
                "b": hyps[m.b_id].participant.name if m.b_id else "",
                "tie": "tie",
            }.get(v.winner, "")
        accepted = [v for v in votes.get(m.pk, []) if v.status == "accepted"]
        va = sum(1.0 if v.winner == "a" else 0.5 if v.winner == "tie" else 0.0 for v in accepted)
        vb = sum(1.0 if v.winner == "b" else 0.5 if v.winner == "tie" else 0.0 for v in accepted)
        rounds.setdefault(m.round, []).append(
            {
                "a": hyps[m.a_id],
                "b": hyps.get(m.b_id) if m.b_id else None,
                "votes": votes.get(m.pk, []),
                "points_a": va / 2,
                "points_b": vb / 2,
                "unjudged": unjudged.get(m.pk, ""),
            }
        )
    return {
        "tournament": t,
        "rounds": sorted(rounds.items()),
        "standings": [r | {"hypothesis": hyps.get(r["candidate"])} for r in t.standings],
        "champion": hyps.get(t.champion_id) if t.champion_id else None,
        "lot": lot_note(t),
    }


@require_GET
@researcher_required
def bracket_page(request: HttpRequest, benchmark_id: int, selection_id: int) -> HttpResponse:
    """A Swiss selection's brackets for one seed (``?seed=<id>``, default the first): per slot, round by round, each
    match with its two candidates (proposer, title), every judge's vote in each order, the points, the bye; then the
    standings with the tie-break rule and the champion. Names the proposers: researcher-side only. One seed a page, so
    the page stays the same size however many seeds the benchmark has. A finished selection's champions drawn by lot
    (no vote cast, or a tie through every rule) are listed at the top for every seed, and marked on their slot."""
    benchmark = _benchmark_get(benchmark_id)
    selection = SwissSelection.objects.filter(benchmark=benchmark, pk=selection_id).select_related("participant").first()
    if selection is None:
        raise Http404(f"no Swiss selection {selection_id} in {benchmark}")
    seed_ids = list(
        SwissTournament.objects.filter(selection=selection)
        .values_list("seed_paper_id", flat=True)
        .distinct()
        .order_by("seed_paper_id")
    )
    seeds = {s.pk: s for s in SeedPaper.objects.filter(pk__in=seed_ids)}
    wanted = request.GET.get("seed", "")
    is_id = whole_number(wanted)
    current = int(wanted) if is_id and int(wanted) in seeds else (seed_ids[0] if seed_ids else None)
    tournaments = list(SwissTournament.objects.filter(selection=selection, seed_paper_id=current).order_by("slot"))
    hyp_ids = {c for t in tournaments for c in t.candidates}
    hyps = {h.pk: h for h in Hypothesis.objects.filter(pk__in=hyp_ids).select_related("participant")}
    matches = list(SwissMatch.objects.filter(tournament__in=tournaments).order_by("round", "id"))
    votes: dict[int, list[SwissVote]] = {}
    for v in SwissVote.objects.filter(match__in=matches).order_by("judge", "order"):
        votes.setdefault(v.match_id, []).append(v)
    slots = [_bracket_slot(t, [m for m in matches if m.tournament_id == t.pk], votes, hyps) for t in tournaments]
    context = {
        "benchmark": benchmark,
        "selection": selection,
        "seeds": [seeds[i] for i in seed_ids],
        "current": seeds.get(current) if current else None,
        "slots": slots,
        # Every seed's champions drawn by lot, not only this page's: a reader must not have to open each seed to find them.
        "lots": selection_lots(selection) if selection.status == SwissSelection.Status.COMPLETED else [],
    }
    return render(request, "reconstruction/bracket.html", context)


@require_http_methods(["GET", "POST"])
@researcher_required
def launch_page(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """Launch a proposer run or start a Swiss selection, with the services the commands use; a refusal is shown on
    its form and nothing is made."""
    from jobs.services import AlreadyLaunched, RunError

    from .forms import ProposerRunForm, SwissSelectionForm
    from .runs import proposer_run_create, proposer_run_launch
    from .swiss import selection_create

    benchmark = _benchmark_get(benchmark_id)
    action = request.POST.get("action", "")
    proposer_form = ProposerRunForm(request.POST if action == "propose" else None, prefix="propose")
    swiss_form = SwissSelectionForm(request.POST if action == "swiss" else None, prefix="swiss")
    if action == "propose" and proposer_form.is_valid():
        d = proposer_form.cleaned_data
        try:
            run = proposer_run_create(
                benchmark=benchmark,
                base_url=d["base_url"],
                proposers=d["proposers"],
                families=d["families"],
                seeds=d["seeds"],
                api_key_env=d["api_key_env"] or None,
                temperature=d["temperature"],
                max_tokens=d["max_tokens"],
                concurrency=d["concurrency"],
                timeout=d["timeout"],
                launched_by=request.user,
            )
            proposer_run_launch(run=run)
        except RunError as exc:
            proposer_form.add_error(None, str(exc))
        else:
            launched = gettext("Proposer run %(id)s launched: %(n)s hypothesis sets to elicit.")
            messages.success(request, launched % {"id": run.pk, "n": run.tasks.count()})
            return redirect("jobs:runs")
    if action == "swiss" and swiss_form.is_valid():
        d = swiss_form.cleaned_data
        try:
            selection = selection_create(
                benchmark=benchmark,
                name=d["name"],
                proposers=d["proposers"],
                seed=d["seed"],
                base_url=d["base_url"],
                judges=[{"model": m, "family": f} for m, f in d["judges"].items()],
                api_key_env=d["api_key_env"] or None,
                concurrency=d["concurrency"],
                timeout=d["timeout"],
            )
        except AlreadyLaunched as exc:
            messages.info(request, f"{exc}.")
            return redirect("reconstruction:bracket", benchmark_id=benchmark.pk, selection_id=exc.run.pk)
        except RunError as exc:
            swiss_form.add_error(None, str(exc))
        else:
            started = gettext("Swiss selection %(name)s started: round %(round)s is being judged.")
            messages.success(request, started % {"name": selection.participant.name, "round": selection.round})
            return redirect("reconstruction:bracket", benchmark_id=benchmark.pk, selection_id=selection.pk)
    return render(
        request, "reconstruction/launch.html", {"benchmark": benchmark, "proposer_form": proposer_form, "swiss_form": swiss_form}
    )
