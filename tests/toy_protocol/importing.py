"""Importing a toy benchmark's items from ``items.jsonl`` (``{"id", "topic", "question"}`` per line) with the shared
JSONL toolkit: all or nothing, every problem named with its file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from arena.jsonl import Fields, JsonlReading, Problem, Ref, ReleaseImportError, read_jsonl
from arena.models import Benchmark

from .models import PROTOCOL, Item


@dataclass
class ToyImportSummary:
    benchmark: Benchmark
    created: int

    def line(self) -> str:
        return f"created {self.created} items in {self.benchmark}"


def toy_import(*, name: str, version: str, directory: Path, description: str = "") -> ToyImportSummary:
    reading = JsonlReading()
    path = directory / "items.jsonl"
    rows: list[tuple[str, str, str]] = []
    if not path.is_file():
        raise ReleaseImportError([Problem(str(directory), None, None, "no items.jsonl in this folder")])
    for number, record, clean in read_jsonl(path, reading):
        f = Fields(record, Ref(path.name, number), reading.problems)
        values = (f.text("id", (Item, "external_id")), f.text("topic", (Item, "topic")), f.text("question"))
        if clean and all(values):
            rows.append(values)
    if reading.problems:
        raise ReleaseImportError(reading.problems)
    with transaction.atomic():
        benchmark, _ = Benchmark.objects.get_or_create(
            name=name, version=version, defaults={"protocol": PROTOCOL, "description": description}
        )
        if benchmark.protocol != PROTOCOL:
            raise ReleaseImportError([Problem(str(directory), None, None, f"{benchmark} is not a toy benchmark")])
        made = Item.objects.bulk_create(
            [Item(benchmark=benchmark, external_id=i, topic=t, question=q) for i, t, q in rows], ignore_conflicts=True
        )
    return ToyImportSummary(benchmark=benchmark, created=len(made))
