"""Synthetic labels for the demo (``make demo``), so that a fresh demo's study page has agreement figures and the
leaderboard's "Human WR" column has numbers, before anyone has annotated anything.

They are **not human judgments**, and they say so wherever they appear:

- they belong to a formal study of their own, :data:`STUDY_NAME`, which the study list, the study page, the label
  export and the leaderboard's Human WR note print by name;
- their annotators are the accounts :data:`LABELLERS` (``synthetic-labeller-1`` …), which have no usable password
  and are deactivated once they have labelled (nobody signs in as them, and the study form does not offer them);
  the demo's login accounts ``annotator1..3`` keep every item of the demo's own rounds for you to annotate;
- every rationale begins with :data:`RATIONALE_PREFIX`.

Only ``manage.py demo_study --synthetic-labels`` makes them (``scripts/demo.sh`` passes the flag), and
:func:`demo_labels_seed` refuses any study but this one.

**The rule** (deterministic, like the demo controls' heuristic judge: not a language model, not a person). Each
labeller prefers the proposal with more words in its six fields, as the annotator is shown them (aliases
redacted); when the two counts are within :data:`TIE_MARGIN` of the larger, it is a tie (reason "Different but
comparable trade-offs"). Then, drawn per labeller and item from the study's seed, it picks the other side with
probability :data:`P_OTHER` and a tie with probability :data:`P_TIE`, so that the labellers disagree now and then
and the agreement figures have something to measure. The proposal chosen scores 2 or 3 on each dimension and the
other 1 or 2 (a tie: 1 to 3 each); screening is "coherent" or, with probability :data:`P_PARTLY`, "partly
coherent"; confidence is high for a clear word-count lead, medium otherwise, low when the draw overrode the rule.
Each labeller works through its items in its own order, 2.5 to 8 minutes an item (under the 10-minute cap), the
last one ending when the command runs. Every label goes through :func:`annotation.services.assignment_submit`, the
annotation screen's own path, so it is complete and valid like any other.

The study is drawn like the demo's formal round (same seed, contexts and items per context: ``demo_study``), so it
shows the same items; it is created before that round, so once someone labels an item of the demo's formal round,
that newer study becomes the leaderboard's Human WR (the newest formal study with a counted label) and these labels
step aside.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.utils import timezone

from arena.errors import AppError
from arena.permissions import ANNOTATORS_GROUP

from .models import Assignment, Study
from .rubric import CHOICE_A, CHOICE_B, CHOICE_TIE, DIMENSION_KEYS, SIX_FIELDS, score_field
from .services import annotator_set_active, assignment_open, assignment_submit

STUDY_NAME = "Demo: synthetic labels (not human judgments)"
LABELLERS = ("synthetic-labeller-1", "synthetic-labeller-2", "synthetic-labeller-3")
RATIONALE_PREFIX = "Synthetic demo label, not a human judgment:"
TIE_MARGIN = 0.05
P_OTHER = 0.2
P_TIE = 0.1
P_PARTLY = 0.2
SECONDS_PER_ITEM = (150.0, 480.0)
SECONDS_BETWEEN_ITEMS = (5.0, 60.0)
FIRST, SECOND = "first", "second"


class DemoLabelsError(AppError):
    """Synthetic labels were asked for a study that is not the demo's synthetic study; nothing was written."""


def demo_labellers() -> list[AbstractBaseUser]:
    """The synthetic labellers' accounts, made once: annotators (a study needs them to be) with no usable password.

    They are activated here because a study can only be given to active annotators; :func:`demo_labels_seed`
    deactivates them again once they have labelled.
    """
    users = get_user_model()
    group = Group.objects.get_or_create(name=ANNOTATORS_GROUP)[0]
    accounts = []
    for username in LABELLERS:
        user, created = users.objects.get_or_create(
            username=username, defaults={"first_name": "Synthetic labeller", "last_name": "(demo data, not a person)"}
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.add(group)
        if not user.is_active:
            users.objects.filter(pk=user.pk).update(is_active=True)
            user.is_active = True
        accounts.append(user)
    return accounts


def _words(content: dict) -> int:
    return sum(len(str(content.get(field) or "").split()) for field, _label in SIX_FIELDS)


def _label_values(assignment: Assignment, rng: random.Random) -> dict[str, str]:
    """The form values the rule gives ``assignment`` (sides as the labeller is shown them)."""
    item = assignment.item
    words = {FIRST: _words(item.first_content()), SECOND: _words(item.second_content())}
    more = max(words, key=words.__getitem__)
    lead = abs(words[FIRST] - words[SECOND]) / max(words[FIRST], words[SECOND], 1)
    winner = more if lead > TIE_MARGIN else None
    draw = rng.random()
    overridden = draw < P_OTHER + P_TIE
    if draw < P_OTHER:
        winner = rng.choice((FIRST, SECOND)) if winner is None else (SECOND if winner == FIRST else FIRST)
    elif draw < P_OTHER + P_TIE:
        winner = None
    shown = {FIRST: "a", SECOND: "b"} if assignment.a_is_first else {FIRST: "b", SECOND: "a"}
    values = {
        "screening": "partly" if rng.random() < P_PARTLY else "coherent",
        "confidence": "low" if overridden else ("high" if lead > 0.2 else "medium"),
    }
    for side in (FIRST, SECOND):
        choices = (1, 2, 3) if winner is None else ((2, 3, 3) if side == winner else (1, 2, 2))
        for dimension in DIMENSION_KEYS:
            values[score_field(shown[side], dimension)] = str(rng.choice(choices))
    a, b = (words[FIRST], words[SECOND]) if assignment.a_is_first else (words[SECOND], words[FIRST])
    if winner is None:
        values |= {"choice": CHOICE_TIE, "reason": "tradeoffs"}
        why = f"called a tie (A has {a} words, B {b})."
    else:
        values["choice"] = CHOICE_A if shown[winner] == "a" else CHOICE_B
        why = f"chose {values['choice']} (A has {a} words, B {b})."
    values["rationale"] = f"{RATIONALE_PREFIX} {why}"
    return values


def demo_labels_seed(*, study: Study) -> int:
    """Label every open item of the demo's synthetic study by the module's rule; return the number of labels made.

    Precondition: ``study`` is the demo's synthetic study (:data:`STUDY_NAME`, given to :data:`LABELLERS` only), else
    :class:`DemoLabelsError` and nothing is written. Items already labelled are left as they are, so a second call
    adds nothing. The labellers are deactivated at the end.
    """
    annotators = set(study.annotators.values_list("username", flat=True))
    if study.name != STUDY_NAME or not annotators or not annotators <= set(LABELLERS):
        raise DemoLabelsError(
            f"study {study.pk} ({study.name!r}) is not the demo's synthetic study: synthetic labels go only to "
            f"{STUDY_NAME!r}, given to {', '.join(LABELLERS)}"
        )
    open_items = (
        Assignment.objects.filter(study=study, label__isnull=True)
        .select_related("study", "annotator", "item__first_proposal", "item__second_proposal", "item__naive")
        .order_by("annotator__username", "position")
    )
    by_labeller: dict[str, list[Assignment]] = {}
    for assignment in open_items:
        by_labeller.setdefault(assignment.annotator.get_username(), []).append(assignment)
    made = 0
    now = timezone.now()
    for username, assignments in by_labeller.items():
        rng = random.Random(f"{study.seed}:{username}")  # a str seed is hashed with SHA-512: the same on every run
        spans = [(rng.uniform(*SECONDS_PER_ITEM), rng.uniform(*SECONDS_BETWEEN_ITEMS)) for _ in assignments]
        clock = now - timedelta(seconds=sum(work + pause for work, pause in spans))
        for assignment, (work, pause) in zip(assignments, spans, strict=True):
            clock += timedelta(seconds=pause)
            assignment_open(assignment=assignment, now=clock)
            clock += timedelta(seconds=work)
            assignment_submit(assignment=assignment, values=_label_values(assignment, rng), now=clock)
            made += 1
    for user in study.annotators.all():
        annotator_set_active(user=user, active=False)
    return made
