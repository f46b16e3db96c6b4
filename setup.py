"""The wheel carries bot.proto and the sample bots, which live beside the package in the
source tree (proto/, sample_bots/): the build copies them into the package, where
`referee.util.resources` finds them once installed. Everything else is in pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# The sample bots a season's house_bots may name and the CLI uses by default: each top-level
# spec with its folder. (The C++ and container samples need the source tree to build.)
SKIP = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc")


class BuildWithBundled(build_py):
    """build_py that also copies proto/ and the sample bots into referee/bundled/."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return   # an editable install reads the checkout's own folders
        bundled = Path(self.build_lib) / "referee" / "bundled"
        shutil.copytree(HERE / "proto", bundled / "proto", ignore=SKIP, dirs_exist_ok=True)
        samples = bundled / "sample_bots"
        samples.mkdir(parents=True, exist_ok=True)
        for spec in sorted((HERE / "sample_bots").glob("*.toml")):
            shutil.copy2(spec, samples / spec.name)
            folder = spec.with_suffix("")
            if folder.is_dir():
                shutil.copytree(folder, samples / folder.name, ignore=SKIP, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithBundled})
