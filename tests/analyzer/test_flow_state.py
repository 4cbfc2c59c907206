"""The flow state's maps, one per kind of key: what a join keeps of each, and what a change of a name ends."""

from __future__ import annotations

from devicelint.domain import TOP, NumberAtom, V, const, seq, seq_of
from devicelint.engine.flow_state import Overlay, State, Widened, dead, force_top, join_states, widen_changed


def state(**variables: object) -> State:
    return State({name: V(const(value)) for name, value in variables.items()})


def test_a_variable_on_one_path_keeps_its_value_and_shared_ones_join() -> None:
    first, second = state(x=1, y=1), state(x=2)
    out = join_states([first, second])
    assert out.vars["x"] == V(const(1)).join(V(const(2)))
    assert out.vars["y"] == V(const(1))


def test_an_overlay_or_a_mode_on_one_path_only_is_dropped() -> None:
    first, second = state(obj=0), state(obj=0)
    for st, value in ((first, 1), (second, 2)):
        st.overlays[Overlay("obj", "both")] = V(const(value))
        st.modes["grad"] = V(const(value == 1))
    first.overlays[Overlay("obj", "one")] = V(const(3))
    first.modes["device"] = V(const("cuda"))
    out = join_states([first, second])
    assert out.overlays == {Overlay("obj", "both"): V(const(1)).join(V(const(2)))}
    assert out.modes == {"grad": V(const(True)).join(V(const(False)))}


def test_a_dead_path_takes_no_part_in_a_join() -> None:
    live = state(x=1)
    live.overlays[Overlay("x", "a")] = V(const(2))
    out = join_states([live, dead()])
    assert out.vars == live.vars and out.overlays == live.overlays
    assert join_states([dead(), dead()]).dead


def test_aliases_survive_a_join_where_every_path_agrees() -> None:
    first, second = state(t=0, b=0, row=0, grid=0), state(t=0, b=0, row=0, grid=0)
    for st in (first, second):
        st.aliases["b"] = ("t", (("call", "device"), ("attr", "backend")))
        st.elements["row"] = ("grid", (("item", 0),))
    second.aliases["c"] = ("t", ())
    out = join_states([first, second])
    assert out.aliases == {"b": first.aliases["b"]}
    assert out.elements == first.elements


def test_a_change_of_a_name_ends_its_overlays_and_the_aliases_through_it() -> None:
    st = state(t=0, b=0, c=0, row=0, grid=0)
    st.overlays[Overlay("t", "dev")] = V(const(1))
    st.overlays[Overlay("u", "dev")] = V(const(1))
    st.aliases["b"] = (Overlay("t", "dev"), (("attr", "type"),))
    st.aliases["c"] = ("t", ())
    st.elements["row"] = ("grid", (("item", 0),))
    st.kill_aliases("t")
    assert st.aliases == {}
    st.aliases["b"] = (Overlay("t", "dev"), ())
    st.drop_overlays("t")
    assert list(st.overlays) == [Overlay("u", "dev")] and st.aliases == {}
    st.kill_aliases("grid")  # the container rebound: ``row`` is no longer its element
    assert st.elements == {}


def test_widening_goes_over_every_kind_of_value() -> None:
    old, new = state(x="a"), state(x="b")
    old.overlays[Overlay("x", "a")] = V(const("a"))
    new.overlays[Overlay("x", "a")] = V(const("b"))
    new.modes["grad"] = V(const(False))
    widened: Widened = ({}, {}, {})
    widen_changed(old, new, widened)
    assert widened == ({"x": TOP}, {Overlay("x", "a"): TOP}, {"grad": TOP})
    again = state(x="c")
    again.modes["grad"] = V(const(True))
    force_top(again, widened)
    assert again.vars["x"] is TOP and again.modes["grad"] is TOP


def test_a_counter_widens_to_a_number_of_its_type() -> None:
    """``index += 1`` in a loop: an int of unknown value (``t[index]`` of a 1-D tensor stays 0-dim); a value
    that stops being an int of that type is unknown."""
    old, new = state(index=1), state(index=2)
    widened: Widened = ({}, {}, {})
    widen_changed(old, new, widened)
    bound = V(NumberAtom("int"))
    assert new.vars["index"] == bound and widened[0] == {"index": bound}
    later = state(index=7)
    force_top(later, widened)
    assert later.vars["index"] == bound
    other = state(index=0.5)
    force_top(other, widened)
    assert other.vars["index"] is TOP
    flag, flipped = state(done=False), state(done=True)
    widen_changed(flag, flipped, widened)
    assert flipped.vars["done"] is TOP  # a bool is not a counter


def test_a_list_a_loop_keeps_growing_stays_a_list_of_unknown_items() -> None:
    old, new = state(), state()
    old.vars["returns"] = V(seq("list", [V(const(1.0))]))
    new.vars["returns"] = V(seq("list", [V(const(1.0)), V(const(2.0))]))
    widened: Widened = ({}, {}, {})
    widen_changed(old, new, widened)
    bound = V(seq_of("list", TOP))
    assert new.vars["returns"] == bound and widened[0] == {"returns": bound}
    longer = state()
    longer.vars["returns"] = V(seq("list", [V(const(1.0))] * 3))
    force_top(longer, widened)
    assert longer.vars["returns"] == bound  # still a list: held at the bound
    replaced = state()
    replaced.vars["returns"] = V(const(0))
    force_top(replaced, widened)
    assert replaced.vars["returns"] is TOP  # no longer a list: unknown
    changed_again = state()
    changed_again.vars["returns"] = V(seq("list", [V(const(3.0))]))
    widen_changed(new, changed_again, widened)
    assert changed_again.vars["returns"] is TOP  # a second widening goes to unknown


def test_a_copy_is_independent_and_the_same() -> None:
    st = state(x=1)
    st.overlays[Overlay("x", "a")] = V(const(1))
    copied = st.copy()
    assert copied.same(st)
    copied.modes["grad"] = V(const(False))
    assert not copied.same(st) and st.modes == {}


def test_a_scope_completed_on_one_path_only_is_completed_maybe() -> None:
    from devicelint.domain import CaptureId, Const, ScopeId
    from devicelint.engine.flow_state import COMPLETED_SCOPES, COMPLETED_TNAME, completed_scopes

    scope = ScopeId(CaptureId("f.py", 1, 0, 0), "f.py", 2, 0, 0)
    done = V(Const(scope, COMPLETED_TNAME))
    closed, still = state(x=1), state(x=1)
    closed.vars[COMPLETED_SCOPES] = done
    assert completed_scopes(closed) == (frozenset({scope}), True)
    assert completed_scopes(still) == (frozenset(), True)
    for paths in ([closed, still], [still, closed]):
        assert completed_scopes(join_states(paths)) == (frozenset({scope}), False)
    other = state(x=2)
    other.vars[COMPLETED_SCOPES] = done
    assert completed_scopes(join_states([closed, other])) == (frozenset({scope}), True)
