"""Versioned prompt templates, and what a rendered judging task is.

A template's text never changes once released: a new wording is a new version. Each protocol app registers its
templates (:func:`prompt_register`, from its ``AppConfig.ready()``); a run stores the version it was asked with, so
its page still shows the prompts its judge received. A template says which kind of run it serves (``kind``: a
judge-run type such as ``holistic``, or what an elicitation asks for), how a protocol renders its context
(``layout``) and, for a judge that scores dimensions as well as picking a side, which dimensions
(``dimensions``: its answers are parsed with them, ``jobs.parsing.parse_judge_answer``).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.registry import Registry


@dataclass(frozen=True)
class PromptTemplate:
    version: str
    kind: str  # a judge-run type ("holistic", "arena", ...) or what an elicitation asks for ("generation", ...)
    system: str
    layout: int = 1  # how the protocol lays out what the prompt shows; a new layout is a new version
    dimensions: tuple[str, ...] = ()  # a structured judge scores both sides 0-4 on each


@dataclass(frozen=True)
class RenderedTask:
    """One judging task as the judge receives it: the system and user messages, and the two shown blocks (what the
    orientation and blindness gates read)."""

    system: str
    user: str
    block_a: str
    block_b: str

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


PROMPTS: Registry[PromptTemplate] = Registry("prompt template")


def prompt_register(template: PromptTemplate) -> PromptTemplate:
    """Register a template under its version; a second template of one version raises."""
    return PROMPTS.register(template.version, template)
