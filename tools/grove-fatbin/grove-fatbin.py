#!/usr/bin/env python3
"""grove-fatbin: list the CUDA kernel images grovec embedded in a library.

  grove-fatbin.py FILE...      FILE: an object (.o), archive (.a) or shared
                               library (.so) built with --target=cuda

grove-to-cuda puts every kernel module's fatbin in the ELF section
.grove_fatbin. For each image this prints one line

  <file>: fatbin <n> <kind> sm_<arch> <bytes>[ ptx-target=<t>]

(kind: cubin or ptx). Exit status 1 if a file has no such section, which is
how the tests check that a CUDA library really embeds device code. Needs no
CUDA installation (cuobjdump is not part of every toolkit).
"""
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "cubin"}


def elf_sections(data):
    """{name: bytes} of a little-endian ELF64 file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    for i in range(shnum):
        name, kind, _, _, offset, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        headers.append((name, kind, offset, size))
    strtab = headers[shstrndx]
    names = data[strtab[2]:strtab[2] + strtab[3]]
    result = {}
    for name, kind, offset, size in headers:
        label = names[name:names.index(b"\0", name)].decode()
        if kind != 8:  # SHT_NOBITS has no bytes in the file
            result[label] = data[offset:offset + size]
    return result


def archive_members(data):
    """(name, bytes) of each member of an ar archive."""
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58].decode().strip())
        yield name, data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)


def fatbin_images(section):
    """(kind, arch, payload) for every entry of the fatbins in `section`
    (several fatbins back to back, each 8-byte aligned)."""
    pos = 0
    while pos + 16 <= len(section):
        magic, _, header, size = struct.unpack_from("<IHHQ", section, pos)
        if magic != FATBIN_MAGIC:
            pos += 8
            continue
        entry, end = pos + header, pos + header + size
        while entry + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from(
                "<HHIQ", section, entry)
            arch, = struct.unpack_from("<I", section, entry + 28)
            start = entry + entry_header
            yield KINDS.get(kind, f"kind{kind}"), arch, \
                section[start:start + payload]
            entry = start + payload
        pos = (end + 7) // 8 * 8


def objects(path, data):
    if data.startswith(b"!<arch>\n"):
        for name, member in archive_members(data):
            if member.startswith(b"\x7fELF"):
                yield f"{path}({name.rstrip('/')})", member
    else:
        yield path, data


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 else 2
    status = 0
    for path in argv[1:]:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print(f"grove-fatbin: error: {e}", file=sys.stderr)
            return 1
        found = 0
        for name, obj in objects(path, data):
            try:
                section = elf_sections(obj).get(".grove_fatbin")
            except (ValueError, struct.error, IndexError) as e:
                print(f"grove-fatbin: error: {name}: {e}", file=sys.stderr)
                return 1
            for n, (kind, arch, payload) in enumerate(
                    fatbin_images(section or b"")):
                line = f"{name}: fatbin {n} {kind} sm_{arch} {len(payload)}"
                if kind == "ptx" and b".target" in payload:
                    target = payload.split(b".target", 1)[1].split()[0]
                    line += f" ptx-target={target.decode(errors='replace')}"
                print(line)
                found += 1
        if not found:
            print(f"grove-fatbin: error: {path}: no CUDA kernel images "
                  "(.grove_fatbin section)", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
