"""Space numbers of lab volumes, measured from the bytes really in their backing dirs.

* ``used_bytes``: what ``du`` counts (allocated blocks, hard links once) - `volume show`
  Used/Available and `df` use it.
* ``measure``: logical vs physical bytes after the volume's efficiency settings, computed
  on the data actually written: deduplication over 4 KiB blocks within the volume (ONTAP's
  block size; Kafka replicas on one volume are byte-identical segment files, which is
  where the TR's 1.70:1 came from) and compression in 8 KiB groups with zlib level 1
  standing in for ONTAP's compressor. 8 KiB is the group of ONTAP's inline adaptive
  compression, which is what compresses data as it is written; 32 KiB groups belong to
  secondary compression and to the cold-data pass of temperature-sensitive storage
  efficiency, neither of which applies to data the moment it lands. A group is stored
  compressed only when that saves at least one 4 KiB block, so an 8 KiB group must
  shrink into a single block.

Holes in sparse files are not data: a client that only sets a file's length (Kafka
preallocates its index files that way) has written nothing for ONTAP to store, so only the
file's data extents (SEEK_DATA/SEEK_HOLE) count, as logical and as physical bytes.

These are lab measurements and are labelled as such by the guide; they show the effect
of the settings on the data written, not ONTAP's exact on-disk layout.
"""
from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

BLOCK = 4096
GROUP = 8 * 1024       # inline adaptive compression: two 4 KiB blocks


def _files(path: Path):
    seen: set[tuple[int, int]] = set()
    for d, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue                    # removed while walking (Kafka deletes segments)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            yield p, st


def used_bytes(path: Path) -> int:
    """Allocated bytes under path, as du counts them (0 if it does not exist)."""
    if not path.exists():
        return 0
    return sum(st.st_blocks * 512 for _p, st in _files(path))


def _extents(fd: int, size: int):
    """(offset, length) of a file's data, holes left out (whole file if the file system
    cannot tell)."""
    off = 0
    while off < size:
        try:
            start = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:                      # ENXIO: only a hole is left
            return
        except AttributeError:               # no SEEK_DATA on this platform
            yield 0, size
            return
        try:
            end = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError:
            end = size
        end = min(end, size)
        if end > start:
            yield start, end - start
        off = end


def _data_bytes(p: str, st) -> int:
    if not st.st_blocks * 512 < st.st_size:  # not sparse: every byte is data
        return st.st_size
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError:
        return 0
    try:
        return sum(n for _o, n in _extents(fd, st.st_size))
    finally:
        os.close(fd)


def logical_bytes(path: Path) -> int:
    """Bytes of data the clients wrote (file sizes, less holes)."""
    if not path.exists():
        return 0
    return sum(_data_bytes(p, st) for p, st in _files(path)
               if os.path.isfile(p) and not os.path.islink(p))


@dataclass
class Measurement:
    logical: int              # bytes the clients wrote (apparent sizes)
    physical: int             # bytes stored after deduplication and compression
    dedupe_saved: int
    compression_saved: int

    @property
    def ratio(self) -> float:
        return self.logical / self.physical if self.physical else 1.0


def _blocks(n: int) -> int:
    return -(-n // BLOCK) * BLOCK


def _groups(f, extents):
    """The file's data in compression groups of GROUP bytes (a group never spans a hole)."""
    for off, n in extents:
        f.seek(off)
        left = n
        while left > 0:
            group = f.read(min(GROUP, left))
            if not group:
                return
            left -= len(group)
            yield group


def measure(path: Path, dedupe: bool, compression: bool) -> Measurement:
    """Read every file under path once and account for its blocks."""
    logical = physical = dd_saved = c_saved = 0
    seen_blocks: set[bytes] = set()
    if not path.exists():
        return Measurement(0, 0, 0, 0)
    for p, st in _files(path):
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        try:
            f = open(p, "rb")
        except OSError:
            continue
        with f:
            extents = list(_extents(f.fileno(), st.st_size)) if st.st_blocks * 512 < st.st_size \
                else [(0, st.st_size)]
            data = sum(n for _o, n in extents)
            logical += data
            if not dedupe and not compression:
                physical += sum(_blocks(n) for _o, n in extents)
                continue
            for group in _groups(f, extents):
                # Deduplication first: blocks already stored cost nothing.
                fresh = []
                for i in range(0, len(group), BLOCK):
                    blk = group[i:i + BLOCK]
                    if dedupe:
                        h = hashlib.blake2b(blk, digest_size=16).digest()
                        if h in seen_blocks:
                            dd_saved += BLOCK
                            continue
                        seen_blocks.add(h)
                    fresh.append(blk)
                if not fresh:
                    continue
                raw = b"".join(fresh)
                stored = _blocks(len(raw))
                if compression:
                    packed = _blocks(len(zlib.compress(raw, 1)))
                    if packed < stored:
                        c_saved += stored - packed
                        stored = packed
                physical += stored
    return Measurement(logical, physical, dd_saved, c_saved)


def round_4k(n: int) -> int:
    # "the specified number is rounded up to the nearest 4 KB" (volume size reference)
    return -(-n // 4096) * 4096


def autosize_defaults(vol) -> tuple[int, int]:
    """(maximum bytes, grow threshold %) of a volume's autosize in effect: its own settings,
    else ONTAP's defaults (120 % of the size; a threshold that rises with the size)."""
    tib = 1024 ** 4
    maximum = vol.autosize_maximum or round_4k(int(vol.size * 1.2))
    thr = vol.autosize_grow_threshold or (85 if vol.size < 20 * tib // 1024
                                          else 92 if vol.size < tib else 98)
    return maximum, thr
