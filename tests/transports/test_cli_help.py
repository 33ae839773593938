"""`memesh <command> --help`: every command's help renders, and a flag that sets an
operation's input field reads that field's description (the published tool documentation),
with the field's choices."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from django.core.management import get_commands, load_command_class

from api.cli.base import OperationCommand


def _cli_commands() -> list[tuple[str, str]]:
    return sorted((name, app) for name, app in get_commands().items() if app.startswith("api.cli"))


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and its subcommands' parsers (`memesh dream run`, `memesh kg …`)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


@pytest.mark.parametrize(("name", "app"), _cli_commands())
def test_the_help_of_every_command_and_subcommand_renders(name: str, app: str) -> None:
    # argparse formats help with `%`: a description holding a stray `%` breaks --help.
    command = load_command_class(app, name)
    for parser in _parsers(command.create_parser("memesh", name)):
        assert "usage:" in parser.format_help()


def _operation_commands() -> list[str]:
    return [
        name
        for name, app in _cli_commands()
        if isinstance(load_command_class(app, name), OperationCommand)
    ]


@pytest.mark.parametrize("name", _operation_commands())
def test_a_flag_that_sets_an_input_field_reads_the_fields_description(name: str) -> None:
    command = load_command_class(get_commands()[name], name)
    assert isinstance(command, OperationCommand)
    operation = command.operation
    fields = operation.input_model.model_fields
    flags = [a for a in command.create_parser("memesh", name)._actions if a.dest in fields]
    for flag in flags:
        description = operation.field_help(flag.dest)
        assert description, f"{operation.name}.{flag.dest} has no description"
        assert (flag.help or "").startswith(description), f"memesh {name}: {flag.dest}"
        choices = operation.field_choices(flag.dest)
        if choices:
            assert list(flag.choices or ()) == choices, f"memesh {name}: {flag.dest}"
