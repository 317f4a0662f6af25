"""Reconstruction proposer runs (PROTOCOL.md §3; issue 13) on the shared engine's elicitation driver
(``jobs.elicitation``; run kind ``reconstruction_proposer``).

A task is one proposer and one seed with a frozen bibliography and no hypotheses from that proposer yet. The prompt is
the frozen shown text and nothing else (``reconstruction.prompts.render_proposer_task``). An answer is valid when it is
one JSON object with exactly five distinct hypotheses, each with a title, a summary and at least one cited anonymous id
that exists in that seed's frozen bibliography. A malformed answer is asked again with its problems, at most two
retries; what still fails is invalid (recorded on the task with every attempt), no hypothesis is stored, and the seed
counts as excluded for that proposer. A valid answer becomes the proposer's slots 1–5 in the order given, of the
proposer's family (``--families NAME=FAMILY``; by default the participant's name), for the match judges' recusal.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext_noop

from arena.models import Benchmark, Participant
from arena.protocols import protocol_phrase
from jobs.elicitation import ElicitKind, Problems, elicit_launch, elicit_parameters, elicit_problem
from jobs.lifecycle import RunError, api_key_required, asked_by_runs, endpoint_url_required, nothing_to_ask
from jobs.parsing import ParseError, json_object
from jobs.prompts import PROMPTS

from .models import PROTOCOL, BibliographyFreeze, Hypothesis, ProposerRun, ProposerTask, Reference, SeedPaper
from .prompts import HYPOTHESES, PROPOSER_KIND, PROPOSER_V1, render_proposer_task

RUN_KIND = "reconstruction_proposer"
TITLE_MAX, SUMMARY_MAX = 500, 5000
_SPACE = re.compile(r"\W+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip()


def answer_problems(text: str, *, known_ids: set[str]) -> tuple[list[dict[str, Any]] | None, Problems]:
    """The answer's five hypotheses (title, summary, cited) and its problems (empty when valid)."""
    try:
        obj = json_object(text)
    except ParseError as exc:
        return None, [elicit_problem("*", "not_json", str(exc))]
    items = obj.get("hypotheses")
    if not isinstance(items, list):
        return None, [elicit_problem("hypotheses", "schema", 'must be a list of {"title", "summary", "cites"} objects')]
    problems: Problems = []
    if len(items) != HYPOTHESES:
        problems.append(elicit_problem("hypotheses", "count", f"has {len(items)} entries; exactly {HYPOTHESES} were asked for"))
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items[:HYPOTHESES], start=1):
        where = f"hypotheses[{i}]"
        if not isinstance(item, dict):
            problems.append(elicit_problem(where, "schema", "must be an object with title, summary and cites"))
            continue
        title, summary, cites = item.get("title"), item.get("summary"), item.get("cites")
        for key, value, limit in (("title", title, TITLE_MAX), ("summary", summary, SUMMARY_MAX)):
            if not isinstance(value, str) or not value.strip():
                problems.append(elicit_problem(f"{where}.{key}", "empty", "must be non-empty text"))
            elif len(value) > limit:
                problems.append(elicit_problem(f"{where}.{key}", "long", f"has {len(value)} characters; at most {limit}"))
        if not isinstance(cites, list) or not cites or not all(isinstance(c, str) for c in cites):
            problems.append(elicit_problem(f"{where}.cites", "empty", 'must list at least one reference id, e.g. ["R3"]'))
            cites = []
        else:
            unknown = [c for c in cites if c.strip() not in known_ids]
            if unknown:
                problems.append(
                    elicit_problem(
                        f"{where}.cites",
                        "unknown_id",
                        f"cites {', '.join(map(repr, unknown))}, not in this bibliography (its ids are R1 ... as listed)",
                    )
                )
        if isinstance(title, str) and isinstance(summary, str):
            key = _norm(title) + "|" + _norm(summary)
            if key in seen or _norm(title) in {k.split("|")[0] for k in seen}:
                problems.append(
                    elicit_problem(
                        where,
                        "duplicate",
                        f"repeats hypothesis {seen.get(key) or 'with the same title'}; the five must be distinct",
                    )
                )
            seen.setdefault(key, i)
        out.append(
            {
                "title": str(title or "").strip(),
                "summary": str(summary or "").strip(),
                "cited": sorted({c.strip() for c in cites}, key=lambda c: (len(c), c)),
            }
        )
    return out, problems


def _known_ids(seed_id: int) -> set[str]:
    return set(Reference.objects.filter(seed_id=seed_id, eligible=True).values_list("anon_id", flat=True))


def _messages(run: ProposerRun, task: ProposerTask) -> list[dict[str, str]]:
    return render_proposer_task(bibliography=task.seed.freeze.shown_text, template=PROMPTS[run.prompt_version])


def _context(run: ProposerRun, task: ProposerTask) -> set[str]:
    return _known_ids(task.seed_id)


def _check(run: ProposerRun, task: ProposerTask, text: str, known_ids: set[str]) -> tuple[Any, Problems]:
    return answer_problems(text, known_ids=known_ids)


def _store(task: ProposerTask, hypotheses: list[dict[str, Any]]) -> None:
    run = task.run
    family = (run.parameters.get("families") or {}).get(task.participant.name) or task.participant.name
    Hypothesis.objects.bulk_create(
        [
            Hypothesis(seed_id=task.seed_id, participant_id=task.participant_id, family=family, slot=slot, **h)
            for slot, h in enumerate(hypotheses, start=1)
        ]
    )


KIND = ElicitKind(
    run_kind=RUN_KIND,
    title=gettext_noop("Reconstruction proposers"),
    run_model=ProposerRun,
    task_model=ProposerTask,
    related=("seed__freeze", "run"),
    messages=_messages,
    check=_check,
    store=_store,
    subject_field="seed",
    prepare=_context,
)


def proposer_run_create(
    *,
    benchmark: Benchmark,
    base_url: str,
    proposers: list[str],
    families: dict[str, str] | None = None,
    seeds: str = "all",
    api_key_env: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 2000,
    concurrency: int = 8,
    timeout: float = 300.0,
    model_names: dict[str, str] | None = None,
    launched_by: Any = None,  # noqa: ANN401
    lease_seconds: float | None = None,
) -> ProposerRun:
    """A run asking each proposer for five hypotheses on each chosen frozen seed (``all`` or ``domain:NAME``) it has
    none for yet. Proposers are the benchmark's participants by name (created when new). Raises :class:`RunError`
    saying what to fix."""
    names = _proposer_names(
        benchmark=benchmark, base_url=base_url, proposers=proposers, families=families, api_key_env=api_key_env
    )
    chosen, chosen_ids = _frozen_seeds(benchmark=benchmark, seeds=seeds)
    with transaction.atomic():
        # Launches of one benchmark queue here: a form posted twice at once, or a command repeated, sees the first's
        # tasks and asks nothing twice (PostgreSQL; a new proposer's name alone would not make them wait).
        benchmark.lock()
        people = []
        for name in names:
            participant, _ = Participant.objects.get_or_create(benchmark=benchmark, name=name)
            people.append(participant)
        todo = _proposer_todo(chosen_ids=chosen_ids, people=people)
        run = ProposerRun.objects.create(
            benchmark=benchmark,
            prompt_version=PROPOSER_V1,
            launched_by=launched_by,
            parameters=elicit_parameters(
                base_url=base_url,
                api_key_env=api_key_env,
                temperature=temperature,
                max_tokens=max_tokens,
                concurrency=concurrency,
                timeout=timeout,
                lease_seconds=lease_seconds,
                model_names=model_names,
                seeds=seeds,
                families={n: (families or {}).get(n) or n for n in names},
                unfrozen_skipped=chosen.count() - len(chosen_ids),
            ),
        )
        ProposerTask.objects.bulk_create([ProposerTask(run=run, seed_id=s, participant=p) for s, p in todo])
    assert PROMPTS[PROPOSER_V1].kind == PROPOSER_KIND
    return run


def _proposer_names(
    *, benchmark: Benchmark, base_url: str, proposers: list[str], families: dict[str, str] | None, api_key_env: str | None
) -> list[str]:
    """The proposers' names, checked with the run's other settings before anything is read or made; raises
    :class:`RunError` with the first thing to fix."""
    if benchmark.protocol != PROTOCOL:
        raise RunError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a Reconstruction one")
    endpoint_url_required(base_url, what="the proposer run's base URL (--base-url)")
    names = [p.strip() for p in proposers if p.strip()]
    if not names:
        raise RunError("name at least one proposer (--proposers NAME,NAME)")
    if len(set(names)) != len(names):
        raise RunError(f"a proposer is named twice: {', '.join(names)}")
    unknown = sorted(set(families or {}) - set(names))
    if unknown:
        raise RunError(f"--families names {', '.join(unknown)}, which are not proposers of this run")
    api_key_required(api_key_env)
    return names


def _frozen_seeds(*, benchmark: Benchmark, seeds: str) -> tuple[QuerySet[SeedPaper], list[int]]:
    """The seeds chosen (``all`` or ``domain:NAME``) and the ids of those with a frozen bibliography, the only ones a
    proposer is asked about; raises :class:`RunError` when the choice is malformed or no chosen seed is frozen."""
    chosen = SeedPaper.objects.filter(benchmark=benchmark).order_by("id")
    if seeds.startswith("domain:"):
        chosen = chosen.filter(domain=seeds.removeprefix("domain:"))
    elif seeds != "all":
        raise RunError(f"seeds must be 'all' or 'domain:NAME', got {seeds!r}")
    frozen = set(BibliographyFreeze.objects.filter(seed__in=chosen).values_list("seed_id", flat=True))
    chosen_ids = [s for s in chosen.values_list("id", flat=True) if s in frozen]
    if not chosen_ids:
        raise RunError(
            f"{benchmark} has no seed with a frozen bibliography{' in ' + seeds if seeds != 'all' else ''}; freeze bibliographies first"
        )
    return chosen, chosen_ids


def _proposer_todo(*, chosen_ids: list[int], people: list[Participant]) -> list[tuple[int, Participant]]:
    """(seed id, proposer) pairs to ask: those without hypotheses, and not being asked by a run that has not ended (a
    form posted twice, a command repeated); raises :class:`RunError` when there is none, naming the busy runs."""
    existing = set(Hypothesis.objects.filter(seed_id__in=chosen_ids).values_list("seed_id", "participant_id").distinct())
    asking = asked_by_runs(
        task_model=ProposerTask, subject_field="seed", subject_ids=chosen_ids, participant_ids=[p.pk for p in people]
    )
    todo = [(s, p) for s in chosen_ids for p in people if (s, p.pk) not in existing and (s, p.pk) not in asking]
    if not todo:
        raise nothing_to_ask("every chosen seed has hypotheses from these proposers", asking.values(), "proposer run")
    return todo


def proposer_run_launch(*, run: ProposerRun, event: str = "launched") -> None:
    elicit_launch(kind=KIND, run=run, event=event)
