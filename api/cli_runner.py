"""The server's half of memesh_site/cli_forward.py: run a forwarded `memesh` command in this
process, exactly as the CLI process would have, and return its output and exit status.

- The command is parsed and run by Django's own machinery (`fetch_command(...)
  .run_from_argv`), so flags, help, error messages and exit statuses are the CLI's.
- Its stdout and stderr are captured. Commands write through `self.stdout` / `self.stderr`,
  which a command binds to `sys.stdout` / `sys.stderr` when it is created, and argparse prints
  usage to `sys.stderr`: the streams are swapped for the duration, one command at a time (a
  single thread, CLI_THREAD), which also keeps two commands' output apart.
- The caller's working directory decides the project (api/cli.py `cli_context`), through a
  context variable, never `os.chdir`: the server's other threads share its directory.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from api.cli import invocation_directory
from memesh_site.cli_forward import HELP_ARGS, forwardable

PROG = "memesh"
CLI_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memesh-cli")


class BadRequest(ValueError):
    """A forwarded request this server will not run."""


def parse_request(payload: object) -> tuple[list[str], str]:
    """(argv, cwd) of a forwarded command, checked: only the forwarded commands, an absolute
    working directory."""
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    argv, cwd = payload.get("argv"), payload.get("cwd")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise BadRequest("`argv` must be a list of strings")
    if not forwardable(argv):
        raise BadRequest("this command is not run by the server")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise BadRequest("`cwd` must be an absolute path")
    return argv, cwd


def run_command(argv: list[str], cwd: str) -> dict[str, Any]:
    """Run `memesh <argv>` as if started in `cwd`: {exit, stdout, stderr}."""
    out, err = io.StringIO(), io.StringIO()
    token = invocation_directory.set(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = _execute(argv)
    finally:
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
