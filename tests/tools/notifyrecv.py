#!/usr/bin/env python3
"""notifyrecv.py SOCKET OUT — a stand-in for systemd's notification socket
(sd_notify(3)): binds an AF_UNIX datagram socket at SOCKET (a path, or
"@name" for the abstract namespace) and appends each message received to
OUT as one line, its newlines written as "|".  Runs until killed."""
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + path[1:] if path.startswith("@") else path)
with open(out, "a", buffering=1) as f:
    f.write("BOUND\n")
    while True:
        f.write(s.recv(8192).decode("utf-8", "replace").replace("\n", "|")
                + "\n")
