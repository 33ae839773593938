"""The server's half of api/cli/forward.py: run a forwarded `memesh` command in this
process, exactly as the CLI process would have, and return its output and exit status.

- The command is parsed and run by Django's own machinery (`fetch_command(...)
  .run_from_argv`), so flags, help, error messages and exit statuses are the CLI's.
- Its stdout and stderr are captured. Commands write through `self.stdout` / `self.stderr`,
  which a command binds to `sys.stdout` / `sys.stderr` when it is created, and argparse prints
  usage to `sys.stderr`: the streams are swapped for the duration, one command at a time (a
  single thread, CLI_THREAD), which also keeps two commands' output apart.
- The caller's working directory decides the project (api/cli/base.py `cli_context`), through a
  context variable, never `os.chdir`: the server's other threads share its directory.
- A command that reads its standard input (`memesh hook`, READS_STDIN) gets the text the
  caller read from its own as `sys.stdin`, swapped like stdout and stderr.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from api.cli.forward import HELP_ARGS, MAX_STDIN_BYTES, READS_STDIN, forwardable
from core.invocation import invocation_directory

PROG = "memesh"
CLI_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memesh-cli")


class BadRequest(ValueError):
    """A forwarded request this server will not run."""


@dataclass(frozen=True)
class CliRequest:
    argv: list[str]
    cwd: str
    stdin: str | None = None


def parse_request(payload: object) -> CliRequest:
    """A forwarded command, checked: only the forwarded commands, an absolute working
    directory, and standard input only for a command that reads it."""
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    argv, cwd, stdin = payload.get("argv"), payload.get("cwd"), payload.get("stdin")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise BadRequest("`argv` must be a list of strings")
    if not forwardable(argv):
        raise BadRequest("this command is not run by the server")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise BadRequest("`cwd` must be an absolute path")
    if stdin is not None:
        if not isinstance(stdin, str) or argv[0] not in READS_STDIN:
            raise BadRequest("`stdin` is a string, for a command that reads standard input")
        if len(stdin) > MAX_STDIN_BYTES + 1:
            raise BadRequest(f"`stdin` is longer than {MAX_STDIN_BYTES} characters")
    return CliRequest(argv=argv, cwd=cwd, stdin=stdin)


def run_command(argv: list[str], cwd: str, stdin: str | None = None) -> dict[str, Any]:
    """Run `memesh <argv>` as if started in `cwd`, reading `stdin`: {exit, stdout, stderr}."""
    out, err = io.StringIO(), io.StringIO()
    token = invocation_directory.set(cwd)
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin or "")  # never the server's own (a terminal, /dev/null)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = _execute(argv)
    finally:
        sys.stdin = saved_stdin
        invocation_directory.reset(token)
    return {"exit": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _execute(argv: list[str]) -> int:
    from django.core.management import ManagementUtility

    utility = ManagementUtility([PROG, *argv])
    try:
        if argv in HELP_ARGS:
            sys.stdout.write(utility.main_help_text() + "\n")
        else:
            utility.fetch_command(argv[0]).run_from_argv([PROG, *argv])
    except SystemExit as exc:
        return _status(exc.code)
    except Exception:
        # What the CLI process would have shown: an unexpected failure keeps its traceback.
        traceback.print_exc()
        return 1
    return 0


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")  # sys.exit("message") prints it and exits 1
    return 1
