"""What the organiser reads when the season file changes: values in words, never `None`."""

from __future__ import annotations

from pathlib import Path

from referee.server.shared.seasonfile import changes
from referee.server.shared.seasonkeys import load_runner_settings


def test_a_key_taken_out_of_the_file_reads_as_its_default_never_none(tmp_path: Path) -> None:
    with_key, without = tmp_path / "a.toml", tmp_path / "b.toml"
    with_key.write_text("sandbox = false\nconcurrency = 2\n")
    without.write_text("")
    said = changes(load_runner_settings(with_key), load_runner_settings(without))
    assert "sandbox: never -> wherever bubblewrap works (the default) (from the runner's next " \
           "start)" in said, said
    assert not any("None" in line for line in said), said
    back = changes(load_runner_settings(without), load_runner_settings(with_key))
    assert any(line.startswith("sandbox: wherever bubblewrap works (the default) -> never")
               for line in back), back
