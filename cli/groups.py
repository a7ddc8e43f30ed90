"""Click options shown in named groups, one per concern, in `--help`."""

from __future__ import annotations

import dataclasses

import click

from onnx_decomplex.options import flag


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


def option(*decls, group: str = "Other", **kwargs):
    """`click.option` with a help group."""
    return click.option(*decls, cls=GroupedOption, group=group, **kwargs)


def options_of(cls, group: str, **settings):
    """One option per field of the options class `cls` (see `onnx_decomplex.options`),
    under `group`: its flag, default and help come from the field; `settings[name]`
    adds click's own settings for a field (type, callback, metavar, its own group or
    help), and `settings[name] = None` leaves a field off the command line.

    The parameter each option fills is named as its field, so that `build` makes the
    options object back from what click parsed.
    """

    def decorate(f):
        for fld in reversed(dataclasses.fields(cls)):
            extra = settings.get(fld.name, {})
            if extra is None:
                continue
            extra = dict(extra)
            default = None if fld.default is dataclasses.MISSING else fld.default
            decls = [flag(fld), *extra.pop("decls", ()), fld.name]
            kwargs = {"default": default, "help": fld.metadata.get("help", "")}
            if isinstance(default, bool) and "/" not in decls[0]:
                kwargs["is_flag"] = True
            if default is not None and default is not False and not extra.get("multiple"):
                kwargs["show_default"] = True
            kwargs.update(extra)
            f = option(*decls, **{"group": group, **kwargs})(f)
        return f

    return decorate


def build(cls, values: dict):
    """The options object `cls` from the parameters click parsed, taking its fields
    out of `values`."""
    names = [f.name for f in dataclasses.fields(cls)]
    return cls(**{name: values.pop(name) for name in names if name in values})
