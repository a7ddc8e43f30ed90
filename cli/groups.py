"""Click options shown in named groups, one per concern, in `--help`."""

from __future__ import annotations

import click


class GroupedOption(click.Option):
    """An option that belongs to a help section."""

    def __init__(self, *args, group: str = "Other", **kwargs):
        super().__init__(*args, **kwargs)
        self.group = group


class GroupedCommand(click.Command):
    """Lists options under their group's heading, in the order groups first appear."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue
            record = param.get_help_record(ctx)
            if record is None:
                continue
            sections.setdefault(getattr(param, "group", "Other"), []).append(record)
        for title, rows in sections.items():
            with formatter.section(f"{title} options"):
                formatter.write_dl(rows)


def option(*decls, group: str, **kwargs):
    """`click.option` with a help group."""
    return click.option(*decls, cls=GroupedOption, group=group, **kwargs)
