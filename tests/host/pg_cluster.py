"""A real PostgreSQL server for the tests, started once per test session.

Debian's `initdb` and `pg_ctl` (/usr/lib/postgresql/*/bin) create a cluster in a
temporary directory that listens only on a unix socket there (no TCP port to
collide on).  initdb refuses to run as root, so under root the cluster belongs to
`nobody`.  Every test gets its own database (`fresh_database()`); the cluster is
stopped and removed when the session ends.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import stat
import subprocess
import tempfile
import uuid
from pathlib import Path

from tests.parts import require_part

SUPERUSER = "rtbench"


def _pg_bin() -> Path | None:
    """The newest PostgreSQL bin directory, or None when PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


class PgCluster:
    """One running PostgreSQL cluster in a private directory."""

    def __init__(self) -> None:
        """Create and start the cluster."""
        bin_dir = _pg_bin()
        if bin_dir is None:
            require_part("postgresql", "PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="rtbench-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "nobody", "nogroup")
        os.chmod(self.dir, 0o755)
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                   "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        self.start()

    def _run(self, argv: list[str]) -> None:
        """Run a PostgreSQL tool as the cluster's owner; fail the test run on error."""
        if self.as_root:
            argv = ["runuser", "-u", "nobody", "--", *argv]
            if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
                # something on this machine replaced /dev/null by a file (a tool renaming
                # its output onto it): give PostgreSQL's shell commands a private, working
                # one in a mount namespace of their own
                null = self.dir / "null"
                if not null.exists():
                    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
                    os.chmod(null, 0o666)
                argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                        'mount --bind "$0" /dev/null && exec "$@"', str(null), *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                              cwd=self.dir)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{argv} failed: {done.stdout}{done.stderr}{log[-2000:]}")

    def start(self) -> None:
        """Start (or restart) the server; wait until it accepts connections."""
        options = (f"-k {self.dir} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                   "-o", options, "-w", "-t", "60", "start"])

    def stop(self) -> None:
        """Stop the server now (connections are cut)."""
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                   "stop"])

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of a database of this cluster."""
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={self.dir}"

    def fresh_database(self) -> str:
        """Create a new empty database and return its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(host=str(self.dir), user=SUPERUSER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        """Stop the server and remove its directory."""
        with contextlib.suppress(RuntimeError, OSError, subprocess.SubprocessError):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


_cluster: PgCluster | None = None


def cluster() -> PgCluster:
    """The session's cluster, started on first use and removed at exit."""
    global _cluster
    if _cluster is None:
        _cluster = PgCluster()
        atexit.register(_cluster.destroy)
    return _cluster


BACKENDS = ("sqlite", "postgresql")


def backend_url(backend: str, tmp_path: Path) -> str:
    """A fresh, empty database URL of the given backend."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'sub' / 'results.db'}"
    return cluster().fresh_database()


# The database at the schema's head that migrated_url() copies, per backend (one per
# process: each xdist worker makes its own).
_TEMPLATES: dict[str, str] = {}


def _template(backend: str) -> str:
    """This process's migrated template of backend: a SQLite file's path, or the name of
    a PostgreSQL database nobody stays connected to (CREATE DATABASE ... TEMPLATE needs
    that)."""
    from sqlalchemy.engine import make_url

    from rtbench.store import Store

    if backend not in _TEMPLATES:
        if backend == "sqlite":
            folder = Path(tempfile.mkdtemp(prefix="rtbench-template-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "results.db"
            Store.open(f"sqlite:///{path}").close()
            _TEMPLATES[backend] = str(path)
        else:
            url = cluster().fresh_database()
            Store.open(url).close()  # close(): the engine disposed, no connection left
            _TEMPLATES[backend] = str(make_url(url).database)
    return _TEMPLATES[backend]


def migrated_url(backend: str, tmp_path: Path) -> str:
    """A fresh database URL of the given backend whose schema is already at the head: a
    copy of a template migrated once per process.  Store.open's migrations of an empty
    database cost some 0.1 CPU-s of Alembic each; tests whose subject is not the
    migration from empty (that is test_store.py's, with backend_url) take this."""
    template = _template(backend)
    if backend == "sqlite":
        path = tmp_path / "sub" / "results.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, path)
        return f"sqlite:///{path}"
    import psycopg

    pg = cluster()
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=str(pg.dir), user=SUPERUSER, dbname="postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return pg.url(name)

