"""Configuration (``[tool.devicelint]``), rule selection, per-file ignores and file discovery
(exclude, extend-exclude, force-exclude, .gitignore): ruff's conventions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint import discovery
from devicelint.cli import main
from devicelint.discovery import DiscoveryOptions, discover
from devicelint.settings import PerFileIgnore, RuleSelection, Settings, SettingsError, parse_codes

from bench.tools import find_tool, tool

REPO = Path(__file__).resolve().parents[2]

FAILING = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
weights.to_device(Device.ndarray())
"""

ADVISORY = """\
from runtime_shim import Device, Tensor

Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())
"""

GPU = "from runtime_shim import Device\nDevice.wgpu()\n"


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    discovery.clear_caches()


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def codes(out: str) -> list[str]:
    return [line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": MV" in line]


# --------------------------------------------------------------------------- rule selection (ruff's layers)


def test_selection_layers_follow_ruff() -> None:
    def enabled(*layers: RuleSelection, cli: RuleSelection | None = None) -> set[str]:
        cli = cli or RuleSelection()
        settings = Settings(selections=layers, select=cli.select, extend_select=cli.extend_select,
                            ignore=cli.ignore)
        return {code for code in ("MV102", "MV105", "MV150", "MV901") if settings.selects(code)}

    assert enabled() == {"MV102", "MV105", "MV150", "MV901"}  # default: ALL
    config = RuleSelection(select=("MV1",), ignore=("MV150",))
    assert enabled(config) == {"MV102", "MV105"}
    # the command line's --select starts again: it re-enables what the file ignores
    assert enabled(config, cli=RuleSelection(select=("MV150",))) == {"MV150"}
    # --extend-select and --ignore edit the file's selection
    assert enabled(config, cli=RuleSelection(extend_select=("MV901",))) == {"MV102", "MV105", "MV901"}
    assert enabled(config, cli=RuleSelection(ignore=("MV102",))) == {"MV105"}
    # the more specific selector wins inside a layer; ignore wins a tie
    assert enabled(RuleSelection(select=("MV102",), ignore=("MV1",))) == {"MV102"}
    assert enabled(RuleSelection(select=("MV1",), ignore=("MV10",))) == {"MV150"}
    assert enabled(RuleSelection(select=("MV102",), ignore=("MV102",))) == set()
    # `select = []` with ignores: the ignores carry over to the next layer
    assert enabled(RuleSelection(select=(), ignore=("MV150",)), cli=RuleSelection(select=("ALL",))) == {
        "MV102", "MV105", "MV901"}


def test_selectors_are_validated() -> None:
    assert parse_codes("mv1, MV102,ALL") == ("MV1", "MV102", "ALL")
    for bad in ("E501", "MV999", "MV1x", "mv-1"):
        with pytest.raises(SettingsError):
            parse_codes(bad)


def test_per_file_ignore_globs(tmp_path: Path) -> None:
    root = str(tmp_path)
    tests_only = PerFileIgnore("tests/*", ("MV150",), root)
    assert tests_only.applies_to(str(tmp_path / "tests" / "test_a.py"))
    assert tests_only.applies_to(str(tmp_path / "tests" / "deep" / "test_b.py"))  # `*` crosses `/` (globset)
    assert not tests_only.applies_to(str(tmp_path / "src" / "tests.py"))
    by_name = PerFileIgnore("__init__.py", ("MV1",), root)
    assert by_name.applies_to(str(tmp_path / "pkg" / "sub" / "__init__.py"))  # a bare name matches at any depth
    negated = PerFileIgnore("!src/*", ("MV150",), root)
    assert negated.applies_to(str(tmp_path / "scripts" / "x.py")) and not negated.applies_to(
        str(tmp_path / "src" / "x.py"))
    assert tests_only.ignores("MV150") and not tests_only.ignores("MV102")
    assert by_name.ignores("MV150")


# --------------------------------------------------------------------------- the configuration file


def test_closest_pyproject_with_our_table_wins(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nignore = ["MV150"]\n')
    write(tmp_path, "app/pyproject.toml", '[project]\nname = "app"\n')  # no table: skipped, as ruff does
    path = write(tmp_path, "app/train.py", ADVISORY)
    monkeypatch.chdir(tmp_path / "app")
    assert run(capsys, "check", str(path))[0] == 0
    write(tmp_path, "app/pyproject.toml", '[tool.devicelint]\nprofile = "burn-0.21"\n')  # now the closest
    code, out, _err = run(capsys, "check", str(path))
    assert code == 1 and codes(out) == ["MV102"]  # burn-0.21: the move itself fails
    assert run(capsys, "check", "--isolated", str(path))[1].count("MV150") == 1  # no file at all


def test_config_keys_and_flag_precedence(tmp_path: Path, capsys: pytest.CaptureFixture,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nselect = ["MV1"]\nignore = ["MV102"]\n'
                                      'backends = ["Flex", "NdArray"]\noutput-format = "json-lines"\n')
    write(tmp_path, "failing.py", FAILING)
    write(tmp_path, "gpu.py", GPU)
    monkeypatch.chdir(tmp_path)
    code, out, _err = run(capsys, "check")
    assert code == 1
    assert [line.count('"MV112"') for line in out.splitlines()] == [1]  # backends from the file; json-lines
    code, out, _err = run(capsys, "check", "--output-format", "concise", "--select", "MV102")
    assert codes(out) == ["MV102"]  # the flag's select re-enables what the file ignores
    code, out, _err = run(capsys, "check", "--output-format", "concise", "--backends", "Flex,NdArray,Wgpu")
    assert code == 0  # the flag's backends win
    code, out, _err = run(capsys, "check", "--output-format", "concise", "--extend-select", "MV102")
    assert sorted(codes(out)) == ["MV102", "MV112"]
    override = 'backends = ["Flex", "NdArray", "Wgpu"]'
    code, out, _err = run(capsys, "check", "--output-format", "concise", "--config", override)
    assert code == 0  # an inline override beats the file


@pytest.mark.parametrize(("text", "message"), [
    ('[tool.devicelint]\nselcet = ["MV1"]\n', "unknown key `selcet`"),
    ('[tool.devicelint]\nextend_select = ["MV1"]\n', "did you mean `extend-select`"),
    ('[tool.devicelint]\nselect = "MV1"\n', "`select` must be a list of strings"),
    ('[tool.devicelint]\nrespect-gitignore = "yes"\n', "`respect-gitignore` must be true or false"),
    ('[tool.devicelint]\nselect = ["E501"]\n', "invalid rule selector 'E501'"),
    ('[tool.devicelint]\nprofile = "burn-1999"\n', "unknown profile"),
    ('[tool.devicelint]\nbackends = ["Tpu"]\n', "unknown backend"),
    ('[tool.devicelint]\ntarget-device = "gpu"\n', "`target-device` must be one of auto, cuda, cpu, not 'gpu'"),
    ('[tool.devicelint]\ntarget-device = true\n', "`target-device` must be a string"),
    ('[tool.devicelint]\nper-file-ignores = ["x"]\n', "must be a table"),
    ('[tool.devicelint\nselect = []\n', "invalid TOML"),
    # every user-supplied pattern and value: the key and the bad value, never "internal error"
    ('[tool.devicelint]\nexclude = ["[z-a]"]\n', "`exclude`: invalid glob '[z-a]'"),
    ('[tool.devicelint]\nextend-exclude = ["src/[abc"]\n', "`extend-exclude`: invalid glob 'src/[abc'"),
    ('[tool.devicelint]\nextend-exclude = ["{a,b"]\n', "`extend-exclude`: invalid glob '{a,b'"),
    ('[tool.devicelint]\nper-file-ignores = { "[z-a]/*" = ["MV1"] }\n', "`per-file-ignores`: invalid glob"),
    ('[tool.devicelint]\nextend-per-file-ignores = { "!x[" = ["MV1"] }\n', "`extend-per-file-ignores`: "
     "invalid glob"),
    ('[tool.devicelint]\nexclude = "build"\n', "`exclude` must be a list of strings"),
    ('[tool.devicelint]\nmax-file-size = "lots"\n', "`max-file-size` must be a size in bytes"),
    ('[tool.devicelint]\nmax-file-size = -1\n', "`max-file-size` must be a size in bytes"),
    ('[tool.devicelint]\ncache-dir = 3\n', "`cache-dir` must be a string"),
    ('[tool.devicelint]\ncache-dir = "taken/cache"\n', "`cache-dir`: cannot use"),
    ("[tool.devicelint]\nexclude = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_bad_configuration_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, "pyproject.toml", text)
    write(tmp_path, "train.py", FAILING)
    write(tmp_path, "taken", "a file where the cache directory's parent should be")
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", str(tmp_path / "train.py")],
                          capture_output=True, text=True, cwd=tmp_path, env=_env())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr
    assert str(tmp_path / "pyproject.toml") in proc.stderr  # names the file
    assert len(proc.stderr.strip().splitlines()) == 1


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def test_explicit_config_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write(tmp_path, "src/failing.py", FAILING)
    write(tmp_path, "conf/devicelint.toml", 'ignore = ["MV102"]\n')  # a standalone file: top-level keys
    write(tmp_path, "conf/pyproject.toml", '[tool.devicelint]\nignore = ["MV1"]\n')
    assert run(capsys, "check", "--config", str(tmp_path / "conf/devicelint.toml"), str(path))[0] == 0
    assert run(capsys, "check", "--config", str(tmp_path / "conf/pyproject.toml"), str(path))[0] == 0
    code, _out, err = run(capsys, "check", "--config", str(tmp_path / "conf/missing.toml"), str(path))
    assert code == 2 and "not found" in err
    conf = str(tmp_path / "conf/pyproject.toml")
    code, _out, err = run(capsys, "check", "--isolated", "--config", conf, str(path))
    assert code == 2 and "--isolated" in err


def test_per_file_ignores_from_file_and_flags(tmp_path: Path, capsys: pytest.CaptureFixture,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\n[tool.devicelint.per-file-ignores]\n'
                                      '"scripts/*" = ["MV102"]\n')
    write(tmp_path, "scripts/one.py", FAILING)
    write(tmp_path, "src/two.py", FAILING)
    monkeypatch.chdir(tmp_path / "src")  # patterns in the file are relative to the file, not to the cwd
    code, out, _err = run(capsys, "check", str(tmp_path))
    assert code == 1 and "two.py" in out and "one.py" not in out
    # the flag replaces the file's table; --extend-per-file-ignores adds to it
    code, out, _err = run(capsys, "check", str(tmp_path), "--per-file-ignores", f"{tmp_path}/src/*:MV1")
    assert code == 1 and "one.py" in out and "two.py" not in out
    code, out, _err = run(capsys, "check", str(tmp_path), "--extend-per-file-ignores", "two.py:MV102")
    assert code == 0, out


# --------------------------------------------------------------------------- discovery


def test_default_excludes_and_extend_exclude(tmp_path: Path, capsys: pytest.CaptureFixture,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "src/app.py", FAILING)
    for skipped in (".venv/lib/x.py", "venv/y.py", "build/z.py", "node_modules/w.py", "src/__pycache__/c.py",
                    "dist/q.py", ".tox/t.py"):
        write(tmp_path, skipped, FAILING)
    monkeypatch.chdir(tmp_path)
    files = discover(["."], DiscoveryOptions(root=str(tmp_path)))
    assert files == [os.path.join("src", "app.py")]
    write(tmp_path, "src/generated/gen.py", FAILING)
    write(tmp_path, "src/gen_a.py", FAILING)
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nextend-exclude = ["src/generated", "gen_*.py"]\n')
    code, out, _err = run(capsys, "check", "--output-format", "concise")
    assert code == 1 and out.count("MV102") == 1 and "app.py" in out
    # `exclude` replaces the defaults
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nexclude = ["src"]\n')
    code, out, _err = run(capsys, "check", "--output-format", "concise")
    assert "app.py" not in out and "venv" in out and "build" in out
    # a file given explicitly is analysed even when excluded... unless --force-exclude
    assert run(capsys, "check", "src/app.py")[0] == 1
    assert run(capsys, "check", "--force-exclude", "src/app.py")[0] == 0
    code, out, _err = run(capsys, "check", "--force-exclude", "src/app.py", "--show-files")
    assert out == ""


def test_force_exclude_from_config_and_stdin_filename(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nextend-exclude = ["legacy"]\nforce-exclude = true\n')
    path = write(tmp_path, "legacy/old.py", FAILING)
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", str(path)], capture_output=True, text=True,
                          cwd=tmp_path, env=_env())
    assert proc.returncode == 0, proc.stdout  # pre-commit passes excluded files one by one
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "--stdin-filename", "legacy/old.py", "-"],
                          input=FAILING, capture_output=True, text=True, cwd=tmp_path, env=_env())
    assert proc.returncode == 0 and "MV102" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "--stdin-filename", "new.py"],
                          input=FAILING, capture_output=True, text=True, cwd=tmp_path, env=_env())
    assert proc.returncode == 1 and proc.stdout.startswith("new.py:4:1: MV102")  # no path: stdin (ruff)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run([tool("git"), *args], cwd=cwd, check=True, capture_output=True)


needs_git = pytest.mark.skipif(find_tool("git") is None, reason="git is not installed")


@needs_git
def test_gitignore_is_respected_inside_a_work_tree(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _git("init", "-q", ".", cwd=tmp_path)
    write(tmp_path, ".gitignore", "scratch/\n*_local.py\n")
    write(tmp_path, "pkg/.gitignore", "!keep_local.py\n")
    write(tmp_path, "app.py", FAILING)
    write(tmp_path, "scratch/tmp.py", FAILING)
    write(tmp_path, "me_local.py", FAILING)
    write(tmp_path, "pkg/keep_local.py", FAILING)
    write(tmp_path, "pkg/sub/.ignore", "ignored_by_dot_ignore.py\n")
    write(tmp_path, "pkg/sub/ignored_by_dot_ignore.py", FAILING)
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("private.py\n")
    write(tmp_path, "private.py", FAILING)
    monkeypatch.chdir(tmp_path)
    assert sorted(discover(["."])) == ["app.py", os.path.join("pkg", "keep_local.py")]
    assert len(discover(["."], DiscoveryOptions(respect_gitignore=False))) == 6
    # from a subdirectory, the ignore files above it still apply
    assert discover(["pkg"]) == [os.path.join("pkg", "keep_local.py")]
    code, out, _err = run(capsys, "check", "--no-respect-gitignore")
    assert out.count("MV102") == 6
    write(tmp_path, "pyproject.toml", "[tool.devicelint]\nrespect-gitignore = false\n")
    assert run(capsys, "check")[1].count("MV102") == 6
    # a file named explicitly is analysed even when ignored
    assert run(capsys, "check", "--isolated", "me_local.py")[0] == 1


def test_gitignore_outside_a_work_tree_does_not_apply(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.py\n")
    write(tmp_path, "app.py", FAILING)
    assert discover([str(tmp_path)]) == [str(tmp_path / "app.py")]
    write(tmp_path, ".ignore", "app.py\n")  # .ignore applies everywhere (ruff reads both)
    discovery.clear_caches()
    assert discover([str(tmp_path)]) == []


GITIGNORE_PATTERNS = """\
# a comment
*.log.py
/build
docs/_gen/
!keep.log.py
**/cache/**
a/**/z.py
gen_*.py
\\#hash.py
sub/*.tmp.py
[abc]x.py
[!d-f]y.py
data/
!data/keep/
foo?.py
/rooted.py
trailing.py   \n**/deep
x/**
"""

GITIGNORE_PATHS = [
    "a.log.py", "keep.log.py", "build/x.py", "docs/_gen/y.py", "cache/q/w.py", "a/z.py", "a/b/z.py", "a/b/c/z.py",
    "gen_a.py", "gen_ok.py", "sub/gen_ok.py", "sub/c.py", "sub/inner/c.py", "#hash.py", "sub/a.tmp.py",
    "sub/inner/a.tmp.py", "ax.py", "dx.py", "ay.py", "ey.py", "data/k.py", "data/keep/k.py", "foo1.py", "foo12.py",
    "rooted.py", "sub/rooted.py", "trailing.py", "m/deep/q.py", "x/y/q.py", "n/ok.py", "ok.py", "nested/build/b.py",
]


@needs_git
def test_gitignore_matcher_agrees_with_git(tmp_path: Path) -> None:
    """The native matcher (chosen over `git check-ignore --stdin`: no process, and ignored directories
    are pruned instead of walked) gives git's answers on a set of patterns."""
    _git("init", "-q", ".", cwd=tmp_path)
    write(tmp_path, ".gitignore", GITIGNORE_PATTERNS)
    write(tmp_path, "sub/.gitignore", "c.py\n!gen_ok.py\n")
    for path in GITIGNORE_PATHS:
        write(tmp_path, path, "")
    proc = subprocess.run([tool("git"), "check-ignore", "--no-index", "--stdin"], input="\n".join(GITIGNORE_PATHS),
                          capture_output=True, text=True, cwd=tmp_path)
    ignored_by_git = set(proc.stdout.split())
    found = {os.path.relpath(p, tmp_path) for p in discover([str(tmp_path)], DiscoveryOptions(exclude=()))}
    ours = {p for p in GITIGNORE_PATHS if p not in found}
    assert ours == ignored_by_git
    assert "sub/gen_ok.py" not in ours and "keep.log.py" not in ours  # re-included by `!`
    assert "data/keep/k.py" in ours  # ... but not under an ignored directory


# --------------------------------------------------------------------------- configuration errors


@pytest.mark.parametrize(("argv", "message"), [
    (["--exclude", "[z-a]"], "`--exclude`: invalid glob '[z-a]'"),
    (["--extend-exclude", "ok,[z-a]"], "`--extend-exclude`: invalid glob '[z-a]'"),
    (["--per-file-ignores", "[z-a]:MV1"], "`--per-file-ignores`: invalid glob '[z-a]'"),
    (["--extend-per-file-ignores", "a/{b:MV1"], "`--per-file-ignores`: invalid glob 'a/{b'"),
    (["--select", "MV9999"], "invalid rule selector 'MV9999'"),
    (["--max-file-size", "ten"], "`--max-file-size` must be a size in bytes"),
    (["--cache-dir", "taken"], "--cache-dir: cannot use"),
    (["--config", "exclude = " + "[" * 5000 + "]" * 5000], "nested too deeply"),
    (["--config", 'exclude = ["[z-a]"]'], "`exclude`: invalid glob '[z-a]'"),
])
def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    write(tmp_path, "train.py", FAILING)
    write(tmp_path, "taken", "a file, not a directory")
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", *argv, "train.py"],
                          capture_output=True, text=True, cwd=tmp_path, env=_env())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_unreadable_pyproject_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """One that cannot be read may hold the configuration: running without it would be silently wrong.
    (Simulated: root reads a file of mode 000.)"""
    from devicelint import config

    write(tmp_path, "pyproject.toml", "[tool.devicelint]\nignore = ['MV102']\n")
    write(tmp_path, "train.py", FAILING)
    monkeypatch.chdir(tmp_path)
    real_open = open

    def denying_open(path, *args, **kwargs):
        if str(path).endswith("pyproject.toml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(config, "open", denying_open, raising=False)
    code, out, err = run(capsys, "check", "train.py")
    assert code == 2 and out == ""
    assert "pyproject.toml: cannot read the configuration: Permission denied" in err


def test_a_cache_dir_that_cannot_be_used_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "train.py", FAILING)
    write(tmp_path, "blocker", "a file")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run(capsys, "check", "--cache-dir", "blocker/cache", "train.py")
    assert code == 2 and "--cache-dir: cannot use" in err and "blocker" in err
    # a usable one is created and used; --no-cache never looks at it
    assert run(capsys, "check", "--cache-dir", "fresh/cache", "train.py")[0] == 1
    assert (tmp_path / "fresh" / "cache").is_dir()
    assert run(capsys, "check", "--no-cache", "--cache-dir", "blocker/cache", "train.py")[0] == 1
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path / "blocker" / "env-cache"))
    code, _out, err = run(capsys, "check", "train.py")
    assert code == 2 and "DEVICELINT_CACHE_DIR: cannot use" in err


# --------------------------------------------------------------------------- ruff's glob semantics

# the cases of ruff's documentation (`exclude`, `per-file-ignores`) and of globset's, which ruff matches
# with (`*` crosses `/` there: ruff builds its globs without `literal_separator`)
GLOB_CASES = [
    (".mypy_cache", ".mypy_cache", True),
    ("foo.py", "foo.py", True),
    ("foo_*.py", "foo_bar.py", True),
    ("foo_*.py", "bar_foo.py", False),
    ("directory/foo.py", "directory/foo.py", True),
    ("directory/*.py", "directory/a.py", True),
    ("directory/*.py", "directory/sub/a.py", True),  # `*` crosses `/`
    ("directory/*.py", "other/a.py", False),
    ("**/{tests,docs,tools}/*", "tests/test_a.py", True),
    ("**/{tests,docs,tools}/*", "pkg/docs/conf.py", True),
    ("**/{tests,docs,tools}/*", "pkg/src/a.py", False),
    ("**/foo", "foo", True),  # `**/` matches zero directories
    ("**/foo", "bar/foo", True),
    ("**/foo", "a/b/foo", True),
    ("**/foo", "foo/bar", False),
    ("foo/**", "foo/a", True),
    ("foo/**", "foo/a/b", True),
    ("foo/**", "foo", False),
    ("foo/**/bar", "foo/bar", True),
    ("foo/**/bar", "foo/a/bar", True),
    ("foo/**/bar", "foo/a/b/bar", True),
    ("foo/**/bar", "foo/barx", False),
    ("?.py", "a.py", True),
    ("?.py", "ab.py", False),
    ("[ab].py", "b.py", True),
    ("[ab].py", "c.py", False),
    ("[!ab].py", "c.py", True),
    ("[^ab].py", "a.py", False),
    ("[a-c].py", "b.py", True),
    ("[]].py", "].py", True),
    ("{a,b}.py", "b.py", True),
    ("{a,b}.py", "c.py", False),
    (r"\*.py", "*.py", True),
    (r"\*.py", "a.py", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), GLOB_CASES)
def test_globs_follow_ruff(pattern: str, path: str, expected: bool) -> None:
    assert bool(discovery.glob_regex(pattern).match(path)) is expected


@pytest.mark.parametrize("pattern", ["[z-a]", "[abc", "a{b,c", "{a,{b,c}}"])
def test_invalid_globs_are_rejected(pattern: str) -> None:
    with pytest.raises(discovery.GlobError, match="invalid glob"):
        discovery.check_glob(pattern)


def test_double_star_excludes_zero_directories(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\nextend-exclude = ["**/sub/a.py"]\n')
    write(tmp_path, "sub/a.py", FAILING)
    write(tmp_path, "deep/er/sub/a.py", FAILING)
    kept = write(tmp_path, "sub/b.py", FAILING)
    monkeypatch.chdir(tmp_path)
    found = discover(["."], DiscoveryOptions(root=str(tmp_path), extend_exclude=("**/sub/a.py",)))
    assert [os.path.abspath(p) for p in found] == [str(kept)]
    code, out, _err = run(capsys, "check", ".")
    assert code == 1 and "sub/b.py" in out and "sub/a.py" not in out


def test_a_project_root_with_glob_characters_is_literal(tmp_path: Path) -> None:
    root = tmp_path / "proj[1]"
    write(root, "build/gen.py", FAILING)
    kept = write(root, "src/a.py", FAILING)
    found = discover([str(root)], DiscoveryOptions(root=str(root), exclude=("build",)))
    assert found == [str(kept)]
    found = discover([str(root)], DiscoveryOptions(root=str(root), exclude=("src/*.py",)))
    assert found == [str(root / "build" / "gen.py")]


WORLD_MISMATCH = """import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Linear(4, 2).to(device)
prediction = model(torch.randn(3, 4))
"""


def test_target_device_from_the_file_the_override_and_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[tool.devicelint]\ntarget-device = "cuda"\n')
    write(tmp_path, "train.py", WORLD_MISMATCH)
    monkeypatch.chdir(tmp_path)
    code, out, _err = run(capsys, "check", "--no-cache", "--output-format", "concise")
    assert code == 1 and "MV202 [error]" in out  # the file's target: the CUDA world only
    code, out, _err = run(capsys, "check", "--no-cache", "--output-format", "concise", "--target-device", "cpu")
    assert code == 0, out  # the flag wins: on the CPU the model and its input agree
    code, out, _err = run(capsys, "check", "--no-cache", "--output-format", "concise",
                          "--config", 'target-device = "auto"')
    assert code == 1 and "MV202 [warning]" in out  # an inline override beats the file: both worlds
