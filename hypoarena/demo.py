"""A small synthetic HypoArena benchmark made by a seeded generator, so that ``make demo`` shows HypoArena pages.

What is generated (every figure below is a constant of this module, so a test can check the database against it):

- :data:`DOMAINS`: three domains, the last a singleton domain; :data:`CASES_PER_DOMAIN` cases each, with plain
  generated text (a context, and a held-out reference conclusion for every other case);
- :data:`STRENGTHS`: eight models, one of them the source-derived ``Reference``; each submits K = :data:`K` pairs
  per case in a multi-pair domain, one in the singleton domain;
- every two submissions of a case form a match, judged in both orders by two recorded judge runs.

**How verdicts are drawn.** A model's true strength in a domain is θ = its :data:`STRENGTHS` value plus a seeded
domain offset (normal, sd :data:`DOMAIN_SD`), centered per domain (:func:`true_strengths`). In each order, the
model shown as A gets an order bias β added to its θ; the outcome is then drawn from the Davidson model with tie
parameter ν: P(A wins) = π_A / (π_A + π_B + ν√(π_Aπ_B)), P(tie) = ν√(π_Aπ_B) / (same), π = exp(θ). A win is
strong (``A>>B`` / ``B>>A``) with probability :data:`P_STRONG`, else mild (``A>B`` / ``B>A``); a tie is ``A=B``.
The second judge sees strengths perturbed by a seeded normal (sd :data:`JUDGE2_SD`) and has its own ν and β
(:data:`JUDGES`), so the two judges agree on the ranking but not on every match.

Rubric scores (one rubric run) are 1–5, drawn around 4 + θ/2 with noise and clipped, so they crowd the top of the
scale as the paper's do. Distinctness is null when K = 1.

The generator writes the files of ``FORMAT.md`` and imports them (:func:`hypoarena.importing.hypoarena_import`):
running it again imports the same lines and changes nothing.
"""

from __future__ import annotations

import math
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write

from .importing import ImportSummary, hypoarena_import

DEMO_NAME = "hypoarena-demo"
SEED = 20260412
#: (name, singleton, case id prefix)
DOMAINS: tuple[tuple[str, bool, str], ...] = (
    ("biomedical", False, "bio"),
    ("it_operations", False, "itops"),
    ("safety_investigation", True, "safety"),
)
CASES_PER_DOMAIN = 20
K = 3
REFERENCE = "Reference"
#: Base log-strengths (before the domain offset and centering). Synthetic names: no real model is rated here.
STRENGTHS: dict[str, float] = {
    "Aster-L": 0.9,
    "Birch-M": 0.6,
    REFERENCE: 0.35,
    "Cedar-S": 0.3,
    "Dahlia-7B": 0.0,
    "Elm-Mini": -0.3,
    "Fern-XS": -0.6,
    "Gorse-Tiny": -1.0,
}
DOMAIN_SD = 0.15
JUDGE2_SD = 0.2
P_STRONG = 0.5
#: (judge model, run label, ν, order bias β toward the model shown as A)
JUDGES: tuple[tuple[str, str, float, float], ...] = (
    ("demo-judge-1", "demo-arena-1", 0.6, 0.15),
    ("demo-judge-2", "demo-arena-2", 0.8, 0.25),
)
RUBRIC_RUN = ("demo-judge-1", "demo-rubric-1")

_WORDS = {
    "biomedical": ("cohort", "biomarker", "dosage", "inflammation", "trial arm", "enzyme", "follow-up", "mutation"),
    "it_operations": ("latency", "deploy", "cache", "queue depth", "error budget", "failover", "config drift", "disk"),
    "safety_investigation": ("shift change", "valve", "checklist", "alarm", "maintenance log", "pressure", "handover", "sensor"),
}


@dataclass(frozen=True)
class DemoCounts:
    """What the generator makes, from its constants (not from the rows it wrote)."""

    domains: int
    cases: int
    models: int
    submissions: int
    matches: int
    verdicts_per_run: int
    runs: int
    rubric_scores: int


def demo_counts(cases_per_domain: int = CASES_PER_DOMAIN) -> DemoCounts:
    cases = len(DOMAINS) * cases_per_domain
    models = len(STRENGTHS)
    matches = cases * models * (models - 1) // 2
    return DemoCounts(
        domains=len(DOMAINS),
        cases=cases,
        models=models,
        submissions=cases * models,
        matches=matches,
        verdicts_per_run=2 * matches,
        runs=len(JUDGES) + 1,
        rubric_scores=cases * models,
    )


def true_strengths(seed: int = SEED) -> dict[str, dict[str, float]]:
    """{domain: {model: θ}}: the strengths the first judge's verdicts are drawn from, centered per domain."""
    rng = random.Random(f"{seed}:strengths")
    out: dict[str, dict[str, float]] = {}
    for domain, _singleton, _prefix in DOMAINS:
        raw = {m: s + rng.gauss(0.0, DOMAIN_SD) for m, s in STRENGTHS.items()}
        mean = sum(raw.values()) / len(raw)
        out[domain] = {m: v - mean for m, v in raw.items()}
    return out


def davidson_probabilities(theta_a: float, theta_b: float, nu: float) -> tuple[float, float, float]:
    """(P(A wins), P(tie), P(B wins)) under the Davidson model."""
    pa, pb = math.exp(theta_a), math.exp(theta_b)
    tie = nu * math.sqrt(pa * pb)
    total = pa + pb + tie
    return pa / total, tie / total, pb / total


def _draw_verdict(rng: random.Random, theta_a: float, theta_b: float, nu: float) -> str:
    win, tie, _loss = davidson_probabilities(theta_a, theta_b, nu)
    u = rng.random()
    if u < win:
        return "A>>B" if rng.random() < P_STRONG else "A>B"
    if u < win + tie:
        return "A=B"
    return "B>>A" if rng.random() < P_STRONG else "B>A"


def _sentence(rng: random.Random, domain: str, lead: str) -> str:
    words = rng.sample(_WORDS[domain], 3)
    return f"{lead} the {words[0]} changes together with the {words[1]}, not with the {words[2]}."


def demo_records(*, cases_per_domain: int = CASES_PER_DOMAIN, seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    """The lines of each file (``FORMAT.md``), deterministic for a seed."""
    from arena.models import Benchmark

    from .services import match_orientation  # the seeded orientation the import gives a match no verdict oriented

    orientation_seed = Benchmark._meta.get_field("orientation_seed").default
    rng = random.Random(seed)
    strengths = true_strengths(seed)
    judge_rng = random.Random(f"{seed}:judge2")
    perceived = [strengths] + [
        {d: {m: t + judge_rng.gauss(0.0, JUDGE2_SD) for m, t in by_model.items()} for d, by_model in strengths.items()}
        for _ in JUDGES[1:]
    ]
    models = sorted(STRENGTHS)
    records: dict[str, list[dict[str, Any]]] = {"cases": [], "submissions": [], "verdicts": [], "rubric": []}
    rubric_judge, rubric_label = RUBRIC_RUN
    for domain, singleton, prefix in DOMAINS:
        k = 1 if singleton else K
        for i in range(1, cases_per_domain + 1):
            case_id = f"{prefix}-{i:03d}"
            case: dict[str, Any] = {
                "case_id": case_id,
                "domain": domain,
                "singleton": singleton,
                "context": f"Case {i} ({domain.replace('_', ' ')}). "
                + " ".join(_sentence(rng, domain, "Observed:") for _ in range(3)),
            }
            if i % 2:
                case["reference_conclusion"] = _sentence(rng, domain, "Concluded:")
            records["cases"].append(case)
            for model in models:
                pairs = [
                    {
                        "hypothesis": _sentence(rng, domain, f"Hypothesis {n + 1}:"),
                        "evidence": _sentence(rng, domain, "Evidence:"),
                    }
                    for n in range(k)
                ]
                records["submissions"].append(
                    {"case_id": case_id, "model": model, "reference": model == REFERENCE, "pairs": pairs}
                )
                theta = strengths[domain][model]

                def score(rng: random.Random = rng, theta: float = theta) -> int:
                    return max(1, min(5, round(4 + theta / 2 + rng.gauss(0.0, 0.6))))

                records["rubric"].append(
                    {
                        "case_id": case_id,
                        "model": model,
                        "judge": rubric_judge,
                        "run_label": rubric_label,
                        "pairs": [{"g": score(), "l": score(), "j": score()} for _ in range(k)],
                        "b": score(),
                        "d": score() if k > 1 else None,
                        "u": score(),
                    }
                )
            for x, one in enumerate(models):
                for other in models[x + 1 :]:
                    first, second = match_orientation(orientation_seed, case_id, one, other)
                    for (judge, label, nu, bias), seen in zip(JUDGES, perceived, strict=True):
                        for order, (a, b) in (("original", (first, second)), ("reverse", (second, first))):
                            verdict = _draw_verdict(rng, seen[domain][a] + bias, seen[domain][b], nu)
                            records["verdicts"].append(
                                {
                                    "case_id": case_id,
                                    "model_a": a,
                                    "model_b": b,
                                    "order": order,
                                    "verdict": verdict,
                                    "judge": judge,
                                    "run_label": label,
                                }
                            )
    return records


def demo_build(*, cases_per_domain: int = CASES_PER_DOMAIN, seed: int = SEED, name: str = DEMO_NAME) -> ImportSummary:
    """Write the demo's files and import them into benchmark ``name`` (created with protocol hypoarena). Running it
    again changes nothing: the import finds every line already stored."""
    records = demo_records(cases_per_domain=cases_per_domain, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        files: dict[str, Path] = {}
        for kind, rows in records.items():
            path = Path(folder) / f"{kind}.jsonl"
            jsonl_write(path, rows)
            files[kind] = path
        return hypoarena_import(
            name=name,
            files=files,
            description=f"Synthetic HypoArena demo (seed {seed}): verdicts drawn from known strengths; see hypoarena/demo.py.",
        )
