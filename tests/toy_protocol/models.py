"""The toy protocol's data: items (a yes/no question each) of a benchmark, the tasks of its judge runs, and the
answers."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from arena.models import Benchmark, JudgeRun, JudgmentRecord
from jobs.models import ClaimableTask

PROTOCOL = "toy_protocol"  # Benchmark.protocol of a toy benchmark
ITEMS = "toy_protocol_items"  # the judging task kind
SINGLE = "single"  # an item is asked once: its task's order


class Item(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="toy_items")
    external_id = models.CharField(max_length=100)
    topic = models.CharField(max_length=100)
    question = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "external_id"], name="toy_item_unique")]
        ordering = ["id"]

    def __str__(self) -> str:
        return self.external_id


class ToyTask(ClaimableTask):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="toy_tasks")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10, default=SINGLE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="toy_task_unique")]


class ToyAnswer(JudgmentRecord):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="toy_answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="answers")
    answer = models.CharField(max_length=3, blank=True)  # yes | no ("" when invalid)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], condition=Q(status="accepted"), name="one_accepted_toy_answer")
        ]


class ToyTally(models.Model):
    """What follows a toy run (its engine step, ``jobs.steps``): the run's yes and no answers counted, once."""

    run = models.OneToOneField(JudgeRun, on_delete=models.CASCADE, related_name="toy_tally")
    yes = models.PositiveIntegerField()
    no = models.PositiveIntegerField()
    run_status = models.CharField(max_length=20, help_text="the run's status as the step saw it")
