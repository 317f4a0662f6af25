"""A fresh demo shows human-agreement figures and the leaderboard's Human WR column, from synthetic labels that say
what they are and exist only where the demo asked for them (issue 24, "A demo that shows everything")."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotation.demo import LABELLERS, RATIONALE_PREFIX, STUDY_NAME, DemoLabelsError, demo_labels_seed
from annotation.models import Assignment, Label, Study
from annotation.selectors import human_win_rate_report
from annotation.services import assignment_submit

from .helpers import client_for, complete_values, make_study

pytestmark = pytest.mark.django_db

MODELS = ("GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2")
FIGURE = re.compile(r"−?-?\d+\.\d+")


def demo(*flags: str) -> str:
    call_command("demo_setup", stdout=io.StringIO())
    out = io.StringIO()
    call_command("demo_study", *flags, stdout=out)
    return out.getvalue()


def cells(html: str, css_class: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(rf'<td class="[^"]*\b{css_class}\b[^"]*">(.*?)</td>', html, re.S)
    ]


def test_after_the_demo_setup_the_human_wr_column_and_the_study_page_have_figures(imported, researcher) -> None:  # noqa: ANN001
    out = demo("--synthetic-labels")
    study = Study.objects.get(name=STUDY_NAME)
    formal = Study.objects.get(name="Demo formal round")
    assert f"synthetic labels: {study.pk}" in out and "165 synthetic labels" in out
    client = client_for(researcher)

    # The leaderboard: a Human WR figure for each of the four models, and the note names the synthetic study.
    html = client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()
    human = cells(html, "human-wr")
    assert len(human) == len(MODELS) and all(FIGURE.search(c) for c in human), (
        f"the leaderboard's Human WR column should hold a figure for each of {MODELS}, found {human}"
    )
    note = re.search(r'id="human-wr-note">(.*?)</p>', html, re.S).group(1)
    assert STUDY_NAME in note, f"the Human WR note should name the synthetic study {STUDY_NAME!r}: {note}"

    # The study page: Krippendorff's α, agreement with the judge and a Human WR per model, all figures.
    page = client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    alpha = re.search(r'<table class="grid compact" id="alpha">(.*?)</table>', page, re.S).group(1)
    assert len(re.findall(r'<td class="num">-?\d\.\d{3}</td>', alpha)) >= 3, f"the study page's α table has no figures: {alpha}"
    assert re.search(r'id="judge-agreement">[1-9]\d*/[1-9]\d* \(\d\.\d{3}\)', page), (
        "no agreement with the judge on the study page"
    )
    per_model = re.search(r'id="per-model">(.*?)</table>', page, re.S).group(1)
    assert len(re.findall(r'<td class="num">\d\.\d{3}</td></tr>', per_model)) == len(MODELS), (
        f"the study page's per-model table should give a Human WR for each of {MODELS}: {per_model}"
    )
    doc = client.get(reverse("annotation:api-study-agreement", args=[study.pk])).json()
    assert doc["counts"] == {"labels": 165, "counted": 165, "over_time": 0, "invalid": 0, "items": 55, "annotators": 3}
    assert doc["krippendorff_alpha"]["winner"] is not None and doc["judge_agreement"]["decisive"] > 0

    # Marked as demo data: its own study and accounts, every rationale says so; the demo's annotators keep their items.
    labels = Label.objects.filter(assignment__study=study)
    assert labels.count() == 165 and Label.objects.count() == 165
    assert all(r.startswith(RATIONALE_PREFIX) for r in labels.values_list("rationale", flat=True))
    assert set(study.annotators.values_list("username", flat=True)) == set(LABELLERS)
    for user in get_user_model().objects.filter(username__in=LABELLERS):
        assert not user.has_usable_password() and not user.is_active, user  # nobody signs in as them
    assert STUDY_NAME in client.get(reverse("annotation:studies")).content.decode()
    # Drawn like the demo's formal round: the same items, labelled before anyone touches that round.
    assert sorted(study.items.values_list("pair_id", flat=True), key=str) == sorted(
        formal.items.values_list("pair_id", flat=True), key=str
    )
    assert study.created_at <= formal.created_at and not Assignment.objects.filter(study=formal, opened_at__isnull=False).exists()


def test_labels_exist_only_where_the_demo_asks_and_real_labels_take_over(imported) -> None:  # noqa: ANN001
    demo()  # demo_study without --synthetic-labels: no labels anywhere
    assert not Label.objects.exists() and not Study.objects.filter(name=STUDY_NAME).exists()
    formal = Study.objects.get(name="Demo formal round")
    with pytest.raises(DemoLabelsError, match="is not the demo's synthetic study"):
        demo_labels_seed(study=formal)
    assert not Label.objects.exists()

    out = demo("--synthetic-labels")  # the demo run again, now with the flag: the synthetic study joins
    study = Study.objects.get(name=STUDY_NAME)
    assert "165 synthetic labels" in out
    assert demo("--synthetic-labels").splitlines()[0] == f"synthetic labels: {study.pk} (already there)"
    assert demo_labels_seed(study=study) == 0 and Label.objects.count() == 165  # nothing is labelled twice
    assert human_win_rate_report(benchmark=imported)["study"]["name"] == STUDY_NAME

    # A person's label in a formal study newer than the synthetic one makes that study the leaderboard's Human WR.
    annotator1 = get_user_model().objects.get(username="annotator1")
    newer = make_study(imported, [annotator1], n_contexts=1, n_naive_controls=0, name="Rita's formal round")
    item = Assignment.objects.filter(study=newer, annotator=annotator1).order_by("position").first()
    assignment_submit(assignment=item, values=complete_values("A"))
    assert human_win_rate_report(benchmark=imported)["study"]["id"] == newer.pk
