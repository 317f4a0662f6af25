"""The judge-reliability panel of a judge run, for every kind that compares two sides (issue 26): one JSON-able document
that ``manage.py judge_reliability``, the API (``/api/runs/<id>/reliability/``) and the run pages all show.

A judging task kind that compares two sides registers ``sides`` on its :class:`~jobs.subjects.JudgeSubjects`: a
function of a run that returns its verdicts as :class:`Sides` (numpy arrays, one entry per stored verdict, read in one
query, plus one for the judged texts' lengths). The engine knows nothing else of what was compared; the statistics are
``arena.stats.reliability``'s (see there for each figure and why the intervals are an item bootstrap).

Blindness: the document names participants and shows raw answers of invalid verdicts. It is for researchers only (the
API and the run pages are researcher pages); nothing of it reaches an annotator or a judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.utils.translation import gettext as _

from arena.models import JudgeRun

from .subjects import subjects_of

#: Invalid verdicts shown as examples, and how much of each raw answer.
EXAMPLES = 3
EXAMPLE_CHARS = 300

# A model's family from its name, where the data do not say it: the vendor behind the common model lines. A name that
# matches none has no family (self-preference is then "not estimable: family unknown").
_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"gpt|chatgpt|o[1345](?:\b|-)|openai|davinci", "openai"),
    (r"claude|anthropic", "anthropic"),
    (r"gemini|gemma|palm|bard|google", "google"),
    (r"glm|zhipu|chatglm", "zhipu"),
    (r"deepseek", "deepseek"),
    (r"llama|meta-", "meta"),
    (r"qwen|qwq|alibaba", "alibaba"),
    (r"mistral|mixtral|codestral|ministral", "mistral"),
    (r"grok|xai", "xai"),
    (r"kimi|moonshot", "moonshot"),
    (r"\bphi-?\d", "microsoft"),
    (r"command-|cohere", "cohere"),
)


def model_family(name: str) -> str | None:
    """The family of a model named ``name`` ("GPT 5.2" → openai, "google/gemini-3.1-pro" → google), or None."""
    low = name.lower()
    for pattern, family in _FAMILIES:
        if re.search(pattern, low):
            return family
    return None


def word_count(value: Any) -> int:  # noqa: ANN401
    """Words of a judged text: a string, or the string values of a JSON object or list (nested), split on whitespace."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(word_count(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(word_count(v) for v in value)
    return 0


def lengths(keys: np.ndarray, words: dict[Any, int]) -> np.ndarray:
    """``words[key]`` for each key (NaN where there is none), looked up without a Python loop over the verdicts."""
    if not len(keys):
        return np.zeros(0)
    known = np.array(list(words), dtype=np.int64) if words else np.zeros(0, dtype=np.int64)
    values = np.array(list(words.values()), dtype=float)
    order = np.argsort(known)
    known, values = known[order], values[order]
    at = np.clip(np.searchsorted(known, keys), 0, max(len(known) - 1, 0))
    found = (known[at] == keys) if len(known) else np.zeros(len(keys), dtype=bool)
    return np.where(found, values[at] if len(known) else np.nan, np.nan)


@dataclass
class Sides:
    """A run's verdicts as two-sided comparisons (see ``arena.stats.reliability`` for each array's meaning): ``item``
    the compared subject, ``side_a``/``side_b`` integer keys of the two sides (a participant's id, or a key the kind
    chooses for a side that is not a participant), ``a_first`` (1, 0, or -1 not recorded), ``order`` (0 or 1, the
    presentation order), ``outcome`` (1 A won, 0 B won, 0.5 tie, NaN invalid), ``words_a``/``words_b``."""

    item: np.ndarray
    side_a: np.ndarray
    side_b: np.ndarray
    a_first: np.ndarray
    order: np.ndarray
    outcome: np.ndarray
    words_a: np.ndarray
    words_b: np.ndarray
    names: dict[int, str] = field(default_factory=dict)  # side key -> how researchers name it
    families: dict[int, str | None] = field(default_factory=dict)  # side key -> its family where the data say it
    judge_family: str | None = None  # the run's judge's family where the data say it (else inferred from its name)


def sides_of(run: JudgeRun) -> Sides | None:
    """The run's verdicts as :class:`Sides`, or None when its kind does not compare two sides."""
    kind = subjects_of(run)
    hook = getattr(kind, "sides", None)
    return hook(run) if hook is not None else None


def _families(sides: Sides, keys: np.ndarray) -> tuple[dict[int, str | None], dict[int, str]]:
    """Each side key's family and where it came from ("declared" by the data, "name" inferred, "unknown")."""
    families, sources = {}, {}
    for key in keys.tolist():
        declared = sides.families.get(key)
        inferred = model_family(sides.names.get(key, ""))
        families[key] = declared or inferred
        sources[key] = "declared" if declared else ("name" if inferred else "unknown")
    return families, sources


def _effect(effect: Any, *, value: str) -> dict[str, Any]:  # noqa: ANN401
    return {
        "estimable": effect.estimable,
        value: effect.estimate,
        "ci": list(effect.ci) if effect.ci else None,
        "reason": effect.reason,
        "why": _reasons().get(effect.reason, effect.reason),
        "replicates": effect.replicates,
    }


def _reasons() -> dict[str, str]:
    from arena.stats import reliability as r

    return {
        r.NO_KNOWN_ORDER: _("no verdict of this run records which side was shown first"),
        r.NO_FAMILY: _("the judge's family is unknown, or none of the participants' is known"),
        r.NO_OWN_FAMILY: _("no participant of the judge's family was compared with one of another family"),
        r.CONFOUNDED: _(
            "with one judge alone, a preference for its own family cannot be told from that family's participants "
            "being stronger; add a reference run of the same items by a judge of another family"
        ),
        r.NOT_IDENTIFIED: _("the comparisons do not separate this effect from the participants' strengths"),
        r.NO_DATA: _("the run has no decisive verdict"),
    }


def _baseline(b: Any) -> dict[str, Any]:  # noqa: ANN401
    return {"agree": b.agree, "n": b.n, "share": b.share}


def _invalid_examples(run: JudgeRun) -> list[dict[str, Any]]:
    model = subjects_of(run).judgment_model
    rows = model.objects.filter(run=run, status="invalid").order_by("id").values("id", "order", "errors", "raw_response")
    return [
        {
            "id": row["id"],
            "order": row["order"],
            "errors": [str(e) for e in (row["errors"] or [])][:3],
            "answer": (row["raw_response"] or "")[:EXAMPLE_CHARS],
        }
        for row in rows[:EXAMPLES]
    ]


def _stack(target: Sides, references: list[Sides]) -> tuple[Sides, np.ndarray]:
    """The run's sides and its references' in one set of arrays, with the judge index of each verdict."""
    parts = [target, *references]
    judge = np.concatenate([np.full(len(s.outcome), k, dtype=np.int64) for k, s in enumerate(parts)])
    names: dict[int, str] = {}
    families: dict[int, str | None] = {}
    for s in parts:
        names |= s.names
        families |= {k: v for k, v in s.families.items() if v}
    joined = Sides(
        **{
            name: np.concatenate([getattr(s, name) for s in parts])
            for name in ("item", "side_a", "side_b", "a_first", "order", "outcome", "words_a", "words_b")
        },
        names=names,
        families=families,
        judge_family=target.judge_family,
    )
    return joined, judge


def _judge_family(run: JudgeRun, sides: Sides) -> tuple[str | None, str]:
    if sides.judge_family:
        return sides.judge_family, "declared"
    inferred = model_family(run.judge_model)
    return inferred, "name" if inferred else "unknown"


def _unavailable(run: JudgeRun, reason: str) -> dict[str, Any]:
    return {"run": _run_part(run), "available": False, "unavailable_reason": reason}


def _run_part(run: JudgeRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "benchmark": str(run.benchmark),
        "benchmark_id": run.benchmark_id,
        "judge_model": run.judge_model,
        "label": run.label,
        "subjects": run.subjects,
        "subjects_label": run.get_subjects_display(),
    }


def run_reliability(
    run: JudgeRun, *, references: Iterable[JudgeRun] = (), replicates: int | None = None, seed: int | None = None
) -> dict[str, Any]:
    """The judge-reliability document of ``run`` (see the module). ``references``: other runs of the same kind and
    benchmark, by judges of other families, that make self-preference estimable. Raises ``ValueError`` naming the
    reference that does not fit."""
    from arena.stats import reliability as stats

    replicates = stats.DEFAULT_REPLICATES if replicates is None else replicates
    seed = stats.DEFAULT_SEED if seed is None else seed
    # References are checked first: a run whose document is unavailable (a rubric run) refuses a wrong one as every
    # other run does, rather than ignoring it.
    references = list(references)
    for ref in references:
        if ref.benchmark_id != run.benchmark_id or ref.subjects != run.subjects or ref.pk == run.pk:
            raise ValueError(
                f"reference run {ref.pk} must be another run of {run.get_subjects_display()} on {run.benchmark} "
                f"(it is a run of {ref.get_subjects_display()} on {ref.benchmark}); name another run"
            )
    sides = sides_of(run)
    if sides is None:
        return _unavailable(run, _("a run of %(kind)s does not compare two sides") % {"kind": run.get_subjects_display()})
    ref_sides = [sides_of(ref) for ref in references]
    joined, judge = _stack(sides, [s for s in ref_sides if s is not None])
    keys, side_a, side_b = _codes(joined)
    families, sources = _families(joined, keys)
    judge_families = [_judge_family(run, sides)] + [
        _judge_family(ref, s) for ref, s in zip(references, ref_sides, strict=True) if s
    ]
    own_a = own_b = None
    fam_a = np.array([families[k] for k in keys.tolist()], dtype=object)
    if judge_families[0][0] and any(families.values()):
        jf = np.array([f for f, _src in judge_families], dtype=object)[judge]
        own_a = fam_a[side_a] == jf
        own_b = fam_a[side_b] == jf
    result = stats.judge_reliability(
        item=joined.item,
        side_a=side_a,
        side_b=side_b,
        a_first=joined.a_first,
        order=joined.order,
        outcome=joined.outcome,
        judge=judge,
        own_a=own_a,
        own_b=own_b,
        words_a=joined.words_a,
        words_b=joined.words_b,
        replicates=replicates,
        seed=seed,
    )
    own_family = sorted(
        joined.names.get(k, str(k)) for k in keys.tolist() if judge_families[0][0] and families[k] == judge_families[0][0]
    )
    return _document(run, result, references, judge_families[0], own_family, sources, joined, keys)


def _codes(sides: Sides) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The side keys (sorted) and each verdict's sides as codes 0..P-1."""
    keys, inverse = np.unique(np.concatenate([sides.side_a, sides.side_b]).astype(np.int64), return_inverse=True)
    n = len(sides.side_a)
    return keys, inverse[:n], inverse[n:]


def _document(
    run: JudgeRun,
    r: Any,  # noqa: ANN401
    references: list[JudgeRun],
    judge_family: tuple[str | None, str],
    own_family: list[str],
    sources: dict[int, str],
    sides: Sides,
    keys: np.ndarray,
) -> dict[str, Any]:
    c, f = r.consistency, r.first_shown
    return {
        "run": _run_part(run),
        "available": True,
        "references": [{"id": ref.pk, "judge_model": ref.judge_model, "label": ref.label} for ref in references],
        "verdicts": {"total": r.verdicts, "valid": r.valid, "invalid": r.invalid, "ties": r.ties},
        "position_consistency": {
            "items": c.items,
            "consistent": c.consistent,
            "flipped": c.flipped,
            "with_tie": c.with_tie,
            "share": c.share,
        },
        "first_shown": {
            "decisive": f.decisive,
            "first_wins": f.first_wins,
            "share": f.share,
            "items": f.items,
            "primacy": f.primacy,
            "recency": f.recency,
            "fairness": f.fairness,
        },
        "order_effect": _effect(r.order_effect, value="gamma"),
        "self_preference": _effect(r.self_preference, value="delta")
        | {
            "judge_family": judge_family[0],
            "judge_family_source": judge_family[1],
            "participants_of_family": own_family,
            "own_family_decisive": r.own_family.get("decisive"),
            "own_family_won": r.own_family.get("won"),
        },
        "baselines": {
            "longer_wins": _baseline(r.longer_wins),
            "shorter_wins": _baseline(r.shorter_wins),
            "first_shown_wins": _baseline(r.first_wins),
        },
        "participants": [
            {"name": sides.names.get(k, str(k)), "family": _family_of(sides, k), "family_source": sources[k]}
            for k in keys.tolist()
        ],
        "invalid_examples": _invalid_examples(run),
        "bootstrap": {"unit": "item", "replicates": r.replicates, "seed": r.seed, "level": r.level},
    }


def _family_of(sides: Sides, key: int) -> str | None:
    return sides.families.get(key) or model_family(sides.names.get(key, ""))
