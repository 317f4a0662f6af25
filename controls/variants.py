"""Deterministic template variants of a six-field proposal (no model, no randomness but a seeded choice of cases).

Named ``variants`` rather than ``templates`` so that it is not mistaken for Django templates. Pure functions on
plain dicts; no Django.

Each generator has a name and a version that the variants it writes record (``ControlVariant.generator`` and
``generator_version``): change a template's wording and bump its version, so that stored variants still say
which text made them.

* ``falsifier_off``: the same proposal with ``falsifying_result`` emptied (``""``); every other field verbatim.
* ``rendering``: the six fields as one prose text. Each field's text appears verbatim, in contract order,
  joined by fixed connecting phrases and without field names (the control asks whether the *form* moves the
  verdict, so the prose must not drop, reword or label anything).
* ``clear``: one field replaced with an obvious defect, the five others verbatim:

  - grounding (``literature_gap``): a gap that cites nothing and denies that any prior work exists, which the
    four supplied papers of every context contradict;
  - decisive metric (``decisive_metric``): a yes/no "did it run" flag, identical under the supporting and the
    falsifying outcome, so it cannot decide between them;
  - falsifiability (``falsifying_result``): a refuting observation no experiment can produce (a metric higher
    and lower than the baseline at once), which makes the hypothesis unfalsifiable.

  The defect texts are fixed and do not depend on the proposal: an obvious defect needs no naturalness (that
  is what the LLM-made ``subtle`` kind is for).
* reserve templates, used by the model path (``controls.llm``) for a ``subtle`` or ``sham`` variant whose 4
  model rounds all failed (the release needed them for 8 of 20 cases):

  - reserve subtle: the original field kept verbatim, followed by one fixed sentence that quietly undoes it —
    milder than ``clear``, which throws the field away: grounding keeps its citations but then claims the
    supplied papers already settle the question (a misstated gap); the decisive metric keeps its measurement
    but then lets one overall average decide (a convenient aggregate); the falsifying result keeps its
    observation but then explains a negative result away as noise (near-unfalsifiable);
  - reserve sham: a fixed lead-in phrase before the original text, which is otherwise verbatim. It is a weaker
    sham than a model's style-matched rewrite: it changes almost nothing, so a sham-equivalence gate passed on
    reserve shams says less, and it does not match the length of the reserve subtle edit. Reports can tell
    reserves apart by ``origin == "template"`` and ``provenance["reserve"]``.

  When the original field is so long that the addition would pass the schema's limit, the original's end is
  cut to make room (deterministically), so a reserve always validates.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.schemas import SIX_FIELD

SIX: tuple[str, ...] = SIX_FIELD.fields
TARGET_FIELD: dict[str, str] = {
    "grounding": "literature_gap",
    "decisive_metric": "decisive_metric",
    "falsifiability": "falsifying_result",
}


@dataclass(frozen=True)
class Generator:
    name: str
    version: str


FALSIFIER_OFF = Generator("falsifier-off", "v1")
RENDERING = Generator("schema-to-prose", "v1")
CLEAR = {target: Generator(f"clear-{target.replace('_', '-')}", "v1") for target in TARGET_FIELD}

RESERVE_SUBTLE = {target: Generator(f"reserve-subtle-{target.replace('_', '-')}", "v1") for target in TARGET_FIELD}
RESERVE_SHAM = Generator("reserve-sham", "v1")

CLEAR_DEFECT: dict[str, str] = {
    "grounding": (
        "This question has never been studied: no prior work addresses it, and the existing literature offers "
        "nothing relevant to build on, so no paper needs to be cited."
    ),
    "decisive_metric": ("Whether each configuration finishes training without errors, reported as a yes/no flag per run."),
    "falsifiability": (
        "The hypothesis would be refuted only if the primary metric were simultaneously higher and lower than "
        "the baseline's in the same run on the same data."
    ),
}

# Appended to the original field by the reserve subtle template (a space is put between).
RESERVE_SUBTLE_DEFECT: dict[str, str] = {
    "grounding": (
        "Taken together, the supplied papers already settle this question in favour of the hypothesis, so the "
        "remaining gap is mainly one of confirming their findings in a new setting."
    ),
    "decisive_metric": (
        "For the final decision, however, only the overall average score across all tasks, seeds and "
        "configurations will be compared, as a single number."
    ),
    "falsifiability": (
        "A result short of this would more likely reflect implementation noise or tuning than a problem with the "
        "hypothesis, and would call for further runs rather than a rejection."
    ),
}
# Put before the original field by the reserve sham template.
RESERVE_SHAM_LEAD_IN = "Stated precisely: "

# Connecting phrases of the prose rendering, one before each field (contract order). No field names.
PROSE_LEADS: tuple[tuple[str, str], ...] = (
    ("literature_gap", ""),
    ("hypothesis", "We therefore hypothesise the following. "),
    ("minimal_test", "The smallest experiment that can tell us whether this holds is as follows. "),
    ("decisive_metric", "What decides the question is this measurement. "),
    ("supporting_result", "If the hypothesis is right, we expect to see the following. "),
    ("falsifying_result", "If it is wrong, we expect this instead. "),
)


def _six(content: Mapping[str, object]) -> dict[str, str]:
    """The six fields as text; a precondition of every generator (a missing or non-text field is a caller error)."""
    missing = [f for f in SIX if not isinstance(content.get(f), str)]
    if missing:
        raise ValueError(f"not a six-field proposal: {', '.join(missing)} missing or not text")
    return {f: str(content[f]) for f in SIX}


def falsifier_off(content: Mapping[str, object]) -> dict[str, str]:
    """The proposal without its falsifying result (the field present and empty)."""
    return _six(content) | {"falsifying_result": ""}


def render_prose(content: Mapping[str, object]) -> str:
    """The six fields as paragraphs of prose, each field's text verbatim (not stripped, not rewrapped)."""
    fields = _six(content)
    paragraphs = [lead + fields[name] for name, lead in PROSE_LEADS if fields[name].strip()]
    return "\n\n".join(paragraphs)


def clear_corruption(content: Mapping[str, object], target: str) -> dict[str, str]:
    """The proposal with the target dimension's field replaced by an obvious defect; the other five verbatim."""
    if target not in TARGET_FIELD:
        raise ValueError(f"unknown target {target!r}; the targets are {', '.join(TARGET_FIELD)}")
    return _six(content) | {TARGET_FIELD[target]: CLEAR_DEFECT[target]}


def _fit(text: str, room: int) -> str:
    """``text`` cut at the end to at most ``room`` characters (a reserve must stay within the schema's limit)."""
    return text if len(text) <= room else text[: max(0, room)].rstrip()


def reserve_subtle(content: Mapping[str, object], target: str) -> dict[str, str]:
    """The reserve for a subtle variant: the target field verbatim plus a fixed defect sentence; the other five
    verbatim. Milder than :func:`clear_corruption` (the field's own content stays)."""
    if target not in TARGET_FIELD:
        raise ValueError(f"unknown target {target!r}; the targets are {', '.join(TARGET_FIELD)}")
    fields = _six(content)
    name, defect = TARGET_FIELD[target], RESERVE_SUBTLE_DEFECT[target]
    original = _fit(fields[name].rstrip(), SIX_FIELD.max_chars - len(defect) - 1)
    return fields | {name: f"{original} {defect}" if original else defect}


def reserve_sham(content: Mapping[str, object], target: str) -> dict[str, str]:
    """The reserve for a sham variant: a fixed lead-in before the target field's text; the other five verbatim.
    Weaker than a model-made sham (see the module docstring)."""
    if target not in TARGET_FIELD:
        raise ValueError(f"unknown target {target!r}; the targets are {', '.join(TARGET_FIELD)}")
    fields = _six(content)
    name = TARGET_FIELD[target]
    return fields | {name: RESERVE_SHAM_LEAD_IN + _fit(fields[name], SIX_FIELD.max_chars - len(RESERVE_SHAM_LEAD_IN))}


def choose_cases(candidates: Mapping[str, Sequence[str]], *, contexts: int, seed: int) -> list[tuple[str, str]]:
    """A seeded choice of ``contexts`` contexts and, in each, one source (e.g. a model name), as (context, source).

    The same candidates, count and seed always give the same cases, whatever order the mapping or the
    sequences were built in (both are sorted first). Contexts without candidates are never chosen; asking for
    more contexts than there are gives all of them.
    """
    rng = random.Random(seed)
    usable = sorted(c for c, sources in candidates.items() if sources)
    chosen = sorted(rng.sample(usable, min(contexts, len(usable))))
    return [(context, rng.choice(sorted(candidates[context]))) for context in chosen]


def control_id(context_id: str, source: str, kind: str, target: str | None = None) -> str:
    """The id of a generated variant: readable, stable across runs, and internal (it names the source model)."""
    slug = source.replace(" ", "_")
    return f"{context_id}__{slug}__{kind}" + (f"__{target}" if target else "")
