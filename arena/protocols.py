"""The protocol registry: what each protocol app plugs into the shared layers, declared once in its
``AppConfig.ready()``.

A protocol (Lit2Test, HypoArena, Reconstruction, Intrinsic scoring, ...) registers one :class:`ProtocolSpec`: its
name (``Benchmark.protocol``), label, the judge-run types its benchmarks take (each with the judging task kind it
makes and any extra form field it needs), its task-selection grammar (``run_judge --pairs``), its report command,
its pages (the benchmark page, the dashboard's links), the figures its benchmarks' row of the dashboard shows
(:class:`Figure`: each protocol's benchmarks get a table with its own columns), and its URLconf. An app that extends another protocol's benchmarks without holding benchmarks of its own (diagnostic
controls, human calibration) registers a spec with ``holds_benchmarks=False``.

The shared layers read this registry instead of branching on names: forms, ``run_judge``, the dashboard, the runs
page and the root URLconf. Nothing below the protocol apps names a protocol.

``judge_subjects`` is the registry of judging task kinds (``jobs.subjects.JudgeSubjects``): it lives here, beside
``JudgeRun``, so that a run can say what it judged (``JudgeRun.get_subjects_display``) without importing the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db.models import Count, Model

from .registry import Registry

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from .models import Benchmark


@dataclass(frozen=True)
class RunOption:
    """A field a run type asks for beyond the engine's own (a Reconstruction match run's judge family, say); the
    launch form shows it and passes it on in ``JudgeRunRequest.options``; ``required`` says why it cannot be blank."""

    name: str
    label: str
    help: str
    required: str = ""  # the error shown when it is left blank; "" when optional


@dataclass(frozen=True)
class RunType:
    """A judge-run type of a protocol's benchmarks: the name researchers choose (``--run-type``), how the form lists
    it, and the judging task kind it makes."""

    name: str
    label: str
    task_kind: str
    options: tuple[RunOption, ...] = ()


@dataclass(frozen=True)
class Link:
    """A page of a benchmark, linked from the dashboard's row: a URL name that takes the benchmark's id."""

    label: str
    url_name: str
    css_class: str = ""


@dataclass(frozen=True)
class RowCount:
    """``{benchmark id: rows}`` of a model for some benchmarks, in one grouped query: ``benchmark`` is the lookup path
    from a row to its benchmark (``"case__benchmark"`` for a HypoArena match), ``filters`` narrow the rows. A value,
    not a closure, so that a protocol registered twice with the same figures is the same protocol."""

    model: type[Model]
    benchmark: str = "benchmark"
    filters: tuple[tuple[str, Any], ...] = ()

    def __call__(self, ids: list[int]) -> dict[int, int]:
        rows = self.model._default_manager.filter(**{f"{self.benchmark}__in": ids}, **dict(self.filters))
        return dict(rows.order_by().values_list(f"{self.benchmark}_id").annotate(n=Count("pk")))


@dataclass(frozen=True)
class Figure:
    """A column of the dashboard's table of a protocol's benchmarks: its heading and what each benchmark shows there.

    ``values`` takes the ids of the protocol's benchmarks on the dashboard and answers ``{benchmark id: value}`` in
    one grouped query whatever their number (a benchmark it leaves out shows 0, or "—" for a text figure). Most
    figures count rows: :meth:`counting` makes one from a model and the path from it to its benchmark."""

    heading: str
    values: Callable[[list[int]], Mapping[int, Any]]
    numeric: bool = True  # a count (right-aligned, with thousands separators), or a text (a judge's name, say)
    help: str = ""  # what the figure counts when the heading does not say it all (the heading's tooltip)

    @classmethod
    def counting(cls, heading: str, model: type[Model], benchmark: str = "benchmark", help: str = "", **filters: Any) -> Figure:  # noqa: A002, ANN401
        """A figure counting ``model`` rows per benchmark (:class:`RowCount`)."""
        return cls(heading, RowCount(model, benchmark, tuple(sorted(filters.items()))), help=help)


@dataclass(frozen=True)
class SelectionRoute:
    """A selection prefix that sends a run of another protocol's benchmarks to this app's task kind: ``--pairs
    controls`` on a Lit2Test benchmark judges the diagnostic controls."""

    protocol: str
    prefix: str
    task_kind: str
    help: str


@dataclass(frozen=True)
class ProtocolSpec:
    name: str
    label: str
    run_types: tuple[RunType, ...] = ()
    selection_help: str = "all"  # the task-selection grammar (``run_judge --select``), e.g. "all · batch:NAME · sample:N"
    selection_option: str = ""  # another name ``run_judge`` takes for ``--select`` (Lit2Test's ``--pairs``)
    benchmark_page: str = ""  # URL name of the benchmark's own page (the dashboard's benchmark link redirects there)
    # A view that renders the benchmark's page at the dashboard's own benchmark URL instead of a redirect.
    benchmark_view: Callable[[HttpRequest, Benchmark], HttpResponse] | None = None
    links: tuple[Link, ...] = ()  # the dashboard row's links
    figures: tuple[Figure, ...] = ()  # the columns of the dashboard's table of the protocol's benchmarks
    urls: str = ""  # the app's URLconf module, included by the root URLconf
    actions: tuple[Link, ...] = ()  # links of the dashboard and the runs page that take no benchmark ("Launch a ...")
    # the dashboard's panel of the protocol (an import form, say): (request, whether the dashboard's POST is for it) ->
    # (its template's context, the page's answer when it handled the POST); and its template
    panel: Callable[[HttpRequest, bool], tuple[dict[str, Any], HttpResponse | None]] | None = None
    panel_template: str = ""
    new_version_url: str = ""  # URL name (benchmark id) of the page that makes a benchmark's next version
    import_command: str = ""  # how its benchmarks arrive, named in refusals
    report_command: str = ""
    routes: tuple[SelectionRoute, ...] = ()
    holds_benchmarks: bool = True
    default: bool = False  # the protocol of a benchmark created without naming one

    @property
    def phrase(self) -> str:
        """The label with its article: "a Reconstruction", "an Intrinsic scoring"."""
        return f"{'an' if self.label[0].lower() in 'aeiou' else 'a'} {self.label}"

    def run_type(self, name: str) -> RunType | None:
        return next((t for t in self.run_types if t.name == name), None)


protocols: Registry[ProtocolSpec] = Registry("protocol")
judge_subjects: Registry[Any] = Registry("judging task kind")  # jobs.subjects.JudgeSubjects, keyed by name


def protocol_register(spec: ProtocolSpec) -> ProtocolSpec:
    """Register a protocol (call it from the app's ``AppConfig.ready()``); a second protocol of one name raises."""
    if spec.default and any(p.default and p.name != spec.name for p in protocols.values()):
        raise ValueError(f"protocol {spec.name!r} claims to be the default, but another protocol is already")
    return protocols.register(spec.name, spec)


def protocol_spec(name: str) -> ProtocolSpec:
    return protocols[name]


def benchmark_protocols() -> list[ProtocolSpec]:
    """The protocols whose benchmarks this installation holds, in registration order."""
    return [p for p in protocols.values() if p.holds_benchmarks]


def protocol_label(name: str) -> str:
    """The label of a protocol name; the name itself when no installed app registers it."""
    spec = protocols.get(name)
    return spec.label if spec is not None else name


def protocol_phrase(name: str) -> str:
    """ "a Reconstruction", "an Intrinsic scoring": the protocol's label with its article, for refusals."""
    spec = protocols.get(name)
    return spec.phrase if spec is not None else f"a {name}"


def foreign_benchmark(benchmark: Benchmark, protocol: str, what: str) -> str | None:
    """Why ``what`` (a protocol's files, say) cannot go into ``benchmark`` of another protocol, naming the benchmark's
    protocol and the command that imports its own files; None when the benchmark is of ``protocol``."""
    if benchmark.protocol == protocol:
        return None
    spec = protocols.get(benchmark.protocol)
    own = f"; its own files are imported with {spec.import_command}" if spec is not None and spec.import_command else ""
    return f"{benchmark} is a {protocol_label(benchmark.protocol)} benchmark: {what} go into a new benchmark name (or another version){own}"


def default_protocol() -> str:
    """The name of the default protocol (a benchmark created without one follows it)."""
    for spec in protocols.values():
        if spec.default:
            return spec.name
    raise LookupError("no installed protocol app is the default; install one that registers default=True")


def validate_protocol(value: str) -> None:
    """A model-field validator: ``value`` names an installed protocol that holds benchmarks."""
    if value not in [p.name for p in benchmark_protocols()]:
        known = ", ".join(p.name for p in benchmark_protocols()) or "none"
        raise ValidationError(f"{value!r} is not an installed protocol (installed: {known})")


def validate_subjects(value: str) -> None:
    """A model-field validator: ``value`` names a registered judging task kind."""
    if value not in judge_subjects:
        raise ValidationError(
            f"{value!r} is not a registered judging task kind (registered: {', '.join(judge_subjects) or 'none'})"
        )


def launchable_protocols() -> list[ProtocolSpec]:
    """The protocols whose benchmarks take judge runs (they have run types): what the judge-run form offers."""
    return [p for p in benchmark_protocols() if p.run_types]


def protocols_judging(task_kind: str) -> list[ProtocolSpec]:
    """The protocols with a run type that makes this judging task kind: where a feature built on that kind's subjects
    can be offered (human calibration studies label the subjects of canonical-pair runs)."""
    return [p for p in benchmark_protocols() if any(t.task_kind == task_kind for t in p.run_types)]


def run_types_for(protocol: str) -> tuple[RunType, ...]:
    spec = protocols.get(protocol)
    return spec.run_types if spec is not None else ()


def all_run_types() -> list[RunType]:
    """Every run type of every installed protocol, each name once (the first protocol's label), for the launch form."""
    seen: dict[str, RunType] = {}
    for spec in benchmark_protocols():
        for run_type in spec.run_types:
            seen.setdefault(run_type.name, run_type)
    return list(seen.values())


def all_run_options() -> list[RunOption]:
    """Every extra run option of every run type, each name once."""
    seen: dict[str, RunOption] = {}
    for run_type in all_run_types():
        for option in run_type.options:
            seen.setdefault(option.name, option)
    return list(seen.values())


def selection_routes(protocol: str) -> list[SelectionRoute]:
    """The selection prefixes other apps route to their own task kinds on this protocol's benchmarks."""
    return [r for spec in protocols.values() for r in spec.routes if r.protocol == protocol]


def task_kind_for(*, protocol: str, run_type: str, selection: str) -> str | None:
    """The judging task kind a run of this protocol, run type and selection makes: a selection prefix routed to
    another app's kind (``controls`` on a Lit2Test benchmark), else the run type's kind; None when the protocol has
    no such run type."""
    spec = protocols.get(protocol)
    chosen = spec.run_type(run_type) if spec is not None else None
    if chosen is None:
        return None
    prefix = selection.partition(":")[0]
    for route in selection_routes(protocol):
        if route.prefix == prefix:
            return route.task_kind
    return chosen.task_kind


def selection_options() -> list[str]:
    """The other names of ``run_judge --select`` that installed protocols declare, each once."""
    return sorted({p.selection_option for p in protocols.values() if p.selection_option})


def protocol_urls() -> list[str]:
    """The URLconf modules of every registered protocol app, in registration order."""
    return [p.urls for p in protocols.values() if p.urls]
