"""The fake LLM server itself, driven through the real ``openai`` client and plain httpx (no database)."""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from tests.fake_llm import FakeLLM, toy_lm
from tests.fake_llm.server import DIMENSIONS, GENERATE_FIELDS, parse_proposals

SYSTEM = "You are a careful judge. Answer strict JSON."


def judge_prompt(hyp_a: str = "short", hyp_b: str = "a much longer hypothesis text", extra: str = "") -> str:
    return (
        f"Compare the two proposals.{extra}\n"
        "=== PROPOSAL A ===\n"
        "[literature_gap]\nGap A\n"
        f"[hypothesis]\n{hyp_a}\n"
        "[minimal_test]\nTest A\n"
        "=== PROPOSAL B ===\n"
        "[literature_gap]\nGap B\n"
        f"[hypothesis]\n{hyp_b}\n"
        "[minimal_test]\nTest B\n"
        "=== END ===\n"
        "Answer with JSON."
    )


def messages(user: str, system: str = SYSTEM) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def client(llm: FakeLLM, timeout: float = 5.0, max_retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=max_retries, timeout=timeout)


def ask(llm: FakeLLM, user: str, *, system: str = SYSTEM, model: str = "fake-model", **kwargs) -> str:
    response = client(llm, **kwargs).chat.completions.create(
        model=model, messages=messages(user, system), temperature=0, max_tokens=400
    )
    return response.choices[0].message.content


def post(llm: FakeLLM, user: str, model: str = "fake-model") -> httpx.Response:
    with httpx.Client(trust_env=False, timeout=5) as http:
        return http.post(f"{llm.base_url}/chat/completions", json={"model": model, "messages": messages(user)})


def test_default_judge_answers_json_and_prefers_longer_field(fake_llm: FakeLLM) -> None:
    response = client(fake_llm).chat.completions.create(model="judge-x", messages=messages(judge_prompt()))
    answer = json.loads(response.choices[0].message.content)
    assert answer["winner"] == "B"
    assert answer["confidence"] == "high"
    assert set(answer) == {"winner", "confidence", "main_reason", "weakness_a", "weakness_b"}
    assert response.object == "chat.completion" and response.model == "judge-x"
    assert response.choices[0].finish_reason == "stop"
    prompt_words = len(SYSTEM.split()) + len(judge_prompt().split())
    assert response.usage.prompt_tokens == prompt_words
    assert response.usage.total_tokens == prompt_words + response.usage.completion_tokens

    assert json.loads(ask(fake_llm, judge_prompt("longer hypothesis of A", "B")))["winner"] == "A"
    assert json.loads(ask(fake_llm, judge_prompt("same", "same")))["winner"] == "tie"


def test_policies(fake_llm: FakeLLM) -> None:
    fake_llm.script(judge={"policy": "always_a", "confidence": "low"})
    answer = json.loads(ask(fake_llm, judge_prompt()))
    assert (answer["winner"], answer["confidence"]) == ("A", "low")

    fake_llm.script(judge={"policy": "always_tie"})
    assert json.loads(ask(fake_llm, judge_prompt()))["winner"] == "tie"

    fake_llm.script(judge={"policy": "prefer_text", "text": "short"})
    assert json.loads(ask(fake_llm, judge_prompt()))["winner"] == "A"

    fake_llm.script(judge={"policy": "prefer_field", "field": "minimal_test"})
    assert json.loads(ask(fake_llm, judge_prompt()))["winner"] == "tie"

    fake_llm.script(judge={"policy": "random", "seed": 3})
    first = [json.loads(ask(fake_llm, judge_prompt(extra=str(i))))["winner"] for i in range(6)]
    fake_llm.script(judge={"policy": "random", "seed": 3})
    assert [json.loads(ask(fake_llm, judge_prompt(extra=str(i))))["winner"] for i in range(6)] == first


def test_missing_markers_give_malformed_text(fake_llm: FakeLLM) -> None:
    assert ask(fake_llm, "no proposals here") == "no proposals found"


def test_429_with_retry_after_then_success(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"attempts": [1, 2], "status": 429, "retry_after": 0.1}])
    for _ in range(2):
        response = post(fake_llm, judge_prompt())
        assert response.status_code == 429
        assert float(response.headers["Retry-After"]) == 0.1
        assert response.json()["error"]["type"] == "rate_limit_error"
    assert json.loads(post(fake_llm, judge_prompt()).json()["choices"][0]["message"]["content"])["winner"] == "B"

    log = fake_llm.log()
    assert [(e["attempt"], e["status"]) for e in log] == [(1, 429), (2, 429), (3, 200)]
    assert len({e["task"] for e in log}) == 1 and len(log[0]["task"]) == 16

    # The real client raises without retries, and succeeds on its own when allowed to retry.
    fake_llm.script(failures=[{"attempts": [1, 2], "status": 429, "retry_after": 0.1}])
    with pytest.raises(openai.RateLimitError):
        ask(fake_llm, judge_prompt())
    assert json.loads(ask(fake_llm, judge_prompt(), max_retries=2))["winner"] == "B"
    assert [e["status"] for e in fake_llm.log()] == [429, 429, 200]


def test_500(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"attempts": [1], "status": 500}])
    with pytest.raises(openai.InternalServerError):
        ask(fake_llm, judge_prompt())
    assert json.loads(ask(fake_llm, judge_prompt()))["winner"] == "B"
    assert [(e["attempt"], e["status"]) for e in fake_llm.log()] == [(1, 500), (2, 200)]


def test_malformed_and_missing_key(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"attempts": [1], "malformed": "not json at all"}, {"attempts": [2], "missing_key": "confidence"}])
    assert ask(fake_llm, judge_prompt()) == "not json at all"
    answer = json.loads(ask(fake_llm, judge_prompt()))
    assert "confidence" not in answer and answer["winner"] == "B"
    assert "confidence" in json.loads(ask(fake_llm, judge_prompt()))

    fake_llm.script(failures=[{"attempts": "all", "malformed": "{broken"}])
    assert ask(fake_llm, judge_prompt()) == ask(fake_llm, judge_prompt()) == "{broken"
    assert [e["status"] for e in fake_llm.log()] == [200, 200]


def test_rate_is_deterministic(fake_llm: FakeLLM) -> None:
    script = {"failures": [{"rate": 0.5, "status": 500}]}
    prompts = [judge_prompt(extra=str(i)) for i in range(20)]
    fake_llm.script(**script)
    first = [post(fake_llm, p).status_code for p in prompts]
    fake_llm.script(**script)
    assert [post(fake_llm, p).status_code for p in prompts] == first
    assert set(first) == {200, 500}


def test_sleep_triggers_client_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"attempts": [1], "sleep": 2.0}])
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(fake_llm, judge_prompt(), timeout=0.5)
    assert time.monotonic() - started < 1.5
    assert json.loads(ask(fake_llm, judge_prompt(), timeout=0.5))["winner"] == "B"
    assert [e["attempt"] for e in fake_llm.log()] == [1, 2]


def test_latency_is_served_in_parallel(fake_llm: FakeLLM) -> None:
    fake_llm.script(latency=0.2)
    shared = client(fake_llm, timeout=10)

    def one(i: int) -> str:
        return shared.chat.completions.create(model="m", messages=messages(judge_prompt(extra=str(i)))).choices[0].message.content

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(one, range(32)))
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed
    assert all(json.loads(a)["winner"] == "B" for a in answers)
    log = fake_llm.log()
    assert len(log) == 32 and len({e["task"] for e in log}) == 32 and all(e["attempt"] == 1 for e in log)


def test_generate_mode(fake_llm: FakeLLM) -> None:
    fake_llm.script(mode="generate", generate={"words": 12})
    prompt = "Write a proposal about sparse attention in protein language models and its calibration."
    first = json.loads(ask(fake_llm, prompt, model="model-one"))
    assert list(first) == GENERATE_FIELDS
    assert all(len(text.split()) == 12 for text in first.values())
    assert json.loads(ask(fake_llm, prompt, model="model-one")) == first
    second = json.loads(ask(fake_llm, prompt, model="model-two"))
    assert second != first
    texts = " ".join([*first.values(), *second.values()]).lower()
    assert "model-one" not in texts and "model-two" not in texts


def test_echo_mode(fake_llm: FakeLLM) -> None:
    fake_llm.script(mode="echo")
    assert ask(fake_llm, "hello there") == "hello there"


def test_structured_mode_includes_scores(fake_llm: FakeLLM) -> None:
    answer = json.loads(ask(fake_llm, judge_prompt(), system=SYSTEM + " STRUCTURED-DIMENSIONS"))
    assert answer["overall"] == answer["winner"] == "B"
    assert set(answer["scores"]) == {"A", "B"}
    assert set(answer["scores"]["A"]) == set(DIMENSIONS)
    assert all(answer["scores"]["B"][d] > answer["scores"]["A"][d] for d in DIMENSIONS)
    assert all(0 <= v <= 4 for side in answer["scores"].values() for v in side.values())
    assert "scores" not in json.loads(ask(fake_llm, judge_prompt()))


def test_log_and_control_endpoints(fake_llm: FakeLLM) -> None:
    before = time.time()
    ask(fake_llm, judge_prompt(), model="logged-model")
    fake_llm.script(failures=[{"attempts": [1], "status": 500}])
    assert fake_llm.log() == []
    with pytest.raises(openai.InternalServerError):
        ask(fake_llm, judge_prompt(), model="logged-model")
    ask(fake_llm, judge_prompt(), model="logged-model")
    log = fake_llm.log()
    assert [(e["status"], e["attempt"], e["model"]) for e in log] == [(500, 1, "logged-model"), (200, 2, "logged-model")]
    assert log[0]["messages"] == messages(judge_prompt())
    assert before <= log[0]["t"] <= log[1]["t"] <= time.time()

    with httpx.Client(trust_env=False, timeout=5) as http:
        assert http.get(f"{fake_llm.root_url}/_health").json() == {"ok": True}
        assert http.get(f"{fake_llm.root_url}/nope").status_code == 404
        assert http.post(f"{fake_llm.root_url}/_script", json={"mode": "bogus"}).status_code == 400


def test_parse_proposals() -> None:
    parsed = parse_proposals(judge_prompt("x y", "z"))
    assert parsed["A"]["fields"] == {"literature_gap": "Gap A", "hypothesis": "x y", "minimal_test": "Test A"}
    assert parsed["B"]["fields"]["minimal_test"] == "Test B"
    assert "Answer with JSON" not in parsed["B"]["raw"]
    assert parse_proposals("=== PROPOSAL A ===\n[hypothesis]\nonly A") is None


def test_replies_answer_matching_requests_in_order_then_repeat_the_last(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        replies=[
            {"contains": ["REWRITE", "alpha"], "answers": ["I can't help with that.", {"field": "x", "text": "y"}]},
            {"contains": "REWRITE", "model": "other", "answers": ["for other"]},
        ]
    )
    assert ask(fake_llm, "REWRITE alpha") == "I can't help with that."
    assert json.loads(ask(fake_llm, "REWRITE alpha")) == {"field": "x", "text": "y"}
    assert json.loads(ask(fake_llm, "REWRITE alpha")) == {"field": "x", "text": "y"}  # the last answer repeats
    assert ask(fake_llm, "REWRITE beta", model="other") == "for other"
    assert json.loads(ask(fake_llm, judge_prompt()))["winner"] == "B"  # no rule matches: the mode answers
    assert [e.get("reply") for e in fake_llm.log()] == [[0, 0], [0, 1], [0, 1], [1, 0], None]
    fake_llm.script(replies=[{"contains": "alpha", "answers": ["first"]}], failures=[{"attempts": [1], "status": 500}])
    with pytest.raises(openai.InternalServerError):
        ask(fake_llm, "alpha")  # failure rules come first
    assert ask(fake_llm, "alpha") == "first"
    with httpx.Client(trust_env=False, timeout=5) as http:
        assert http.post(f"{fake_llm.root_url}/_script", json={"replies": [{"contains": "x"}]}).status_code == 400
        assert http.post(f"{fake_llm.root_url}/_script", json={"replies": [{"answers": ["a"], "when": 1}]}).status_code == 400


# --------------------------------------------------------------------------- completions and tokenize (toy model)


def log_softmax_row(prev: int) -> list[float]:
    row = toy_lm.logits(prev)
    norm = math.log(sum(math.exp(z) for z in row))
    return [z - norm for z in row]


def test_completions_echo_the_prompt_with_log_probabilities_and_offsets(fake_llm: FakeLLM) -> None:
    prompt = "Hi é 🙂"
    response = client(fake_llm).completions.create(
        model="toy", prompt=prompt, echo=True, logprobs=2, max_tokens=0, extra_body={"prompt_logprobs": 1}
    )
    choice = response.choices[0]
    # <s>, "H", "i", " ", "é" (a merge), " ", then the emoji's four UTF-8 bytes: offsets count whole characters.
    ids = [
        0,
        ord("H") + 1,
        ord("i") + 1,
        ord(" ") + 1,
        257 + toy_lm.MERGES.index("é"),
        ord(" ") + 1,
        0xF0 + 1,
        0x9F + 1,
        0x99 + 1,
        0x82 + 1,
    ]
    assert toy_lm.tokenize(prompt) == ids
    assert choice.text == prompt and response.usage.prompt_tokens == len(ids) and response.usage.completion_tokens == 0
    logprobs = choice.logprobs
    assert logprobs.tokens == ["<s>", "H", "i", " ", "é", " ", "bytes:\\xf0", "bytes:\\x9f", "bytes:\\x99", "bytes:\\x82"]
    assert logprobs.text_offset == [0, 0, 1, 2, 3, 4, 5, 5, 5, 5]
    assert logprobs.token_logprobs[0] is None and logprobs.top_logprobs[0] is None
    for position in range(1, len(ids)):
        row = log_softmax_row(ids[position - 1])
        assert logprobs.token_logprobs[position] == pytest.approx(row[ids[position]], abs=1e-12)
        top = logprobs.top_logprobs[position]
        assert len(top) == 2 and max(top.values()) == pytest.approx(max(row), abs=1e-12)
    # vLLM's prompt_logprobs: keyed by token id, the prompt token plus the best one, with 1-based ranks.
    prompt_logprobs = choice.model_extra["prompt_logprobs"]
    assert prompt_logprobs[0] is None and len(prompt_logprobs) == len(ids)
    entry = prompt_logprobs[4][str(ids[4])]
    row = log_softmax_row(ids[3])
    assert entry == {
        "logprob": pytest.approx(row[ids[4]], abs=1e-12),
        "rank": 1 + sum(z > row[ids[4]] for z in row),
        "decoded_token": "é",
    }
    assert all(str(ids[p]) in prompt_logprobs[p] and 1 <= len(prompt_logprobs[p]) <= 2 for p in range(1, len(ids)))


def test_completions_give_raw_logits_in_raw_logits_mode_and_generate_greedily(fake_llm: FakeLLM) -> None:
    fake_llm.script(completions={"logprobs_mode": "raw_logits"})
    response = client(fake_llm).completions.create(model="toy", prompt="ab", echo=True, logprobs=1, max_tokens=2)
    ids = toy_lm.tokenize("ab")
    logprobs = response.choices[0].logprobs
    first = max(range(toy_lm.V), key=lambda t: (toy_lm.logit(ids[-1], t), -t))
    assert logprobs.token_logprobs[1:3] == [toy_lm.logit(ids[0], ids[1]), toy_lm.logit(ids[1], ids[2])]
    assert logprobs.token_logprobs[3] == toy_lm.logit(ids[-1], first) == max(toy_lm.logits(ids[-1]))
    assert len(logprobs.tokens) == 5 and response.usage.completion_tokens == 2


def test_tokenize_answers_like_vllm_or_404_when_switched_off(fake_llm: FakeLLM) -> None:
    merge = {m: 257 + i for i, m in enumerate(toy_lm.MERGES)}
    with httpx.Client(trust_env=False, timeout=5) as http:
        url = f"{fake_llm.root_url}/tokenize"
        answer = http.post(url, json={"model": "toy", "prompt": "Hypothesis: x", "return_token_strs": True}).json()
        assert answer == {
            "count": 6,
            "max_model_len": 4096,
            "tokens": [0, merge["Hypothe"], merge["sis"], ord(":") + 1, ord(" ") + 1, ord("x") + 1],
            "token_strs": ["<s>", "Hypothe", "sis", ":", " ", "x"],
        }
        # The boundary merges of toy_lm: ": (" and "sis: We" cross "Hypothesis:".
        assert http.post(url, json={"prompt": "Hypothesis: (a"}).json()["tokens"][2:] == [
            merge["sis"],
            merge[": ("],
            ord("a") + 1,
        ]
        assert http.post(url, json={"prompt": "Hypothesis: We"}).json()["tokens"][2:] == [merge["sis: We"]]
        assert http.post(url, json={"prompt": "x", "add_special_tokens": False}).json()["tokens"] == [ord("x") + 1]
        fake_llm.script(completions={"tokenize": False})
        assert http.post(url, json={"prompt": "x"}).status_code == 404
    assert [(e["endpoint"], e["status"], e["prompt"]) for e in fake_llm.log()] == [("tokenize", 404, "x")]


def test_failure_rules_apply_to_completions_and_name_their_endpoints(fake_llm: FakeLLM) -> None:
    fake_llm.script(failures=[{"attempts": [1], "status": 500}, {"endpoints": ["tokenize"], "attempts": [2], "status": 429}])
    with httpx.Client(trust_env=False, timeout=5) as http:
        body = {"model": "toy", "prompt": "ab", "echo": True, "logprobs": 0, "max_tokens": 0}
        statuses = [http.post(f"{fake_llm.base_url}/completions", json=body).status_code for _ in range(2)]
        tokenized = [http.post(f"{fake_llm.root_url}/tokenize", json=body).status_code for _ in range(3)]
    assert statuses == [500, 200]
    assert tokenized == [200, 429, 200]  # a rule without "endpoints" leaves /tokenize alone
    with pytest.raises(openai.InternalServerError):
        ask(fake_llm, "hello")  # chat keeps its own attempt counter: its first try fails too
    ask(fake_llm, "hello")
    log = fake_llm.log()
    assert [(e["endpoint"], e["attempt"], e["status"]) for e in log[:5]] == [
        ("completions", 1, 500),
        ("completions", 2, 200),
        ("tokenize", 1, 200),
        ("tokenize", 2, 429),
        ("tokenize", 3, 200),
    ]
    assert [(e["endpoint"], e["status"]) for e in log[5:]] == [("chat", 500), ("chat", 200)]
    assert "prompt" not in log[-1] and log[0]["prompt"] == "ab" and log[0]["messages"] is None


def test_completions_faults_and_limits(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        failures=[
            {"endpoints": ["completions"], "attempts": [1], "malformed": "nope"},
            {"endpoints": ["completions"], "attempts": [2], "missing_key": "logprobs"},
        ],
        completions={"max_model_len": 3},
    )
    with httpx.Client(trust_env=False, timeout=5) as http:
        url = f"{fake_llm.base_url}/completions"
        body = {"model": "toy", "prompt": "ab", "echo": True, "logprobs": 1, "max_tokens": 0}
        first = http.post(url, json=body).json()["choices"][0]
        second = http.post(url, json=body).json()["choices"][0]
        third = http.post(url, json=body).json()["choices"][0]
        too_long = http.post(url, json={**body, "prompt": "abc"})
        not_text = http.post(url, json={**body, "prompt": [1, 2]})
        assert http.post(f"{fake_llm.root_url}/_script", json={"completions": {"logprobs_mode": "logits"}}).status_code == 400
        assert http.post(f"{fake_llm.root_url}/_script", json={"completions": {"seed": 1}}).status_code == 400
        assert (
            http.post(f"{fake_llm.root_url}/_script", json={"failures": [{"status": 500, "endpoints": ["x"]}]}).status_code == 400
        )
    assert (first["text"], first["logprobs"]) == ("nope", None)
    assert "logprobs" not in second and third["logprobs"]["tokens"] == ["<s>", "a", "b"]
    assert too_long.status_code == 400 and "maximum context length is 3 tokens" in too_long.json()["error"]["message"]
    assert not_text.status_code == 400


def test_a_failure_rule_with_a_model_applies_to_that_models_requests_only(fake_llm) -> None:  # noqa: ANN001
    import httpx

    fake_llm.script(failures=[{"model": "bad-judge", "status": 503}])
    body = {"messages": [{"role": "user", "content": "=== PROPOSAL A ===\n[hypothesis] x\n=== PROPOSAL B ===\n[hypothesis] y"}]}
    bad = httpx.post(f"{fake_llm.base_url}/chat/completions", json=body | {"model": "bad-judge"}, timeout=10)
    good = httpx.post(f"{fake_llm.base_url}/chat/completions", json=body | {"model": "good-judge"}, timeout=10)
    assert (bad.status_code, good.status_code) == (503, 200)
