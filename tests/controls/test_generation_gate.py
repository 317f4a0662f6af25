"""The diagnostic controls' generator checks its prompts with the judges' own reading of names (jobs.gates.names_in):
a participant named only in another script ("通义千问") used to squash to nothing there and was never looked for."""

from __future__ import annotations

from arena.aliases import Matcher
from controls.llm import blindness_problem

REFUSED = "blindness gate: the prompt contains a participant's name or the control id"


def ask(content: str, forbidden: list[str]) -> str | None:
    return blindness_problem([{"role": "user", "content": content}], forbidden=forbidden, blocks=[], matcher=Matcher([]))


def test_a_name_in_any_script_or_spelling_is_refused_and_others_pass() -> None:
    names = ["通义千问", "GPT-5.2", "ctrl-0042"]
    for text in ("As 通义-千问 wrote, soil matters.", "I am gpt 5.2.", "control CTRL_0042 here", "通 义 千 问"):
        assert (ask(text, names) or "").startswith(REFUSED), text
    for text in ("Soil moisture and 千 harvests.", "GPT-4 is another model.", "Nothing here."):
        assert ask(text, names) is None, text
