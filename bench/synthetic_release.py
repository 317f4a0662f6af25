"""A synthetic Lit2Test release of any size, with known strengths, for the scale benchmarks.

It writes the same files and JSONL schema as the release sample (``contexts.jsonl``, ``proposals.jsonl``,
``corrected_folded_pairs.jsonl``; see the sample's README and ``arena/release.py``), so the importer reads it
exactly as it reads the release, plus ``synthetic.json`` (the generator's parameters and the true strengths;
the importer does not read it).

Sizes: every context gets every one of the C(n_models, 2) canonical pairs, each judged in both presentation
orders. The release has 4 models per context (6 pairs, 12 ordered judgments per context); with 8 models a
context has 28 pairs and 56 ordered judgments, so the issue's 2,000 contexts x 8 models is
2,000 x 28 x 2 = 112,000 ordered judgments (56,000 folded lines). ``--pairs-per-context`` takes a seeded
subset of the pairs instead.

Each ordered judgment is drawn from the Bradley-Terry model on the true strengths (``P(i beats j) =
1 / (1 + exp(theta_j - theta_i))``), with a tie (``"tie"``) with probability ``--tie``; the two orders of a
pair are independent draws, so order-sensitive pairs occur as in real data. Everything follows from
``--seed``. Texts are short synthetic strings (contexts with text carry four papers each).

    .venv/bin/python bench/synthetic_release.py OUT_DIR --contexts 2000 --models 8 [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import zlib
from pathlib import Path
from typing import Any

import numpy as np

SIX = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")
CONTEXTS_PER_BATCH = 40  # as in the release: five batches of 40 contexts


def model_names(n_models: int) -> list[str]:
    """Names with a space and a hyphen, as the release spells its models (``GPT 5.2``, ``GLM-5``)."""
    return [f"Model {i:02d}" if i % 2 else f"Model-{i:02d}" for i in range(1, n_models + 1)]


def true_strengths(n_models: int) -> np.ndarray:
    """Evenly spaced strengths, centred on zero (the release's spread: about -1.3 to 1.3)."""
    return np.linspace(1.3, -1.3, n_models) if n_models > 1 else np.zeros(1)


def context_id(index: int) -> str:
    return f"synth_b{index // CONTEXTS_PER_BATCH:03d}_{index:06d}_topic__v02_synth"


def pair_id(context: str, models: tuple[str, str]) -> str:
    first, second = (m.replace(" ", "_") for m in sorted(models))
    return f"{context}__{first}__vs__{second}"


def _context_row(cid: str, batch: str) -> dict[str, Any]:
    return {
        "context_id": cid,
        "base_topic_id": cid.split("__")[0],
        "condition": "coherent_neighborhood",
        "field": "synthetic field",
        "research_context": f"Research context of {cid}.",
        "open_problem": "An open problem.",
        "resource_constraint": "<=8 A100 GPU-days.",
        "task_instruction": "Formulate one minimal falsifiable next-step test.",
        "source_policy": "synthetic",
        "batch": batch,
        "papers": [
            {
                "title": f"Paper {i} of {cid}",
                "url": f"https://openreview.net/forum?id={cid}-{i}",
                "abstract": "An abstract.",
                "key_contribution": "A contribution.",
                "limitation": "A limitation.",
                "important_result": "A result.",
                "primary_area": "area",
                "year": "2025",
                "venue": "ICLR.cc",
                "paper_id": f"{cid}-{i}",
                "decision": "Accept",
                "review_count": 4,
            }
            for i in range(4)
        ],
        "pool_metadata": {"construction": "synthetic"},
    }


def _proposal_row(cid: str, model: str) -> dict[str, Any]:
    row: dict[str, Any] = {"context_id": cid, "condition": "coherent_neighborhood"}
    # The texts never name a model, so redaction has nothing to replace (as in most real proposals).
    tag = zlib.crc32(f"{cid}/{model}".encode())
    row |= {f: f"The {f.replace('_', ' ')} of proposal {tag:08x} on {cid}." for f in SIX}
    row |= {"model": model, "schema_errors": [], "lit2test_valid": True, "lit2test_flags": {}, "lit2test_errors": []}
    return row


def write_release(
    directory: Path,
    *,
    n_contexts: int,
    n_models: int,
    seed: int = 0,
    text_contexts: int | None = None,
    pairs_per_context: int | None = None,
    tie: float = 0.05,
) -> dict[str, Any]:
    """Write the release files to ``directory`` and return what was written (counts, names, strengths).

    ``text_contexts``: how many contexts (the first ones) come with text and proposals (default: all); the others
    are verdict-only, as 187 of the sample's 200 contexts are.
    """
    if n_models < 2:
        raise ValueError("a release needs at least two models")
    rng = np.random.default_rng(seed)
    names = model_names(n_models)
    theta = true_strengths(n_models)
    all_pairs = list(itertools.combinations(range(n_models), 2))
    per_context = len(all_pairs) if pairs_per_context is None else min(pairs_per_context, len(all_pairs))
    text_contexts = n_contexts if text_contexts is None else min(text_contexts, n_contexts)
    directory.mkdir(parents=True, exist_ok=True)
    confidences = np.array(["high", "medium", "low"])
    folded_lines = 0
    with (
        (directory / "contexts.jsonl").open("w", encoding="utf-8") as contexts,
        (directory / "proposals.jsonl").open("w", encoding="utf-8") as proposals,
        (directory / "corrected_folded_pairs.jsonl").open("w", encoding="utf-8") as folded,
    ):
        for c in range(n_contexts):
            cid = context_id(c)
            batch = f"synth{c // CONTEXTS_PER_BATCH:03d}"
            if c < text_contexts:
                contexts.write(json.dumps(_context_row(cid, batch)) + "\n")
                for name in names:
                    proposals.write(json.dumps(_proposal_row(cid, name)) + "\n")
            chosen = (
                all_pairs
                if per_context == len(all_pairs)
                else [all_pairs[k] for k in sorted(rng.choice(len(all_pairs), per_context, replace=False))]
            )
            # Two independent ordered draws per pair: u < p_tie is a tie, else BT decides.
            u = rng.random((len(chosen), 2))
            v = rng.random((len(chosen), 2))
            conf = rng.integers(0, 3, (len(chosen), 2))
            lines = []
            for k, (i, j) in enumerate(chosen):
                p_i = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
                winners = ["tie" if u[k, o] < tie else (names[i] if v[k, o] < p_i else names[j]) for o in range(2)]
                models = tuple(sorted((names[i], names[j])))
                stable = winners[0] == winners[1] and winners[0] != "tie"
                lines.append(
                    json.dumps(
                        {
                            "pair_id": pair_id(cid, models),  # type: ignore[arg-type]
                            "context_id": cid,
                            "batch": batch,
                            "model_pair": list(models),
                            "gemini_original_winner": winners[0],
                            "gemini_reverse_winner": winners[1],
                            "stability_label": "order-stable" if stable else "order-unstable",
                            "folded_winner": winners[0] if stable else "consistency_tie",
                            "gemini_original_confidence": str(confidences[conf[k, 0]]),
                            "gemini_reverse_confidence": str(confidences[conf[k, 1]]),
                            "reverse_judgment_source": "frozen_original_source",
                        }
                    )
                )
            folded.write("\n".join(lines) + "\n")
            folded_lines += len(lines)
    info = {
        "generator": "bench/synthetic_release.py",
        "seed": seed,
        "contexts": n_contexts,
        "text_contexts": text_contexts,
        "models": names,
        "true_strengths": dict(zip(names, map(float, theta), strict=True)),
        "pairs_per_context": per_context,
        "folded_lines": folded_lines,
        "ordered_judgments": 2 * folded_lines,
        "tie_probability": tie,
    }
    (directory / "synthetic.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


# --------------------------------------------------------------------------- a scratch database for the benches


def django_setup() -> None:
    """Django for a bench script: the settings of ``DATABASE_URL`` (PostgreSQL for the figures that matter),
    without the connection pool (a bench forks children to measure their memory; a pool's threads do not
    survive a fork) and with an in-process cache unless ``CACHE_URL`` is set."""
    import os
    import sys

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lit2test_web.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DB_CONN_MAX_AGE", "0")
    os.environ.setdefault("CACHE_URL", "locmemcache://bench")
    import django

    django.setup()


def scratch_database(suffix: str = "_bench") -> str:
    """Create the bench's own database with Django's test-database machinery; return the configured database's
    name (for :func:`scratch_database_drop`).

    Its name is ``$BENCH_DATABASE_NAME``, else the configured database's name + ``suffix`` (never the dev
    database itself; on SQLite a file ``lit2test<suffix>.sqlite3`` in the temporary folder); an existing one of
    that name is dropped first. Call :func:`scratch_database_drop` at the end.
    """
    import os

    from django.db import connection

    settings_dict = connection.settings_dict
    if connection.vendor == "postgresql":
        settings_dict.setdefault("TEST", {})["NAME"] = os.environ.get("BENCH_DATABASE_NAME") or f"{settings_dict['NAME']}{suffix}"
    elif connection.vendor == "sqlite":
        # A file, not Django's in-memory test database: the benches write from forked children, and an in-memory
        # database is each process's own (the parent saw none of the child's rows).
        import tempfile

        default = Path(tempfile.gettempdir()) / f"lit2test{suffix}.sqlite3"
        settings_dict.setdefault("TEST", {})["NAME"] = os.environ.get("BENCH_DATABASE_NAME") or str(default)
    old_name = settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    return old_name


def scratch_database_drop(old_name: str) -> None:
    from django.db import connection

    connection.creation.destroy_test_db(old_name, verbosity=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--text-contexts", type=int, default=None, help="contexts with text and proposals (default: all)")
    parser.add_argument("--pairs-per-context", type=int, default=None, help="default: every pair of models")
    parser.add_argument("--tie", type=float, default=0.05, help="probability that an ordered judgment is a tie")
    args = parser.parse_args()
    info = write_release(
        args.directory,
        n_contexts=args.contexts,
        n_models=args.models,
        seed=args.seed,
        text_contexts=args.text_contexts,
        pairs_per_context=args.pairs_per_context,
        tie=args.tie,
    )
    print(
        f"wrote {info['contexts']:,} contexts ({info['text_contexts']:,} with text), {len(info['models'])} models, "
        f"{info['folded_lines']:,} canonical pairs = {info['ordered_judgments']:,} ordered judgments to {args.directory}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
