"""Error lines of the command line: one line, bounded, on stderr, never a password.

Every command reports a problem as ``robomemory: error: WHAT`` (``print_error``); a line
about a URL goes through ``redact`` first, wherever it is made.
"""

from __future__ import annotations

import re
import sys
from urllib.parse import unquote

PREFIX = "robomemory: error: "
ERROR_CHARS = 600
HIDDEN = "***"
# scheme://user:PASSWORD@ anywhere in a text (a password with a space needs its URL: redact)
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s/@]+@")
# password=SECRET of a key=value connection string
_KEYWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)


def password_of(url: str) -> str | None:
    """The password in ``url``'s user info (``scheme://user:PASSWORD@host``), or None."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return None
    userinfo = rest.rpartition("@")[0]
    password = userinfo.partition(":")[2]
    return password or None


def redact(text: str, url: str | None = None) -> str:
    """``text`` with every password hidden: those of URLs and ``password=`` settings in it,
    and ``url``'s own (raw and percent-decoded), which a parser may have quoted alone."""
    secret = password_of(url) if url else None
    if secret:
        for form in {secret, unquote(secret)}:
            text = text.replace(form, HIDDEN)
    text = _USERINFO.sub(rf"\g<head>{HIDDEN}@", text)
    return _KEYWORD.sub(rf"\g<head>{HIDDEN}", text)


def error_line(what: BaseException | str) -> str:
    """``what`` as one bounded line, passwords hidden: an echo from outside may be huge."""
    text = redact(" ".join(str(what).split()))
    if len(text) <= ERROR_CHARS:
        return text
    return f"{text[:ERROR_CHARS]}... ({len(text):,} characters)"


def print_error(what: BaseException | str) -> None:
    """Print ``what`` as the command's one error line on stderr."""
    print(PREFIX + error_line(what), file=sys.stderr, flush=True)


# the import names of the optional extras' packages (pyproject.toml): a command needing one
# that is not installed names the extra to install
EXTRA_OF_MODULE = {
    "textworld": "worlds",
    "jericho": "worlds",
    "scienceworld": "worlds",
    "textworld_express": "worlds",
    "mujoco": "sim",
    "dm_control": "sim",
    "gym_aloha": "sim",
    "roslibpy": "robot",
    "matplotlib": "viz",
    "neo4j": "neo4j",
    "mem0": "mem0",
    "psycopg": "postgres",
}


def missing_extra(exc: BaseException) -> str | None:
    """The error line for a module of an extra that is not installed, or None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    extra = EXTRA_OF_MODULE.get(exc.name.partition(".")[0])
    if extra is None:
        return None
    return f"{exc.name} is not installed; it comes with the {extra} extra: pip install '.[{extra}]'"
