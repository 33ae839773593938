"""The CLI transport: what every `memesh <command>` (api/cli/management/commands/) shares.

- Errors are mapped in one place, `MemeshCommand.execute`, through the envelope
  (api/envelope.py): a memesh error or a storage condition (a locked, read-only, full or
  failing database) becomes, with --json, the failure envelope (`{"success": false,
  "errorCode", "error", "field"?, "hint"?}`) as one line on stderr, and otherwise its message
  and hint (a CommandError, which Django prints on stderr); exit 1 either way (DESIGN §3).
  stdout carries only what succeeded, so `memesh export --json > bundle.json` never writes an
  error into the file. An unexpected exception keeps its traceback.
- A command that uses the database first applies any pending migration
  (core/db/schema.py), as `memesh serve` and `memesh mcp` do: the first `memesh
  remember` on a fresh MEMESH_HOME works instead of failing on a missing table.
- `OperationCommand`: parse flags into the operation's input, run it as the CLI (source_host
  "cli", this directory's project), print JSON with --json or the command's own text otherwise.
- A flag that sets an input field takes its help and choices from the field
  (`Operation.field_help` and `field_choices`; `flag_help` and `model_field_help` below): the
  field's description is the published tool documentation, so the shell and the agents read
  the same words. A literal help is for a flag of the command's own (output, files,
  confirmations); where a flag means more or less than its field, a comment says how.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Literal, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import BaseModel

from api.cli import original_notice
from api.envelope import known_failure
from core import json_limits
from core.db.schema import migrate_if_needed
from core.errors import Failure, InvalidInput
from graph.ops.kit.operation import CallContext, Operation
from graph.project import project_id


def flag_help(operation: Operation, name: str, *, repeatable: bool = False) -> str:
    """A flag's help: the input field's description, plus what the usage line does not show —
    that the operation requires the field, and that the flag may be given again (one list item
    each time)."""
    text = operation.field_help(name).rstrip()
    if operation.input_model.model_fields[name].is_required():
        text += " Required."
    if repeatable:
        text += " Repeat the flag for several."
    return text.strip()


def model_field_help(model: type[BaseModel], name: str) -> str:
    """A flag's help from a field of an input model no Operation wraps (the dream routes'
    proposals/schemas.py): the same description their OpenAPI document publishes."""
    return model.model_fields[name].description or ""


def _plain(text: str) -> str:
    return text


def fail(
    command: BaseCommand, failure: Failure, *, as_json: bool, text: str | None = None
) -> NoReturn:
    """End `command` with `failure`: the envelope on stderr with --json, else `text` (the
    message by default) as a CommandError; exit status 1."""
    if as_json:
        # Uncoloured even on a terminal: a script parses this line.
        command.stderr.write(failure.to_json(), style_func=_plain)
        raise SystemExit(1)
    raise CommandError(failure.message if text is None else text)


@contextmanager
def cli_errors(command: MemeshCommand, *, as_json: bool) -> Iterator[None]:
    """Report a known failure raised inside the block as `fail` does; re-raise anything else."""
    failure: Failure | None = None
    try:
        yield
    except Exception as exc:
        failure = known_failure(exc)
        if failure is None:
            raise
    if failure is not None:
        fail(command, failure, as_json=as_json, text=command.error_text(failure))


class MemeshCommand(BaseCommand):
    """The base of every memesh command: the schema is migrated first (unless `migrates`
    is False: a command that never opens the database, or migrates on its own terms), and
    known failures end it through `fail`."""

    migrates: ClassVar[bool] = True
    # No system checks per command: they import every URL module (the REST views, the admin,
    # the review pages: ~0.9 s of a `memesh recall`), to verify what `memesh serve` verifies
    # when it starts and `memesh doctor` reports (FTS5, sqlite-vec). Hooks and shell habits
    # are made of such processes.
    requires_system_checks: list[str] | tuple[str, ...] | Literal["__all__"] = []

    def error_text(self, failure: Failure) -> str:
        """A failure as a person reads it (without --json): the message, then what to do."""
        hint = failure.extra.get("hint")
        return f"{failure.message}. {hint}" if hint else failure.message

    def execute(self, *args: Any, **options: Any) -> Any:
        with cli_errors(self, as_json=bool(options.get("json"))):
            if self.migrates:
                migrate_if_needed()
                # A home shared with the original MeMesh: said on the first command only.
                original_notice.show_once(
                    type(self).__module__.rsplit(".", 1)[-1], options, self.stderr.write
                )
            return super().execute(*args, **options)


def cli_context() -> CallContext:
    from django.conf import settings

    return CallContext(
        source_host="cli",
        project=project_id(),
        # Who the caller is to other agents (`memesh message`: messaging/operation.py).
        recipient=settings.MEMESH_RECIPIENT or None,
    )


def given(options: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The options among `keys` that were given (not None)."""
    return {key: options[key] for key in keys if options.get(key) is not None}


def _input(text: str) -> object:
    """`--input`, decoded as every transport decodes JSON (core/json_limits.py)."""
    try:
        return json_limits.loads(text)
    except json_limits.JSONTooDeep as exc:
        raise InvalidInput(f"--input {exc}") from None
    except ValueError as exc:
        raise InvalidInput(f"--input is not JSON: {exc}") from None


class OperationCommand(MemeshCommand):
    operation: ClassVar[Operation]
    json_help: ClassVar[str] = "Print the result as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        self.add_operation_arguments(parser)
        parser.add_argument("--json", action="store_true", help=self.json_help)
        parser.add_argument(
            "--input",
            metavar="JSON",
            help="The operation's whole input as a JSON object (as REST and MCP take it); "
            "replaces the other flags.",
        )

    def add_operation_arguments(self, parser: CommandParser) -> None:
        """The command's own flags."""

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        """The operation's input, from the parsed flags."""
        return {}

    def render(self, result: dict[str, Any]) -> None:
        """Print the result for a person (without --json)."""
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))

    def selected_operation(self, options: dict[str, Any]) -> Operation:
        """The operation these flags run (a command may front two: `memesh demo [--reset]`)."""
        return self.operation

    def call_context(self) -> CallContext:
        """The caller as the operation sees it (a command may add what only it knows)."""
        return cli_context()

    def flags_payload(self, options: dict[str, Any]) -> dict[str, Any]:
        """The operation's input from every flag the command has (its own, and any a base
        class adds)."""
        return self.payload(options)

    def handle(self, *args: Any, **options: Any) -> None:
        payload = _input(options["input"]) if options["input"] else self.flags_payload(options)
        result = self.selected_operation(options).run(payload, self.call_context())
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.render(result)


class PinCommand(OperationCommand):
    """`memesh pin` and `memesh unpin`: the same flags and output, another operation."""

    json_help = "Print { name, pinned, found } as JSON."

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", help=flag_help(self.operation, "name"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "name")

    def render(self, result: dict[str, Any]) -> None:
        if not result["found"]:
            # Not an error (the reference): the command says so and exits 0.
            verb = self.operation.name
            self.stdout.write(f'Entity "{result["name"]}" not found; nothing to {verb}.')
        else:
            self.stdout.write(f"{'Pinned' if result['pinned'] else 'Unpinned'}: {result['name']}")


PROVENANCE_OPTIONS = (
    "source",
    "confidence",
    "invalidation_tag",
    "invalidation_condition",
    "kind",
    "ttl_hours",
)


def add_provenance_arguments(parser: CommandParser, operation: Operation) -> None:
    """The trust model's inputs (graph/ops/kit/trust/) as flags, with the help and choices of
    the operation's own fields: remember's and supersede's."""
    help_of, choices_of = operation.field_help, operation.field_choices
    parser.add_argument("--source", help=help_of("source"))
    parser.add_argument("--confidence", type=float, help=help_of("confidence"))
    parser.add_argument(
        "--invalidation-tag",
        dest="invalidation_tag",
        choices=choices_of("invalidation_tag"),
        help=help_of("invalidation_tag"),
    )
    parser.add_argument(
        "--invalidation-condition",
        dest="invalidation_condition",
        help=help_of("invalidation_condition"),
    )
    parser.add_argument("--kind", choices=choices_of("kind"), help=help_of("kind"))
    parser.add_argument("--ttl-hours", dest="ttl_hours", type=float, help=help_of("ttl_hours"))


class ProvenanceCommand(OperationCommand):
    """A command whose operation also takes the trust model's inputs (remember, supersede): the
    provenance flags follow the command's own, and what was given of them joins the input."""

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        add_provenance_arguments(parser, self.operation)

    def flags_payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return {**self.payload(options), **given(options, *PROVENANCE_OPTIONS)}
