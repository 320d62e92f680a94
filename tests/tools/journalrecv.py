#!/usr/bin/env python3
"""journalrecv.py SOCKET OUT — a stand-in for systemd-journald's native
socket: binds an AF_UNIX datagram socket at SOCKET and decodes each entry
as systemd's "Native Journal Protocol" document describes it (fields
"NAME=value\\n", or "NAME\\n" + 64-bit little-endian length + value +
"\\n" for a value with a newline), appending one JSON object per entry
to OUT.  A datagram that does not decode is written as {"BAD": "<why>"}.
Runs until killed."""
import json
import socket
import struct
import sys


def decode(d):
    fields, i = {}, 0
    while i < len(d):
        nl = d.index(b"\n", i)
        line = d[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack("<Q", d[nl + 1:nl + 9])
            v = d[nl + 9:nl + 9 + n]
            if d[nl + 9 + n:nl + 10 + n] != b"\n":
                raise ValueError("binary field %r not ended by a newline" % k)
            i = nl + 10 + n
        name = k.decode()
        if not name or name[0] == "_" or not all(
                c.isupper() or c.isdigit() or c == "_" for c in name):
            raise ValueError("bad field name %r" % name)
        fields[name] = v.decode("utf-8", "replace")
    return fields


path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    f.write('{"BOUND": "1"}\n')
    while True:
        d = s.recv(65536)
        try:
            e = decode(d)
        except (ValueError, struct.error) as x:
            e = {"BAD": str(x)}
        f.write(json.dumps(e, sort_keys=True) + "\n")
