"""The semantics table itself: complete, without dead rows, and faithful to dispatch-semantics.md.

The first tests check the table's shape (every key covered, every row the
first match of some key, profile overrides naming real rows). The others
check cells against expectations written out by hand from the document, so
that a wrong row in ``semantics.py`` fails here even though every runtime test
follows the table.
"""

from __future__ import annotations

import pytest

from runtime_shim import profiles
from runtime_shim import semantics as S
from runtime_shim.semantics import (
    AF,
    CC,
    CC_INT,
    CI,
    CI_INT,
    PF,
    PF_STAR,
    PI,
    PI_STAR,
    Fail,
    Ok,
    Place,
    Redirect,
    Role,
    Route,
)

TABLE_NAMES = sorted(S.TABLES)
SAME, OTHER, SAME_CAP, OTHER_CAP = Place.SAME_BACKEND, Place.OTHER_BACKEND, Place.SAME_CAPTURE, Place.OTHER_CAPTURE

HEAD = "burn-2026-08"  # the document's HEAD column (2c06be35): the tables as written


def _key_id(key: dict) -> str:
    return ",".join(f"{k}={v.value if hasattr(v, 'value') else v}" for k, v in key.items())


# --- the table's shape -------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_every_key_is_covered_by_a_row(table: str) -> None:
    keys = list(S.keys_of(table))
    assert keys, f"table {table} has no keys"
    names = set(S.TABLES[table][1])
    for key in keys:
        assert set(key) == names, (table, key)
        row = S.find_row(table, key)  # raises LookupError when no row covers the key
        assert row.matches(key)


@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize("profile", sorted(S.PROFILES))
def test_every_cell_has_an_outcome(table: str, profile: str) -> None:
    for key in S.keys_of(table):
        row, outcome = S.cell(table, profile, **key)
        assert isinstance(outcome, (Ok, Fail, Redirect)), (table, key, outcome)
        assert outcome == S.PROFILES[profile].get(row.id, row.outcome)
        if isinstance(outcome, Fail):
            assert outcome.code.startswith("MV1") and len(outcome.code) == 5, outcome
            assert outcome.code in RULE_CODES, outcome
        if isinstance(outcome, Redirect):
            assert table == "move", (table, row.id)


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_no_row_is_dead(table: str) -> None:
    rows, _names = S.TABLES[table]
    first_matches = {S.find_row(table, key).id for key in S.keys_of(table)}
    dead = [row.id for row in rows if row.id not in first_matches]
    assert not dead, f"rows of {table} that are never the first match: {dead}"


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_row_ids_are_unique_and_patterns_use_key_names(table: str) -> None:
    rows, names = S.TABLES[table]
    ids = [row.id for row in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        assert set(row.pattern) <= set(names), (row.id, set(row.pattern) - set(names))


def test_keys_have_no_duplicates() -> None:
    for table in TABLE_NAMES:
        keys = [tuple(sorted((k, str(v)) for k, v in key.items())) for key in S.keys_of(table)]
        assert len(keys) == len(set(keys)), table


@pytest.mark.parametrize("profile", sorted(S.PROFILES))
def test_profile_overrides_name_existing_rows(profile: str) -> None:
    all_ids = {row.id for rows, _names in S.TABLES.values() for row in rows}
    for row_id, outcome in S.PROFILES[profile].items():
        assert row_id in all_ids, f"profile {profile} overrides unknown row {row_id}"
        assert isinstance(outcome, (Ok, Fail, Redirect))


def test_profiles() -> None:
    assert S.DEFAULT_PROFILE == "burn-d16f7ba"  # the seeds' pinned commit, d16f7ba2ed
    assert {"burn-2026-08", "burn-0.21", "burn-d16f7ba", "burn-next"} <= set(S.PROFILES)
    assert dict(S.PROFILES["burn-2026-08"]) == {}
    assert set(profiles.PROFILE_NAMES) == set(S.PROFILES) and tuple(profiles.PROFILE_DOCS) == profiles.PROFILE_NAMES
    with pytest.raises(profiles.UnknownProfile):
        profiles.check_profile("burn-0.20")
    # the name the pinned profile had first stays accepted, everywhere a profile is named
    assert profiles.check_profile("burn-2026-09") == "burn-d16f7ba"
    assert S.cell("backend", "burn-2026-09", lhs=S.Route.AUTODIFF, rhs=S.Route.FLOAT, same_backend=True) == \
        S.cell("backend", "burn-d16f7ba", lhs=S.Route.AUTODIFF, rhs=S.Route.FLOAT, same_backend=True)


def test_move_keys_are_exactly_the_reachable_cells() -> None:
    keys = list(S.keys_of("move"))
    for key in keys:
        capture = key["cls"] in S.CAPTURE_CLASSES
        if capture:
            assert key["place"] is not SAME, key
        else:
            assert key["place"] is not SAME_CAP, key
        if key["place"] in (SAME, OTHER):
            assert key["scope"] is False, key
    # 5 non-capture classes x 2 (ad) x (same, other, other capture with and without scope)
    # + 4 capture classes x 2 (ad) x (same capture x2, other capture x2, other backend)
    assert len(keys) == 5 * 2 * 4 + 4 * 2 * 5


# --- independent expectations, written out from dispatch-semantics.md ---------------------

RULE_CODES = {f"MV1{n:02d}" for n in range(1, 13)}

ANY_SCOPE = (True, False)
NO_SCOPE = (False,)
OK = "ok"

# Section 3, row by row: (doc row, classes, target is AD, places, scopes, HEAD, burn-0.21).
# "ok" or a rule code. Rows marked "note" come from the notes under the table; rows marked
# "via 3" / "via note" apply "handled as a move to the inner device" to a capture target.
DOC_MOVE_ROWS = (
    ("1", {PF, PF_STAR}, False, {SAME}, NO_SCOPE, OK, OK),
    ("2", {PF, PF_STAR}, False, {OTHER}, NO_SCOPE, OK, OK),
    ("3", {PF, PF_STAR}, True, {SAME, OTHER}, NO_SCOPE, OK, "MV102"),
    ("3 via 10", {PF, PF_STAR}, True, {OTHER_CAP}, (True,), OK, "MV102"),
    ("3 via 11", {PF, PF_STAR}, True, {OTHER_CAP}, (False,), "MV104", "MV102"),
    ("4", {AF}, True, {SAME}, NO_SCOPE, OK, OK),
    ("5", {AF}, True, {OTHER}, NO_SCOPE, "MV101", "MV101"),
    ("5 (capture inner)", {AF}, True, {OTHER_CAP}, ANY_SCOPE, "MV101", "MV101"),
    ("6", {AF}, False, {SAME, OTHER}, NO_SCOPE, "MV102", "MV102"),
    ("7", {AF}, False, {OTHER_CAP}, ANY_SCOPE, "MV102", "MV102"),
    ("8", {PI, PI_STAR}, False, {SAME, OTHER}, NO_SCOPE, OK, OK),
    ("9", {PI, PI_STAR}, True, {SAME, OTHER}, NO_SCOPE, OK, OK),
    ("note: int to AD(Cap)", {PI, PI_STAR}, True, {OTHER_CAP}, ANY_SCOPE, "MV109", "MV109"),
    ("note: capture int to AD", {CI_INT, CC_INT}, True, {SAME_CAP, OTHER_CAP}, ANY_SCOPE, "MV109", "MV109"),
    ("note: capture int to AD", {CI_INT, CC_INT}, True, {OTHER}, NO_SCOPE, "MV109", "MV109"),
    ("10", {PF, PF_STAR, PI, PI_STAR}, False, {OTHER_CAP}, (True,), OK, OK),
    ("11", {PF, PF_STAR, PI, PI_STAR, CI, CI_INT}, False, {OTHER_CAP}, (False,), "MV104", "MV104"),
    ("12", {CI, CC, CI_INT, CC_INT}, False, {SAME_CAP}, ANY_SCOPE, OK, OK),
    ("12 via note", {CI, CC}, True, {SAME_CAP}, ANY_SCOPE, OK, OK),
    ("13", {CI, CI_INT}, False, {OTHER_CAP}, (True,), OK, OK),
    ("13 via note", {CI}, True, {OTHER_CAP}, (True,), OK, OK),
    ("11 via note", {CI}, True, {OTHER_CAP}, (False,), "MV104", "MV104"),
    ("14", {CC, CC_INT}, False, {OTHER_CAP}, ANY_SCOPE, "MV103", "MV103"),
    ("14 via note", {CC}, True, {OTHER_CAP}, ANY_SCOPE, "MV103", "MV103"),
    ("15", {CI, CC, CI_INT, CC_INT}, False, {OTHER}, NO_SCOPE, "MV103", "MV103"),
    ("note: capture float to AD(X) hits 15", {CI, CC}, True, {OTHER}, NO_SCOPE, "MV103", "MV103"),
)

# The "later" column (graph-preserving cross-backend transfers), profile burn-next: row 5 works; an
# autodiff transfer to a capture device is "an explicit error" (the text is the shim's capture-autodiff one).
LATER_MOVES = {"5": OK, "5 (capture inner)": "MV102"}

DOC_MOVE_MESSAGES = {
    "MV101": {"Autodiff tensor cannot be moved between backends."},
    "MV102": {"Cannot move between autodiff and non-autodiff instances.", "Capture tensors do not support autodiff"},
    "MV103": {"Cannot move a tensor from a capture device", "capture tensor {id} has no initialized value"},
    "MV104": {"capture tensor operations must run inside CaptureDevice::capture_scope"},
    "MV109": {"Autodiff should not wrap an autodiff device."},
}


def _doc_move(profile: str, key: dict) -> tuple[str, str]:
    hits = [row for row in DOC_MOVE_ROWS
            if key["cls"] in row[1] and key["ad"] is row[2] and key["place"] in row[3] and key["scope"] in row[4]]
    assert len(hits) == 1, f"{key}: the hand-written rows cover it {len(hits)} times: {[h[0] for h in hits]}"
    row = hits[0]
    if profile == "burn-next":  # the document's "later" column, over the default's moves
        return row[0], LATER_MOVES.get(row[0], row[5])
    # burn-d16f7ba (d16f7ba2ed): the to_device arms of burn-dispatch src/macros.rs decide as at HEAD
    return row[0], row[6] if profile == "burn-0.21" else row[5]


@pytest.mark.parametrize("profile", sorted(S.PROFILES))
@pytest.mark.parametrize("key", list(S.keys_of("move")), ids=_key_id)
def test_move_cell_matches_the_document(profile: str, key: dict) -> None:
    doc_row, expected = _doc_move(profile, key)
    row_id, outcome = S.move_outcome(profile, **key)
    assert not isinstance(outcome, Redirect)
    if expected == OK:
        assert isinstance(outcome, Ok), f"doc row {doc_row} says ok, table row {row_id} says {outcome}"
    else:
        assert isinstance(outcome, Fail), f"doc row {doc_row} says {expected}, table row {row_id} says ok"
        assert outcome.code == expected, (doc_row, row_id)
        assert outcome.message in DOC_MOVE_MESSAGES[expected], (doc_row, row_id, outcome.message)


# Result state of the successful moves (section 3): class, where the strategy comes from.
DOC_MOVE_RESULTS = {
    # (cls, ad, place, scope): (result class, strategy source)
    **{(c, False, p, False): (c, "keep") for c in (PF, PF_STAR, PI, PI_STAR) for p in (SAME, OTHER)},  # 1 2 8
    **{(c, True, p, False): (c, "keep") for c in (PF, PF_STAR) for p in (SAME, OTHER)},  # 3: own strategy
    (AF, True, SAME, False): (AF, "keep"),  # 4: keeps s, not t
    **{(c, True, p, False): (PI_STAR, "target") for c in (PI, PI_STAR) for p in (SAME, OTHER)},  # 9
    **{(c, False, OTHER_CAP, True): (CI, "keep") for c in (PF, PF_STAR)},  # 10
    **{(c, True, OTHER_CAP, True): (CI, "keep") for c in (PF, PF_STAR)},  # 3 then 10
    **{(c, False, OTHER_CAP, True): (CI_INT, "keep") for c in (PI, PI_STAR)},  # 10
    **{(c, ad, SAME_CAP, s): (c, "keep") for c in (CI, CC, CI_INT, CC_INT) for ad in (False, True)
       for s in (True, False) if not (ad and c in (CI_INT, CC_INT))},  # 12
    (CI, False, OTHER_CAP, True): (CI, "keep"),  # 13
    (CI, True, OTHER_CAP, True): (CI, "keep"),
    (CI_INT, False, OTHER_CAP, True): (CI_INT, "keep"),
}


def test_successful_moves_match_the_document() -> None:
    seen = set()
    for key in S.keys_of("move"):
        _row_id, outcome = S.move_outcome("burn-2026-08", **key)
        if not isinstance(outcome, Ok):
            continue
        index = (key["cls"], key["ad"], key["place"], key["scope"])
        seen.add(index)
        assert index in DOC_MOVE_RESULTS, f"the table says ok for {key}; the document does not"
        result, strategy = DOC_MOVE_RESULTS[index]
        assert (outcome.result or key["cls"]) is result, key
        assert outcome.strategy == strategy, key
    assert seen == set(DOC_MOVE_RESULTS)


def test_move_profile_difference_is_only_plain_float_to_autodiff() -> None:
    """burn-0.21 differs from HEAD exactly on 'plain float -> autodiff device' (history, section 8)."""
    differ = []
    for key in S.keys_of("move"):
        head = S.move_outcome("burn-2026-08", **key)[1]
        old = S.move_outcome("burn-0.21", **key)[1]
        if head != old:
            differ.append(key)
            assert old == Fail("MV102", "Cannot move between autodiff and non-autodiff instances."), key
    assert differ and all(k["cls"] in (PF, PF_STAR) and k["ad"] for k in differ)
    assert len(differ) == 2 * 4  # Pf and Pf*, to AD(same), AD(other), AD(capture) with and without scope


def test_pinned_profile_moves_as_head() -> None:
    """d16f7ba2ed's to_device arms (burn-dispatch src/macros.rs, (b) at :338, (a) at :371) give every
    move cell the outcome of 2c06be35."""
    for key in S.keys_of("move"):
        assert S.move_outcome("burn-d16f7ba", **key) == S.move_outcome("burn-2026-08", **key), key


def test_pinned_profile_overrides() -> None:
    """The cells where burn-dispatch src/backend.rs's tests of the DispatchAutodiffContext era differ."""
    assert set(S.PROFILES["burn-d16f7ba"]) == {
        "backend.mixed", "backend.mixed-rev", "backend.other", "backend.ad-int-other",
        "multi.cat-ad-plain", "multi.cat-plain-ad", "multi.cat-ad-expected", "multi.cat-ad-backend",
        "multi.cat-plain", "multi.ad-ok", "multi.plain-ok", "multi.input-unreachable", "multi.input-plain-ad",
        "multi.input-wrong", "api.grads-af", "api.inner-int-ad", "api.inner-int", "api.from_inner-int-plain",
        "api.from_inner-int", "api.no_grad-int-ad", "replace.autodiff",
        # burn-tensor's API of the same commit (api/autodiff.rs, device.rs)
        "api.inner-float", "api.from_inner-af", "api.with_strategy-float", "api.with_strategy-int",
        "api.with_strategy-capture", "device.autodiff-twice", "device.strategy-plain", "device.checkpointing-plain",
        "api.grad-other"}
    merged = S.cell("backend", "burn-d16f7ba", lhs=S.Route.AUTODIFF, rhs=S.Route.FLOAT, same_backend=True)[1]
    assert isinstance(merged, Ok) and merged.result is AF
    other = S.cell("backend", "burn-d16f7ba", lhs=S.Route.AUTODIFF, rhs=S.Route.FLOAT, same_backend=False)[1]
    assert isinstance(other, Fail) and other.code == "MV106"


# --- other tables against the document -------------------------------------------------------

D, B = S.CheckpointingStrategy.DISABLED, S.CheckpointingStrategy.BALANCED


@pytest.mark.parametrize(("lhs", "rhs", "expected"), [
    (None, None, None), (None, D, D), (None, B, B), (D, None, D), (B, None, B), (D, D, D), (B, B, B),
    (D, B, "MV107"), (B, D, "MV107"),
], ids=str)
def test_strategy_cells_match_section_5_2(lhs, rhs, expected) -> None:  # noqa: ANN001
    _row, outcome = S.cell("strategy", HEAD, lhs=lhs, rhs=rhs)
    if expected == "MV107":
        assert isinstance(outcome, Fail) and outcome.code == "MV107"
        assert outcome.render(lhs=lhs, rhs=rhs) == (
            f"Gradient checkpointing strategy mismatch: {lhs.value} vs {rhs.value}. "
            "Tensors in the same operation must share a strategy.")
    else:
        assert isinstance(outcome, Ok)
        assert S.strategy_result(lhs, rhs) is expected


A, F, INT = Route.AUTODIFF, Route.FLOAT, Route.INT
FULL = "The provided tensors are not on the same backend. Got backends {lhs} and {rhs}."
SHORT = "The provided tensors are not on the same backend."
DOC_BACKEND = {  # (lhs, rhs, same backend) -> ok or message (section 5.3)
    (F, F, True): OK, (F, INT, True): OK, (INT, F, True): OK, (INT, INT, True): OK,
    (A, A, True): OK, (A, INT, True): OK,
    (A, F, True): FULL, (A, F, False): FULL, (F, A, True): FULL, (F, A, False): FULL,
    (INT, A, True): FULL, (INT, A, False): FULL,
    (F, F, False): FULL, (F, INT, False): FULL, (INT, F, False): FULL, (INT, INT, False): FULL, (A, A, False): FULL,
    (A, INT, False): SHORT,
}


@pytest.mark.parametrize("key", list(S.keys_of("backend")), ids=_key_id)
def test_backend_cells_match_section_5_3(key: dict) -> None:
    expected = DOC_BACKEND[(key["lhs"], key["rhs"], key["same_backend"])]
    _row, outcome = S.cell("backend", HEAD, **key)
    if expected == OK:
        assert isinstance(outcome, Ok)
    else:
        assert isinstance(outcome, Fail) and outcome.code == "MV106"
        assert outcome.message == expected


WRONG_DEVICE = "Input tensor {name} is on the wrong device"
UNREACHABLE = "internal error: entered unreachable code"
CAT_AD = "Expected autodiff-wrapped float tensor for backend {backend}."
CAT_AD_BACKEND = "Autodiff float tensor is on the wrong backend (expected {backend})."
CAT_PLAIN = "Tensor is on the wrong backend (expected {backend})."


def _doc_multi(family: str, first: Route, other: Route, same: bool) -> str:
    """Section 5.3, three-or-more-input ops and cat, as prose turned into code."""
    if first is A:
        if family == "cat":
            if other is not A:
                return CAT_AD
            return OK if same else CAT_AD_BACKEND
        if not same:
            return WRONG_DEVICE
        if other is F:
            return UNREACHABLE
        return OK
    # concrete route
    if other is A or not same:
        return CAT_PLAIN if family == "cat" else WRONG_DEVICE
    return OK


@pytest.mark.parametrize("key", list(S.keys_of("multi")), ids=_key_id)
def test_multi_cells_match_section_5_3(key: dict) -> None:
    expected = _doc_multi(key["family"], key["first"], key["other"], key["same_backend"])
    _row, outcome = S.cell("multi", HEAD, **key)
    if expected == OK:
        assert isinstance(outcome, Ok) and outcome.strategy == "first"
    else:
        assert isinstance(outcome, Fail) and outcome.code == "MV106"
        assert outcome.message == expected


DOC_UNARY = {  # (op, cls) -> result class (section 5.4); capture results are computed
    **{("unary", c): c for c in (PF, PF_STAR, AF, PI, PI_STAR)},
    ("to_int", AF): PI_STAR, ("to_int", PF_STAR): PI_STAR, ("to_int", PF): PI,
    ("to_int", PI): PI, ("to_int", PI_STAR): PI_STAR,
    ("to_float", PI_STAR): AF, ("to_float", PI): PF,
    ("to_float", PF): PF, ("to_float", PF_STAR): PF_STAR, ("to_float", AF): AF,
    **{("unary", c): c for c in (CI, CC, CI_INT, CC_INT)},
    **{("to_int", c): CC_INT for c in (CI, CC, CI_INT, CC_INT)},
    **{("to_float", c): CC for c in (CI, CC, CI_INT, CC_INT)},
}


@pytest.mark.parametrize("key", list(S.keys_of("unary")), ids=_key_id)
def test_unary_cells_match_section_5_4(key: dict) -> None:
    _row, outcome = S.cell("unary", HEAD, **key)
    assert isinstance(outcome, Ok)
    expected = DOC_UNARY[(key["op"], key["cls"])]
    if key["op"] == "unary" and key["cls"] in S.CAPTURE_CLASSES:
        assert outcome.result is None  # the runtime makes it a computed capture value
    else:
        assert (outcome.result or key["cls"]) is expected
    if (key["op"], key["cls"]) == ("to_float", PI_STAR):
        assert outcome.role is Role.UNTRACKED  # "an untracked leaf"


REQ = "MV108"
DOC_AUTODIFF = {  # (call, cls) -> ok / code (section 6), Af roles handled below
    **{("inner", c): REQ for c in (PF, PF_STAR, CI, CC)},
    **{("inner", c): OK for c in (AF, PI, PI_STAR, CI_INT, CC_INT)},
    ("from_inner", AF): "MV109",
    **{("from_inner", c): OK for c in (PF, PF_STAR, PI, PI_STAR)},
    **{("from_inner", c): "MV102" for c in (CI, CC, CI_INT, CC_INT)},
    **{(call, c): OK for call in ("no_grad", "detach", "require_grad", "unrequire_grad", "with_strategy")
       for c in S.ALL_CLASSES},
    **{(call, c): REQ for call in ("backward", "grad", "grad_remove", "grad_replace") for c in S.ALL_CLASSES},
    **{(call, AF): OK for call in ("backward", "grad", "grad_remove", "grad_replace")},
}


@pytest.mark.parametrize("key", list(S.keys_of("autodiff")), ids=_key_id)
def test_autodiff_cells_match_section_6(key: dict) -> None:
    expected = DOC_AUTODIFF[(key["call"], key["cls"])]
    if key["call"] == "require_grad" and key["role"] is Role.NON_LEAF:
        expected = "MV111"
    if key["call"] == "backward" and key["role"] is Role.UNTRACKED:
        expected = "no step"  # burn-autodiff src/runtime/server.rs:69-72: the root has no step registered
    _row, outcome = S.cell("autodiff", HEAD, **key)
    if expected == OK:
        assert isinstance(outcome, Ok)
    elif expected == "no step":
        assert outcome == Fail("MV108", "Node should have a step registered, did you forget to call "
                                        "`Tensor::register_grad` on the tensor where you need gradients?")
    else:
        assert isinstance(outcome, Fail) and outcome.code == expected
        assert outcome.message == {
            "MV108": "Requires autodiff tensor.",
            "MV109": "Autodiff should not wrap an autodiff tensor.",
            "MV102": "Capture tensors do not support autodiff",
            "MV111": "Can't convert a non leaf tensor into a tracked tensor",
        }[expected]


@pytest.mark.parametrize(("call", "ad", "expected"), [
    ("autodiff", False, OK), ("autodiff", True, "MV109"),
    ("gradient_checkpointing", True, OK), ("gradient_checkpointing", False, "MV110"),
    ("gradient_checkpointing_strategy", True, OK), ("gradient_checkpointing_strategy", False, "MV110"),
    ("inner", True, OK), ("inner", False, OK),
], ids=str)
def test_device_cells_match_section_1(call: str, ad: bool, expected: str) -> None:
    _row, outcome = S.cell("device", HEAD, call=call, ad=ad)
    if expected == OK:
        assert isinstance(outcome, Ok)
    else:
        assert isinstance(outcome, Fail) and outcome.code == expected
        assert outcome.message == {"MV109": "Only first-order autodiff is supported",
                                   "MV110": "Autodiff is not enabled on this device"}[expected]


@pytest.mark.parametrize("key", list(S.keys_of("create")), ids=_key_id)
def test_create_cells_match_section_4(key: dict) -> None:
    _row, outcome = S.cell("create", HEAD, **key)
    expected = {("float", "plain"): PF, ("int", "plain"): PI, ("float", "autodiff"): AF,
                ("int", "autodiff"): PI_STAR}.get((key["dtype"], key["device"]))
    if expected is not None:
        assert isinstance(outcome, Ok) and outcome.result is expected
        if expected is AF:
            assert outcome.role is Role.UNTRACKED and outcome.strategy == "target"
        if expected is PI_STAR:
            assert outcome.strategy == "target"
    elif key["device"] == "capture":
        if key["scope"]:
            assert isinstance(outcome, Ok)
            assert outcome.result is (CI if key["dtype"] == "float" else CI_INT)
        else:
            assert outcome == Fail("MV104", "capture tensor operations must run inside CaptureDevice::capture_scope")
    else:  # an autodiff device wrapping a capture device: not in the document; the table fails it
        assert isinstance(outcome, Fail)


def test_device_check_and_checked_ops_match_section_5_1() -> None:
    assert S.CHECKED_OPS == {
        "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "equal": "Equal", "not_equal": "NotEqual",
        "greater": "Greater", "greater_equal": "Greater_equal", "lower": "Lower", "lower_equal": "Lower_equal",
        "matmul": "Matmul", "cross": "Cross",
    }
    assert isinstance(S.cell("device_check", HEAD, same_device=True)[1], Ok)
    fail = S.cell("device_check", HEAD, same_device=False)[1]
    assert isinstance(fail, Fail) and fail.code == "MV105"
    assert fail.render(op="Add", lhs="Cuda(0)", rhs="Cuda(1)") == (
        "=== Tensor Operation Error ===\n  Operation: 'Add'\n  Reason:\n"
        "    1. The provided tensors are not on the same device. Lhs tensor device Device<Cuda(0)>, "
        "Rhs tensor device Device<Cuda(1)>. \n")  # burn-tensor's Device Debug: `Device<{:?}>`


@pytest.mark.parametrize("key", list(S.keys_of("grad_replace")), ids=_key_id)
def test_grad_replace_cells_match_section_6(key: dict) -> None:
    _row, outcome = S.cell("grad_replace", HEAD, **key)
    if key["route"] is F and key["same_backend"] and key["arm"]:  # LibTorch has no arm (backend.rs:492-539)
        assert isinstance(outcome, Ok)
    else:
        assert isinstance(outcome, Fail) and outcome.code == "MV106" and outcome.message == FULL


def test_panic_prefixes_match_how_rust_prints() -> None:
    assert S.PANIC_PREFIX[S.MSG_AD_CROSS_BACKEND] == "not implemented: "
    assert S.PANIC_PREFIX[S.MSG_FIRST_ORDER] == "not implemented: "
    assert S.PANIC_PREFIX[S.MSG_DOUBLE_WRAP_DEVICE] == "internal error: entered unreachable code: "
    assert S.PANIC_PREFIX[S.MSG_STRATEGY_MISMATCH] == "assertion `left == right` failed: "
