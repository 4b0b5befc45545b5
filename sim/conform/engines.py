"""Database engines for the conformance check: embedded SQLite, or a private MariaDB /
PostgreSQL server started in a temporary directory on a unix socket only.

Every server is started in its own session, stopped by its pid (SIGTERM, then SIGKILL
after a grace period) and its directory removed, in a ``finally`` that also runs on
Ctrl-C and on SIGTERM (the command turns SIGTERM into KeyboardInterrupt). No TCP port is
ever opened: MariaDB runs with ``--skip-networking``, PostgreSQL with
``listen_addresses=''``. ``--dsn`` uses an existing server instead and starts nothing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from model.errors import LeaselabError

ENGINES = ("sqlite", "mariadb", "postgres")
TMP_PREFIX = "leaselab-conform-"
APT_HINT = "apt-get install -y php-cli php-sqlite3 php-mysql php-pgsql php-doctrine-dbal mariadb-server postgresql"


@dataclass
class Engine:
    """A reachable database: the DBAL connection parameters the PHP harness uses."""

    name: str
    params: dict[str, Any]
    pids: list[int] = field(default_factory=list)


def _pg_bin() -> Path | None:
    root = Path("/usr/lib/postgresql")
    if not root.is_dir():
        return None
    versions = sorted((p for p in root.iterdir() if (p / "bin" / "postgres").exists()), key=lambda p: p.name)
    return versions[-1] / "bin" if versions else None


def missing(engine: str) -> str | None:
    """Why ``engine`` cannot be started here, or None."""
    if shutil.which("php") is None:
        return "php is not installed"
    if not Path("/usr/share/php/Doctrine/DBAL/autoload.php").exists():
        return "Doctrine DBAL (php-doctrine-dbal) is not installed"
    ext = {"sqlite": "pdo_sqlite", "mariadb": "mysqli", "postgres": "pdo_pgsql"}[engine]
    mods = subprocess.run(["php", "-m"], capture_output=True, text=True, check=False).stdout.split()
    if ext not in mods:
        return f"the PHP extension {ext} is not installed"
    if engine == "mariadb" and (
        shutil.which("mariadbd", path="/usr/sbin:/usr/bin") is None or shutil.which("mariadb-install-db") is None
    ):
        return "mariadb-server is not installed"
    if engine == "postgres" and _pg_bin() is None:
        return "postgresql is not installed"
    return None


def _wait_for(path: Path, proc: subprocess.Popen[bytes], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise LeaselabError(f"{what} exited with {proc.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise LeaselabError(f"{what} was not ready within {timeout:.0f} s")
        time.sleep(0.05)


def stop_pid(pid: int, grace: float = 20.0) -> None:
    """SIGTERM ``pid``, SIGKILL it after ``grace`` seconds; reap it when it is our child."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return
        except ChildProcessError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _run_group(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` in a session of its own; on any interruption the whole group is killed.

    An initialiser (mariadb-install-db, initdb) spawns a bootstrap server; killing only the
    script would leave that grandchild writing into the directory we are about to remove."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
    )
    try:
        out, err = proc.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _log_tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-800:]
    except OSError:
        return ""


def _create_database(sock: Path, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> None:
    """Create the database, retrying while the server comes up: its socket file can exist a moment
    before it accepts connections (seen on a loaded machine as the client's exit 1)."""
    deadline = time.monotonic() + timeout
    while True:
        done = subprocess.run(
            [
                "mariadb",
                f"--socket={sock}",
                "-uroot",
                "-e",
                "CREATE DATABASE leaselab CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            return
        if proc.poll() is not None or time.monotonic() > deadline:
            raise LeaselabError(f"mariadb: cannot create the database: {done.stderr.strip()[-300:]} {_log_tail(log)}")
        time.sleep(0.2)


@contextlib.contextmanager
def _mariadb(tmp: Path) -> Iterator[Engine]:
    data, sock, log = tmp / "data", tmp / "mysqld.sock", tmp / "mysqld.log"
    user = ["--user=root"] if os.geteuid() == 0 else []
    init = _run_group(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *user,
        ],
    )
    if init.returncode != 0:
        raise LeaselabError(f"mariadb-install-db failed: {init.stderr.strip()[-300:]}")
    server = shutil.which("mariadbd", path="/usr/sbin:/usr/bin") or "mariadbd"
    proc = subprocess.Popen(
        [
            server,
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={sock}",
            "--skip-networking",
            f"--pid-file={tmp / 'mysqld.pid'}",
            f"--log-error={log}",
            "--innodb-flush-log-at-trx-commit=0",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=32M",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_unicode_ci",
            *user,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    engine = Engine("mariadb", {}, [proc.pid])
    try:
        try:
            _wait_for(sock, proc, "mariadbd")
        except LeaselabError as exc:
            raise LeaselabError(f"{exc}: {_log_tail(log)}") from exc
        _create_database(sock, proc, log)
        engine.params = {
            "driver": "mysqli",
            "unix_socket": str(sock),
            "user": "root",
            "password": "",
            "dbname": "leaselab",
            "charset": "utf8mb4",
            "host": "localhost",
        }
        yield engine
    finally:
        stop_pid(proc.pid)


@contextlib.contextmanager
def _postgres(tmp: Path) -> Iterator[Engine]:
    bindir = _pg_bin()
    assert bindir is not None
    data, log = tmp / "data", tmp / "postgres.log"
    as_user: dict[str, Any] = {}
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(tmp, pw.pw_uid, pw.pw_gid)
        as_user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
    init = _run_group(
        [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--locale=C.UTF-8",
        ],
        **as_user,
    )
    if init.returncode != 0:
        raise LeaselabError(f"initdb failed: {init.stderr.strip()[-300:]}")
    proc = subprocess.Popen(
        [
            str(bindir / "postgres"),
            "-D",
            str(data),
            "-c",
            "listen_addresses=",
            "-c",
            f"unix_socket_directories={tmp}",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "logging_collector=off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),  # noqa: SIM115
        start_new_session=True,
        **as_user,  # noqa: RUF100
    )
    engine = Engine("postgres", {}, [proc.pid])
    try:
        try:
            _wait_for(tmp / ".s.PGSQL.5432", proc, "postgres")
        except LeaselabError as exc:
            raise LeaselabError(f"{exc}: {_log_tail(log)}") from exc
        deadline = time.monotonic() + 30
        while subprocess.run([str(bindir / "pg_isready"), "-h", str(tmp)], capture_output=True, check=False).returncode:
            if time.monotonic() > deadline:
                raise LeaselabError("postgres did not accept connections")
            time.sleep(0.05)
        subprocess.run(
            [str(bindir / "createdb"), "-h", str(tmp), "-U", "postgres", "leaselab"], check=True, capture_output=True
        )
        engine.params = {
            "driver": "pdo_pgsql",
            "host": str(tmp),
            "user": "postgres",
            "password": "",
            "dbname": "leaselab",
        }
        yield engine
    finally:
        stop_pid(proc.pid)


@contextlib.contextmanager
def start(name: str, *, shared: bool = False) -> Iterator[Engine]:
    """A fresh, private database of ``name``; everything it started is gone when the block ends.

    SQLite is in memory unless ``shared`` (a file two connections can open)."""
    why = missing(name)
    if why is not None:
        raise LeaselabError(f"cannot run the {name} engine: {why}", hint=APT_HINT)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{name}-"))
    try:
        if name == "sqlite":
            yield Engine(
                "sqlite",
                {"driver": "pdo_sqlite", "path": str(tmp / "conform.sqlite")}
                if shared
                else {"driver": "pdo_sqlite", "memory": True},
            )
        elif name == "mariadb":
            with _mariadb(tmp) as engine:
                yield engine
        else:
            with _postgres(tmp) as engine:
                yield engine
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if tmp.exists():  # a straggler wrote after the first pass
            time.sleep(0.5)
            shutil.rmtree(tmp, ignore_errors=True)


def from_dsn(dsn: str) -> Engine:
    """``mysql://user:pw@host/db?unix_socket=...``, ``postgres://...``, ``sqlite:///path``."""
    url = urlparse(dsn)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if url.scheme in ("mysql", "mariadb"):
        params: dict[str, Any] = {
            "driver": "mysqli",
            "host": url.hostname or "localhost",
            "user": unquote(url.username or "root"),
            "password": unquote(url.password or ""),
            "dbname": url.path.lstrip("/"),
            "charset": "utf8mb4",
        }
        if url.port:
            params["port"] = url.port
        if "unix_socket" in query:
            params["unix_socket"] = query["unix_socket"]
        return Engine("mariadb", params)
    if url.scheme in ("postgres", "postgresql", "pgsql"):
        params = {
            "driver": "pdo_pgsql",
            "host": query.get("host", url.hostname or "localhost"),
            "user": unquote(url.username or "postgres"),
            "password": unquote(url.password or ""),
            "dbname": url.path.lstrip("/"),
        }
        if url.port:
            params["port"] = url.port
        return Engine("postgres", params)
    if url.scheme == "sqlite":
        return Engine("sqlite", {"driver": "pdo_sqlite", "path": url.path})
    raise LeaselabError(
        f"unsupported --dsn scheme '{url.scheme}'", field="dsn", hint="use mysql://, postgres:// or sqlite:///path"
    )
