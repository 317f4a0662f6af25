"""Researcher pages in 简体中文 (issue 24): with the language cookie set to zh-hans, every page of the researcher's top
bar and each protocol's benchmark pages show their headings and table headers in Chinese, a launch form its labels
and an error in Chinese, and no heading of the crawl is a leftover English sentence. A study's page (with labels,
a skip, a flag and fast answers) reads in Chinese section by section, and the leaderboard's style section names its
features and units in Chinese.

The expected Chinese is written here by hand (the catalog's wording, checked by a reader), never read back from the
catalog. The default language stays English: tests elsewhere keep asserting the English pages."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.flow import assignment_flag, assignment_skip
from annotation.models import Assignment
from annotation.services import assignment_submit, study_create
from arena import formatting
from arena.aliases import derive_aliases
from arena.models import Benchmark, JudgeRun
from arena.stats.style_leaderboard import STYLE_FEATURES
from hypoarena.models import Domain
from intrinsic.models import Paper, Scorer
from lit2test.readers import STYLE_WORDS
from reconstruction.models import SeedPaper, SwissSelection
from tests.annotation.helpers import complete_values
from tests.clients import client_for

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")
# What a heading may hold without a Chinese character: names that stay untranslated (protocols, the API's title and
# its groups, which are URL path segments), version and run numbers, units and punctuation. Benchmark names and
# versions are added per crawl from the database (they are data, as model names are).
ALLOWED = ("Lit2Test Web API", "Lit2Test", "HypoArena", "Reconstruction", "Intrinsic scoring", "T0")
# Names of statistics and their symbols, printed as the papers print them (a header such as "Spearman ρ" or "MRR").
ALLOWED += ("Spearman", "Kendall", "MRR", "ΔMRR", "Hit@", "ΔHit@", "success@5", "NLL", "CI")
LEFTOVER = re.compile(r"[A-Za-z]{2,}")


def zh_client(user):  # noqa: ANN001, ANN201
    client = client_for(user)
    client.cookies["django_language"] = "zh-hans"
    return client


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    inside: tuple[str, ...]  # the enclosing elements' tags and classes ("nav", ".errorlist")
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())


class Page(HTMLParser):
    """Every element of a page with its text (standard library only, as tests/html_forms.py)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.html = html
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        inside = tuple(x for e in self.open for x in (e.tag, *(f".{c}" for c in e.attrs.get("class", "").split())))
        inside += tuple(f"#{e.attrs['id']}" for e in self.open if e.attrs.get("id"))
        element = Element(tag, a, inside)
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i].tag == tag:
                del self.open[i:]
                break

    def handle_data(self, data: str) -> None:
        for element in self.open:
            element.parts.append(data)

    def select(self, selector: str) -> list[Element]:
        """``tag`` or ``inside tag`` (an enclosing tag, ``.class`` or ``#id``): all this file needs."""
        *outer, tag = selector.split()
        return [e for e in self.elements if e.tag == tag and all(o in e.inside for o in outer)]


def page(client, url: str) -> Page:  # noqa: ANN001
    response = client.get(url)
    assert response.status_code == 200, f"{url} answered {response.status_code}"
    parsed = Page(response.content.decode())
    html = parsed.select("html")
    assert html and html[0].attrs.get("lang") == "zh-hans", f"{url} is not served in Chinese"
    return parsed


def texts(soup: Page, selector: str) -> list[str]:
    return [e.text for e in soup.select(selector)]


def assert_shows(soup: Page, url: str, selector: str, expected: list[str]) -> None:
    """Each expected Chinese text is one of the elements ``selector`` picks (an <h1> may add a name after it)."""
    found = [t.rstrip(":：") for t in texts(soup, selector)]  # a form's labels end with the label suffix
    missing = [e for e in expected if not any(t == e or t.startswith(e + " ") for t in found)]
    assert not missing, f"{url}: no {selector} reads {missing}; the page's are {found}"


def leftover_english(soup: Page, names: list[str]) -> list[str]:
    """The <h1>, <h2> and column headers whose text, once the allowed names are taken out, is English words and no
    Chinese. Row headers (<th scope="row">) are data (a benchmark's or model's name), as are the API's group headings."""
    out = []
    for el in [e for e in soup.elements if e.tag in ("h1", "h2", "th")]:
        if el.attrs.get("scope") == "row" or el.attrs.get("id", "").startswith("tag-"):
            continue
        if not CJK.search(el.text) and is_english(el.text, names):
            out.append(el.text)
    return out


def is_english(text: str, names: list[str]) -> bool:
    """Whether ``text`` holds an English word once the data's names, the allowed names and symbols (each as a whole
    word) and version numbers are taken out."""
    rest = allowed_pattern(tuple(names)).sub(" ", text)
    return bool(LEFTOVER.search(re.sub(r"\bv\d+\b", " ", rest)))


@functools.cache
def allowed_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for every allowed name, the longest first, each as a whole word (compiled once per page set)."""
    words = sorted({*names, *ALLOWED, *SYMBOLS} - {""}, key=len, reverse=True)
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(map(re.escape, words))})(?![A-Za-z])")


def data_names() -> list[str]:
    """What the pages print as data, not words: benchmark names, each protocol's domains and disciplines (as the pages
    label them), and its scorers' models with their criteria (a heat map's column reads "Demo-LM-1B" over "NLL")."""
    names = [n for b in Benchmark.objects.all() for n in (b.name, str(b))]
    domains = {*Domain.objects.values_list("name", flat=True), *SeedPaper.objects.values_list("domain", flat=True)}
    names += [formatting.domain_label(d) for d in domains]
    names += list(Paper.objects.values_list("discipline", flat=True).distinct())
    names += [f"{model}{'NLL' if c == 'nll' else c}" for model, c in Scorer.objects.values_list("model", "criterion")]
    return names


#: Where body text is read (issue 24: the pages' own sentences, not only their headings), and what is never read there:
#: code, the select's options (their values are data: run labels, statuses) and scripts.
BODY = {"p", "td", "dd", "dt", "li", "label", "caption", "figcaption", "summary", "legend", "button", "th"}
BODY |= {"h1", "h2", "h3", "h4", "title", "desc", "text"}  # <title>, <desc> and <text> also inside a chart's <svg>
NOT_READ = {"code", "pre", "option", "script", "style", "textarea", "kbd", "samp"}
#: A run page's "Judged" column names each verdict's subject as its protocol's code describes it, in English
#: (hypoarena/judging.py, reconstruction/judging.py: "Aster-L on bio-001", "seed mat-2, slot 3, round 1: a"); not read
#: until those descriptions are translated.
NOT_READ |= {".judged"}
#: A run's log: each line is written once, in English, when it happens (the page composes none of it).
NOT_READ |= {"#run-log"}
#: Symbols and names the body prints as the papers do (statistics, file and field names), beside ALLOWED.
SYMBOLS = ("Bradley–Terry–Davidson", "Bradley–Terry", "Condorcet", "Wald", "Buchholz", "Wilson", "Davidson", "Elo")
SYMBOLS += ("JSON", "API", "URL", "WR", "BT", "BTD", "Avg", "S_rubric", "ln", "log", "max", "exp", "inverted_cdf")
SYMBOLS += ("one_order_matches", "conflict_share", "avg_domain_rating", "Top-", "vs", "n", "S", "K")
SYMBOLS += ("HTTP", "TIE", "INVALID", "Logprobs", "logprobs", "Lit2Test Web", "Hit@k")
SYMBOLS += ("word", "proper", "brand", "exact")  # the alias modes: codes the aliases form takes ("gpt · word")


class Body(HTMLParser):
    """Every text node of a page inside one of :data:`BODY`'s elements (and no :data:`NOT_READ` one), and every title
    and aria-label attribute, each with the tag it is read in."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.open: list[str] = []
        self.classes: list[set[str]] = []
        self.texts: list[tuple[str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("title", "aria-label") and value:
                self.texts.append((f"{tag}@{name}", value))
        if tag not in VOID:
            a = {k: v or "" for k, v in attrs}
            classes = {f".{c}" for c in a.get("class", "").split()} | ({f"#{a['id']}"} if a.get("id") else set())
            self.open.append(tag)
            self.classes.append(classes)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open.pop() != tag:
                self.classes.pop()
            self.classes.pop()

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if text and BODY & set(self.open) and not NOT_READ & set(self.open).union(*self.classes):
            self.texts.append((self.open[-1], text))


def leftover_body(html: str, names: list[str]) -> list[str]:
    """The text nodes and title/aria-label attributes that, once the data's names and the allowed symbols are taken
    out, still hold an English word and no Chinese."""
    return sorted({f"{tag}: {text}" for tag, text in Body(html).texts if not CJK.search(text) and is_english(text, names)})


def body_names() -> list[str]:
    """The data a page's body prints beside the headings' names: participants (every protocol's models, their
    aliases) and judges,
    runs' labels and source files, studies, batches, contexts and HypoArena's matches; Reconstruction's seeds, references and hypotheses (titles, abstracts,
    ids) and its controls' names; Intrinsic's scorers, their criteria and where their numbers came from."""
    from annotation.models import Study
    from arena.models import Batch, Context, Participant
    from hypoarena.models import Match
    from reconstruction.models import Hypothesis, Reference

    names = [*data_names(), *Participant.objects.values_list("name", flat=True)]
    names += [alias["text"] for aliases in Participant.objects.values_list("aliases", flat=True) for alias in aliases or []]
    names += [a.text for p in Participant.objects.all() for a in derive_aliases(p.name, p.provider)]
    names += [a.text for judge in {r.judge_model for r in JudgeRun.objects.all()} for a in derive_aliases(judge)]
    names += [n for run in JudgeRun.objects.all() for n in (run.judge_model, run.label, run.parameters.get("source"))]
    names += list(Match.objects.values_list("public_id", flat=True))
    names += list(Study.objects.values_list("name", flat=True))
    names += list(Hypothesis.objects.values_list("family", flat=True).distinct())
    names += list(Batch.objects.values_list("name", flat=True).distinct())
    names += list(Context.objects.values_list("external_id", flat=True))
    names += [n for seed in SeedPaper.objects.all() for n in (seed.external_id, seed.title, seed.abstract)]
    names += list(Reference.objects.values_list("title", flat=True)) + list(Hypothesis.objects.values_list("title", flat=True))
    names += ["best_single", "slot_oracle", "top5_oracle", "inf"]  # the controls' names, a ratio over a zero rate
    names += [n for s in Scorer.objects.all() for n in (s.name, s.model, s.criterion, s.endpoint)]
    return [n for n in names if n]


def crawl(client, urls: list[str]) -> dict[str, Page]:  # noqa: ANN001
    """Every page, and the property: no leftover English heading on any of them."""
    names = body_names()
    pages = {url: page(client, url) for url in urls}
    problems = {url: bad for url, soup in pages.items() if (bad := leftover_english(soup, names))}
    assert not problems, f"English headings left on pages served in Chinese (mark them for translation): {problems}"
    return pages


def test_the_top_bar_pages_and_the_lit2test_pages_are_in_chinese(researcher, annotator, imported) -> None:  # noqa: ANN001
    client = zh_client(researcher)
    run = JudgeRun.objects.filter(benchmark=imported).first()
    urls = {
        "dashboard": reverse("arena:dashboard"),
        "runs": reverse("jobs:runs"),
        "new": reverse("jobs:run-new"),
        "studies": reverse("annotation:studies"),
        "annotators": reverse("annotation:annotators"),
        "annotator": reverse("annotation:annotator", args=[annotator.pk]),
        "api": reverse("api-docs"),
        "benchmark": reverse("arena:benchmark", args=[imported.pk]),
        "run": reverse("jobs:run", args=[run.pk]),
        "blindness": reverse("arena:blindness", args=[imported.pk]),
        "controls": reverse("controls:report", args=[imported.pk]),
        "aliases": reverse("arena:participant-aliases", args=[imported.participants.order_by("pk").first().pk]),
    }
    pages = crawl(client, list(urls.values()))
    names = body_names()
    english = {u: bad for n in ("run", "blindness", "aliases") if (bad := leftover_body(pages[(u := urls[n])].html, names))}
    assert not english, f"English left in the body of pages served in Chinese (mark it for translation): {english}"
    expect = {
        "dashboard": {"h1": ["基准"], "th": ["基准", "上下文", "含文本", "参评模型", "配对", "评判运行", "规范评判模型", "页面"]},
        "runs": {
            "h1": ["运行"],
            "th": ["运行", "基准", "评判模型", "类型", "状态", "已完成", "失败", "剩余", "进度", "预计剩余"],
        },
        "new": {"h1": ["启动评判运行"], "legend": ["评判模型及其端点"]},
        "studies": {"h1": ["人工校准研究"], "h2": ["新建研究"]},
        "annotators": {"h1": ["标注员"], "th": ["标注员", "状态", "最近登录", "进度（已提交 / 已分配）", "操作"]},
        "annotator": {"h1": ["标注员 ann"], "h2": ["账号", "进度"]},
        "api": {"h1": [], "th": ["名称", "位置", "必填", "类型", "说明", "状态", "含义"], "caption": ["参数", "响应"]},
        "benchmark": {"h2": ["评判运行", "来源审计"], "th": ["评判模型", "标签", "提供方", "状态", "规范", "有序评判"]},
        "run": {"h1": [f"运行 #{run.pk}"], "h2": ["进度", "有序评判"], "dt": ["类型", "来源", "启动者"]},
        "blindness": {"h1": ["盲评"], "h2": ["扫描", "别名", "含遮蔽内容的提案"], "th": ["模型", "角色"]},
        "controls": {"h1": ["对照"], "h2": ["尚无对照变体"]},
    }
    for name, selectors in expect.items():
        for selector, wanted in selectors.items():
            assert_shows(pages[urls[name]], urls[name], selector, wanted)
    # The navigation's sections, and a launch form's own labels.
    assert_shows(pages[urls["dashboard"]], urls["dashboard"], "nav a", ["基准", "运行", "研究", "标注员", "API 文档"])
    assert_shows(pages[urls["new"]], urls["new"], "label", ["基准", "运行类型", "评判模型", "端点 URL", "API 密钥变量", "并发数"])
    assert_shows(pages[urls["studies"]], urls["studies"], "label", ["每个上下文的配对数", "时间上限（每个条目的分钟数）"])
    # A run's status in the runs list is a word of the page's language, not the stored code ("completed").
    assert run.status == "completed"
    assert_shows(pages[urls["runs"]], urls["runs"], "td", ["已完成"])


def test_a_refused_launch_says_what_is_wrong_in_chinese(researcher, imported) -> None:  # noqa: ANN001
    client = zh_client(researcher)
    url = reverse("jobs:run-new")
    response = client.post(
        url,
        {
            "benchmark": imported.pk,
            "run_type": "holistic",
            "select": "all",
            "judge_model": "judge-x",
            "concurrency": 2,
            "temperature": 0,
            "max_tokens": 1024,
            "timeout": 120,
        },
    )
    assert response.status_code == 200, "the refused form is shown again"
    errors = texts(Page(response.content.decode()), ".errorlist li")
    assert "除非重放已存储的运行，否则必须填写端点 URL。" in errors, f"{url}: the form's errors are {errors}"
    assert not JudgeRun.objects.filter(judge_model="judge-x").exists()


def run_pages() -> list[str]:
    """A page per kind of run: the first judge run of each subject (pairs, controls, HypoArena matches, ...) and the
    first run of every other kind (generation, proposing, scoring ...)."""
    from django.apps import apps

    from jobs.models import EngineRun
    from jobs.views import run_page_url

    subjects = JudgeRun.objects.order_by("subjects").values_list("subjects", flat=True).distinct()
    runs = [JudgeRun.objects.filter(subjects=s).order_by("pk").first() for s in subjects]
    runs += [m.objects.order_by("pk").first() for m in apps.get_models() if issubclass(m, EngineRun) and m is not JudgeRun]
    return [run_page_url(run) for run in runs if run is not None]


#: The endpoint of the runs made and never launched: never called.
PROBE_URL = "http://127.0.0.1:9/v1"


def engine_runs_create(lit2test: Benchmark, hypo: Benchmark, recon: Benchmark, intrinsic: Benchmark) -> None:
    """A run of each kind that is not a judge run (made, not launched: its page is what is read, no call is made)."""
    from hypoarena.generation import generation_run_create as hypoarena_generation
    from intrinsic.scoring import scoring_run_create
    from lit2test.generation import generation_run_create as lit2test_generation
    from reconstruction.runs import proposer_run_create

    for benchmark, generation in ((lit2test, lit2test_generation), (hypo, hypoarena_generation)):
        benchmark.participants.create(name="Probe-1")  # every participant of the data has its texts already
        generation(benchmark=benchmark, base_url=PROBE_URL, participants=["Probe-1"])
    proposer_run_create(benchmark=recon, base_url=PROBE_URL, proposers=["Probe-1"], families={"Probe-1": "probe"})
    scoring_run_create(benchmark=intrinsic, model="toy", criterion="nll", logprobs_mode="raw_logprobs", base_url=PROBE_URL)


def test_each_protocols_pages_and_both_leaderboards_are_in_chinese(researcher, imported) -> None:  # noqa: ANN001
    """Each protocol's benchmark pages (headings and headers), and the pages a researcher reads longest, the two
    leaderboards, the results, seed, bracket and report pages, the sentinels and a run of each kind: no English left in
    their body text either."""
    call_command("demo_hypoarena", "--cases", "1", stdout=StringIO())
    call_command("demo_reconstruction", stdout=StringIO())
    call_command("demo_intrinsic", stdout=StringIO())
    hypo, recon, intrinsic = (
        Benchmark.objects.filter(protocol=p).order_by("pk").first() for p in ("hypoarena", "reconstruction", "intrinsic")
    )
    seed = SeedPaper.objects.filter(benchmark=recon).order_by("pk").first()
    selection = SwissSelection.objects.filter(benchmark=recon).order_by("pk").first()
    engine_runs_create(imported, hypo, recon, intrinsic)
    urls = {
        "dashboard": reverse("arena:dashboard"),
        "hypoarena": reverse("hypoarena:benchmark", args=[hypo.pk]),
        "seeds": reverse("reconstruction:benchmark", args=[recon.pk]),
        "seed": reverse("reconstruction:seed", args=[recon.pk, seed.pk]),
        "recon-launch": reverse("reconstruction:launch", args=[recon.pk]),
        "papers": reverse("intrinsic:benchmark", args=[intrinsic.pk]),
        "intrinsic-launch": reverse("intrinsic:launch", args=[intrinsic.pk]),
        "agreement": reverse("hypoarena:agreement", args=[hypo.pk]),
        "results": reverse("reconstruction:results", args=[recon.pk]),
        "bracket": reverse("reconstruction:bracket", args=[recon.pk, selection.pk]),
        "report": reverse("intrinsic:report", args=[intrinsic.pk]),
        "leaderboard": reverse("lit2test:leaderboard", args=[imported.pk]),
        "hypo-leaderboard": reverse("hypoarena:leaderboard", args=[hypo.pk]),
        "sentinels": reverse("jobs:sentinels", args=[imported.pk]),
    }
    runs = run_pages()
    pages = crawl(zh_client(researcher), [*urls.values(), *runs])
    expect = {
        "dashboard": {
            "th": ["领域", "案例", "模型", "提交", "对局", "种子论文", "已冻结", "系统", "假设", "论文", "候选", "评分器"]
        },
        "hypoarena": {"h2": ["领域", "模型", "运行"], "th": ["领域", "案例", "提交", "评判模型", "已接受的判定", "量表评分"]},
        "seeds": {"th": ["种子论文", "领域", "参考文献", "合格", "参考文献列表", "假设"]},
        "seed": {"h1": ["种子论文"], "h2": ["冻结的参考文献列表", "防泄漏审计"], "th": ["编号", "原始编号", "发表日期", "原因"]},
        "recon-launch": {
            "h1": [f"在 {recon.name} 上启动"],
            "h2": ["提议模型", "瑞士制选拔"],
            "label": ["提议模型", "模型家族", "端点 URL", "随机种子"],
        },
        "papers": {"h2": ["评分器", "学科", "论文"], "th": ["评分器", "模型", "准则", "研究问题", "候选", "金标准"]},
        "intrinsic-launch": {
            "h1": [f"在 {intrinsic.name} 上启动评分运行"],
            "label": ["模型", "准则", "Logprobs 模式", "端点 URL"],
        },
        "agreement": {
            "h1": ["评判模型间一致性"],
            "h2": ["合并 Spearman ρ", "各领域的一致性", "共同对局上的正向判定", "两个评判模型的评分"],
            "th": ["领域", "平均 |Δ名次|", "模型 / 单元", "逐对一致率", "一致 / 共同对局", "合并", "显示为 A 者胜", "平局"],
        },
        "results": {
            "h2": ["匹配率与 success@5", "对照", "比率与符号检验"],
            "th": ["系统", "范围", "比率 a/b", "论文", "a 更高", "b 更高", "平局"],
            "label": ["标签规则", "比率"],
        },
        "bracket": {
            "h2": ["槽位 1"],
            "th": ["候选 A", "候选 B", "投票（评判模型，顺序：投给哪一方）", "排名", "候选", "积分", "对局", "Buchholz 分"],
        },
        "report": {
            "h2": ["各评分器的金标准假设检索", "各学科的 Hit@1", "金标准名次分布", "跨模型一致性", "配对差值"],
            "th": ["模型", "准则", "金标准胜出 %", "已排序论文", "含平局的论文", "学科", "评分器", "来源", "端点"],
        },
    }
    names = [*body_names(), PROBE_URL]
    read = [urls[n] for n in ("results", "seed", "bracket", "report", "leaderboard", "hypo-leaderboard", "sentinels")]
    english = {url: bad for url in [*read, *runs] if (bad := leftover_body(pages[url].html, names))}
    assert not english, f"English left in the body of pages served in Chinese (mark it for translation): {english}"
    expect |= {
        "leaderboard": {
            "h1": ["排行榜"],
            "label": ["评判运行", "拟合", "小数位数"],
            "h2": [
                *("表 1 · 有序拟合", "诚实区间", "风格控制", "三种拟合并列", "有序对战", "Condorcet 关系"),
                *("自助法名次复现", "上下文聚类自助法", "位置偏差", "平局敏感性", "各批次的排序", "诊断", "评判模型可靠性"),
            ],
            "#table1 th": [
                *("排名", "模型", "BT 强度（有序） [95% CI]", "稳定 胜–负–平", "名次范围", "秩集（95% 同时置信）"),
                *("评判", "对 GPT 5.2", "顺序敏感"),
            ],
            "#fits-table th": ["与有序拟合的排序相同", "案例自助法：众数排名占比", "上下文自助法：发散的重抽样", "点拟合"],
            "#condorcet th": ["模型", "胜过的模型数"],
            "#cluster-bootstrap th": ["案例 95% 置信区间", "上下文 95% 置信区间", "宽度比"],
            "#diagnostics li": ["完全分离：无。", "强度仅供诊断：否。", "不完整案例（已排除）：0。"],
            "figcaption": ["有序拟合的强度（中心化对数能力）及案例自助法 95% 置信区间；虚线为 0。"],
        },
        "hypo-leaderboard": {
            "h1": ["HypoArena 排行榜"],
            "label": ["Arena 运行", "自助法重抽样次数", "随机种子"],
            "h2": ["各领域评分", "众数排名", "各领域的量表评分", "评判模型可靠性"],
            "#hypoarena-table th": [
                "排名 [95%]",
                "模型",
                "平均",
                "量表",
                "各领域均值",
                "合并拟合",
                "平局参数 ν [95%]",
                "对局 · 案例",
            ],
            "#modal-table th": ["拟合", "众数排名", "重抽样占比", "合并"],
            "summary": ["各领域的名次及其区间", "这些数字是怎么得出的"],
            "dt": ["模型", "尺度", "份额", "一致性", "自助法", "合并与平均", "区间", "名次"],
            "dd": [
                "评分 = 1500 + 400·θ/ln 10，θ 为中心化的自然对数强度（每次拟合均值为 0）",
                "1 = 最好；评分相同时按模型名称排序",
            ],
        },
    }
    # A tooltip of the head-to-head heat map: the release's counts (tests/arena/test_leaderboard_page.py reads them too).
    assert "GPT 5.2 对 Claude-Sonnet-4.6：稳定胜 90，稳定负 38，顺序敏感 72" in pages[urls["leaderboard"]].html
    for name, selectors in expect.items():
        for selector, wanted in selectors.items():
            assert_shows(pages[urls[name]], urls[name], selector, wanted)


def by_id(soup: Page, element_id: str) -> str:
    found = [e.text for e in soup.elements if e.attrs.get("id") == element_id]
    assert found, f"the page has no element with id {element_id!r}"
    return found[0]


def test_the_study_page_is_in_chinese(researcher, annotator, annotator2, imported) -> None:  # noqa: ANN001
    """A study with labels, a skip, a flag, fast answers and a pending item: every section of its page in Chinese."""
    study = study_create(benchmark=imported, annotators=[annotator, annotator2], n_contexts=2, n_naive_controls=1, seed=7)
    first, second, third, *rest = Assignment.objects.filter(study=study, annotator=annotator).order_by("position")
    assignment_skip(assignment=first, reason="要重读论文 2")
    assignment_flag(assignment=second, comment="提案 B 的文字被截断")
    labelled = [a for a in study.assignments.select_related("item") if a.pk not in (first.pk, third.pk)]
    for a in labelled:  # submitted at once: every answer is under the default 30 s threshold
        assignment_submit(assignment=a, values=complete_values("A" if a.a_is_first else "B"))
    client = zh_client(researcher)
    url = reverse("annotation:study", args=[study.pk])
    soup = crawl(client, [url])[url]

    assert_shows(soup, url, "h2", ["进度", "过快的答案", "跳过", "报告", "完整性校验", "一致性", "各模型", "留一标注员分析"])
    assert_shows(soup, url, "dt", ["基准", "评判模型", "样本", "分层", "导出"])
    assert_shows(
        soup,
        url,
        "th",
        [
            *("标注员", "已提交", "进行中", "已开始", "未开始", "超时", "无效", "已跳过", "最近活动"),
            *("条目", "距“开始”的秒数", "提交时间", "标注员的序号", "跳过时间", "原因", "此后", "报告时间", "说明"),
            *("状态", "缺失或错误", "Krippendorff α（真实条目）", "朴素对照识别", "多数标注"),
            "人工多数与评判模型一致（顺序稳定的决定性案例）",
            *("模型（按评判模型的排序）", "评判模型 BT 强度", "人工 BT 强度 [95% CI]", "人工胜率"),
            *("剔除的标注员", "α（胜者）", "与评判模型一致", "胜率 GPT 5.2"),
        ],
    )
    assert_shows(soup, url, "label", ["每个答案的最短用时（从“开始”到“提交”的秒数；0 = 不设）"])
    assert_shows(soup, url, "button", ["设置"])
    assert_shows(soup, url, "td", ["胜者（名义尺度：前者/后者/平局/无效）", "邻域筛查（名义尺度）", "维度评分，合并（有序尺度）"])
    assert_shows(soup, url, "td", ["文献依据", "仍为跳过", "待完成", "未开始", "要重读论文 2", "提案 B 的文字被截断"])
    # Every pair of each chosen context (no pairs per context given), two annotators per item, the default 10-minute cap.
    assert by_id(soup, "sample") == (
        "2 个上下文（每个上下文的全部配对），1 个隐藏的朴素对照；每个条目 2 名标注员；时间上限 10 分钟；随机种子 7"
    )
    fast = len(labelled)
    assert by_id(soup, "fast-answers-summary") == f"{fast} 个答案在“开始”后不到 30 秒即提交（未设最短用时：默认的标出阈值）。"
    assert by_id(soup, "skips-summary") == "1 次跳过。跳过不是答案：本页的每个数字都把该条目视为该标注员缺失的答案。"
    assert by_id(soup, "flags-summary") == "来自标注员的 1 条报告。"
    assert by_id(soup, "validation") == f"{fast} 条完整 · 1 条待完成 · 1 条已跳过 · 0 条已存储的标注未通过校验"
    assert "前者: " in by_id(soup, "headline")  # the majority labels by name
    html = client.get(url).content.decode()
    for text in (
        "实时更新中",
        f"{fast} 条标注（{fast} 条计入，0 条超时）",
        "超时标注不计入（默认）。",
        ">计入超时标注</a>",
        "一致性 JSON",
        'aria-label="评判模型的 Bradley–Terry 强度与人工胜率"',
        ">评判模型 BT 强度（有序拟合）</text>",
        ">人工胜率</text>",
        "每个点代表一个模型：规范评判模型的 Bradley–Terry 强度（x）对比人工胜率（y）。",
        'title="已开始计时，尚未填写任何内容"',
    ):
        assert text in html, f"{url}: no {text!r} on the page served in Chinese"
    for english in (
        "hidden naive control",
        "Fast answers",
        "A skip is no answer",
        "from annotators",
        "Over-time labels",
        "Human WR",
        "Leave one annotator out",
        "updating live",
        "still skipped",
        "One dot per model",
    ):
        assert english not in html, f"{url}: {english!r} left in English on the page served in Chinese"
    # The minimum time per answer: its confirmation and its refusal come back in Chinese too.
    min_url = reverse("annotation:study-min-answer", args=[study.pk])
    answer = client.post(min_url, {"min_answer_seconds": "45"}, follow=True).content.decode()
    assert "每个答案的最短用时已设为 45 秒。" in answer
    refused = client.post(min_url, {"min_answer_seconds": "abc"}, follow=True).content.decode()
    assert "每个答案的最短用时：请填写 0 到 3600 之间的整数秒，而不是 &#x27;abc&#x27;。" in refused


def test_every_style_feature_and_unit_has_a_chinese_name() -> None:
    """A feature added to the statistics without a name for the page would stay English in Chinese."""
    words = {*STYLE_FEATURES, *(unit for _count, unit in STYLE_FEATURES.values())}
    missing = sorted(words - set(STYLE_WORDS))
    assert not missing, f"add {missing} to lit2test.readers.STYLE_WORDS and translate them (makemessages)"


def test_the_leaderboards_style_section_names_its_features_in_chinese(researcher, imported) -> None:  # noqa: ANN001
    url = reverse("lit2test:leaderboard", args=[imported.pk]) + "?style=length,citations,structure"
    response = zh_client(researcher).get(url)
    html = response.content.decode()
    assert response.status_code == 200 and '<html lang="zh-hans">' in html, f"{url} is not served in Chinese"
    table = re.search(r'<table[^>]*id="style-coefficients".*?</table>', html, re.S)
    assert table, f"{url}: no style coefficients table"
    cells = texts(Page(table.group(0)), "tbody td")
    rows = [cells[i : i + 4] for i in range(0, len(cells), 4)]  # feature, per typical difference, per unit, unit
    assert [r[0] for r in rows] == ["长度", "引用", "结构"], f"{url}: the coefficients' features read {rows}"
    assert [r[3] for r in rows] == ["词", "被引论文", "标题、列表项或加粗片段"], f"{url}: the units read {rows}"
    assert "特征：长度、引用、结构。" in by_id(Page(html), "style-control"), f"{url}: the features are not listed in Chinese"


def test_the_controls_dimensions_and_the_demo_judge_read_in_chinese(researcher, imported) -> None:  # noqa: ANN001
    """A control's corrupted dimension and provenance (labelled in English by the model) in Chinese, the field's name
    kept; the demo judge's description (on the report beside its runs) reads in English exactly as it is stored."""
    from django.utils import translation

    from controls.demo import HEURISTIC_DESCRIPTION
    from controls.models import ControlVariant
    from controls.views import demo_description

    call_command("generate_controls", str(imported.pk), "--kinds", "clear", "--contexts", "1", stdout=StringIO())
    variant = ControlVariant.objects.filter(target="decisive_metric").order_by("pk").first()
    url = reverse("controls:variant", args=[variant.pk])
    assert_shows(
        page(zh_client(researcher), url), url, "dd", ["决定性指标（decisive_metric）", "确定性模板: clear-decisive-metric v1"]
    )
    with translation.override("zh-hans"):
        assert demo_description().startswith("演示用启发式评判模型，不是语言模型：")
    with translation.override("en"):
        assert demo_description() == HEURISTIC_DESCRIPTION
