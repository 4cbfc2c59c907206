"""The observer's stand-in for ``tqdm`` (see :mod:`.stand_ins`): what a bar does with what it wraps, after
``tqdm/std.py``. ``tqdm(iterable)`` yields the iterable's elements (as it is iterated, in a ``for`` or through
``with tqdm(...) as bar``: ``__enter__`` returns the bar); ``trange(*args)`` is ``tqdm(range(*args))``;
``set_postfix`` formats its values (numbers as numbers, anything else with ``str``); ``set_description``,
``update``, ``refresh`` and ``close`` draw nothing here. ``tqdm.auto``, ``tqdm.notebook`` and ``tqdm.std`` are
this module too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from numbers import Number
from typing import Any

__version__ = "0.0.0+runtime-shim-stand-in"
__path__: list[str] = []  # a package: its submodules are found by the stand-ins' finder


class tqdm:  # noqa: N801 - tqdm's own name
    def __init__(self, iterable: Iterable[Any] | None = None, desc: str | None = None, total: float | None = None,
                 *args: Any, **kwargs: Any) -> None:
        self.iterable = iterable
        self.desc = desc or ""
        self.total = len(iterable) if total is None and hasattr(iterable, "__len__") else total  # type: ignore[arg-type]
        self.n = 0
        self.postfix = ""

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise TypeError("'NoneType' object is not iterable")
        for item in self.iterable:
            yield item
            self.n += 1

    def __len__(self) -> int:
        return int(self.total or 0)

    def __enter__(self) -> tqdm:
        return self

    def __exit__(self, *exc: object) -> bool:
        self.close()
        return False

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        values = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v:g}" if isinstance(v, Number) and not isinstance(v, bool) else f"{k}={v!s}"
                                 for k, v in values.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = str(s)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    set_description_str = set_description

    def update(self, n: float = 1) -> None:
        self.n += n  # type: ignore[assignment]

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    @classmethod
    def write(cls, s: str, file: Any = None, end: str = "\n", nolock: bool = False) -> None:
        print(s, end=end, file=file)


def trange(*args: Any, **kwargs: Any) -> tqdm:
    return tqdm(range(*args), **kwargs)
