"""HypoArena generation runs: each participant proposes K hypothesis–evidence pairs for each case, on the shared run
engine (run kind ``hypoarena_generation``; ``jobs.elicitation.elicit_kind_register``).

The engine's elicitation driver (``jobs.elicitation``) claims, leases, heartbeats, limits and counts calls as for
Lit2Test's generation runs; this module says what a task is (a case and a participant without a submission yet), what is asked
(the case's context, never its reference conclusion, and how many pairs), how an answer is checked (the import's own
schema, ``hypoarena.services.pairs_problems``, plus exactly K pairs) and where it goes (a ``Submission``). A malformed
answer is asked again, at most ``jobs.services.MAX_PARSE_ATTEMPTS`` answers in all (two retries); what still fails is
recorded as invalid on its task with every attempt and its problems, and no submission is made. When the run ends,
the new submissions are paired into matches with the benchmark's seeded orientation, as an import pairs them.

K is a run parameter (default :data:`DEFAULT_K`); a singleton domain always asks for exactly one pair. The
source-derived Reference is never generated.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from arena.models import Benchmark, Participant
from arena.protocols import protocol_phrase
from jobs.elicitation import ElicitKind, elicit_launch, elicit_parameters
from jobs.lifecycle import RunError, api_key_required, asked_by_runs, endpoint_url_required, nothing_to_ask
from jobs.parsing import ParseError, json_object
from jobs.prompts import PROMPTS, PromptTemplate

from .models import PROTOCOL, Case, GenerationRun, GenerationTask, Match, Submission
from .prompts import render_case
from .services import match_orientation, pairs_problems

RUN_KIND = "hypoarena_generation"
GENERATION_V1 = "hypoarena-generation-v1"
GENERATION_KIND = "hypoarena-generation"  # not "generation": a Lit2Test generation run must never pick this template
DEFAULT_K = 3

GENERATION_SYSTEM_V1 = """You are a careful analyst. Read the case: it describes a situation whose conclusion is hidden.
Propose hypotheses that could explain it, each with the evidence from the case that supports it.
Answer with one JSON object and nothing else, with exactly the number of pairs asked for:
{"pairs": [{"hypothesis": "a specific, testable explanation", "evidence": "the facts of the case that support it"}, ...]}"""

TEMPLATE = PromptTemplate(GENERATION_V1, GENERATION_KIND, GENERATION_SYSTEM_V1)


def render_generation_task(*, case: Case, k: int, template: PromptTemplate) -> list[dict[str, str]]:
    user = f"{render_case(case)}\n=== END ===\n\nPropose exactly {k} hypothesis-evidence pair{'s' if k != 1 else ''} as JSON."
    return [{"role": "system", "content": template.system}, {"role": "user", "content": user}]


def answer_problems(text: str, *, k: int, singleton: bool) -> tuple[list[Any] | None, list[dict[str, str]]]:
    """The answer's pairs and its schema problems (empty when valid): a JSON object whose ``pairs`` pass the import's
    checks and number exactly ``k``."""
    try:
        obj = json_object(text)
    except ParseError as exc:
        return None, [{"field": "*", "code": "not_json", "message": str(exc)}]
    pairs = obj.get("pairs")
    problems = [{"field": f, "code": "schema", "message": m} for f, m in pairs_problems(pairs, singleton=singleton)]
    if isinstance(pairs, list) and len(pairs) != k and not (singleton and problems):
        problems.append({"field": "pairs", "code": "count", "message": f"has {len(pairs)} pairs; exactly {k} were asked for"})
    return pairs, problems


def _references(benchmark: Benchmark) -> set[str]:
    return set(
        Submission.objects.filter(case__benchmark=benchmark, is_reference=True).values_list("participant__name", flat=True)
    )


def generation_run_create(
    *,
    benchmark: Benchmark,
    base_url: str,
    participants: list[str] | None = None,
    cases: str = "all",
    k: int = DEFAULT_K,
    api_key_env: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 1600,
    concurrency: int = 8,
    timeout: float = 300.0,
    model_names: dict[str, str] | None = None,
    prompt_version: str = GENERATION_V1,
    launched_by: Any = None,
    lease_seconds: float | None = None,  # noqa: ANN401
) -> GenerationRun:
    """A run that asks each participant (by default every one but the Reference) for K pairs on each chosen case
    (``all`` or ``domain:NAME``) it has no submission for yet, nor a run not ended asking for one (a command repeated, two
    at once: the benchmark's lock makes the second wait for the first and see its tasks). Raises :class:`RunError`
    saying what to fix, or naming the runs asking when there is nothing to ask."""
    if benchmark.protocol != PROTOCOL:
        raise RunError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark; generate its proposals with run_generation"
        )
    template = PROMPTS.get(prompt_version)
    if template is None or template.kind != GENERATION_KIND:
        raise RunError(f"no HypoArena generation prompt template {prompt_version!r}; the current one is {GENERATION_V1}")
    if not 1 <= k <= 20:
        raise RunError(f"K must be between 1 and 20 pairs, got {k}")
    base_url = endpoint_url_required(base_url, what="the generation run's base URL (--base-url)")
    api_key_required(api_key_env)
    references = _references(benchmark)
    people = list(benchmark.participants.order_by("name"))
    if participants:
        unknown = sorted(set(participants) - {p.name for p in people})
        if unknown:
            raise RunError(f"not participants of {benchmark}: {', '.join(unknown)}")
        asked_refs = sorted(set(participants) & references)
        if asked_refs:
            raise RunError(
                f"{', '.join(asked_refs)} is the source-derived Reference: its submissions come from the source, not from a model"
            )
        people = [p for p in people if p.name in participants]
    else:
        people = [p for p in people if p.name not in references]
    if not people:
        raise RunError(f"{benchmark} has no participants to generate for; add them to the benchmark first")
    chosen = Case.objects.filter(benchmark=benchmark).select_related("domain").order_by("id")
    if cases.startswith("domain:"):
        chosen = chosen.filter(domain__name=cases.removeprefix("domain:"))
    elif cases != "all":
        raise RunError(f"cases must be 'all' or 'domain:NAME', got {cases!r}")
    with transaction.atomic():
        benchmark.lock()
        todo = _generation_todo(benchmark=benchmark, case_ids=list(chosen.values_list("id", flat=True)), people=people)
        run = GenerationRun.objects.create(
            benchmark=benchmark,
            prompt_version=prompt_version,
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
                cases=cases,
                k=k,
            ),
        )
        GenerationTask.objects.bulk_create([GenerationTask(run=run, case_id=c, participant=p) for c, p in todo])
    return run


def _generation_todo(*, benchmark: Benchmark, case_ids: list[int], people: list[Participant]) -> list[tuple[int, Participant]]:
    """(case id, participant) pairs to ask: no submission yet, and no run not ended asking for one."""
    existing = set(Submission.objects.filter(case__benchmark=benchmark).values_list("case_id", "participant_id"))
    asking = asked_by_runs(
        task_model=GenerationTask, subject_field="case", subject_ids=case_ids, participant_ids=[p.pk for p in people]
    )
    todo = [(c, p) for c in case_ids for p in people if (c, p.pk) not in existing and (c, p.pk) not in asking]
    if not todo:
        raise nothing_to_ask(
            "every chosen case has a submission from these participants", asking.values(), "HypoArena generation run"
        )
    return todo


def generation_run_launch(*, run: GenerationRun, event: str = "launched") -> None:
    """Mark a pending or paused run running and enqueue its driver once the transaction commits."""
    elicit_launch(kind=KIND, run=run, event=event)


def matches_create_for_cases(*, benchmark: Benchmark, case_ids: set[int]) -> int:
    """A match for every two submissions of each case that are not matched yet, oriented by the benchmark's seed
    (``hypoarena.services.match_orientation``, as the import does)."""
    subs = list(Submission.objects.filter(case_id__in=case_ids).select_related("case", "participant"))
    matched = {frozenset(pair) for pair in Match.objects.filter(case_id__in=case_ids).values_list("first_id", "second_id")}
    by_case: dict[int, list[Submission]] = {}
    for s in subs:
        by_case.setdefault(s.case_id, []).append(s)
    new = []
    for items in by_case.values():
        items.sort(key=lambda s: s.participant.name)
        by_name = {s.participant.name: s for s in items}
        for i, one in enumerate(items):
            for other in items[i + 1 :]:
                if frozenset((one.pk, other.pk)) in matched:
                    continue
                first, second = match_orientation(
                    benchmark.orientation_seed, one.case.external_id, one.participant.name, other.participant.name
                )
                new.append(Match(case_id=one.case_id, first=by_name[first], second=by_name[second]))
    Match.objects.bulk_create(new)
    return len(new)


def _messages(run: GenerationRun, task: GenerationTask) -> list[dict[str, str]]:
    return render_generation_task(case=task.case, k=_k(run, task), template=PROMPTS[run.prompt_version])


def _k(run: GenerationRun, task: GenerationTask) -> int:
    return 1 if task.case.domain.singleton else int(run.parameters.get("k") or DEFAULT_K)


def _check(run: GenerationRun, task: GenerationTask, text: str, context: None) -> tuple[list[Any] | None, list[dict[str, str]]]:
    return answer_problems(text, k=_k(run, task), singleton=task.case.domain.singleton)


def _store(task: GenerationTask, pairs: list[Any]) -> None:
    Submission.objects.create(case_id=task.case_id, participant_id=task.participant_id, pairs=pairs)


def _after(run: GenerationRun, case_ids: set[int]) -> None:
    """Pair the submissions the run elicited into matches."""
    matches_create_for_cases(benchmark=run.benchmark, case_ids=case_ids)


KIND = ElicitKind(
    run_kind=RUN_KIND,
    title=gettext_noop("HypoArena generation"),
    run_model=GenerationRun,
    task_model=GenerationTask,
    related=("case__domain",),
    messages=_messages,
    check=_check,
    store=_store,
    after=_after,
    after_title="pair the new submissions into matches",
    subject_field="case",
)
