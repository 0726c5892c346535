"""The worker runs a script as `python SCRIPT ARGS` would (CPU-only parts)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from launchprof.common.targets import check_target_statically, parse_target, top_level_names
from launchprof.errors import UsageError

pytest.importorskip("torch")
from launchprof.worker.script import run_script  # noqa: E402


@pytest.fixture(autouse=True)
def _keep_interpreter_state():
    saved = (sys.argv[:], sys.path[:], sys.modules.get("__main__"))
    yield
    sys.argv[:], sys.path[:] = saved[0], saved[1]
    sys.modules["__main__"] = saved[2]


def test_docstring_future_import_argv_and_binding(tmp_path):
    script = tmp_path / "s.py"
    script.write_text('"""Doc."""\nfrom __future__ import annotations\nimport sys\n\ndef step(x):\n    return x * 2\n\nRESULT = [step(i) for i in range(3)]\nARGV = sys.argv[1:]\nNAME = __name__\n')
    seen = []
    outcome = run_script(script, ["--a", "1"], lambda ns: seen.append(dict(ns)))
    assert outcome.status == "ok" and outcome.exit_code == 0
    final = seen[-1]
    assert final["RESULT"] == [0, 2, 4] and final["ARGV"] == ["--a", "1"] and final["NAME"] == "__main__"
    assert "step" not in seen[0] and "step" in seen[-1]  # the hook sees names as they are bound


def test_exception_is_reported_with_user_line(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("x = 1\nraise ValueError('bad input')\n")
    outcome = run_script(script, [], lambda ns: None)
    assert outcome.status == "exception"
    assert outcome.exception.type == "ValueError" and outcome.exception.line == 2


@pytest.mark.parametrize("code, status, exit_code", [("sys.exit(3)", "exit", 3), ("sys.exit(0)", "ok", 0), ("sys.exit()", "ok", 0)])
def test_sys_exit(tmp_path, code, status, exit_code):
    script = tmp_path / "e.py"
    script.write_text(f"import sys\n{code}\n")
    outcome = run_script(script, [], lambda ns: None)
    assert (outcome.status, outcome.exit_code) == (status, exit_code)


def test_sibling_import_from_another_cwd(tmp_path, monkeypatch):
    (tmp_path / "helper_mod_x.py").write_text("VALUE = 42\n")
    script = tmp_path / "main.py"
    script.write_text("from helper_mod_x import VALUE\nassert VALUE == 42\n")
    monkeypatch.chdir("/")
    assert run_script(script, [], lambda ns: None).status == "ok"


def test_target_parsing_and_static_check(tmp_path):
    assert parse_target("pkg.mod:fn").module == "pkg.mod"
    assert parse_target("model.forward").parts == ("model", "forward")
    with pytest.raises(UsageError):
        parse_target("1bad")
    src = "import torch\nclass Net: pass\nmodel = Net()\ndef step(): pass\n"
    assert {"torch", "Net", "model", "step"} <= top_level_names(src)
    check_target_statically(parse_target("Net.forward"), tmp_path / "s.py", src)
    with pytest.raises(UsageError, match="never defines"):
        check_target_statically(parse_target("stepp"), tmp_path / "s.py", src)


ENCODED = {
    # a Windows editor's byte-order mark, and a latin-1 file that says so: python runs both
    "bom": b"\xef\xbb\xbfNAME = 'caf\xc3\xa9'\ndef step(x):\n    return x\n",
    "latin-1": b"# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\ndef step(x):\n    return x\n",
}


@pytest.mark.parametrize("kind", sorted(ENCODED))
def test_a_script_python_reads_is_read_the_same_way(tmp_path, kind):
    """The usage check, the target check, the worker and the run file all read the source as
    ``python FILE`` does, so such a script is analysed, not refused."""
    from launchprof.commands.checks import check_script, check_target_defined
    from launchprof.common.source import decoded

    script = tmp_path / "s.py"
    script.write_bytes(ENCODED[kind])
    assert subprocess.run([sys.executable, str(script)]).returncode == 0  # what python itself says
    assert "NAME = 'café'" in check_script(script)
    check_target_defined(parse_target("step"), script, check_script(script))
    seen = []
    assert run_script(script, [], lambda ns: seen.append(dict(ns))).status == "ok"
    assert seen[-1]["NAME"] == "café"
    assert decoded(ENCODED[kind]).splitlines()[-3:] == ["NAME = 'café'", "def step(x):", "    return x"]


def test_a_source_python_refuses_is_a_usage_error_not_a_traceback(tmp_path):
    from launchprof.commands.checks import check_script

    # latin-1 bytes and no declaration, on the first line (the declaration check refuses it)
    # and further down (the decoding does); then a codec python does not know
    cases = {
        "first.py": (b"NAME = 'caf\xe9'\n", "syntax error"),
        "later.py": (b"x = 1\ny = 2\nNAME = 'caf\xe9'\n", "cannot read"),
        "codec.py": (b"# -*- coding: no-such-codec -*-\nx = 1\n", "syntax error"),
    }
    for name, (data, said) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert subprocess.run([sys.executable, str(path)], capture_output=True).returncode == 1  # refused by python too
        with pytest.raises(UsageError, match=said):
            check_script(path)
        assert run_script(path, [], lambda ns: None).exception.type == "SyntaxError", name
