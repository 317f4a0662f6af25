"""Versioned prompts of the model path of ``generate_controls`` (subtle corruption, sham rewrite, validation).

A prompt's text never changes once released: a new wording is a new version, and the variants and attempts a
prompt made record its version (``ControlVariant.generator_version``, ``ControlAttempt.prompt_version``).

The prompts go to a generator model, not a judge, but they are held to the judges' blindness all the same: they
show proposals as blind readers see them (every model alias redacted, ``arena.blindness``) and never a
participant's name or a ``control_id``; ``controls.llm.blindness_problem`` checks each rendered prompt once more.

Answer formats (documented here because the parser in ``controls.llm`` reads them):

* generation: ``{"field": "<field name>", "text": "<the field's new text>"}``. An answer with the six fields
  instead is read too; then every other field must be exactly the text the model was shown, or the attempt is
  off target. Either way the variant is rebuilt from the source and the new text of the target field only.
* validation: ``{"only_target_changed": true|false, "degraded": true|false, "reason": "..."}``. The validator
  is not told whether the edit was meant to degrade the field (subtle) or not (sham), so its judgement of
  ``degraded`` is not steered by the intent.

Pure functions on plain text and dicts; no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.schemas import SIX_FIELD

SIX: tuple[str, ...] = SIX_FIELD.fields

# The lines the user messages name their field with (tests route scripted answers on them).
REWRITE_LINE = "FIELD TO REWRITE: {field}"
EDITED_LINE = "FIELD THAT WAS EDITED: {field}"

_GENERATION_FRAME = """You help build diagnostic controls for an evaluation of research-proposal reviewers (the Lit2Test benchmark). A reviewer reads a literature neighborhood (four papers) and a proposal in six fields: literature_gap, hypothesis, minimal_test, decisive_metric, supporting_result, falsifying_result. To check that reviewers judge substance rather than style, we make edited copies of real proposals in which exactly one field is rewritten.

You get the neighborhood, one proposal and the name of ONE field to rewrite. Rewrite only that field: every other field stays exactly as it is and is not part of your answer.

{task}

Keep the field's register, terminology, formatting and approximate length (within about 20%), so that the edit cannot be spotted by its style. Do not add comments, notes or markers about the edit. Text shown as [redacted] stands for a name removed from the proposal; leave it as it is where you keep that part.

Answer with one JSON object and nothing else:
{{"field": "<the field's name>", "text": "<the new text of the field>"}}"""

SUBTLE_TASK_V1 = (
    "Your rewrite introduces a naturalistic, non-obvious defect into the field: a careful expert reviewer should "
    "be able to find it, a quick reader should not. The kind of defect wanted for the field is given with the "
    "field's name."
)
SHAM_TASK_V1 = (
    "Your rewrite is a style-matched paraphrase that keeps the field's substance: the same claims, the same papers "
    "and numbers, the same conditions and the same level of specificity. It must be exactly as good as the "
    "original for a reviewer: do not add, drop, weaken or strengthen anything; change the wording and the sentence "
    "structure only."
)

SUBTLE_DEFECT_V1: dict[str, str] = {
    "literature_gap": (
        "Keep citing the same supplied papers in the same way, but misstate the gap: for example attribute to a paper "
        "a result or limitation it does not have, present as open a question the papers already settle, or describe a "
        "gap that the proposed test does not actually address."
    ),
    "decisive_metric": (
        "Replace the mechanism-specific measurement with a convenient aggregate (an overall average score, a benchmark "
        "total, a final loss) that could move for reasons unrelated to the hypothesised mechanism and so cannot decide "
        "it, while sounding just as precise."
    ),
    "falsifying_result": (
        "Make the refuting observation unfalsifiable or near-tautological: for example a threshold no real outcome "
        "could cross, a condition so loose that any result counts as consistent with the hypothesis, or an escape "
        "clause that explains a negative result away, while sounding just as precise."
    ),
}
SHAM_NOTE_V1 = "Paraphrase it without changing its substance or its quality."

VALIDATE_SYSTEM_V1 = """You check an edited copy of a research proposal for the Lit2Test benchmark. You get the literature neighborhood, the ORIGINAL proposal, the EDITED proposal and the name of the field that was edited. The other five fields are the same in both copies.

Answer two questions:
1. only_target_changed: is the change confined to the named field's own role? Answer false when the new text of that field also changes what another part of the proposal claims or commits to (for example the hypothesis's claim, the experiment that is run, or the expected supporting result), true otherwise.
2. degraded: is the edited field worse at its job than the original, for a careful expert reviewer? The jobs: literature_gap ties the gap to the supplied papers and states it correctly; decisive_metric is a measurement that adjudicates the hypothesised mechanism, not a convenient aggregate; falsifying_result is a precommitted observation that a real outcome could produce and that would refute the hypothesis. A rewording that says the same thing as precisely is not degraded; a flaw that is hard to notice still counts.

Answer with one JSON object and nothing else:
{"only_target_changed": true | false, "degraded": true | false, "reason": "<one or two sentences>"}"""


@dataclass(frozen=True)
class ControlPrompt:
    version: str
    step: str  # "generate" | "validate"
    system: str
    field_notes: Mapping[str, str] | None = None  # per target field, shown after the field's name (generate)


SUBTLE_V1 = ControlPrompt("control-subtle-v1", "generate", _GENERATION_FRAME.format(task=SUBTLE_TASK_V1), SUBTLE_DEFECT_V1)
SHAM_V1 = ControlPrompt(
    "control-sham-v1", "generate", _GENERATION_FRAME.format(task=SHAM_TASK_V1), dict.fromkeys(SIX, SHAM_NOTE_V1)
)
VALIDATE_V1 = ControlPrompt("control-validate-v1", "validate", VALIDATE_SYSTEM_V1)

PROMPTS: dict[str, ControlPrompt] = {p.version: p for p in (SUBTLE_V1, SHAM_V1, VALIDATE_V1)}
#: The prompt each model-made kind is generated with, and the validation prompt.
GENERATE_PROMPT: dict[str, ControlPrompt] = {"subtle": SUBTLE_V1, "sham": SHAM_V1}
VALIDATE_PROMPT = VALIDATE_V1

# How much of a failed attempt's reason the next round's prompt repeats (a validator may write at length).
FEEDBACK_CHARS = 400


def proposal_block(title: str, content: Mapping[str, str]) -> str:
    """A six-field proposal as ``=== TITLE ===`` and one ``[field]`` paragraph each (the judges' layout, without
    their A/B labels)."""
    fields = "\n".join(f"[{name}]\n{content.get(name, '')}" for name in SIX)
    return f"=== {title} ===\n{fields}"


def render_generate(
    *, prompt: ControlPrompt, context_text: str, blind_source: Mapping[str, str], field: str, feedback: str = ""
) -> list[dict[str, str]]:
    """The messages of one generation call. ``context_text`` is the rendered neighborhood
    (``arena.prompting.render_context``); ``blind_source`` the source proposal as blind readers see it;
    ``feedback`` why the previous round's attempt was not used (empty in round 1)."""
    note = (prompt.field_notes or {}).get(field, "")
    parts = [
        context_text,
        proposal_block("PROPOSAL", blind_source),
        "=== END ===",
        REWRITE_LINE.format(field=field) + (f"\n{note}" if note else ""),
    ]
    if feedback:
        parts.append(f"A previous attempt was not usable: {feedback[:FEEDBACK_CHARS]}")
    parts.append("Answer in JSON.")
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": "\n\n".join(parts)}]


def render_validate(
    *, context_text: str, blind_source: Mapping[str, str], blind_edited: Mapping[str, str], field: str
) -> list[dict[str, str]]:
    """The messages of one validation call: the original and the edited proposal, both as blind readers see them."""
    user = "\n\n".join(
        [
            context_text,
            proposal_block("ORIGINAL PROPOSAL", blind_source),
            proposal_block("EDITED PROPOSAL", blind_edited),
            "=== END ===",
            EDITED_LINE.format(field=field),
            "Answer in JSON.",
        ]
    )
    return [{"role": "system", "content": VALIDATE_PROMPT.system}, {"role": "user", "content": user}]
