"""docs/rules.md is the project's rule book: every rule id cited anywhere is defined there, and
nothing in the project cites a rules file outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULE_ID = re.compile(r"\bR([1-9][0-9]?)\b")


def _project_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    return [ROOT / name for name in listed
            if name.endswith((".py", ".md", ".proto", ".toml", ".js", ".cc", ".h", ".txt"))
            and (ROOT / name).is_file()]


def _defined_ids() -> set[int]:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    return {int(n) for n in re.findall(r"^- \*\*R(\d+) ", text, flags=re.MULTILINE)}


def test_rules_doc_defines_every_rule_id_from_R1_to_R51():
    defined = _defined_ids()
    expected = {1, 2, 3, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 26, 30, 31, 32,
                40, 41, 42, 43, 50, 51}
    assert defined == expected


def test_every_rule_id_cited_in_the_project_is_defined_in_the_rules_doc():
    defined = _defined_ids()
    cited: dict[int, str] = {}
    for path in _project_files():
        for match in RULE_ID.finditer(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(int(match.group(1)), str(path.relative_to(ROOT)))
    missing = {f"R{n}": where for n, where in cited.items() if n not in defined}
    assert not missing, f"rule ids cited but not defined in docs/rules.md: {missing}"


def test_no_file_cites_a_rules_file_outside_the_project():
    offenders = [str(path.relative_to(ROOT)) for path in _project_files()
                 if path.name != "test_rules_doc.py"
                 and re.search(r"RULES\.md|shared/spec|shared/seeds",
                               path.read_text(encoding="utf-8", errors="replace"))]
    assert offenders == []
