"""A small league of real bots shared by the report tests (played once per test session)."""

from __future__ import annotations

from pathlib import Path

from cli_support import referee

from referee.league.folder import LeagueFolder

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_BOTS = [ROOT / "sample_bots" / "greedy.toml", ROOT / "sample_bots" / "random.toml"]


def league_bots(base: Path) -> list[Path]:
    """The report league's four bots: the sample bots greedy and random, and the test bots
    honest and illegal installed in base/bots (each in a folder of its own, as a league wants)."""
    from league_support import install_test_bot

    bots = base / "bots"
    specs = [bots / "honest.toml", bots / "illegal.toml"]
    if not bots.exists():
        specs = [install_test_bot(bots, path.stem) for path in specs]
    return [*SAMPLE_BOTS, *specs]


def play_league(out: Path, *extra: str) -> Path:
    """A 12-game league of 4 bots at tables of 2-4 (one bot always strikes) in `out`."""
    referee("league", *league_bots(out.parent), "--games", "12", "--players", "2-4",
            "--seed", "3",
            "--out", out, "--quiet", *extra)
    return out


CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


def start_browser(profile: Path, width: int = 1400, height: int = 1000):  # noqa: ANN201
    """A real headless Chromium (Debian's) driven by selenium, with a fresh profile and the
    browser's console log available through `driver.get_log("browser")`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(120)
    return driver


def stored_records(league: Path) -> list[dict]:
    """Every record in a league's store, in schedule order."""

    store = LeagueFolder(league).open_store()
    try:
        return list(store.records())
    finally:
        store.close()
