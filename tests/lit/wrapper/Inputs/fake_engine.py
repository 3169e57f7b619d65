#!/usr/bin/env python3
"""A stand-in for the ciq engine's side of the wrapper protocol (docs/protocol.md),
for the wrapper's lit tests: serves one candidate over a Unix socket to every
connection and writes each receipt it receives to a file.

  fake_engine.py --candidate CAND.json --receipts OUT.json [--error MSG] [--silent]
                 [--socket PATH] [--run-dir DIR] -- command args...

Runs the command with CIQ_SOCKET (and CIQ_RUN_DIR) set, serves until it exits,
and exits with its status. --error answers every hello with {"op":"error"};
--silent accepts connections and never answers (socket timeout tests).
The compilers the command runs are the real ones: only the engine is simulated.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import shutil
import tempfile
import threading


def serve_client(conn, args, candidate, receipts, lock):
    f = conn.makefile("rwb")
    hello = f.readline()
    if not hello:
        return
    msg = json.loads(hello)
    with lock:
        receipts.append({"op": msg.get("op"), "hello": msg})
    if args.silent:
        threading.Event().wait(3600)
        return
    if args.error:
        reply = {"v": 1, "op": "error", "message": args.error}
    else:
        reply = dict(candidate, v=1, op="candidate")
    f.write((json.dumps(reply) + "\n").encode())
    f.flush()
    if args.error:
        return
    line = f.readline()
    if not line:
        return
    receipt = json.loads(line)
    with lock:
        receipts.append(receipt)
    if not args.no_ack:
        f.write(b'{"v":1,"op":"ack"}\n')
        f.flush()
    conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--candidate", required=True)
    p.add_argument("--receipts", required=True)
    p.add_argument("--socket")
    p.add_argument("--run-dir", help="the run directory (CIQ_RUN_DIR), kept between runs; default: a fresh one")
    p.add_argument("--error")
    p.add_argument("--silent", action="store_true")
    p.add_argument("--no-ack", action="store_true")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(args.candidate) as f:
        candidate = json.load(f)
    # The socket lives under /tmp, not $TMPDIR: a test's TMPDIR under a deep
    # checkout (CI's /check/work/...) makes a path longer than sun_path allows.
    sock_dir = tempfile.mkdtemp(prefix="ciq-fake-engine-", dir="/tmp")
    run_dir = os.path.abspath(args.run_dir) if args.run_dir else sock_dir
    os.makedirs(run_dir, exist_ok=True)
    path = args.socket or os.path.join(sock_dir, "engine.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o600)
    srv.listen(16)
    receipts, lock = [], threading.Lock()

    def accept_loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve_client, args=(conn, args, candidate, receipts, lock),
                             daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    env = dict(os.environ, CIQ_SOCKET=path, CIQ_RUN_DIR=run_dir)
    status = subprocess.call(cmd, env=env)
    srv.close()
    shutil.rmtree(sock_dir, ignore_errors=True)
    with lock, open(args.receipts, "w") as out:
        # One key per line, sorted: easy to FileCheck.
        json.dump(receipts, out, indent=1, sort_keys=True, ensure_ascii=False)
        out.write("\n")
    sys.exit(status)


if __name__ == "__main__":
    main()
