"""`referee rules`: the rule presets and their options, or one preset as TOML."""

from __future__ import annotations

import click

from referee.engine import PRESET_NOTES, PRESETS, RuleSet, preset


@click.command("rules")
@click.argument("preset_name", required=False, metavar="[PRESET]")
def rules_command(preset_name: str | None) -> None:
    """List the rule presets and options, or print PRESET as TOML."""
    if preset_name is not None:
        click.echo(rules_to_toml(preset(preset_name)), nl=False)
        return
    click.echo("Presets (referee rules PRESET prints one as TOML):\n")
    from referee.present.render import fit

    for name, rules in PRESETS.items():
        players = f"{rules.min_players}-{rules.max_players} players"
        click.echo("\n".join(fit(f"  {name:<25} {players:<13} {PRESET_NOTES[name]}",
                                 hang=42)))
    click.echo("\nOptions (set any of them on top of a preset in a rules TOML file):\n")
    for name, doc in OPTION_DOCS.items():
        click.echo("\n".join(fit(f"  {name:<18} {doc}", hang=21)))


OPTION_DOCS = {
    "preset": "the preset the options start from",
    "min_players": "fewest seats (2-8)",
    "max_players": "most seats (2-8)",
    "rounds": "rounds per game (R25)",
    "dice": "ordinary dice per player (R3)",
    "big_dice": "big dice per player, each counts 2 when scored (R3, R20)",
    "funding": '"threshold" (fund each casino up to `threshold`) or "notes" (R10)',
    "threshold": "dollars per casino in threshold funding (R10)",
    "scaled_threshold": "Boulevard: threshold by player count, $30k..$90k (R10)",
    "notes_per_casino": "notes per casino in notes funding (R10)",
    "hundred_k": "shuffle five $100k notes into the deck (R2)",
    "slot": "the slot machine, a 7th casino (R30-R32)",
    "neutral": '"none", "white" (R41) or "grey" (R43) neutral dice',
    "leftovers": '"bottom" (under the deck) or "discard" (R23)',
}


def rules_to_toml(rules: RuleSet) -> str:
    """A rule set as TOML, one option per line."""
    import tomli_w

    return tomli_w.dumps(rules.to_dict())
