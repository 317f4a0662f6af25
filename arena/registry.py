"""One registry type for everything an app plugs into the shared layers: protocols, judging task kinds, run kinds,
prompt templates, export files, human figures.

A registry maps names to items. Registering a name a second time with a *different* item raises
:class:`DuplicateRegistration`: two apps claiming one name is a bug that a silent overwrite (or a silently ignored
second registration) would hide until a run judged the wrong thing. Registering the *same* item again (an
``AppConfig.ready()`` run twice, a module imported twice) changes nothing. ``registry[name]`` of an unknown name
raises :class:`UnknownName` (a ``KeyError``), which says what is registered; ``registry.get(name)`` gives None. A registry can be frozen once apps are loaded, after which
registering raises.

Modelled on lm-evaluation-harness's ``lm_eval/api/registry.py`` and Inspect's registry (keyed by kind and name).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from importlib import import_module
from typing import Any, TypeVar

T = TypeVar("T")


class RegistryError(LookupError):
    """A registration or a look-up that cannot be honoured; the message says which registry and which name."""


class DuplicateRegistration(RegistryError):
    pass


class UnknownName(RegistryError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RegistryFrozen(RegistryError):
    pass


class Registry[T]:
    """Named items of one kind (``what``: "protocol", "judging task kind", ...), in registration order."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}
        self._frozen = False

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` and return it; the same item again is a no-op, another item raises."""
        if not name:
            raise RegistryError(f"a {self.what} needs a name")
        existing = self._items.get(name)
        if existing is not None:
            if existing is item or existing == item:
                return existing
            raise DuplicateRegistration(
                f"{self.what} {name!r} is registered twice ({_origin(existing)} and {_origin(item)}); "
                "every registration needs a name of its own"
            )
        if self._frozen:
            raise RegistryFrozen(f"the {self.what} registry is frozen: register {name!r} in an AppConfig.ready()")
        self._items[name] = item
        return item

    def __getitem__(self, name: str) -> T:
        """The item of ``name``; :class:`UnknownName` (a ``KeyError``) saying what is registered when there is none."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise UnknownName(f"no {self.what} {name!r} is registered (registered: {known})") from None

    def get(self, name: str, default: T | None = None) -> T | None:
        """The item of ``name``, or ``default`` (as ``dict.get``)."""
        return self._items.get(name, default)

    def names(self) -> list[str]:
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())

    def values(self) -> list[T]:
        return list(self._items.values())

    def freeze(self) -> None:
        self._frozen = True

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<Registry of {self.what}: {', '.join(self._items) or 'empty'}>"


@dataclass(frozen=True)
class Lazy:
    """A callable named by its dotted path (``"lit2test.views.benchmark_page"``), imported at its first call.

    Why: an ``AppConfig.ready()`` that registered its views themselves imported every page's module (and numpy, the
    statistics, the forms) into every process, Celery workers included, which never render a page: a tenth of a
    second or more of each worker's start-up. Two of the same path are equal, so a ``ready()`` run twice registers the
    same item."""

    path: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - whatever the named callable takes
        return self.target()(*args, **kwargs)

    def target(self) -> Any:  # noqa: ANN401
        """The named callable (imported now if it was not); an ImportError or AttributeError names the path."""
        module, _, name = self.path.rpartition(".")
        try:
            return getattr(import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"the registered callable {self.path!r} cannot be imported: {exc}") from exc


def _origin(item: object) -> str:
    module = getattr(item, "__module__", None) or type(item).__module__
    return f"{type(item).__name__} from {module}"
