"""A judge run's verdict list as run watchers read it (Inspect's log viewer is the model): sorted and filtered by
latency, tokens, cost and answer, searched, each verdict with its tokens and cost, and live while the run works.

Every judging task kind stores its verdicts in a :class:`~arena.models.JudgmentRecord` subclass, so what is read here
(``latency_seconds``, ``prompt_tokens``, ``completion_tokens``, ``status``, ``raw_response``) is the same for every
kind; a kind's page adds its own filters and the fields its search looks in.

Live verdicts: a run page shows its newest verdicts first and polls (htmx) for the ones stored since it was drawn
(:func:`verdict_feed`). New verdicts are put on top of the list only where they belong there (the first page, newest
first, filters a later verdict cannot change); elsewhere the page says how many arrived and offers to reload, so a
reader's page, order and open details are never pulled from under them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db.models import CharField, ExpressionWrapper, F, FloatField, Max, Q, QuerySet, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.http import HttpRequest

from .selectors import priced

#: How the list can be ordered: (value, label, ordering). The first is the default: the newest verdict on top, where
#: the live list puts each new one.
SORTS: tuple[tuple[str, str, tuple[Any, ...]], ...] = (
    ("", "newest first", ("-id",)),
    ("oldest", "oldest first", ("id",)),
    ("slowest", "slowest first", (F("latency_seconds").desc(nulls_last=True), "-id")),
    ("fastest", "fastest first", (F("latency_seconds").asc(nulls_last=True), "-id")),
    ("tokens", "most tokens first", ("-tokens", "-id")),
    ("cost", "costliest first", (F("cost").desc(nulls_last=True), "-id")),
)
#: At most this many new verdicts are put on top of a list in one poll; more (a tab left in the background through a
#: fast run) and the page says how many came instead: fifty articles with their prompts is already a long swap.
FEED_CAP = 50
POLL = "every 2s"  # as often as the progress section: the counts and the list move together


def verdicts_annotated(verdicts: QuerySet, *, parameters: dict[str, Any]) -> QuerySet:
    """Each verdict with ``tokens`` (in + out), ``cost`` (US dollars at the run's prices, None when the run is not
    priced or the verdict was imported without its tokens), computed by the database so that both sort and filter, and
    ``cached_from``: the run its answer was taken from by the call cache (``jobs.call_cache``; None: a call)."""
    tokens_in = Coalesce(F("prompt_tokens"), Value(0))
    tokens_out = Coalesce(F("completion_tokens"), Value(0))
    if priced(parameters):
        per_in = float(parameters.get("price_per_1k_prompt") or 0) / 1000
        per_out = float(parameters.get("price_per_1k_completion") or 0) / 1000
        cost: Any = ExpressionWrapper(
            F("prompt_tokens") * Value(per_in) + F("completion_tokens") * Value(per_out), output_field=FloatField()
        )
    else:
        cost = Value(None, output_field=FloatField())
    return verdicts.annotate(tokens=tokens_in + tokens_out, cost=cost, cached_from=KT("metadata__cached_from__run"))


class VerdictListForm(forms.Form):
    """The verdict list's search, filters and order (GET parameters); a value that is not valid is ignored, so a
    link with a stale parameter still shows the list. ``search_label`` says where a kind's search looks."""

    q = forms.CharField(required=False, label="Search", max_length=200)
    status = forms.ChoiceField(
        required=False, label="Answer", choices=[("", "any answer"), ("accepted", "accepted"), ("invalid", "invalid")]
    )
    slower_than = forms.FloatField(required=False, min_value=0, label="Slower than (s)")
    more_tokens_than = forms.IntegerField(required=False, min_value=0, label="More tokens than")
    costlier_than = forms.FloatField(required=False, min_value=0, label="Costlier than ($)")
    sort = forms.ChoiceField(required=False, label="Sort", choices=[(value, label) for value, label, _ in SORTS])

    def __init__(
        self,
        data: object,
        *,
        parameters: dict[str, Any],
        search_label: str = "the answers",
        verdicts: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(data)
        self.parameters = parameters
        if verdicts:  # the kind's verdicts ("A", "B", "TIE"; "A>>B" ...), as its answers give them
            self.fields["verdict"] = forms.ChoiceField(required=False, label="Verdict", choices=[("", "any verdict"), *verdicts])
            self.order_fields(self.field_order or ["q", "status", "verdict"])
        self.fields["q"].help_text = f"looks in {search_label}"
        self.fields["q"].widget.attrs.update({"type": "search", "placeholder": search_label})
        for name in ("slower_than", "costlier_than"):
            self.fields[name].widget.attrs["step"] = "any"
        if not priced(parameters):  # no prices, no cost: neither its filter nor its order means anything
            del self.fields["costlier_than"]
            self.fields["sort"].choices = [(v, label) for v, label in self.fields["sort"].choices if v != "cost"]

    def values(self) -> dict[str, Any]:
        """The valid values; an invalid parameter counts as absent."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {name: data.get(name) for name in self.fields if name not in self.errors and data.get(name) not in ("", None)}

    @property
    def chosen_sort(self) -> str:
        """The order asked for ("" is the default, newest first)."""
        return self.values().get("sort", "")

    def narrowed(self) -> bool:
        """Whether anything but the order narrows the list (the page then says "match the filters")."""
        return any(name != "sort" for name in self.values())

    def apply(self, verdicts: QuerySet, *, search: tuple[str, ...] = ()) -> QuerySet:
        """The verdicts annotated (:func:`verdicts_annotated`), filtered and ordered as asked; ``search`` names the
        kind's fields the search looks in besides the raw answer (``icontains``)."""
        v = self.values()
        verdicts = verdicts_annotated(verdicts, parameters=self.parameters)
        if v.get("q"):
            found = Q(raw_response__icontains=v["q"])
            for name in search:
                found |= Q(**{f"{name}__icontains": v["q"]})
            verdicts = verdicts.filter(found)
        if v.get("status"):
            verdicts = verdicts.filter(status=v["status"])
        if v.get("verdict"):
            verdicts = verdicts.filter(verdict=v["verdict"])
        if v.get("slower_than") is not None:
            verdicts = verdicts.filter(latency_seconds__gt=v["slower_than"])
        if v.get("more_tokens_than") is not None:
            verdicts = verdicts.filter(tokens__gt=v["more_tokens_than"])
        if v.get("costlier_than") is not None:
            verdicts = verdicts.filter(cost__gt=v["costlier_than"])
        ordering = next(order for value, _, order in SORTS if value == v.get("sort", ""))
        return verdicts.order_by(*ordering)


def verdict_choices(verdicts: QuerySet) -> list[tuple[str, str]]:
    """What a kind's verdicts can say, for the verdict filter: its model's choices, else the values of the run's verdicts
    (one query); none when its model has no ``verdict`` field."""
    model = verdicts.model
    try:
        field = model._meta.get_field("verdict")
    except FieldDoesNotExist:
        return []
    if field.choices:
        return [(str(value), str(label)) for value, label in field.choices]
    values = verdicts.exclude(verdict__isnull=True).exclude(verdict="").values_list("verdict", flat=True).distinct()
    return [(value, value) for value in sorted(values)]


def subject_search(verdicts: QuerySet, subject_field: str) -> tuple[tuple[str, ...], str]:
    """Where a kind's search looks by default: the text fields of what a verdict judged (its id, its name ...), and how
    the search box says it."""
    subject = verdicts.model._meta.get_field(subject_field).related_model
    names = tuple(
        f"{subject_field}__{f.name}"
        for f in subject._meta.concrete_fields
        if isinstance(f, (CharField, TextField)) and not f.choices and not f.primary_key
    )
    return names, f"the {subject._meta.verbose_name} and the answers"


@dataclass
class Feed:
    """The live part of a verdict list: what the page's poller asks for next, and what a poll brought."""

    live: bool  # the run may still store verdicts: the poller keeps asking
    on_top: bool  # new verdicts go on top of this list (else they are counted in ``missed``)
    after: int  # the newest verdict of the run when the list was drawn (or last brought up to date)
    url: str = ""  # the poller's next request
    reload_url: str = ""  # the page as it is (filters, order, page), to reload it
    new: list[Any] = field(default_factory=list)  # verdicts to put on top of the list, newest first
    missed: int = 0  # verdicts stored since the list was drawn that belong in it but are not put in (see the module)


def _newest_id(run_verdicts: QuerySet) -> int:
    return run_verdicts.aggregate(newest=Max("id"))["newest"] or 0


def _after(request: HttpRequest) -> int | None:
    try:
        return max(0, int(request.GET["after"]))
    except (KeyError, ValueError):
        return None


def _urls(request: HttpRequest, after: int) -> tuple[str, str]:
    """The poller's next URL (the page's own parameters, part=new, after) and the page's URL without them."""
    query = request.GET.copy()
    for name in ("part", "after"):
        query.pop(name, None)
    reload_url = f"{request.path}?{query.urlencode()}" if query else request.path
    query["part"], query["after"] = "new", str(after)
    return f"{request.path}?{query.urlencode()}", reload_url


def is_feed_poll(request: HttpRequest) -> bool:
    """Whether this request is a live list's poll (htmx, ``part=new``) rather than the page."""
    return bool(getattr(request, "htmx", False)) and request.GET.get("part") == "new" and _after(request) is not None


def verdict_feed(
    request: HttpRequest, *, run_verdicts: QuerySet, shown: QuerySet, live: bool, on_top: bool, cap: int = FEED_CAP
) -> Feed:
    """The live state of a run page's verdict list.

    ``run_verdicts`` is every verdict of the run, ``shown`` the list as the page filters and orders it; ``live``
    whether the run may still store one (read before the verdicts, so that the poll that sees the run settled still
    brings the last ones); ``on_top`` whether a new verdict belongs on top of this list (first page, newest first,
    filters that a later verdict cannot change). On the page itself nothing is new yet; on a poll (``part=new``,
    ``after``), the verdicts of ``shown`` stored after ``after`` are ``new`` when they go on top (at most ``cap`` of
    them), else counted in ``missed``.

    Verdicts are told apart by id: a verdict committed after one with a greater id that a poll already brought (two
    drivers storing at once) is not brought; the page's count still counts it, and a reload shows it.
    """
    after = _after(request) if is_feed_poll(request) else None
    if after is None:
        newest = _newest_id(run_verdicts)
        url, reload_url = _urls(request, newest)
        return Feed(live=live, on_top=on_top, after=newest, url=url, reload_url=reload_url)
    # The newest id first, then the verdicts up to it: one stored in between waits for the next poll, never comes twice.
    newest = max(after, _newest_id(run_verdicts))
    arrived = shown.filter(id__gt=after, id__lte=newest)
    count = arrived.count()
    if on_top and count <= cap:
        url, reload_url = _urls(request, newest)
        return Feed(live=live, on_top=on_top, after=newest, url=url, reload_url=reload_url, new=list(arrived))
    url, reload_url = _urls(request, after)
    return Feed(live=live, on_top=on_top, after=after, url=url, reload_url=reload_url, missed=count)


__all__ = [
    "FEED_CAP",
    "POLL",
    "SORTS",
    "Feed",
    "VerdictListForm",
    "is_feed_poll",
    "priced",
    "subject_search",
    "verdict_choices",
    "verdict_feed",
    "verdicts_annotated",
]
