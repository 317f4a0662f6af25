"""The Intrinsic report lists its scorers by model name in natural order ("LM-7B" before "LM-70B"). A model named by
a digit that is no decimal digit ("²": ``str.isdigit()`` says yes, ``int()`` says no) made the report fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from intrinsic.importing import import_files, intrinsic_import
from intrinsic.models import Scorer
from intrinsic.reports import benchmark_intrinsic_report

from .test_report import tiny_folder

pytestmark = pytest.mark.django_db


def test_scorers_are_listed_in_natural_order_whatever_digits_their_models_are_named_with(tmp_path: Path) -> None:
    benchmark = intrinsic_import(name="intr-names", files=import_files(tiny_folder(tmp_path / "tiny"))).benchmark
    # The tiny benchmark's scorers read models A and B (nll) and J (listwise, listed last); renamed, B's 7B comes
    # before A's 70B (as text, "LM-70B" sorts first).
    Scorer.objects.filter(benchmark=benchmark, name="A-nll").update(model="LM-70B")
    Scorer.objects.filter(benchmark=benchmark, name="B-nll").update(model="LM-7B")
    Scorer.objects.filter(benchmark=benchmark, name="J-listwise").update(model="²")
    doc = benchmark_intrinsic_report(benchmark=benchmark, replicates=20)
    assert [(s["name"], s["model"]) for s in doc["scorers"]] == [("B-nll", "LM-7B"), ("A-nll", "LM-70B"), ("J-listwise", "²")]
