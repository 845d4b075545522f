"""The shipped switch catalogue: real keyboard switches, identified and verified, that anyone can feel.

The catalogue is the folder ``switches/`` at the package root (installed as package data): a library
index (``index.json``, :mod:`~hapticam.library.catalogue`'s schema, with the catalogue's
own fields added), one identified model per switch (``models/NAME.yaml``), and the captures they were
identified from (``captures.tar.xz``: CSV files the capture loader reads once unpacked, e.g.
``tar -xJf captures.tar.xz -C DIR``). ``hapticam library build --catalogue`` rebuilds it from them
(:mod:`~hapticam.library.export`).

The captures were measured by bluepylons with the Open-Switch-Curve-Meter and shared under CC-BY 4.0
(:data:`CREDIT`): every listing, model file and index that shows them says so.

A switch is named by its capture's file name (``Gateron-Brown``); a name is looked up forgivingly
(:func:`find_entry`): case, spaces, hyphens and underscores do not matter (``"gateron brown"``), and a
name that matches no entry is answered with the closest names.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import shlex
import tarfile
from pathlib import Path
from typing import Any, Iterator

from hapticam.errors import UsageError

#: the catalogue's folder (package data beside the package's modules)
CATALOGUE_DIR = Path(__file__).resolve().parents[1] / "switches"
CAPTURES_ARCHIVE = "captures.tar.xz"
#: the attribution the captures' licence asks for
CREDIT = {"author": "bluepylons", "work": "Open-Switch-Curve-Meter",
          "url": "https://github.com/bluepylons/Open-Switch-Curve-Meter",
          "licence": "CC-BY 4.0", "licence_url": "https://creativecommons.org/licenses/by/4.0/",
          "text": "Force curves measured by bluepylons with the Open-Switch-Curve-Meter "
                  "(github.com/bluepylons/Open-Switch-Curve-Meter), shared under CC-BY 4.0; the models, "
                  "features and verification figures are derived from them by hapticam."}
#: the prefix naming a switch of the shipped catalogue in the library commands (``switch:Gateron-Brown``)
SWITCH_PREFIX = "switch:"
#: most bytes a member of the captures archive may expand to (a capture is about 60 kB)
MAX_MEMBER_BYTES = 8 * 1024 * 1024
#: most members the captures archive may hold
MAX_MEMBERS = 5000
CAPTURE_MEMBER = re.compile(r"^[A-Za-z0-9][\w.+-]*\.csv$")


def catalogue_dir(folder: str | os.PathLike[str] | None = None) -> Path:
    """The catalogue folder: ``folder`` or the shipped one."""
    return Path(folder) if folder is not None else CATALOGUE_DIR


def load_catalogue(folder: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The catalogue's index (validated; one :class:`~hapticam.errors.UsageError` when it is missing)."""
    from hapticam.library.catalogue import load_index

    where = catalogue_dir(folder)
    if folder is None and not (where / "index.json").is_file():
        raise UsageError(f"the switch catalogue is not installed at {where} "
                         "(rebuild it with 'hapticam library build --catalogue')")
    return load_index(where)


def key_of(name: str) -> str:
    """A name as looked up: lower case, spaces, hyphens and underscores as one hyphen."""
    return re.sub(r"[\s_-]+", "-", name.strip().lower()).strip("-")


def find_entry(entries: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The entry named ``name`` (:func:`key_of` equal; or the only name holding it whole), else one
    :class:`~hapticam.errors.UsageError` naming the closest names."""
    if name.startswith(SWITCH_PREFIX):
        name = name[len(SWITCH_PREFIX):]
    wanted = key_of(name)
    exact = [e for e in entries if key_of(str(e.get("name", ""))) == wanted]
    if exact:
        return exact[0]
    holding = [e for e in entries if wanted and wanted in key_of(str(e.get("name", "")))]
    if len(holding) == 1:
        return holding[0]
    names = [str(e.get("name", "")) for e in entries]
    if holding:
        listed = ", ".join(sorted(e["name"] for e in holding)[:8])
        raise UsageError(f"{name!r} names {len(holding)} switches ({listed}{', ...' if len(holding) > 8 else ''}): "
                         "say which")
    close = difflib.get_close_matches(wanted, [key_of(n) for n in names], n=5, cutoff=0.5)
    by_key = {key_of(n): n for n in names}
    hint = f" (closest: {', '.join(by_key[c] for c in close)})" if close else " ('hapticam library list' lists them)"
    raise UsageError(f"no switch {name!r} in the catalogue{hint}")


def is_catalogue_name(spec: str, folder: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``spec`` should be read as a catalogue name: ``switch:NAME``, or no file of that name exists
    and it has no folder part."""
    if spec.startswith(SWITCH_PREFIX):
        return True
    p = Path(spec)
    return not p.exists() and p.parent == Path(".") and p.suffix.lower() not in (".csv", ".txt", ".npz", ".yaml",
                                                                                   ".yml", ".msgpack")


def model_reference(entry: dict[str, Any], folder: str | os.PathLike[str] | None = None) -> str:
    """The model reference that plays ``entry``: ``library:DIR/NAME`` (``hapticam render`` reads it),
    quoted for a shell when it needs to be."""
    return shlex.quote(f"library:{catalogue_dir(folder)}/{entry['name']}")


def capture_members(archive: str | os.PathLike[str]) -> Iterator[tuple[str, bytes]]:
    """``(file name, bytes)`` of every capture in the archive, in the archive's order. Only regular files
    named like a capture (no folder part, :data:`CAPTURE_MEMBER`) of at most :data:`MAX_MEMBER_BYTES` are
    read; anything else is refused with one :class:`~hapticam.errors.UsageError`."""
    try:
        with tarfile.open(archive, mode="r:xz") as tar:
            for i, member in enumerate(tar):
                if i >= MAX_MEMBERS:
                    raise UsageError(f"{archive}: more than {MAX_MEMBERS} members; not a captures archive")
                if member.name == "README.md" and member.isfile() and member.size <= MAX_MEMBER_BYTES:
                    continue
                if not (member.isfile() and CAPTURE_MEMBER.match(member.name) and member.size <= MAX_MEMBER_BYTES):
                    raise UsageError(f"{archive}: member {member.name!r} is not a capture file of at most "
                                     f"{MAX_MEMBER_BYTES // 2**20} MiB")
                fh = tar.extractfile(member)
                assert fh is not None                                   # a regular file has contents
                yield member.name, fh.read()
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise UsageError(f"{archive}: cannot read the captures archive ({exc})") from None


def read_readme(archive: str | os.PathLike[str]) -> str:
    """The archive's ``README.md`` (its data's origin and credit), '' without one."""
    with tarfile.open(archive, mode="r:xz") as tar:
        try:
            fh = tar.extractfile("README.md")
        except KeyError:
            return ""
        return io.TextIOWrapper(fh, encoding="utf-8").read() if fh is not None else ""


def unpack_captures(dest: str | os.PathLike[str], names: set[str] | None = None,
                    archive: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write the archive's captures (those whose stem is in ``names``, or all) into ``dest``; a file already
    there with the same bytes is left as it is (so a build that read it skips it). Returns the paths."""
    from hapticam.fileio import atomic_write_bytes

    source = Path(archive) if archive is not None else CATALOGUE_DIR / CAPTURES_ARCHIVE
    folder = Path(dest)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for file_name, data in capture_members(source):
        if names is not None and Path(file_name).stem not in names:
            continue
        path = folder / file_name
        if not (path.is_file() and path.read_bytes() == data):
            atomic_write_bytes(path, data, error=UsageError)
        out.append(path)
    return out
