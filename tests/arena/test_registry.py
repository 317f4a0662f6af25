"""The registries every app plugs into: a second registration of one name raises, the same one again is harmless, an
unknown name says what there is; the protocol registry decides what a benchmark's protocol and a run's task kind may
be."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.exceptions import ValidationError

from arena.models import Benchmark, JudgeRun
from arena.protocols import ProtocolSpec, RunType, protocol_label, protocols, task_kind_for
from arena.registry import DuplicateRegistration, Registry, RegistryFrozen, UnknownName


@dataclass(frozen=True)
class Kind:
    name: str
    size: int


def test_a_second_item_under_one_name_raises_and_names_both() -> None:
    registry: Registry[Kind] = Registry("test kind")
    registry.register("a", Kind("a", 1))
    with pytest.raises(DuplicateRegistration, match=r"test kind 'a' is registered twice \(Kind from .* and Kind from .*\)"):
        registry.register("a", Kind("a", 2))
    assert registry["a"] == Kind("a", 1)


def test_the_same_item_again_changes_nothing() -> None:
    registry: Registry[Kind] = Registry("test kind")
    first = registry.register("a", Kind("a", 1))
    assert registry.register("a", Kind("a", 1)) is first
    assert registry.names() == ["a"] and len(registry) == 1


def test_an_unknown_name_says_what_is_registered() -> None:
    registry: Registry[Kind] = Registry("test kind")
    registry.register("b", Kind("b", 1))
    registry.register("a", Kind("a", 1))
    with pytest.raises(UnknownName) as missing:
        registry["c"]
    assert str(missing.value) == "no test kind 'c' is registered (registered: a, b)"
    assert isinstance(missing.value, KeyError) and registry.get("c") is None
    assert registry.names() == ["b", "a"]  # registration order


def test_a_frozen_registry_takes_nothing_new_but_keeps_what_it_has() -> None:
    registry: Registry[Kind] = Registry("test kind")
    registry.register("a", Kind("a", 1))
    registry.freeze()
    assert registry.register("a", Kind("a", 1)) == Kind("a", 1)
    with pytest.raises(RegistryFrozen, match="register 'b' in an AppConfig.ready"):
        registry.register("b", Kind("b", 1))


def test_the_installed_protocols_are_registered_once_each() -> None:
    names = protocols.names()
    assert len(names) == len(set(names))
    assert {"lit2test", "hypoarena", "reconstruction", "intrinsic"} <= set(names)
    assert protocol_label("hypoarena") == "HypoArena" and protocol_label("no-such-protocol") == "no-such-protocol"


def test_registering_a_second_protocol_of_one_name_raises() -> None:
    with pytest.raises(DuplicateRegistration, match="protocol 'hypoarena' is registered twice"):
        protocols.register("hypoarena", ProtocolSpec(name="hypoarena", label="Another"))


@pytest.mark.django_db
def test_a_benchmark_protocol_and_a_run_kind_are_validated_against_the_registries() -> None:
    benchmark = Benchmark(name="x", protocol="no-such-protocol")
    with pytest.raises(ValidationError) as bad:
        benchmark.full_clean()
    assert "'no-such-protocol' is not an installed protocol" in str(bad.value.message_dict["protocol"])
    assert Benchmark.objects.create(name="y").protocol == "lit2test"  # the default protocol's name
    run = JudgeRun(benchmark=Benchmark.objects.get(name="y"), label="l", judge_model="j", provider="recorded", subjects="nothing")
    with pytest.raises(ValidationError) as bad_run:
        run.full_clean()
    assert "'nothing' is not a registered judging task kind" in str(bad_run.value.message_dict["subjects"])
    assert JudgeRun(subjects="hypoarena_rubric").get_subjects_display() == "HypoArena rubric scores"


def test_a_selection_prefix_routes_to_the_app_that_judges_it() -> None:
    assert task_kind_for(protocol="lit2test", run_type="holistic", selection="all") == "pairs"
    assert task_kind_for(protocol="lit2test", run_type="structured", selection="controls:clear") == "controls"
    assert task_kind_for(protocol="hypoarena", run_type="rubric", selection="domain:ops") == "hypoarena_rubric"
    assert task_kind_for(protocol="hypoarena", run_type="holistic", selection="all") is None
    assert [t.name for t in protocols["reconstruction"].run_types] == ["match"]
    assert isinstance(protocols["intrinsic"].run_types[0], RunType)
