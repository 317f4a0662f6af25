"""The study form's seed is recorded on the study (``Study.seed``, a 64-bit integer column): a larger one was an error
page (an integer the database cannot hold). The form now refuses it on the seed field and takes the largest seed the
column holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from tests.launching import lit2test_release, study_values

pytestmark = pytest.mark.django_db

LARGEST = 9_223_372_036_854_775_807  # 2**63 - 1, a BigIntegerField's largest value on every database


@pytest.mark.parametrize("seed", [str(LARGEST + 1), "9" * 25])
def test_a_seed_the_study_cannot_record_is_refused_on_the_seed_field(
    rita_client: Client,
    annotator,  # noqa: ANN001
    annotator2,  # noqa: ANN001
    tmp_path: Path,
    seed: str,
) -> None:
    benchmark = lit2test_release(tmp_path / "r", "seeded")
    response = rita_client.post(reverse("annotation:studies"), study_values(benchmark, [annotator, annotator2]) | {"seed": seed})
    assert response.status_code == 200
    assert response.context["form"].errors["seed"] == [f"Ensure this value is less than or equal to {LARGEST}."]
    assert not Study.objects.exists()


def test_the_largest_seed_the_study_can_record_is_taken(rita_client: Client, annotator, annotator2, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark = lit2test_release(tmp_path / "r", "seeded")
    values = study_values(benchmark, [annotator, annotator2]) | {"seed": str(LARGEST)}
    response = rita_client.post(reverse("annotation:studies"), values)
    assert response.status_code == 302 and Study.objects.get().seed == LARGEST
