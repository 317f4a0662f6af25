"""The statistics' own English sentences, and the labels a few modules write in English, as a page prints them in the
active language (issue 24, researchers in 简体中文): ``{{ doc.bt.scale|doc_text }}``, ``{{ method.model|doc_text }}``.

The documents (:mod:`arena.stats`, pure and free of Django) write their method texts and reasons once, in English, for
the JSON, the commands and the API; a page looks each sentence up here and prints its translation, or the sentence as
it is when it is not listed (a new sentence stays readable, in English, until it is added). Each key is the document's
exact text, so the English page is unchanged. Codes a page shows (a run's status, a verdict's order) have filters of
their own below."""

from __future__ import annotations

import re

from django import template
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy, pgettext, pgettext_lazy

register = template.Library()


def _(text: str) -> tuple[str, Promise]:
    """A sentence and its translation: written once, as the msgid that makemessages finds (``_`` is a keyword)."""
    return text, gettext_lazy(text)


#: The documents' sentences, each the document's exact English text.
SENTENCES = dict(
    [
        # arena.stats.scales.SCALE_DESCRIPTIONS and arena.stats.leaderboard's bt scale
        _("centered natural-log ability (mean 0)"),
        _("Elo-style rating 1500 + 400·θ/ln 10 (θ the centered natural-log ability; 1500 is the mean model)"),
        # arena.stats.winrate.WIN_RATE_METHOD
        _("item bootstrap (all labels of an item resampled together), percentile"),
        # lit2test.published: the figures set against the printed Table 1
        _("strength"),
        _("CI lower end"),
        _("CI upper end"),
        # arena.stats.honest: why the honest intervals are not computed
        _("the ordered fit diverged (complete separation without a pseudo-count): strengths are not magnitudes"),
        _("fewer than two contexts: no cluster-robust variance"),
        # arena.stats.hypoarena_summary: the HypoArena leaderboard's "How these figures are made"
        _(
            "Bradley–Terry–Davidson (Davidson 1970), maximum likelihood, Newton on (θ, log ν); where the estimate may "
            "not exist (wins not strongly connected, or no decisive outcome) the fit adds a 0.001 pseudo-win to every "
            "ordered pair and is flagged diverged: its order follows the data, its magnitudes are not estimable"
        ),
        _("rating = 1500 + 400·θ/ln 10, θ centered natural-log strengths (mean 0 per fit)"),
        _(
            "5-level verdicts → shares 1, .75, .5, .25, 0 of the shown A; both orders averaged into the first model's "
            "debiased share (one order: that order's share, counted in one_order_matches); a share s enters the "
            "likelihood as fractional (win, tie, loss) = (max(0, 2s−1), 1−|2s−1|, max(0, 1−2s)): an exact ½ is a tie"
        ),
        _("mean debiased share over the model's matches"),
        _(
            "share of two-order matches whose orders agree in polarity (sign of share − ½); a tie against a win is "
            "inconsistent; conflict_share counts opposite winners only"
        ),
        _("case bootstrap, cases resampled with replacement within each domain (a case carries all its matches)"),
        _(
            "one BTD fit over all domains' matches (the same case draws, summed over domains); avg_domain_rating is "
            "the mean of the model's per-domain ratings (the paper's Avg)"
        ),
        _("percentile (linear interpolation); rank intervals by order statistics (inverted_cdf)"),
        _("1 = best; equal ratings keep the sorted model-name order"),
        # controls.models.ControlVariant: the dimensions a control corrupts (the field's name stays in brackets) and where
        # a variant comes from
        _("grounding (literature_gap)"),
        _("decisive metric (decisive_metric)"),
        _("falsifiability (falsifying_result)"),
        _("deterministic template"),
        _("language model"),
        _("imported from a file"),
        # arena.stats.reconstruction: the results page's rules (label rule, rate, success@5, sign test) and their names
        _("a 1-1 split scores 0.5 (fraction of the non-recused judges)"),
        _("a hypothesis scores 1 when a strict majority of its non-recused judges say Match, else 0 (a tie is not a Match)"),
        _("a hypothesis scores the fraction of its non-recused judges saying Match (the paper's rule; a 1-1 split scores 0.5)"),
        _("a majority tie counts as not a Match"),
        _(
            "match rate = mean over the scope's papers of each paper's rate, scores / labelled hypotheses (the "
            "paper's rule; every paper weighs the same)"
        ),
        _(
            "match rate = scores summed / labelled hypotheses summed over the scope's papers (a paper weighs by its "
            "labelled hypotheses)"
        ),
        _("mean over the papers with a labelled hypothesis of the paper's best hypothesis score"),
        _("mean over the papers with a labelled hypothesis of the paper's best hypothesis score (papers with a Match / papers)"),
        _(
            "per paper where both have a labelled hypothesis, the two paper rates (score / labelled hypotheses: a "
            "missing label is missing, not a No-match); equal rates are ties, dropped; two-sided exact binomtest "
            "p=0.5"
        ),
        _("majority"),
        _("fraction"),
        _("pooled"),
        _("paper-mean"),
        # arena.stats.intrinsic_document: the Intrinsic report's method and the rules in force
        _(
            "every figure is defined per paper over that paper's own candidates (Hit@k, 1 / rank, beats over its n - "
            "1 distractors, the listwise terminal rank n and list width min(5, n)) and each paper weighs 1; with "
            "mixed counts a paper of k or fewer candidates always counts at Hit@k, chance levels differ by paper, and "
            "a rank distribution pools ranks of papers of different sizes"
        ),
        _(
            "gold in the top list at position j has rank j; otherwise the terminal rank n (the paper's candidate "
            "count) shared by every unlisted candidate; Hit@k for k <= list width only (every k when the lists hold "
            "every candidate); no MRR"
        ),
        _("papers by external id, candidates by position (the bootstrap's draws follow this order)"),
        _(
            "per (criterion, aggregate) with at least two models: papers ranked by every model where every model "
            "ranks the gold first"
        ),
        _(
            "per criterion (and across criteria, 'every intrinsic criterion', when the scoring scorers use several), "
            "every model's (model, paper) pairs pooled: the sum of the members' per-paper values over the pairs "
            "ranked, each ranked pair weighing 1 (the mean of the models' figures when none is excluded); the metrics "
            "every member has; intervals on the same paper draws (a drawn paper brings every model's values)"
        ),
        _("percentile (numpy linear quantiles), undefined replicates left out and counted"),
        _("percentile (numpy linear), undefined replicates left out"),
        _("pessimistic: gold rank = 1 + distractors scoring <= the gold (lower is better); ties counted"),
        _("scores are the mean over the hypothesis span (primary); length_check ranks by the sum"),
        _(
            "strict (the paper's 'placed higher'): the share of a paper's distractors placed strictly below the gold, "
            "averaged over papers. Scoring: distractors scoring strictly worse; a tie is not a win (the pessimistic "
            "rank puts a tied distractor above the gold), so beats = (n - rank) / (n - 1). Listwise: the candidates "
            "listed below the gold and, when the gold is listed, every unlisted one; an unlisted gold beats none (the "
            "unlisted share the terminal rank), so beats = (n - rank) / (n - 1) under the terminal rank too"
        ),
        _("papers with replacement within each domain; pooled: all papers; same draw for every system"),
        _(
            "papers with replacement: within each discipline; pooled: all papers (not stratified); the same draw for "
            "every scorer, pair, agreement share and all-models row of a scope"
        ),
        _("every discipline and pooled"),
        _("pooled only"),
        _("pessimistic"),
        _("strict"),
        _("terminal"),
        _("placed higher under the terminal rank"),
        _("each paper weighs 1"),
        _("pooled over (model, paper) pairs"),
        _("per paper (mixed counts allowed)"),
        # intrinsic.views: an all-models row's criterion and the pooled row of the heat map
        _("every intrinsic"),
        _("all disciplines"),
        # arena.models.JudgeRun.Provider: how a judge run gets its verdicts
        _("recorded (replay of stored judgments)"),
        _("OpenAI-compatible endpoint"),
        # intrinsic: where a scorer's numbers came from, when imported, and why a scorer is not in the report
        _("import"),
        _("no score or ranking stored yet"),
        # reconstruction.models.SwissSelection: a selection's status
        _("waiting for a failed round run to be resumed"),
        # reconstruction.leakage: why a reference is left out of a seed's frozen bibliography (the fixed reasons; the
        # composed ones are read by leak_reason)
        _("undated"),
        _("same day as the seed"),
        _("published after the seed"),
        _("nothing of its title is left once identifying metadata is removed"),
        _("its title is the seed's title"),
    ]
)

#: What a judge run judged and its report's link, as the protocol apps label them (``jobs.subjects``).
SUBJECT_WORDS = {
    "canonical pairs": gettext_lazy("canonical pairs"),
    "diagnostic controls": gettext_lazy("diagnostic controls"),
    "HypoArena matches": gettext_lazy("HypoArena matches"),
    "HypoArena rubric scores": gettext_lazy("HypoArena rubric scores"),
    "Reconstruction match labels": gettext_lazy("Reconstruction match labels"),
    "Reconstruction Swiss matches": gettext_lazy("Reconstruction Swiss matches"),
    "Intrinsic listwise rankings": gettext_lazy("Intrinsic listwise rankings"),
    "Controls page": gettext_lazy("Controls page"),
}
#: The verbose names of what verdicts judge, as a run page's search hint names them ("the match and the answers").
SUBJECT_NAMES = {
    "match": gettext_lazy("match"),
    "submission": gettext_lazy("submission"),
    "control variant": gettext_lazy("control variant"),
    "seed paper": gettext_lazy("seed paper"),
    "hypothesis": gettext_lazy("hypothesis"),
    "swiss match": gettext_lazy("swiss match"),
    "paper": gettext_lazy("paper"),
}

#: The Lit2Test leaderboard's fits as a sentence names them ("the folded fit diverged").
FIT_NAMES = {"ordered": gettext_lazy("ordered"), "folded": gettext_lazy("folded"), "stable": gettext_lazy("stable-only")}


#: A run's status as a sentence reads it (the pages keep the code itself in ``data-`` attributes and classes).
RUN_STATUSES = {
    "pending": pgettext_lazy("run status", "pending"),
    "running": pgettext_lazy("run status", "running"),
    "paused": pgettext_lazy("run status", "paused"),
    "completed": pgettext_lazy("run status", "completed"),
    "failed": pgettext_lazy("run status", "failed"),
    "cancelled": pgettext_lazy("run status", "cancelled"),
}


#: A verdict's stored codes as a page reads them: the order it was shown in, whether its answer was accepted, a tie.
VERDICT_WORDS = {
    "original": pgettext_lazy("presentation order", "original"),
    "reverse": pgettext_lazy("presentation order", "reverse"),
    "accepted": pgettext_lazy("verdict status", "accepted"),
    "invalid": pgettext_lazy("verdict status", "invalid"),
    "tie": pgettext_lazy("verdict outcome", "tie"),
}


#: A task's status (``jobs.models.TaskStatus``) as a page reads it.
TASK_STATUSES = {
    "pending": pgettext_lazy("task status", "pending"),
    "claimed": pgettext_lazy("task status", "claimed"),
    "done": pgettext_lazy("task status", "done"),
    "failed": pgettext_lazy("task status", "failed"),
    "skipped": pgettext_lazy("task status", "skipped"),
}


@register.filter
def task_status(value: object) -> object:
    """A task's status (``pending``, ``done`` ...) in the active language; another value unchanged."""
    return TASK_STATUSES.get(value, value) if isinstance(value, str) else value


@register.filter
def verdict_word(value: object) -> object:
    """A verdict's order (``original``, ``reverse``), status (``accepted``, ``invalid``) or a tie as its outcome, in the
    active language."""
    return VERDICT_WORDS.get(value, value) if isinstance(value, str) else value


@register.filter
def run_status(value: object) -> object:
    """A run's status (``completed``) in the active language; another value unchanged."""
    return RUN_STATUSES.get(value, value) if isinstance(value, str) else value


@register.filter
def doc_text(value: object) -> object:
    """The translation of a document's sentence, or the value unchanged (None, numbers and unlisted text)."""
    return SENTENCES.get(value, value) if isinstance(value, str) else value


@register.filter
def yes_no(value: object) -> str:
    """``yesno:"yes,no"`` in the active language (None reads "no", as there)."""
    return gettext("yes") if value else gettext("no")


@register.filter
def fit_name(kind: object) -> object:
    """A fit's key (``ordered``, ``folded``, ``stable``) as a sentence names it; another value unchanged."""
    return FIT_NAMES.get(kind, kind) if isinstance(kind, str) else kind


#: The reasons ``reconstruction.leakage`` composes for leaving a reference out (the fixed ones are in SENTENCES).
LEAK_REASONS = (
    (re.compile(r"dated only to a (\w+) that does not end before the seed's date"), "precision"),
    (re.compile(r"its (\w+) repeats the seed's title"), "repeats"),
    (re.compile(r"its (\w+) shares a span of (\d+) words with the seed \(\u201c(.*)\u201d\)"), "span"),
    (re.compile(r"its abstract overlaps the seed's abstract \(Jaccard of (\d+)-grams ([\d.]+) > ([\d.]+)\)"), "jaccard"),
)


def _leak_word(word: str) -> str:
    words = {
        "title": pgettext("leak reason", "title"),
        "abstract": pgettext("leak reason", "abstract"),
        "day": pgettext("leak reason", "day"),
        "month": pgettext("leak reason", "month"),
        "year": pgettext("leak reason", "year"),
    }
    return words.get(word, word)


@register.filter
def leak_reason(value: object) -> object:
    """Why a reference is left out of a seed's bibliography (stored in English when it was frozen), in the active
    language; a reason of another form unchanged."""
    if not isinstance(value, str):
        return value
    for pattern, form in LEAK_REASONS:
        if (m := pattern.fullmatch(value)) is None:
            continue
        if form == "precision":
            return gettext("dated only to a %(precision)s that does not end before the seed's date") % {
                "precision": _leak_word(m[1])
            }
        if form == "repeats":
            return gettext("its %(where)s repeats the seed's title") % {"where": _leak_word(m[1])}
        if form == "span":
            return gettext("its %(where)s shares a span of %(n)s words with the seed (“%(example)s”)") % {
                "where": _leak_word(m[1]),
                "n": m[2],
                "example": m[3],
            }
        return gettext("its abstract overlaps the seed's abstract (Jaccard of %(n)s-grams %(score)s > %(max)s)") % {
            "n": m[1],
            "score": m[2],
            "max": m[3],
        }
    return doc_text(value)


@register.filter
def all_models_label(value: object) -> object:
    """An Intrinsic "All models" group's label (``All models, nll``, ``All models, every intrinsic criterion``,
    written by the statistics) in the active language."""
    prefix = "All models, "
    if not isinstance(value, str) or not value.startswith(prefix):
        return value
    what = value.removeprefix(prefix)
    every = "every intrinsic criterion"
    if what.startswith(every):
        what = gettext("every intrinsic criterion") + what.removeprefix(every)
    return gettext("All models, %(what)s") % {"what": what}
