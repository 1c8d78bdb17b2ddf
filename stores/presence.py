"""Which processes hold a persistent Chroma folder, so a store alone on it skips the change log.

The change log (:mod:`.changelog`) exists so that other processes see this one's writes.
A store alone on its folder needs none of it, so a persistent store registers itself for
its lifetime and claims a slot (or reads the log before a search) only while another
registration is, or was, there. An in-memory store and a ``chroma run`` store register
nothing and always use the log (a server is always taken as shared).

Registration: a file ``<folder>/lamina-processes/<prefix>/<pid>-<random>.live`` held
with an exclusive ``flock`` for the store's lifetime, then one byte appended to
``joined`` (whose size thus counts every registration ever made). The file is locked
under a temporary name and renamed into place, so nobody sees it unlocked. A process
that dies loses its lock to the kernel: its file is stale, counts for nothing, and the
next look removes it.

Why every write stays visible, the order of each side:

- A newcomer registers first (rename, then ``joined``), then waits for every write in
  flight on the folder (it takes the whole journal lock once, which each writer holds
  from its rows to its journal entry), and only then loads any mirror.
- A writer lands its rows in Chroma first, then looks for other live registrations (still
  under its journal lock), and claims its change-log slot when there is one, or when
  the look fails. A newcomer registered before that look is seen, and reads the slot;
  one registered after it loads after the write (and after its journal entry), so it
  reads the write from Chroma or the journal.
- A search reads the change log for a mirror unless, since the mirror's last read, no
  other registration was live and ``joined`` did not grow. The size of ``joined`` and
  the live registrations are taken before each read of the log, so a process that
  joined and left between two searches still makes the next one read the log from
  where that mirror last was, and sees every slot it claimed.

Writes made alone are still labelled, in the mirror journal, with the change-log slot
they follow (``lo == hi``), so a cold start replays them; a journal that cannot prove
them (torn, or with a gap before them) is not trusted and the mirror is read from Chroma.
"""

from __future__ import annotations

import fcntl
import os
import uuid
from pathlib import Path

Token = tuple[int, bool]
"""The size of ``joined`` and whether another live registration was seen, at one look."""


class Presence:
    """This store's registration in its folder, and looks at the others'."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self._joined = root / "joined"
        name = f"{os.getpid()}-{uuid.uuid4().hex}"
        tmp = root / f"{name}.tmp"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.path = root / f"{name}.live"
            os.replace(tmp, self.path)
            with open(self._joined, "ab") as f:
                f.write(b".")
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        self._fd: int | None = fd

    def close(self) -> None:
        """Leave the folder (the file is removed, then its lock dropped)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            self.path.unlink(missing_ok=True)
            os.close(fd)

    def token(self) -> Token | None:
        """``joined``'s size, then whether another live registration exists; None if unknown."""
        try:
            size = self._joined.stat().st_size
            return size, self.others()
        except OSError:
            return None

    def quiet_since(self, token: Token | None) -> bool:
        """True when no other registration was live at ``token`` and none was made since."""
        if token is None or token[1]:
            return False
        try:
            return self._joined.stat().st_size == token[0]
        except OSError:
            return False

    def alive(self, name: str) -> bool:
        """Whether the registration file ``name`` (``<pid>-<random>.live``) is held by a live store.

        This store's own counts while it is open; a name that is no registration's counts
        as dead, and a stale file is removed on the way.
        """
        if name == self.path.name:
            return self._fd is not None
        if Path(name).name != name or not name.endswith(".live"):
            return False
        return _held(self.root / name)

    def others(self) -> bool:
        """Whether another live registration exists (stale ones are removed on the way)."""
        for entry in os.scandir(self.root):
            if not entry.name.endswith(".live") or entry.path == str(self.path):
                continue
            if _held(Path(entry.path)):
                return True
        return False


def _held(path: Path) -> bool:
    """Whether a live process holds the registration at ``path``; a stale one is removed."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False  # it left
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True  # held: a live process
    else:
        path.unlink(missing_ok=True)  # its holder died: stale
        return False
    finally:
        os.close(fd)
