"""A hidden naive control is redacted as the real proposals beside it are, with the benchmark's aliases of the moment
it is shown (review of blindness, twice).

The naive baseline writes its proposal from the context's words, titles included. A context whose literature names a
model showed that name in the control while every real proposal showed "[redacted]" there: the control gave itself
away (not a model's identity, but the control's). Redacting the stored control instead (the first fix) could only add
"[redacted]": an alias removed later stayed redacted in the control alone. So the control is stored as written and
redacted where it is shown."""

from __future__ import annotations

import pytest

from annotation.models import Item
from arena import naive
from arena.blindness import participant_aliases_update
from arena.models import Benchmark, Context, Participant

from .helpers import make_study

pytestmark = pytest.mark.django_db


def _cite_everywhere(benchmark: Benchmark) -> str:
    """Every paper title of the benchmark now names one of its participants; that participant's name."""
    name = Participant.objects.filter(benchmark=benchmark).order_by("name").values_list("name", flat=True).first()
    for context in Context.objects.filter(benchmark=benchmark):
        for paper in context.papers.all():
            paper.title = f"What {name} Gets Wrong About {paper.title}"
            paper.save(update_fields=["title"])
    return name


def _controls(benchmark: Benchmark, annotators: list) -> list[Item]:  # noqa: ANN001
    study = make_study(benchmark, annotators, n_contexts=4, n_naive_controls=4, seed=3)
    return list(Item.objects.filter(study=study, is_control=True).select_related("naive"))


def _text(content: dict) -> str:
    return " ".join(str(v) for v in content.values())


def test_a_control_citing_a_model_is_shown_redacted(imported: Benchmark, annotator, annotator2) -> None:  # noqa: ANN001
    name = _cite_everywhere(imported)
    controls = [c for c in _controls(imported, [annotator, annotator2]) if name in _text(c.naive.content)]
    assert controls, "the unredacted baseline cites the model (the case is real)"
    for control in controls:
        shown = _text(control.second_content())
        assert name not in shown and "[redacted]" in shown
        assert name in _text(control.naive.content)  # stored as the generator wrote it


def test_an_alias_added_then_removed_is_redacted_then_shown_again_in_the_control(
    imported: Benchmark, annotator, annotator2
) -> None:  # noqa: ANN001
    control = _controls(imported, [annotator, annotator2])[0]
    assert "ablation" in _text(control.naive.content)  # a word of the naive template
    participant = Participant.objects.filter(benchmark=imported).order_by("name").first()
    participant_aliases_update(participant=participant, text="ablation")
    assert "ablation" not in _text(control.second_content())
    participant_aliases_update(participant=participant, text="")
    assert "ablation" in _text(control.second_content())
    # The naive proposal's own text never changes (other studies share it).
    assert control.naive.content == naive.naive_proposal(naive.context_words(control.context))
