"""The corpus of crafted leaks (issue 22, item 4): each case is a reference written to leak something to a proposer,
or an ordinary one that must stay as it is, with the outcome the audit must give (``reconstruction/leakage.py``
documents the rules):

- ``EXCLUDED`` with the beginning of the reason (the reference repeats the held-out seed, or is dated too late);
- ``SCRUBBED`` with the exact flags (kinds of identifying metadata removed), the fragments that must not reach a
  proposer (``leaks``) and the ordinary words that must stay (``kept``);
- ``CLEAN``: shown, no flag, and its words (``kept``) reach the prompt.

Every case gets a seed of its own (:data:`SEED_TITLE`, :data:`SEED_ABSTRACT`, :data:`T0`) with three ordinary
references (:data:`FILLERS`), so each is frozen and rendered on its own. :data:`RED_TEAM` holds every kind issue 22
names (the seed's title and abstract behind a ligature, a line-break hyphen, fullwidth letters or diacritics; bare and
prefixed arXiv ids; a spaced DOI; "Özdemir et al.", "Zhang et. al.", "van der Berg et al."; "Advances in …",
"Proc. ACM …", "ICML-2024") and the classic kinds its 39 were built around (URLs, DOIs, e-mail, dates, the reference's
own id), rebuilt from the issue's description since the red team's files are not in the repository; :data:`OURS` adds
invisible, look-alike and compatibility characters and more spellings; :data:`CLEAN_CASES` is ordinary text the audit
must leave alone. Nothing here is computed by the code under test: the outcomes are the documented rules applied by
hand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

EXCLUDED, SCRUBBED, CLEAN = "excluded", "scrubbed", "clean"

T0 = date(2024, 6, 1)
SEED_TITLE = "Graph Networks Learn Molecular Dynamics Efficiently"
SEED_ABSTRACT = (
    "We show that message passing networks trained on short trajectories predict long-range molecular dynamics with "
    "linear cost in the number of atoms; the learned force field conserves energy over a million steps and reproduces "
    "diffusion coefficients of fluid mixtures."
)
#: Three ordinary references of every seed (title, abstract): enough for a freeze whatever the case's reference does.
FILLERS = (
    ("Equivariant message passing for crystal structures", "Formation energies of crystals from rotation-equivariant layers."),
    ("Long-time integrators for molecular simulation", "Symplectic integrators keep energy bounded over long simulations."),
    ("Coarse-grained potentials from data", "Potentials fitted to reference data speed up simulations of proteins."),
)
TITLE_REPEAT = "its title repeats the seed's title"
ABSTRACT_TITLE_REPEAT = "its abstract repeats the seed's title"
SPAN = "its abstract shares a span of 8 words with the seed"
JACCARD = "its abstract overlaps the seed's abstract (Jaccard of 5-grams"
PLAIN = "A plain reference title"


@dataclass(frozen=True)
class Case:
    """One crafted reference (title, abstract, date) of a seed of its own, and the outcome the audit must give."""

    kind: str  # unique: the seed's id and, prefixed by "W-", the reference's
    expect: str
    title: str
    abstract: str = ""
    reason: str = ""  # EXCLUDED: how the exclusion reason starts
    flags: tuple[str, ...] = ()  # SCRUBBED: the exact flags
    leaks: tuple[str, ...] = ()  # must not reach the prompt (compared letters and digits only, case and accents folded)
    kept: tuple[str, ...] = ()  # must reach the prompt (the same comparison)
    published: date | None = date(2020, 1, 15)
    precision: str = "day"  # of ``published``: "day", "month" or "year"
    red_team: bool = False  # a kind issue 22 measured
    ref: str = ""  # the reference's original id, when not "W-<kind>"

    @property
    def ref_id(self) -> str:
        return self.ref or f"W-{self.kind}"


def _excluded(kind: str, title: str, abstract: str = "", *, reason: str, leaks: tuple[str, ...] = (), **kw: object) -> Case:
    return Case(kind, EXCLUDED, title, abstract, reason=reason, leaks=leaks or (SEED_TITLE,), **kw)  # type: ignore[arg-type]


def _scrubbed(
    kind: str, abstract: str, *, flags: tuple[str, ...], leaks: tuple[str, ...], kept: tuple[str, ...], **kw: object
) -> Case:
    title = str(kw.pop("title", PLAIN))
    return Case(kind, SCRUBBED, title, abstract, flags=flags, leaks=leaks, kept=kept, **kw)  # type: ignore[arg-type]


def _clean(kind: str, title: str, abstract: str, *, kept: tuple[str, ...]) -> Case:
    return Case(kind, CLEAN, title, abstract, kept=kept)


_SPAN_TEXT = "message passing networks trained on short trajectories predict long-range"

RED_TEAM: tuple[Case, ...] = (
    # The seed's title and abstract, as written, as PDF extraction writes them, and disguised.
    _excluded("title-verbatim", SEED_TITLE, reason=TITLE_REPEAT),
    _excluded("title-in-abstract", PLAIN, f"As in '{SEED_TITLE.lower()}', we go on.", reason=ABSTRACT_TITLE_REPEAT),
    _excluded("title-case-punctuation", "GRAPH NETWORKS: LEARN MOLECULAR-DYNAMICS, EFFICIENTLY!", reason=TITLE_REPEAT),
    _excluded("title-ligature-fi", "Graph Networks Learn Molecular Dynamics Ef\ufb01ciently", reason=TITLE_REPEAT),
    _excluded("title-hyphen-space", "Graph Net- works Learn Molecular Dynamics Efficiently", reason=TITLE_REPEAT),
    _excluded(
        "title-hyphen-newline",
        PLAIN,
        "Shown in graph net-\nworks learn molecular dynam-\nics efficiently.",
        reason=ABSTRACT_TITLE_REPEAT,
    ),
    _excluded(
        "title-fullwidth",
        "\uff27\uff52\uff41\uff50\uff48 \uff2e\uff45\uff54\uff57\uff4f\uff52\uff4b\uff53 Learn Molecular Dynamics Efficiently",
        reason=TITLE_REPEAT,
    ),
    _excluded("title-diacritics", "Graph Netw\u00f6rks L\u00e9arn Molecular Dyn\u00e2mics Efficiently", reason=TITLE_REPEAT),
    _excluded("span-8-words", PLAIN, f"Earlier, {_SPAN_TEXT} as expected.", reason=SPAN, leaks=(_SPAN_TEXT,)),
    _excluded(
        "span-ligature",
        PLAIN,
        "Then the learned force \ufb01eld conserves energy over a million steps.",
        reason=SPAN,
        leaks=("force field conserves energy over a million steps",),
    ),
    _excluded(
        "span-hyphen-newline",
        PLAIN,
        "Earlier, message pass-\ning networks trained on short tra-\njectories predict long-range ones.",
        reason=SPAN,
        leaks=(_SPAN_TEXT,),
    ),
    _excluded(
        # Chunks of five to seven words of the seed's abstract, each cut off by a word of its own: no 8-word span, but
        # most 5-grams kept.
        "jaccard-paraphrase",
        PLAIN,
        "We show that message passing networks — indeed — trained on short trajectories predict long-range thus "
        "molecular dynamics with linear cost in the so number of atoms; the learned force and field conserves "
        "energy over a million steps also and reproduces diffusion coefficients of fluid mixtures.",
        reason=JACCARD,
        leaks=("message passing networks", "force and field conserves"),
    ),
    # Dates: nothing published on or after the seed's day may be shown.
    _excluded(
        "same-day",
        "A same-day preprint",
        "Cubic films.",
        reason="same day as the seed",
        leaks=("same-day preprint",),
        published=T0,
    ),
    _excluded("undated", "An undated note", "Notes on films.", reason="undated", leaks=("undated note",), published=None),
    _excluded(
        "after",
        "A later paper",
        "Follow-up work.",
        reason="published after the seed",
        leaks=("later paper",),
        published=date(2024, 7, 1),
    ),
    # Identifying metadata: scrubbed, flagged, the rest of the reference kept.
    _scrubbed(
        "url-https",
        "Code at https://example.org/graphnets/v1 for crystals.",
        flags=("url",),
        leaks=("example.org", "graphnets"),
        kept=("Code at", "for crystals"),
    ),
    _scrubbed(
        "url-www",
        "Data at www.example.edu/md-data now.",
        flags=("url",),
        leaks=("example.edu", "md-data"),
        kept=("Data at", "now"),
    ),
    _scrubbed(
        "doi-prefixed",
        "See doi:10.1038/nmat1234 for details.",
        flags=("doi",),
        leaks=("10.1038", "nmat1234"),
        kept=("See", "for details"),
    ),
    _scrubbed(
        "doi-bare",
        "See 10.1103/PhysRevB.99.014101 for details.",
        flags=("doi",),
        leaks=("10.1103", "PhysRevB"),
        kept=("See", "for details"),
    ),
    _scrubbed(
        "doi-spaced",
        "See 10.1234 / enz.2023.0042 for details.",
        flags=("doi",),
        leaks=("10.1234", "enz.2023.0042"),
        kept=("See", "for details"),
    ),
    _scrubbed(
        "doi-url-without-scheme",
        "See dx.doi.org/10.1234/abcd.5678 and doi.org/10.1234/efgh.",
        flags=("url",),
        leaks=("10.1234", "abcd", "efgh"),
        kept=("See",),
    ),
    _scrubbed(
        "arxiv-prefixed",
        "Preprint arXiv:2403.01234 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234",),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-version",
        "Preprint arXiv:2403.01234v2 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234",),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-space-prefix",
        "Preprint arXiv 2403.01234 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234",),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-bare",
        "Preprint 2403.01234 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234",),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-bare-version",
        "Preprint 2403.01234v2 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234",),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-old-style",
        "Preprint hep-th/9901001 on strings.",
        flags=("arxiv",),
        leaks=("9901001",),
        kept=("Preprint", "on strings"),
    ),
    _scrubbed(
        "arxiv-preprint",
        "An arXiv preprint on crystals.",
        flags=("arxiv",),
        leaks=("arXiv preprint",),
        kept=("An", "on crystals"),
    ),
    _scrubbed(
        "email",
        "Write to jane.doe@uni.example.edu for data.",
        flags=("email",),
        leaks=("jane.doe", "uni.example"),
        kept=("Write to", "for data"),
    ),
    _scrubbed(
        "et-al-plain",
        "As Smith et al. showed for crystals.",
        flags=("author list",),
        leaks=("Smith", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-diacritic-initial",
        "As \u00d6zdemir et al. showed for crystals.",
        flags=("author list",),
        leaks=("\u00d6zdemir", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-dotted-et",
        "As Zhang et. al. showed for crystals.",
        flags=("author list",),
        leaks=("Zhang", "et. al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-particles",
        "As van der Berg et al. showed for crystals.",
        flags=("author list",),
        leaks=("van der", "Berg", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "venue-acronym-year",
        "Presented at NeurIPS 2021 on crystals.",
        flags=("venue",),
        leaks=("NeurIPS", "2021"),
        kept=("Presented at", "on crystals"),
    ),
    _scrubbed(
        "venue-acronym-hyphen-year",
        "Presented at ICML-2024 on crystals.",
        flags=("venue",),
        leaks=("ICML", "2024"),
        kept=("Presented at", "on crystals"),
    ),
    _scrubbed(
        "venue-proceedings",
        "In Proceedings of the 40th International Conference on Machine Learning, pages on crystals.",
        flags=("venue",),
        leaks=("Proceedings", "International Conference", "Machine Learning"),
        kept=("pages on crystals",),
    ),
    _scrubbed(
        "venue-proc-abbreviated",
        "Appeared in Proc. ACM Program. Lang. on crystals.",
        flags=("venue",),
        leaks=("Proc", "ACM", "Program", "Lang"),
        kept=("Appeared", "on crystals"),  # "in" goes with "Proc.", as "In" with "Proceedings"
    ),
    _scrubbed(
        "venue-advances-in",
        "Appeared in Advances in Neural Information Processing Systems 36 on crystals.",
        flags=("venue",),
        leaks=("Advances in Neural", "Information Processing", "Systems 36"),
        kept=("Appeared", "on crystals"),
    ),
    _scrubbed(
        "venue-journal",
        "Appeared in the Journal of Chemical Physics on crystals.",
        flags=("venue",),
        leaks=("Journal of", "Chemical Physics"),
        kept=("Appeared in the", "on crystals"),
    ),
    _scrubbed("own-id", "See W-own-id for crystals.", flags=("reference id",), leaks=("W-own-id",), kept=("See", "for crystals")),
)
RED_TEAM = tuple(replace(c, red_team=True) for c in RED_TEAM)

OURS: tuple[Case, ...] = (
    _excluded("title-zero-width-joiner", "Graph Net\u200dworks Learn Molecular Dyna\u200bmics Efficiently", reason=TITLE_REPEAT),
    _excluded("title-soft-hyphen", "Graph Net\u00adworks Learn Molecular Dynamics Efficiently", reason=TITLE_REPEAT),
    _excluded("title-nbsp", "Graph\u00a0Networks\u00a0Learn\u00a0Molecular Dynamics Efficiently", reason=TITLE_REPEAT),
    _excluded("title-em-dash", "Graph Networks\u2014Learn Molecular Dynamics\u2013Efficiently", reason=TITLE_REPEAT),
    _excluded("title-hyphen-inside-word", "Graph Net-works Learn Molecular Dyna-mics Efficiently", reason=TITLE_REPEAT),
    _excluded("title-non-breaking-hyphen", "Graph Net\u2011works Learn Molecular Dynamics Efficiently", reason=TITLE_REPEAT),
    _excluded("title-combining-accent", "Graph Netwo\u0308rks Learn Molecular Dynamics Efficiently", reason=TITLE_REPEAT),
    _excluded(
        "title-cyrillic-lookalikes",
        "Gr\u0430ph Netw\u043erks Le\u0430rn Molecul\u0430r Dyn\u0430mics Efficiently",
        reason=TITLE_REPEAT,
    ),
    _excluded(
        "title-math-bold",
        "\U0001d406\U0001d42b\U0001d41a\U0001d429\U0001d421 Networks Learn Molecular Dynamics Efficiently",
        reason=TITLE_REPEAT,
    ),
    _excluded("title-run-together", "GraphNetworks LearnMolecular DynamicsEfficiently", reason=TITLE_REPEAT),
    _excluded(
        "span-ff-ffi-fl-ligatures",
        PLAIN,
        "Then a million steps and reproduces di\ufb00usion coe\ufb03cients of \ufb02uid mixtures.",
        reason=SPAN,
        leaks=("reproduces diffusion coefficients of fluid mixtures",),
    ),
    _excluded(
        "span-hyphen-space",
        PLAIN,
        "Earlier, message pass- ing networks trained on short tra- jectories predict long-range ones.",
        reason=SPAN,
        leaks=(_SPAN_TEXT,),
    ),
    _excluded(
        "year-only-same-year",
        "A paper of the seed's year",
        "Dated to a year.",
        reason="dated only to a year that does not end before the seed's date",
        leaks=("seed's year",),
        published=date(2024, 1, 1),
        precision="year",
    ),
    _scrubbed(
        "arxiv-fullwidth-digits",
        "Preprint \uff12\uff14\uff10\uff13.\uff10\uff11\uff12\uff13\uff14 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234", "\uff12\uff14\uff10\uff13"),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-zero-width",
        "Preprint ar\u200bXiv:2403.0\u200b1234 on crystals.",
        flags=("arxiv",),
        leaks=("2403.01234", "2403.0"),
        kept=("Preprint", "on crystals"),
    ),
    _scrubbed(
        "arxiv-old-style-subject",
        "Preprint math.AG/0601001 and arXiv:hep-th/9901001v2.",
        flags=("arxiv",),
        leaks=("0601001", "9901001"),
        kept=("Preprint", "and"),
    ),
    _scrubbed(
        "arxiv-url",
        "At arxiv.org/abs/2403.01234 on crystals.",
        flags=("url",),
        leaks=("2403.01234", "arxiv.org"),
        kept=("At", "on crystals"),
    ),
    _scrubbed(
        "doi-upper-prefix",
        "See DOI: 10.1145/3292500.3330701 for details.",
        flags=("doi",),
        leaks=("10.1145", "3292500"),
        kept=("See", "for details"),
    ),
    _scrubbed(
        "doi-https",
        "See https://doi.org/10.1145/3292500.3330701 for details.",
        flags=("url",),
        leaks=("10.1145", "3292500"),
        kept=("See", "for details"),
    ),
    _scrubbed(
        "url-code-host",
        "Code: github.com/someone/graphnets on crystals.",
        flags=("url",),
        leaks=("github", "someone"),
        kept=("Code", "on crystals"),
    ),
    _scrubbed(
        "et-al-nbsp",
        "As Smith\u00a0et\u00a0al. showed for crystals.",
        flags=("author list",),
        leaks=("Smith", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-no-dot-comma",
        "As (Smith et al, 2020) and Jones et al., showed.",
        flags=("author list",),
        leaks=("Smith", "Jones", "et al", "2020"),
        kept=("As", "showed"),
    ),
    _scrubbed(
        "et-al-two-names",
        "As Smith and Lee et al. showed for crystals.",
        flags=("author list",),
        leaks=("Smith", "Lee", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-de-la",
        "As de la Cruz et al. showed for crystals.",
        flags=("author list",),
        leaks=("de la", "Cruz", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-initials",
        "As J.-P. Dupont et al. showed for crystals.",
        flags=("author list",),
        leaks=("Dupont", "J.-P", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-vancouver",
        "As Smith J, Jones KR, et al. showed for crystals.",
        flags=("author list",),
        leaks=("Smith", "Jones", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-apostrophe",
        "As O\u2019Brien et al. showed for crystals.",
        flags=("author list",),
        leaks=("Brien", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-letter-without-decomposition",
        "As \u0141ukasiewicz et al. showed for crystals.",
        flags=("author list",),
        leaks=("ukasiewicz", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-cjk-name",
        "As \u5f20\u4f1f et al. showed for crystals.",
        flags=("author list",),
        leaks=("\u5f20\u4f1f", "et al"),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "et-al-lowercase-name",
        "As shown by boyd et al. for crystals.",
        flags=("author list",),
        leaks=("boyd", "et al"),
        kept=("As shown by", "for crystals"),
    ),
    _scrubbed(
        "et-al-cyrillic-lookalikes",
        "As Smith \u0435t \u0430l. showed for crystals.",
        flags=("author list",),
        leaks=("Smith",),
        kept=("As", "showed for crystals"),
    ),
    _scrubbed(
        "venue-apostrophe-year",
        "At ICML'24 and CVPR\u201923 on crystals.",
        flags=("venue",),
        leaks=("ICML", "CVPR"),
        kept=("At", "and", "on crystals"),
    ),
    _scrubbed(
        "venue-en-dash-year",
        "At ICLR\u20132023 on crystals.",
        flags=("venue",),
        leaks=("ICLR", "2023"),
        kept=("At", "on crystals"),
    ),
    _scrubbed(
        "venue-greek-lookalike",
        "At \u0399CML 2024 on crystals.",
        flags=("venue",),
        leaks=("\u0399CML", "2024"),
        kept=("At", "on crystals"),
    ),
    _scrubbed(
        "venue-fullwidth",
        "At \uff29\uff23\uff2d\uff2c 2024 on crystals.",
        flags=("venue",),
        leaks=("ICML", "2024"),
        kept=("At", "on crystals"),
    ),
    _scrubbed(
        "venue-unknown-acronym-year",
        "At SemEval 2020 and FOO-2019 on crystals.",
        flags=("venue",),
        leaks=("SemEval", "FOO", "2020", "2019"),
        kept=("At", "and", "on crystals"),
    ),
    _scrubbed(
        "venue-nature-citation",
        "Published as Nature 521, 436 (2015) on crystals.",
        flags=("venue",),
        leaks=("Nature", "521", "436"),
        kept=("Published as", "on crystals"),
    ),
    _scrubbed(
        "venue-published-in-science",
        "It was published in Science last year.",
        flags=("venue",),
        leaks=("Science",),
        kept=("It was published in", "last year"),
    ),
    _scrubbed(
        "venue-pnas-full",
        "In the Proceedings of the National Academy of Sciences on crystals.",
        flags=("venue",),
        leaks=("National Academy", "Proceedings"),
        kept=("on crystals",),
    ),
    _scrubbed(
        "venue-pnas", "Reported in PNAS on crystals.", flags=("venue",), leaks=("PNAS",), kept=("Reported in", "on crystals")
    ),
    _scrubbed(
        "venue-transactions",
        "In IEEE Transactions on Pattern Analysis and Machine Intelligence on crystals.",
        flags=("venue",),
        leaks=("IEEE", "Transactions", "Pattern Analysis"),
        kept=("on crystals",),
    ),
    _scrubbed(
        "venue-abbreviated-journal",
        "As in Phys. Rev. Lett. 120, 145301 on crystals.",
        flags=("venue",),
        leaks=("Phys", "Rev", "Lett", "120"),
        kept=("As in", "on crystals"),
    ),
    _scrubbed(
        "venue-named-journal",
        "As in Nature Communications on crystals.",
        flags=("venue",),
        leaks=("Nature Communications",),
        kept=("As in", "on crystals"),
    ),
    _scrubbed(
        "venue-conference-on",
        "At the AAAI Conference on Artificial Intelligence on crystals.",
        flags=("venue",),
        leaks=("AAAI", "Conference on Artificial"),
        kept=("At the", "on crystals"),
    ),
    _scrubbed(
        "venue-lecture-notes",
        "In Lecture Notes in Computer Science on crystals.",
        flags=("venue",),
        leaks=("Lecture Notes", "Computer Science"),
        kept=("In", "on crystals"),
    ),
    _scrubbed(
        "venue-in-title",
        "Methods for crystals.",
        flags=("venue",),
        leaks=("NeurIPS", "2021"),
        kept=("Tutorial on crystals",),
        title="NeurIPS 2021 Tutorial on crystals",
    ),
    _scrubbed(
        "own-openalex-id",
        "As in w2741809807 on crystals.",
        flags=("reference id",),
        leaks=("2741809807",),
        kept=("As in", "on crystals"),
        ref="W2741809807",
    ),
    Case(
        "title-only-metadata",
        EXCLUDED,
        "arXiv:2403.01234",
        "Crystals.",
        reason="nothing of its title is left",
        flags=("arxiv",),
        leaks=("2403.01234",),
    ),
)

#: Ordinary text that looks a little like a leak and must be shown as it is.
CLEAN_CASES: tuple[Case, ...] = (
    _clean(
        "decimals",
        "Accuracy of potentials",
        "Error fell from 0.95 to 3.5 eV; a 1024.5 Hz tone; 2024.0123 units; p < 0.05.",
        kept=("0.95", "3.5", "1024.5", "2024.0123", "0.05"),
    ),
    _clean(
        "doses-and-ratios",
        "Dosing in rodents",
        "A dose of 10.5 mg/kg, and 10.1234 / 2 as a ratio.",
        kept=("10.5 mg/kg", "10.1234 / 2"),
    ),
    _clean(
        "et-al-inside-words",
        "Budget allocation",
        "The budget allocation of metal alloys and a set algebra.",
        kept=("budget allocation", "metal alloys", "set algebra"),
    ),
    _clean("french-et", "Paris et Lyon", "Paris et Lyon et Albi.", kept=("Paris et Lyon et Albi",)),
    _clean(
        "science-as-a-word",
        "Materials Science of crystals",
        "Computer science and the nature of cells, stem Cell lines.",
        kept=("Materials Science", "Computer science", "nature of cells", "Cell lines"),
    ),
    _clean(
        "advances-as-a-title",
        "Advances in Graph Learning",
        "Recent advances in deep learning.",
        kept=("Advances in Graph Learning", "advances in deep learning"),
    ),
    _clean("proceedings-as-a-word", "Legal records", "As in the proceedings of the trial.", kept=("proceedings of the trial",)),
    _clean(
        "model-names",
        "Benchmarks",
        "COVID-19 data, GPT-4, CIFAR-10 and the US 2020 census; the U.S. 2020 census.",
        kept=("COVID-19", "GPT-4", "CIFAR-10", "US 2020", "U.S. 2020"),
    ),
    _clean(
        "compounds",
        "State-of-the-art pre- and post-training",
        "Self-supervised, state-of-the-art.",
        kept=("State-of-the-art", "pre- and post-training", "Self-supervised"),
    ),
    _clean(
        "topical-neighbour",
        "Graph networks for molecules",
        "Message passing predicts energies of molecules.",
        kept=("Graph networks for molecules",),
    ),
    _clean(
        "figures-and-years", "Results", "In 2019, see Fig. 3 and Eq. 2 in Sec. 4.", kept=("In 2019", "Fig. 3", "Eq. 2", "Sec. 4")
    ),
    _clean("arxiv-as-a-word", "Preprints", "Preprints posted on arXiv are read widely.", kept=("posted on arXiv are",)),
    _clean(
        "greek-and-accents",
        "\u03b1-helix packing in proteins",
        "The \u03b2-sheet of Schr\u00f6dinger's caf\u00e9 model.",
        kept=("\u03b1-helix", "\u03b2-sheet", "Schr\u00f6dinger", "caf\u00e9"),
    ),
)

CASES: tuple[Case, ...] = RED_TEAM + OURS + CLEAN_CASES
