"""What `referee submit` sends: a submission is a spec and the folder it names, given as the
spec or as the folder, laid out as the guides lay it out; a layout it cannot send is one line
naming the fix and the page that shows it (docs/bots/submitting.md, "What to upload")."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from cli_support import referee

from referee.server.client import SubmitError, pack

SPEC = 'name = "mine"\ncommand = ["{python}", "main.py"]   # kept as written\nworkdir = "mybot"\n'
HELP = 'docs/bots/submitting.md, "What to upload"'


def names(archive: Path) -> set[str]:
    with zipfile.ZipFile(archive) as zipped:
        return set(zipped.namelist())


def guide_layout(top: Path) -> Path:
    """The Python guide's files: mybot.toml beside mybot/ (with a cache the upload skips), and
    another bot's spec beside them that names another folder."""
    (top / "mybot" / "__pycache__").mkdir(parents=True)
    (top / "mybot" / "main.py").write_text("print('hi')\n")
    (top / "mybot" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    (top / "mybot.toml").write_text(SPEC)
    (top / "other").mkdir()
    (top / "other.toml").write_text('name = "other"\ncommand = ["x"]\nworkdir = "other"\n')
    (top / "bot.toml").write_text('name = "third"\ncommand = ["x"]\nworkdir = "other"\n')
    return top / "mybot.toml"


def test_the_spec_or_its_folder_is_sent_with_the_other_as_the_guides_lay_them_out(
        tmp_path: Path) -> None:
    spec = guide_layout(tmp_path / "top")
    for given in (spec, tmp_path / "top" / "mybot"):
        work = tmp_path / given.name
        work.mkdir()
        archive = pack(given, work)
        assert names(archive) == {"mybot.toml", "mybot/main.py"}, given
        with zipfile.ZipFile(archive) as zipped:
            assert zipped.read("mybot.toml").decode() == SPEC   # nothing rewritten


def test_a_spec_inside_its_folder_is_sent_with_that_folder(tmp_path: Path) -> None:
    """The C++ guide's layout: mybot-cpp/greedy-cpp.toml, workdir its own folder; build
    output (target/) stays home, the server builds."""
    folder = tmp_path / "mybot-cpp"
    (folder / "target").mkdir(parents=True)
    (folder / "target" / "greedy-cpp").write_bytes(b"\x7fELF")
    (folder / "main.cpp").write_text("int main() {}\n")
    (folder / "greedy-cpp.toml").write_text('name = "mine-cpp"\ncommand = ["target/greedy-cpp"]\n'
                                            'build = ["make"]\n')
    (folder / "pyproject.toml").write_text("[project]\nname = 'tools'\n")   # no bot spec
    for given in (folder / "greedy-cpp.toml", folder):
        work = tmp_path / f"work-{given.name}"
        work.mkdir()
        assert names(pack(given, work)) == {"greedy-cpp.toml", "main.cpp", "pyproject.toml"}


def test_a_layout_that_cannot_be_sent_names_the_fix(tmp_path: Path) -> None:
    # The spec copied into the folder it names: its workdir now names a folder inside it.
    (tmp_path / "a" / "mybot").mkdir(parents=True)
    (tmp_path / "a" / "mybot" / "mybot.toml").write_text(SPEC)
    for given in (tmp_path / "a" / "mybot" / "mybot.toml", tmp_path / "a" / "mybot"):
        with pytest.raises(SubmitError) as caught:
            pack(given, tmp_path)
        line = str(caught.value)
        assert "key 'workdir': expected an existing directory" in line
        assert "keep mybot.toml beside the folder (workdir = \"FOLDER\") or inside it " \
               "(workdir = \".\")" in line and line.endswith(f"(see {HELP})"), line
    # A folder with no spec inside it nor beside it naming it.
    (tmp_path / "b" / "mybot").mkdir(parents=True)
    with pytest.raises(SubmitError) as caught:
        pack(tmp_path / "b" / "mybot", tmp_path)
    assert "no bot spec inside it or beside it naming it: write mybot.toml beside it " \
           "(workdir = \"mybot\") and give that" in str(caught.value)
    # Two specs beside it that name it: which one is meant is the student's to say.
    for other in ("a.toml", "b.toml"):
        (tmp_path / "b" / other).write_text(SPEC.replace('"mine"', f'"{other[0]}"'))
    with pytest.raises(SubmitError) as caught:
        pack(tmp_path / "b" / "mybot", tmp_path)
    assert "2 bot specs name it (a.toml, b.toml): give the one you mean" in str(caught.value)


def test_referee_submit_says_a_layout_mistake_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "mybot").mkdir()
    (tmp_path / "mybot" / "mybot.toml").write_text(SPEC)
    done = referee("submit", "mybot/mybot.toml", "--server", "http://127.0.0.1:9",
                   "--token", "rt_x", cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and HELP in done.stderr


def test_referee_check_takes_a_folder_as_submit_does(tmp_path: Path) -> None:
    """`referee check mybot/` checks the spec beside the folder (the guides' layout); a folder
    with no spec is one line naming the fix."""
    root = Path(__file__).resolve().parents[1]
    done = referee("check", "sample_bots/greedy", "--preset", "classic", "--no-probes",
                   cwd=root, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("referee check ") and "greedy.toml" in \
        done.stdout.splitlines()[0] and "greedy conforms" in done.stdout
    (tmp_path / "mybot").mkdir()
    done = referee("check", "mybot", cwd=tmp_path, timeout=120, check=False)
    assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
    assert "mybot: no bot spec inside it or beside it naming it: write mybot.toml beside it" \
        in done.stderr and HELP in done.stderr
