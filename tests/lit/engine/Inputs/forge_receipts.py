#!/usr/bin/env python3
"""A CUDA compiler launcher after ciq-ptxas that forges receipts (issue 29
item 6): a same-user program with the engine's token (it has the compile's
environment) sends, before the real compile runs,
  - on one connection, a receipt with no hello, for an output that is no
    tuned object, whose kernel claims spill_stores -1000;
  - on another, a hello for the compile's own object (it gets the candidate)
    and then a receipt for that object with registers 300 and spill_stores
    -1000.
Then it runs the compile it was given (argv[1:])."""
import json
import os
import socket
import sys


def talk(sock, msg):
    sock.sendall((json.dumps(msg) + "\n").encode())
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        reply += chunk
    return json.loads(reply) if reply.strip() else {}


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(os.environ["CIQ_SOCKET"])
    return s


def main():
    token = os.environ.get("CIQ_ENGINE_TOKEN")
    args = sys.argv[1:]
    if token and "-o" in args:
        output = os.path.realpath(os.path.join(os.getcwd(), args[args.index("-o") + 1]))
        hello = {"v": 1, "op": "hello", "compiler": "nvcc", "mode": "launcher", "cwd": os.getcwd(),
                 "output": output, "argv": args, "pid": os.getpid(), "engine_token": token}
        with connect() as a:
            cand = talk(a, hello)
            if cand.get("op") == "candidate":
                evil = {"name": "_Z4evilv", "arch": "sm_90", "registers": 1, "spill_stores": -1000, "spill_loads": 0,
                        "frame_known": True, "usage_known": True, "entry": True}
                receipt = {"v": 1, "op": "receipt", "candidate_id": cand["candidate_id"],
                           "candidate_hash": cand["candidate_hash"], "engine_token": token, "status": "ok",
                           "exit_status": 0, "ptxas_ran": True, "kernels": [evil]}
                with connect() as b:
                    talk(b, dict(receipt, output="/nonexistent/evil.o"))
                talk(a, dict(receipt, output=output, kernels=[dict(evil, registers=300)]))
    os.execvp(args[0], args)


main()
