"""Short, plain-text help pages.

:func:`plain_text` turns the reStructuredText of a docstring (``:class:`~a.B```,
double backticks, ``:math:``, emphasis, links) into the plain text a terminal shows;
:func:`first_sentence` and :func:`option_help` make an option's help its first sentence,
on about one line.  :class:`HelpCommand` is the class of every command: its ``--help``
shows the options a user needs, and ``--help-all`` adds the groups of options declared
with a panel (``typer.Option(..., rich_help_panel=...)``: the columns and text analysis
of ``--documents``, checkpoints, a Dask cluster), each under its own heading.  Both stay
plain text (the panels are read here, not by rich).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.core import TyperCommand

__all__ = ["DOCUMENT_PANEL", "RUN_PANEL", "RUN_SETTINGS", "HelpCommand", "first_sentence",
           "option_help", "plain_text"]

#: the panel of the options that describe ``--documents FILE`` (shown by --help-all)
DOCUMENT_PANEL = "Options of --documents (columns, ids, dates, text analysis)"
#: the panel of checkpoints and clusters (shown by --help-all)
RUN_PANEL = "Checkpoints and clusters"
#: the panel of how a sampler runs and reports (shown by --help-all)
RUN_SETTINGS = "Run settings"

#: words whose full stop ends no sentence
_NOT_ENDS = frozenset({"e.g", "i.e", "vs", "etc", "cf", "approx", "resp", "sec", "eq",
                       "fig", "no", "al", "et"})
_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`([^`]*)`")
_TITLED = re.compile(r"^(.*?)\s*<([^<>]*)>$")


def _role_text(match: re.Match[str]) -> str:
    """What Sphinx shows for a role: a titled reference's title, ``~a.b.C`` -> ``C``,
    ``!x`` -> ``x``, anything else as written."""
    target = match.group(1).strip()
    titled = _TITLED.match(target)
    if titled and titled.group(1):
        return titled.group(1)
    target = target.lstrip("!")
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target


def plain_text(text: str) -> str:
    """``text`` (a docstring's reStructuredText) as plain text on one line: roles
    (``:class:`~topiclink.LDA``` -> ``LDA``, ``:math:`x^2``` -> ``x^2``), inline literals
    and interpreted text (double and single backticks) without their quotes, emphasis
    without its stars, hyperlinks (```text <url>`_``) as ``text (url)``, footnote and
    citation references (``[1]_``) dropped, escapes resolved and white space collapsed."""
    text = _ROLE.sub(_role_text, text)
    text = re.sub(r"`([^`<>]+?)\s*<([^<>`]+)>`__?", r"\1 (\2)", text)
    text = re.sub(r"``(.+?)``", r"\1", text)
    text = re.sub(r"`([^`]+)`_{0,2}", r"\1", text)
    text = re.sub(r"(?<![\w*])\*\*(\S(?:.*?\S)?)\*\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\1", text)
    text = re.sub(r"\s*\[(?:\d+|#\w*|\*)\]_", "", text)
    text = re.sub(r"\\(.)", r"\1", text)
    return " ".join(text.split())


def _top_level(text: str, marks: str) -> Iterator[int]:
    """The positions of ``marks`` in ``text`` outside parentheses and quotes."""
    depth = 0
    quoted = False
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == '"':
            quoted = not quoted
        elif char in marks and depth == 0 and not quoted:
            yield i


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (plain text): up to the first ``.``, ``!`` or ``?``
    that ends a word and is followed by a space or the end, outside parentheses and
    quotes (``e.g.``, ``i.e.``, ``vs.`` and ``etc.`` end no sentence)."""
    for i in _top_level(text, ".!?"):
        if i + 1 == len(text) or text[i + 1] == " ":
            word = text[:i].rsplit(" ", 1)[-1].lower()
            if word and (word[-1].isalnum() or word[-1] in ")'\"") and word not in _NOT_ENDS:
                return text[:i + 1]
    return text


def _top_level_positions(text: str, marks: str) -> list[int]:
    """The positions of ``marks`` outside parentheses and quotes, after the 12th
    character."""
    return [i for i in _top_level(text, marks) if i >= 12]


def _top_level_cut(text: str, marks: str) -> int:
    """The position of the first of ``marks`` outside parentheses and quotes (after the
    12th character), or -1."""
    found = _top_level_positions(text, marks)
    return found[0] if found else -1


def _without_remarks(text: str) -> str:
    """``text`` without its parenthetical remarks: the groups `` (...)`` after a space,
    nested parentheses included (a call such as ``Ga(a, b)`` stays)."""
    kept: list[str] = []
    depth = 0
    for i, char in enumerate(text):
        if depth:
            depth += {"(": 1, ")": -1}.get(char, 0)
            continue
        if char == "(" and i and text[i - 1] == " ":
            depth = 1
            while kept and kept[-1] == " ":
                kept.pop()
            continue
        kept.append(char)
    return "".join(kept)


def option_help(text: str, limit: int = 70) -> str:
    """An option's help from its documentation: the first sentence, in plain text.  A
    sentence longer than ``limit`` characters loses its parenthetical remarks (`` (...)``;
    a call such as ``Ga(a, b)`` stays), then what follows its first ``:`` or ``;``
    outside parentheses (the details), then its last clauses after a comma (not one that
    starts with "or", "and", "but" or "not").  The result ends with a full stop."""
    sentence = first_sentence(plain_text(text)).rstrip()
    if len(sentence) > limit:
        sentence = _without_remarks(sentence)
    if len(sentence) > limit and not re.match(r"[\w\"'=.-]+: ", sentence):
        cut = _top_level_cut(sentence, ":;")    # not "None: a; M: b" (each is a meaning)
        if cut > 0:
            sentence = sentence[:cut]
    while len(sentence) > limit:
        cuts = [i for i in _top_level_positions(sentence, ",")
                if not re.match(r",\s+(?:or|and|but|not)\b", sentence[i:])]
        if not cuts:
            break       # "a, or b": both halves are the meaning
        sentence = sentence[:cuts[-1]]
    sentence = sentence.rstrip(" ,;:.")
    return f"{sentence}." if sentence else ""


def _show_all(ctx: Any, _param: Any, value: bool) -> None:
    """The callback of ``--help-all``: the full help page, then exit."""
    if not value or ctx.resilient_parsing:
        return
    ctx.meta["topiclink.help_all"] = True
    typer.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


class HelpCommand(TyperCommand):
    """A command whose ``--help`` leaves out the options declared in a panel (its
    ``--help-all`` option names the panels), and whose ``--help-all`` shows them too,
    each panel under its own heading (plain text, no rich)."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        names = ", ".join(dict.fromkeys(p.rich_help_panel.split(" (")[0].lower()
                                        for p in params if getattr(p, "rich_help_panel", None)))
        if not names:
            return params
        every = self.__dict__.get("_help_all")
        if every is None:   # made once: click orders the eager callbacks by identity
            from typer._click.decorators import option
            from typer._coercion import bool_flag_type_descriptor

            holder = TyperCommand(None)
            option(["--help-all"], is_flag=True, expose_value=False, is_eager=True,
                   callback=_show_all, required=False,
                   help=f"Show the help with every option: {names}.",
                   type_descriptor=bool_flag_type_descriptor())(holder)
            every = self._help_all = holder.params.pop()
        return [*params, every]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        show_all = bool(ctx.meta.get("topiclink.help_all"))
        arguments, options = [], []
        panels: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            panel = getattr(param, "rich_help_panel", None)
            if panel:
                panels.setdefault(panel, []).append(record)
            else:
                options.append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)
        if show_all:
            for panel, records in panels.items():
                with formatter.section(panel):
                    formatter.write_dl(records)

