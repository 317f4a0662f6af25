"""Lit2Test generation runs: each participant writes a six-field proposal for each context with text, on the engine's
elicitation driver (``jobs.elicitation``; run kind ``generation``).

A task is a context and a participant without a proposal yet; the participant sees the context under the common
prompt (``generation-v1``). A malformed answer is asked again with the same prompt, at most two retries; what is still
malformed is stored anyway as an invalid proposal with its schema problems (an invalid proposal is data too, as in
the release). When the run closes, the proposals it elicited are paired into canonical pairs with the benchmark's
seeded orientation, as an import pairs them.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from arena import blindness
from arena.models import Benchmark, CanonicalPair, Participant, Proposal
from arena.orientation import orientation_flipped
from arena.schemas import SIX_FIELD
from jobs import lifecycle
from jobs.elicitation import ElicitKind, Problems, elicit_parameters
from jobs.lifecycle import RunError, api_key_required, endpoint_url_required
from jobs.parsing import ParseError
from jobs.prompts import PROMPTS

from .models import GenerationRun, GenerationTask
from .parsing import parse_proposal_answer
from .prompts import render_generation_task

RUN_KIND = "generation"
TITLE = gettext_noop("Lit2Test generation")  # a msgid: pages translate it (jobs.views), commands print it as is


def generation_run_create(
    *,
    benchmark: Benchmark,
    base_url: str,
    participants: list[str] | None = None,
    contexts: str = "all",
    api_key_env: str | None = None,
    temperature: float = 1.0,
    max_tokens: int = 1600,
    concurrency: int = 8,
    timeout: float = 300.0,
    model_names: dict[str, str] | None = None,
    prompt_version: str = "generation-v1",
    launched_by: Any = None,  # noqa: ANN401
    lease_seconds: float | None = None,
) -> GenerationRun:
    """A run that asks each participant for a proposal on each context that has text and no proposal from it yet, nor
    a run not ended asking for it (a form posted twice, a command repeated, both at once: the benchmark's lock makes the
    second wait for the first and see its tasks). Raises :class:`RunError` when there is nothing to ask, naming the
    runs asking."""
    template = PROMPTS.get(prompt_version)
    if template is None or template.kind != "generation":
        raise RunError(f"no generation prompt template {prompt_version!r}")
    base_url = endpoint_url_required(base_url, what="the generation run's base URL (--base-url)")
    api_key_required(api_key_env)
    people = list(benchmark.participants.all())
    if participants:
        unknown = sorted(set(participants) - {p.name for p in people})
        if unknown:
            raise RunError(f"not participants of {benchmark}: {', '.join(unknown)}")
        people = [p for p in people if p.name in participants]
    if not people:
        raise RunError(f"{benchmark} has no participants to generate for")
    chosen = benchmark.contexts.filter(has_text=True)
    if contexts.startswith("batch:"):
        chosen = chosen.filter(batch__name=contexts.removeprefix("batch:"))
    elif contexts != "all":
        raise RunError(f"contexts must be 'all' or 'batch:NAME', got {contexts!r}")
    with transaction.atomic():
        benchmark.lock()
        todo = _generation_todo(benchmark=benchmark, context_ids=list(chosen.values_list("id", flat=True)), people=people)
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
                contexts=contexts,
            ),
        )
        GenerationTask.objects.bulk_create([GenerationTask(run=run, context_id=c, participant=p) for c, p in todo])
    return run


def _generation_todo(*, benchmark: Benchmark, context_ids: list[int], people: list[Participant]) -> list[tuple[int, Participant]]:
    """(context id, participant) pairs to ask: no proposal yet, and no run not ended asking for one."""
    existing = set(Proposal.objects.filter(context__benchmark=benchmark).values_list("context_id", "participant_id"))
    asking = lifecycle.asked_by_runs(
        task_model=GenerationTask, subject_field="context", subject_ids=context_ids, participant_ids=[p.pk for p in people]
    )
    todo = [(c, p) for c in context_ids for p in people if (c, p.pk) not in existing and (c, p.pk) not in asking]
    if not todo:
        raise lifecycle.nothing_to_ask(
            "every chosen context with text has a proposal from these participants", asking.values(), "generation run"
        )
    return todo


def generation_run_launch(*, run: GenerationRun, event: str = "launched") -> None:
    """Mark a pending or paused run running and enqueue its driver once the transaction commits."""
    lifecycle.run_launch(run=run, event=event)


def generation_run_execute(*, run_id: int) -> str:
    """Elicit the run's missing proposals until done, paused or cancelled; then pair the new ones."""
    from jobs.elicitation import elicit_execute

    return elicit_execute(run_kind=RUN_KIND, run_id=run_id)


def pairs_create_for_contexts(*, benchmark: Benchmark, context_ids: set[int]) -> int:
    """Canonical pairs for every two valid proposals of each context that are not paired yet."""
    created = []
    stored = benchmark.pairs.filter(context_id__in=context_ids).values_list(
        "internal_key", "context_id", "participant_a_id", "participant_b_id"
    )
    # A pair is its key, and its context and two models whatever its key.
    existing = {key for key, *_ in stored}
    members = {(context_id, frozenset((a_id, b_id))) for _, context_id, a_id, b_id in stored}
    proposals = Proposal.objects.filter(context_id__in=context_ids, validation_status="valid").select_related(
        "participant", "context"
    )
    by_context: dict[int, list[Proposal]] = {}
    for p in proposals:
        by_context.setdefault(p.context_id, []).append(p)
    for context_id, items in by_context.items():
        items.sort(key=lambda p: p.participant.name)
        for i, first in enumerate(items):
            for second in items[i + 1 :]:
                left, right = first.participant.name.replace(" ", "_"), second.participant.name.replace(" ", "_")
                key = f"{first.context.external_id}__{left}__vs__{right}"
                if key in existing or (context_id, frozenset((first.participant_id, second.participant_id))) in members:
                    continue
                a, b = first.participant, second.participant
                if orientation_flipped(benchmark.orientation_seed, key):
                    a, b = b, a
                created.append(
                    CanonicalPair(benchmark=benchmark, context_id=context_id, participant_a=a, participant_b=b, internal_key=key)
                )
    CanonicalPair.objects.bulk_create(created)
    return len(created)


def _messages(run: GenerationRun, task: GenerationTask) -> list[dict[str, str]]:
    return render_generation_task(context=task.context, template=PROMPTS[run.prompt_version])


def _check(run: GenerationRun, task: GenerationTask, text: str, prepared: Any) -> tuple[Any, Problems]:  # noqa: ANN401
    """The answer's proposal and its schema problems; the value keeps both, so that an answer still malformed after
    every attempt is stored as an invalid proposal."""
    try:
        content, problems = parse_proposal_answer(text)
    except ParseError as exc:
        content, problems = {}, [{"field": "*", "code": "not_json", "message": str(exc)}]
    return (content, problems), problems


def _store(task: GenerationTask, value: tuple[dict[str, Any], Problems]) -> None:
    run = task.run
    answer, problems = value
    content = {k: v for k, v in answer.items() if k in SIX_FIELD.fields}
    Proposal.objects.create(
        context_id=task.context_id,
        participant_id=task.participant_id,
        schema=SIX_FIELD.name,
        content=content,
        validation_status="invalid" if problems else "valid",
        validation_errors=problems,
        **blindness.proposal_blind_fields(benchmark_id=run.benchmark_id, participant_id=task.participant_id, content=content),
        release_metadata={
            "generation_run": run.pk,
            "temperature": run.parameters.get("temperature"),
            "max_tokens": run.parameters.get("max_tokens"),
            "attempts": len(task.attempts),
        },
    )


def _after(run: GenerationRun, context_ids: set[int]) -> None:
    pairs_create_for_contexts(benchmark=run.benchmark, context_ids=context_ids)


KIND = ElicitKind(
    run_kind=RUN_KIND,
    title=TITLE,
    run_model=GenerationRun,
    task_model=GenerationTask,
    related=("context", "run"),
    prefetch=("context__papers",),
    messages=_messages,
    check=_check,
    store=_store,
    after=_after,
    after_title="pair the new proposals for judging",
    subject_field="context",
    retry_with_problems=False,
    keep_invalid=True,
)
