"""The bibliography freeze of Reconstruction seeds, and the error a refused Reconstruction request raises.

A seed's bibliography is frozen once (its eligible references' anonymous ids and shown text, hashed) and never
changes under the prompts built from it: every proposer prompt is built from the frozen text and nothing else. The
import (:mod:`reconstruction.importing`) freezes each seed with enough eligible references; the freeze is here, apart
from the import, because it is the rule every prompt depends on, whatever wrote the references.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from arena.errors import AppError

from . import leakage
from .models import BibliographyFreeze, SeedPaper


class ReconstructionError(AppError):
    """A request about Reconstruction data that cannot be carried out; nothing was written. An
    :class:`~arena.errors.AppError`, so a command and the API show its message to the person who asked."""


@dataclass(frozen=True)
class FreezeResult:
    """The seed's freeze, and whether this call made it (a freeze already stored is returned as it is)."""

    freeze: BibliographyFreeze
    created: bool


def seed_audit(*, seed: SeedPaper) -> dict[str, Any]:
    """The audit's results for a seed as stored with its freeze and shown on its page."""
    refs = list(seed.references.all())
    excluded = [
        {"anon_id": r.anon_id, "reason": r.exclusion_reason} for r in sorted(refs, key=lambda r: r.number) if not r.eligible
    ]
    flagged = [{"anon_id": r.anon_id, "scrubbed": r.flags} for r in sorted(refs, key=lambda r: r.number) if r.flags]
    return {
        "references": len(refs),
        "eligible": sum(r.eligible for r in refs),
        "excluded": excluded,
        "scrubbed": flagged,
        "reasons": dict(
            Counter(reason.split(" (")[0] for r in refs if not r.eligible for reason in r.exclusion_reason.split("; "))
        ),
        "thresholds": {
            "min_eligible": leakage.MIN_ELIGIBLE,
            "span_n": leakage.SPAN_N,
            "jaccard_n": leakage.JACCARD_N,
            "jaccard_max": leakage.JACCARD_MAX,
        },
    }


def bibliography_freeze(*, seed: SeedPaper) -> FreezeResult:
    """Freeze a seed's bibliography: its eligible references' anonymous ids and shown text, hashed. Idempotent: the
    same text again returns the stored freeze. Raises :class:`ReconstructionError` when the seed has fewer than
    ``leakage.MIN_ELIGIBLE`` eligible references, when its text would differ from a stored freeze, or when the text
    holds what no prompt may (the seed's title, identifying metadata, an original id) — the last would be a bug in
    the audit, checked again here because a prompt is built from nothing else."""
    refs = list(seed.references.all())
    eligible = [r for r in refs if r.eligible]
    if len(eligible) < leakage.MIN_ELIGIBLE:
        audit = seed_audit(seed=seed)
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(audit["reasons"].items())) or "none excluded"
        raise ReconstructionError(
            f"seed {seed.external_id!r} has {len(eligible)} eligible reference(s) of {len(refs)} ({why}); a seed needs at least "
            f"{leakage.MIN_ELIGIBLE} references published strictly before its date {seed.t0.isoformat()} to be frozen and used"
        )
    text = leakage.bibliography_text((r.anon_id, r.shown_title, r.shown_abstract) for r in eligible)
    bad = leakage.shown_text_problems(text, seed_title=seed.title, original_ids=[r.original_id for r in refs])
    if bad:
        raise ReconstructionError(f"seed {seed.external_id!r}: the shown bibliography would hold {'; '.join(bad)}; not frozen")
    digest = leakage.bibliography_hash(text)
    old = BibliographyFreeze.objects.filter(seed=seed).first()
    if old is not None:
        if old.content_hash != digest:
            raise ReconstructionError(
                f"seed {seed.external_id!r}: its bibliography was frozen at {old.frozen_at:%Y-%m-%d %H:%M} with hash {old.content_hash[:12]}…; "
                f"the text would now hash to {digest[:12]}…. A frozen bibliography does not change: import the seed under a new seed_id"
            )
        return FreezeResult(old, False)
    return FreezeResult(
        BibliographyFreeze.objects.create(seed=seed, shown_text=text, content_hash=digest, audit=seed_audit(seed=seed)), True
    )


def render_bibliography(seed: SeedPaper) -> str:
    """The bibliography text every proposer prompt is built from: the frozen shown text (anonymous ids, titles,
    abstracts only). Raises :class:`ReconstructionError` when the seed is not frozen, so no prompt is built from
    anything else."""
    freeze = BibliographyFreeze.objects.filter(seed=seed).first()
    if freeze is None:
        raise ReconstructionError(
            f"seed {seed.external_id!r} has no frozen bibliography; freeze it first (it needs {leakage.MIN_ELIGIBLE} eligible references)"
        )
    return freeze.shown_text
