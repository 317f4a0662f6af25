"""A synthetic Intrinsic-scoring benchmark made by a seeded generator, so that ``make demo`` shows its pages.

**Synthetic everywhere**: the papers, candidates and scores are generated here; no language model is run and no
paper is real. Every scorer's ``endpoint`` says so, and so does the benchmark's description.

What is generated (constants of this module): :data:`DISCIPLINES` (twelve) × :data:`PAPERS_PER_DISCIPLINE` papers,
each with :data:`CANDIDATES` short candidate hypotheses built from the discipline's words, one of them gold at a
seeded position. Scores: :data:`MODELS` (three synthetic models) × {nll, energy}, six scorers. For each scorer a
candidate's latent score is standard normal, the gold's shifted down (better) by the scorer's known advantage
:data:`GOLD_ADVANTAGE` plus a per-paper difficulty shared by all scorers (:data:`PAPER_SPREAD`), so scorers agree on
easy papers; a per-candidate component shared by all scorers (:data:`SHARED`) stands for fluency. NLL means are
``2.4 + 0.45·latent`` (at least 0.05), energies ``−18 + 1.5·latent``; a candidate's span length is its word count
times the model's tokens per word (:data:`TOKENS_PER_WORD`), and the sum is mean × tokens. The energies of
:data:`COARSE` are rounded to 0.1 (a low-precision deployment would), so ties with the gold occur and the
pessimistic tie rule shows. A listwise judge (:data:`JUDGE`) returns the five candidates of lowest latent (gold
advantage :data:`JUDGE_ADVANTAGE`); with probability :data:`INVALID_P` its answer is invalid instead.

The generator writes the files of ``FORMAT.md`` and imports them: a second run imports the same lines and changes
nothing.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from arena.jsonl import jsonl_write

from .importing import ImportSummary, import_files, intrinsic_import
from .models import LISTWISE_TOP

DEMO_NAME = "intrinsic-demo"
SEED = 20260414
PAPERS_PER_DISCIPLINE = 10
CANDIDATES = 16
MODELS: tuple[str, ...] = ("Demo-LM-1B", "Demo-LM-7B", "Demo-LM-70B")
CRITERIA: tuple[str, ...] = ("nll", "energy")
#: The gold's advantage per (model, criterion), in standard deviations of the distractors' latent scores.
GOLD_ADVANTAGE: dict[tuple[str, str], float] = {
    ("Demo-LM-1B", "nll"): 0.9,
    ("Demo-LM-1B", "energy"): 1.8,
    ("Demo-LM-7B", "nll"): 1.1,
    ("Demo-LM-7B", "energy"): 0.7,
    ("Demo-LM-70B", "nll"): 1.3,
    ("Demo-LM-70B", "energy"): 0.3,
}
TOKENS_PER_WORD: dict[str, float] = {"Demo-LM-1B": 1.4, "Demo-LM-7B": 1.3, "Demo-LM-70B": 1.25}
COARSE = ("Demo-LM-7B", "energy")
PAPER_SPREAD = 0.6
SHARED = 0.4
JUDGE = "Demo-Judge"
JUDGE_ADVANTAGE = 0.6
INVALID_P = 0.05
INVALID_REASONS = (
    "unknown label 'Q' in the top 5 after 2 retries",
    "the top 5 repeats label 'D' after 2 retries",
    "only 3 labels returned after 2 retries",
)
ENDPOINT = "synthetic: drawn by intrinsic/demo.py (seed {seed}), no language model"


def scorer_name(model: str, criterion: str) -> str:
    return f"{model.lower()}-{criterion}"


#: discipline -> (systems, factors, outcomes, mechanisms): words for plausible short texts.
DISCIPLINES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "biology": (
        ("yeast colonies", "zebrafish embryos", "gut microbiota"),
        ("nutrient pulses", "heat stress", "quorum signalling", "oxygen limitation"),
        ("growth rate", "cell size", "gene expression noise", "biofilm thickness"),
        ("chromatin remodelling", "metabolic switching", "ribosome allocation", "stress granule formation"),
    ),
    "chemistry": (
        ("aqueous electrolytes", "metal-organic frameworks", "zeolite catalysts"),
        ("ion concentration", "pore size", "ligand bulk", "solvent polarity"),
        ("reaction selectivity", "turnover frequency", "adsorption capacity", "charge transfer"),
        ("transition-state stabilisation", "confinement effects", "hydrogen-bond networks", "redox mediation"),
    ),
    "physics": (
        ("cold atom lattices", "superconducting qubits", "granular packings"),
        ("disorder strength", "drive frequency", "interaction range", "temperature gradients"),
        ("coherence time", "transport rate", "jamming threshold", "entanglement growth"),
        ("many-body localisation", "phonon scattering", "force-chain rearrangement", "dissipative coupling"),
    ),
    "materials": (
        ("perovskite films", "high-entropy alloys", "polymer blends"),
        ("grain size", "dopant level", "annealing time", "strain gradients"),
        ("ionic conductivity", "fracture toughness", "phase stability", "defect density"),
        ("grain-boundary pinning", "lattice distortion", "chain entanglement", "vacancy migration"),
    ),
    "neuroscience": (
        ("hippocampal circuits", "cortical layer 5", "zebra finch song nuclei"),
        ("sleep deprivation", "dopamine release", "inhibitory tone", "theta power"),
        ("replay fidelity", "place-field stability", "spike timing precision", "learning speed"),
        ("synaptic scaling", "dendritic gating", "neuromodulatory tagging", "oscillatory coupling"),
    ),
    "ecology": (
        ("alpine meadows", "coral reefs", "urban bird communities"),
        ("warming", "grazing pressure", "habitat fragmentation", "light pollution"),
        ("species turnover", "pollination success", "recruitment", "trophic stability"),
        ("phenological mismatch", "competitive release", "dispersal limitation", "predator release"),
    ),
    "economics": (
        ("regional labour markets", "household savings", "small exporters"),
        ("minimum wage changes", "interest rate shocks", "tariff uncertainty", "remote work adoption"),
        ("employment", "consumption smoothing", "firm entry", "wage dispersion"),
        ("search frictions", "liquidity constraints", "option-value waiting", "sorting of workers"),
    ),
    "psychology": (
        ("adolescents", "bilingual adults", "shift workers"),
        ("sleep timing", "social feedback", "cognitive load", "mindfulness training"),
        ("working memory", "risk taking", "attentional control", "mood stability"),
        ("reward prediction errors", "inhibitory control", "emotion regulation", "prefrontal maturation"),
    ),
    "computer science": (
        ("transformer language models", "distributed databases", "graph neural networks"),
        ("data deduplication", "replication factor", "depth", "learning-rate warmup"),
        ("out-of-distribution accuracy", "tail latency", "over-smoothing", "training stability"),
        ("memorisation", "quorum contention", "message-passing bottlenecks", "loss-landscape sharpness"),
    ),
    "medicine": (
        ("type 2 diabetes patients", "intensive care units", "older adults with frailty"),
        ("time-restricted eating", "early mobilisation", "statin therapy", "vitamin D supplementation"),
        ("glycaemic control", "delirium incidence", "fall risk", "hospital readmission"),
        ("hepatic insulin sensitivity", "muscle preservation", "endothelial function", "circadian alignment"),
    ),
    "earth science": (
        ("glacial catchments", "volcanic arcs", "coastal aquifers"),
        ("meltwater pulses", "magma volatile content", "sea-level rise", "sediment load"),
        ("erosion rates", "eruption style", "salinisation", "fault slip"),
        ("subglacial hydrology", "degassing pathways", "density-driven flow", "pore-pressure diffusion"),
    ),
    "astronomy": (
        ("dwarf galaxies", "protoplanetary discs", "hot Jupiters"),
        ("stellar feedback", "dust grain growth", "tidal heating", "magnetic field strength"),
        ("star formation efficiency", "planetesimal formation", "atmospheric escape", "disc lifetime"),
        ("gas outflows", "streaming instability", "photoevaporation", "angular momentum transport"),
    ),
}


def _candidate_texts(rng: random.Random, words: tuple[tuple[str, ...], ...], system: str, n: int) -> list[str]:
    _systems, factors, outcomes, mechanisms = words
    texts: list[str] = []
    while len(texts) < n:
        text = (
            f"{rng.choice(('Increasing', 'Reducing', 'Pulsing', 'Stabilising'))} {rng.choice(factors)} "
            f"{rng.choice(('raises', 'lowers', 'decouples', 'amplifies'))} {rng.choice(outcomes)} in {system} "
            f"{rng.choice(('through', 'via', 'because of'))} {rng.choice(mechanisms)}"
            f"{rng.choice(('.', ', and the effect reverses at high doses.', ', but only above a threshold.', ', most strongly early on.'))}"
        )
        if text not in texts:
            texts.append(text)
    return texts


def demo_files(directory: Path, *, seed: int = SEED) -> None:
    """Write the demo's papers.jsonl, scores.jsonl and listwise.jsonl into ``directory``."""
    rng = random.Random(seed)
    endpoint = ENDPOINT.format(seed=seed)
    rows: dict[str, list[dict[str, Any]]] = {"papers": [], "scores": [], "listwise": []}
    for discipline, words in DISCIPLINES.items():
        systems, factors, outcomes, _mechanisms = words
        key = discipline.replace(" ", "-")
        for i in range(PAPERS_PER_DISCIPLINE):
            paper_id = f"demo-{key}-{i + 1:02d}"
            system, factor, outcome = rng.choice(systems), rng.choice(factors), rng.choice(outcomes)
            background = (
                f"Synthetic demo paper. Studies of {system} report that {factor} and {outcome} move together, "
                f"but whether {factor} drives {outcome}, and by which mechanism, is disputed."
            )
            question = f"Does {factor} change {outcome} in {system}, and through which mechanism?"
            texts = _candidate_texts(rng, words, system, CANDIDATES)
            gold_at = rng.randrange(CANDIDATES)
            ids = [f"c{k + 1:02d}" for k in range(CANDIDATES)]
            rows["papers"].append(
                {
                    "paper_id": paper_id,
                    "discipline": discipline,
                    "background": background,
                    "question": question,
                    "candidates": [
                        {"id": cid, "text": text, "gold": k == gold_at}
                        for k, (cid, text) in enumerate(zip(ids, texts, strict=True))
                    ],
                }
            )
            difficulty = rng.gauss(0.0, PAPER_SPREAD)
            shared = [rng.gauss(0.0, SHARED) for _ in ids]
            for model in MODELS:
                for criterion in CRITERIA:
                    advantage = GOLD_ADVANTAGE[(model, criterion)] + difficulty
                    for k, (cid, text) in enumerate(zip(ids, texts, strict=True)):
                        latent = rng.gauss(0.0, 1.0) + shared[k] - (advantage if k == gold_at else 0.0)
                        if criterion == "nll":
                            mean = round(max(0.05, 2.4 + 0.45 * latent), 4)
                        else:
                            mean = round(-18.0 + 1.5 * latent, 1 if (model, criterion) == COARSE else 4)
                        tokens = max(1, round(len(text.split()) * TOKENS_PER_WORD[model]))
                        rows["scores"].append(
                            {
                                "paper_id": paper_id,
                                "candidate_id": cid,
                                "scorer": scorer_name(model, criterion),
                                "model": model,
                                "criterion": criterion,
                                "mean": mean,
                                "sum": round(mean * tokens, 6),
                                "tokens": tokens,
                                "endpoint": endpoint,
                            }
                        )
            line: dict[str, Any] = {
                "paper_id": paper_id,
                "scorer": scorer_name(JUDGE, "listwise"),
                "model": JUDGE,
                "endpoint": endpoint,
            }
            if rng.random() < INVALID_P:
                rows["listwise"].append(line | {"status": "invalid", "reason": rng.choice(INVALID_REASONS)})
            else:
                latent = {
                    cid: rng.gauss(0.0, 1.0) - (JUDGE_ADVANTAGE + difficulty if k == gold_at else 0.0)
                    for k, cid in enumerate(ids)
                }
                rows["listwise"].append(line | {"top": sorted(ids, key=latent.__getitem__)[:LISTWISE_TOP]})
    for kind, records in rows.items():
        jsonl_write(directory / f"{kind}.jsonl", records)


def demo_build(*, seed: int = SEED, name: str = DEMO_NAME) -> ImportSummary:
    """Generate the demo's files and import them (idempotent)."""
    with tempfile.TemporaryDirectory() as tmp:
        demo_files(Path(tmp), seed=seed)
        return intrinsic_import(
            name=name,
            files=import_files(Path(tmp)),
            description="Synthetic Intrinsic-scoring demo (intrinsic/demo.py): generated papers and candidates, scores drawn by a seeded generator; no language model, no real paper.",
        )


#: The benchmark the demo's live scoring run scores (``make demo``: the scripted toy endpoint,
#: ``intrinsic/demo_endpoint.py``): the first paper of each discipline, without scores, so that the toy's figures
#: stay out of the synthetic benchmark's agreement and pairs.
LIVE_NAME = "intrinsic-demo-live"


def demo_live_build(*, seed: int = SEED, name: str = LIVE_NAME) -> ImportSummary:
    """The live-run benchmark: one paper per discipline of the demo, papers only (idempotent)."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        demo_files(Path(tmp), seed=seed)
        lines = (Path(tmp) / "papers.jsonl").read_text(encoding="utf-8").splitlines()
        first = [line for line in lines if json.loads(line)["paper_id"].endswith("-01")]
        live = Path(tmp) / "live"
        live.mkdir()
        (live / "papers.jsonl").write_text("".join(line + "\n" for line in first), encoding="utf-8")
        return intrinsic_import(
            name=name,
            files=import_files(live),
            description="The demo's live scoring run (make demo): 12 synthetic papers scored through the engine against a "
            "scripted toy endpoint (intrinsic/demo_endpoint.py), not a language model.",
        )
