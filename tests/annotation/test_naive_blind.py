"""A hidden naive control is redacted as the real proposals beside it are (review of blindness).

The naive baseline writes its proposal from the context's words, titles included. A context whose literature names a
model would show that name in the control while every real proposal shows "[redacted]" there: the control would give
itself away (not a model's identity, but the control's)."""

from __future__ import annotations

import pytest

from annotation.models import NaiveProposal
from annotation.services import naive_for_context
from arena import naive
from arena.models import Benchmark, Context, Participant

pytestmark = pytest.mark.django_db


def _citing_context(benchmark: Benchmark) -> tuple[Context, str]:
    """A context of the sample whose papers' titles now name one of its participants."""
    name = Participant.objects.filter(benchmark=benchmark).order_by("name").values_list("name", flat=True).first()
    context = Context.objects.filter(benchmark=benchmark, papers__isnull=False).distinct().order_by("external_id").first()
    for paper in context.papers.all():
        paper.title = f"What {name} Gets Wrong About {paper.title}"
        paper.save(update_fields=["title"])
    return context, name


def test_the_naive_control_of_a_context_citing_a_model_is_redacted(imported: Benchmark) -> None:
    context, name = _citing_context(imported)
    raw = naive.naive_proposal(naive.context_words(context))
    assert any(name in str(v) for v in raw.values()), "the unredacted baseline cites the model (the case is real)"
    control = naive_for_context(context=context)
    text = " ".join(str(v) for v in control.content.values())
    assert name not in text and "[redacted]" in text
    assert set(control.content) == set(raw)


def test_a_naive_control_stored_before_is_redacted_when_it_is_used_again(imported: Benchmark) -> None:
    context, name = _citing_context(imported)
    stored = NaiveProposal.objects.create(
        context=context, generator_version=naive.VERSION, content=naive.naive_proposal(naive.context_words(context))
    )
    again = naive_for_context(context=context)
    assert again.pk == stored.pk
    stored.refresh_from_db()
    assert name not in " ".join(str(v) for v in stored.content.values())
