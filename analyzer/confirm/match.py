"""Site by site verdicts: does the analysis agree with what the runtime did?

A prediction is paired with the runtime site of the same file and start position;
when several runtime sites start there (``a + b + c``: both additions start at ``a``),
the one with the same end. The start is where CPython's code positions put it: for a
method call whose ``obj.name`` spans lines, the ``name`` (see :meth:`Lines.reported_start`).
Then, per site and rule code ``C``:

* the runtime failed with ``C`` and the analyzer reports ``C`` (error or warning): **agree**;
* the runtime failed with ``C``, the analyzer does not report it: **miss**;
* the analyzer reports an *error* ``C`` and the site executed: **agree** when every
  execution failed with ``C``, else a **false alarm**;
* the analyzer reports a *warning* ``C``, the site executed and never failed with ``C``:
  **unconfirmed** (allowed: a warning says "on some paths");
* each ``reveal_device`` at run time: **agree** when its text is one of the states the
  analyzer revealed there, else a **reveal mismatch** (also when it revealed nothing).

* the analyzer reports ``C`` at a site that never executed: **not reached**. The analysis
  goes on past a call that fails on every path, so it reports the bugs after the first one;
  the run stops at that first failure and never reaches them. Not reached judges nothing:
  it is never a false alarm (a torch observer's site is "executed" only when it failed,
  so a PyTorch finding that ran without failing is also not reached).

PyTorch programs' sites (the torch observer's records) are judged by the same rules; the
observer records failures only, so their executions are their failures, and a prediction
may also pair with one by its line (see :func:`_pair`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from .reveal import reveal_matches
from .sites import TORCH_PROFILE_PREFIX, Lines, Moved, Observed, Predicted, Span

AGREE, MISS, FALSE_ALARM, UNCONFIRMED, REVEAL_MISMATCH, NOT_REACHED = (
    "agree", "miss", "false alarm", "unconfirmed", "reveal mismatch", "not reached")
PROBLEMS = (MISS, FALSE_ALARM, REVEAL_MISMATCH)


@dataclass
class Verdict:
    kind: str  # AGREE, MISS, FALSE_ALARM, UNCONFIRMED, REVEAL_MISMATCH, NOT_REACHED
    code: str  # the rule code; "" for a reveal
    detail: str


@dataclass
class Site:
    file: str
    span: Span
    observed: Observed | None
    predicted: Predicted | None
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def executed(self) -> bool:
        return self.observed is not None and self.observed.executions > 0


def _codes(prediction: Predicted) -> set[str]:
    return set(prediction.errors) | set(prediction.warnings)


def _pair(observed: dict[Span, Observed], predicted: dict[Span, Predicted],
          reported: Callable[[Span], tuple[int, int] | None]) -> dict[Span, Span]:
    """predicted span -> observed span, for the predictions whose call executed.

    ``reported(span)``: where CPython starts the position of the call at ``span``, when
    that is not the expression's start (a method call over several lines).

    A prediction that pairs with no runtime site by its start may pair by its line with a site
    the torch observer recorded (:attr:`Observed.torch`): the observer records a failure at the
    innermost user frame, which is the line, not always the expression, the analyzer names (the
    ``model(x)`` of a library module failing inside, a discarded ``x.to(d)`` statement). Such a
    site pairs only with a prediction of a code it failed with; of several on the line, the
    nearest by column."""
    by_start: dict[tuple[int, int], list[Span]] = {}
    by_row: dict[int, list[Span]] = {}
    for span, seen in observed.items():
        by_start.setdefault(span[:2], []).append(span)
        if seen.torch:
            by_row.setdefault(span[0], []).append(span)
    pairs: dict[Span, Span] = {}
    for span, prediction in predicted.items():
        # CPython's start first; then the expression's own (a version that does not move it)
        starts = [start for start in (reported(span), span[:2]) if start is not None]
        for start in starts:
            candidates = by_start.get(start, [])
            exact = [c for c in candidates if c[2:] == span[2:]]
            if exact or len(candidates) == 1:
                pairs[span] = (exact or candidates)[0]
                break
        else:
            codes = _codes(prediction)
            for row, column in starts:
                same_line = [c for c in by_row.get(row, []) if codes & set(observed[c].failures)]
                if same_line:
                    pairs[span] = min(same_line, key=functools.partial(_distance, column))
                    break
    return pairs


def _merge(into: Predicted, other: Predicted) -> None:
    for code, message in other.errors.items():
        into.errors.setdefault(code, message)
    for code, message in other.warnings.items():
        into.warnings.setdefault(code, message)
    into.reveals.extend(other.reveals)
    into.moved.extend(other.moved)


def _one_line(text: str | None) -> str:
    return " ".join(str(text).split())


def _times(n: int) -> str:
    return f"{n} execution{'s' if n != 1 else ''}"


def judge(site: Site, profile: str | None = None) -> None:
    """Fill ``site.verdicts`` (a finding at a site that never executed: not reached); ``profile``: the
    analysis's."""
    seen, said = site.observed, site.predicted or Predicted()
    if seen is None or seen.executions == 0:
        for code in sorted(set(said.errors) | set(said.warnings)):
            kind = "error" if code in said.errors else "warning"
            site.verdicts.append(Verdict(NOT_REACHED, code, f"{kind}; the run never executed this site (it ended "
                                                            f"at an earlier failure, or took another path)"))
        return
    n = seen.executions
    codes = sorted(set(seen.failures) | set(said.errors) | set(said.warnings))
    for code in codes:
        failed = seen.failures.get(code, 0)
        runtime = f"failed {failed} of {_times(n)}" if failed else f"executed {_times(n)} without failing"
        if code in said.errors:
            if failed == n:
                site.verdicts.append(Verdict(AGREE, code, f"error; runtime {runtime}"))
            else:
                said_text = _one_line(said.errors[code])
                site.verdicts.append(Verdict(FALSE_ALARM, code, f"the analyzer reports an error ({said_text}); "
                                                                f"the runtime {runtime}"))
        elif code in said.warnings:
            kind = AGREE if failed else UNCONFIRMED
            site.verdicts.append(Verdict(kind, code, f"warning; runtime {runtime}"))
        else:
            site.verdicts.append(Verdict(MISS, code, f"the runtime {runtime} ({_one_line(seen.messages.get(code))}); "
                                                     f"the analyzer reports nothing with this code there"))
    # (the torch observer's records name torch's version, not a Burn profile: no switch)
    switched = sorted(p for p in seen.profiles - {profile} if not p.startswith(TORCH_PROFILE_PREFIX)) \
        if profile else []
    if switched:  # the program changed the profile itself: say so next to what it explains
        for verdict in site.verdicts:
            if verdict.kind in PROBLEMS:
                verdict.detail += f" (the runtime ran under profile {', '.join(switched)})"
    if seen.reveals:
        revealed = " | ".join(said.reveals)
        wrong = sorted({text for text in seen.reveals if not any(reveal_matches(r, text) for r in said.reveals)})
        if wrong:
            shown = repr(revealed) if revealed else "nothing"
            site.verdicts.append(Verdict(REVEAL_MISMATCH, "", f"the runtime reveals {', '.join(map(repr, wrong))}; "
                                                              f"the analyzer revealed {shown}"))
        else:
            site.verdicts.append(Verdict(AGREE, "", f"reveal: {sorted(set(seen.reveals))[0]!r} in {revealed!r}"))


def _distance(column: int, span: Span) -> tuple[int, Span]:
    """How far ``span`` starts from ``column`` on its line (then the span itself: a stable order)."""
    return abs(span[1] - column), span


def compare(observed: dict[str, dict[Span, Observed]], predicted: dict[str, dict[Span, Predicted]],
            files: set[str], lines: Lines, profile: str | None = None) -> list[Site]:
    """Every site of ``files`` that executed or has a prediction, judged, in file and position order."""
    sites: list[Site] = []
    moved_sites: list[Site] = []
    _move_setup_findings(observed, predicted)
    for file in sorted(files):
        seen, said = observed.get(file, {}), predicted.get(file, {})
        pairs = _pair(seen, said, functools.partial(lines.reported_start, file))
        merged: dict[Span, Predicted] = {}
        shown: dict[Span, Span] = {}  # a paired site is shown where the analyzer reports it
        for span, prediction in sorted(said.items()):
            target = pairs.get(span, span)
            _merge(merged.setdefault(target, Predicted()), prediction)
            shown.setdefault(target, span)
        observed_here = dict(seen)
        for span, prediction in merged.items():
            if prediction.moved:
                observed_here[span] = _judge_moved(prediction.moved, observed_here.get(span, Observed()), moved_sites)
        found = [Site(file, shown.get(span, span), observed_here.get(span) if span in seen else None, merged.get(span))
                 for span in set(seen) | set(merged) if span in seen or _has_claims(merged[span])]
        sites.extend(found)
    for site in moved_sites:  # shown where the analyzer reports them (a file of their own, maybe)
        sites.append(site)
    for site in sorted(sites, key=lambda site: (site.file, site.span)):
        judge(site, profile)
    return sorted(sites, key=lambda site: (site.file, site.span))


def _move_setup_findings(observed: dict[str, dict[Span, Observed]],
                         predicted: dict[str, dict[Span, Predicted]]) -> None:
    """A finding at a call that sets up a later failure (``Rule.reported_at_setup``: a ``DataLoader(...)`` whose
    settings fail when it is iterated) moves to the sites that failed through that call (it is among their records'
    callers), as a finding reported at a caller does; one that no failure came through stays where it is."""
    moves: list[tuple[str, Span, Moved]] = []
    for at, spans in predicted.items():
        for where, prediction in spans.items():
            for finding in prediction.setup:
                if where in observed.get(at, {}):
                    continue  # it failed here: judged here
                hosts = [(file, span) for file, seen in observed.items() for span, site in seen.items()
                         if finding.code in site.via.get(finding.place, (0, {}))[1]]
                if hosts:
                    (prediction.errors if finding.error else prediction.warnings).pop(finding.code, None)
                    moves.extend((file, span, finding) for file, span in hosts)
    for file, span, finding in moves:
        predicted.setdefault(file, {}).setdefault(span, Predicted()).moved.append(finding)


def _has_claims(prediction: Predicted) -> bool:
    return bool(prediction.errors or prediction.warnings or prediction.reveals)


def _judge_moved(moved: list[Moved], seen: Observed, into: list[Site]) -> Observed:
    """Sites for the findings reported at calls further out than the failing call ``seen`` records: each judged on
    the executions that came through its call. What is left of ``seen`` (executions that came another way) is
    judged at the failing call itself."""
    left = dataclasses.replace(seen, failures=dict(seen.failures), via=dict(seen.via))
    for finding in moved:
        through = seen.via.get(finding.place) if seen.executions else None
        observed = None
        if through is not None:
            executions, failures = through
            observed = dataclasses.replace(seen, executions=executions, failures=dict(failures), via={}, reveals=[])
            left.executions -= executions
            for code, count in failures.items():
                left.failures[code] = left.failures.get(code, 0) - count
                if left.failures[code] <= 0:
                    del left.failures[code]
        predicted = Predicted()
        (predicted.errors if finding.error else predicted.warnings)[finding.code] = finding.message
        into.append(Site(finding.file, finding.span, observed, predicted))
    left.executions = max(left.executions, 0)
    return left
