#!/usr/bin/env python3
"""A GitHub-style release server on 127.0.0.1 for ciq's asset tests.

Serves ROOT/<owner>/<repo>/<tag>/<files> as releases:
  GET /repos/<owner>/<repo>/releases/latest       newest non-draft, non-prerelease
  GET /repos/<owner>/<repo>/releases?page=N       the list, newest first
  GET /repos/<owner>/<repo>/releases/tags/<tag>   one release, or 404
  GET /download/<owner>/<repo>/<tag>/<file>       an asset's bytes
ROOT/<owner>/<repo>/<tag>.release.json may set draft, prerelease, published_at.
ROOT/faults.json maps "<owner>/<repo>/<tag>/<file>" to a fault of its download:
  "404" (listed, but not found), "stall" (headers, then silence),
  "truncate" (half the bytes, then the connection closes), "flaky" (503 once),
  "slow" (half the bytes, a pause of --slow-seconds, the rest: parallel
  downloads of one file overlap).
Requests are appended to ROOT/requests.log; requests for an absolute URL
(proxy form) are logged with "PROXY". The bound port goes to --port-file.
--refuse answers every request (GET, or a proxy's CONNECT) with a refusal
that no retry changes: "ratelimit" (GitHub's 403 with x-ratelimit-remaining
0 and a reset 30 minutes ahead), "proxyauth" (a proxy's 407), "toomany" (an
asset server's 429 Too Many Requests with Retry-After: 120).
"""
import argparse
import json
import os
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
FLAKY_SEEN = set()


def log(line):
    with LOCK, open(os.path.join(ARGS.root, "requests.log"), "a") as f:
        f.write(line + "\n")


def faults():
    path = os.path.join(ARGS.root, "faults.json")
    return json.load(open(path)) if os.path.exists(path) else {}


def release_json(base, owner, repo, tag):
    folder = os.path.join(ARGS.root, owner, repo, tag)
    meta = {"draft": False, "prerelease": False, "published_at": "2025-01-01T00:00:00Z"}
    extra = folder + ".release.json"
    if os.path.exists(extra):
        meta.update(json.load(open(extra)))
    assets = []
    for name in sorted(os.listdir(folder)):
        assets.append({"name": name, "size": os.path.getsize(os.path.join(folder, name)),
                       "browser_download_url": f"{base}/download/{owner}/{repo}/{tag}/{name}"})
    return dict(meta, tag_name=tag, assets=assets)


def releases(base, owner, repo):
    folder = os.path.join(ARGS.root, owner, repo)
    if not os.path.isdir(folder):
        return None
    tags = [t for t in os.listdir(folder) if os.path.isdir(os.path.join(folder, t))]
    rels = [release_json(base, owner, repo, t) for t in tags]
    return sorted(rels, key=lambda r: r["published_at"], reverse=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_bytes(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, obj, status=200):
        self.send_bytes(status, json.dumps(obj).encode())

    def refuse(self):
        if ARGS.refuse == "ratelimit":
            body = json.dumps({"message": "API rate limit exceeded for 127.0.0.1."}).encode()
            self.send_response(403)
            self.send_header("x-ratelimit-limit", "60")
            self.send_header("x-ratelimit-remaining", "0")
            self.send_header("x-ratelimit-reset", str(int(time.time()) + 1800))
        elif ARGS.refuse == "toomany":
            body = b"slow down"
            self.send_response(429)
            self.send_header("Retry-After", "120")
        else:
            body = b"proxy credentials needed"
            self.send_response(407)
            self.send_header("Proxy-Authenticate", 'Basic realm="proxy"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self):
        log("CONNECT " + self.path)
        return self.refuse()

    def do_GET(self):
        if ARGS.refuse:
            log("REFUSED GET " + self.path)
            return self.refuse()
        url = urllib.parse.urlsplit(self.path)
        proxied = bool(url.scheme)
        base = f"{url.scheme}://{url.netloc}" if proxied else f"http://{self.headers['Host']}"
        log(("PROXY " if proxied else "") + "GET " + url.path + (("?" + url.query) if url.query else ""))
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        if len(parts) >= 4 and parts[0] == "repos" and parts[3] == "releases":
            return self.api(base, parts[1], parts[2], parts[4:], urllib.parse.parse_qs(url.query))
        if len(parts) == 5 and parts[0] == "download":
            return self.download(*parts[1:])
        self.send_json({"message": "Not Found"}, 404)

    def api(self, base, owner, repo, rest, query):
        rels = releases(base, owner, repo)
        if rels is None:
            return self.send_json({"message": "Not Found"}, 404)
        if not rest:
            page = int(query.get("page", ["1"])[0])
            per = int(query.get("per_page", ["30"])[0])
            return self.send_json(rels[(page - 1) * per: page * per])
        if rest == ["latest"]:
            good = [r for r in rels if not r["draft"] and not r["prerelease"]]
            return self.send_json(good[0]) if good else self.send_json({"message": "Not Found"}, 404)
        if len(rest) == 2 and rest[0] == "tags":
            for r in rels:
                if r["tag_name"] == rest[1]:
                    return self.send_json(r)
        self.send_json({"message": "Not Found"}, 404)

    def download(self, owner, repo, tag, name):
        path = os.path.join(ARGS.root, owner, repo, tag, name)
        key = f"{owner}/{repo}/{tag}/{name}"
        fault = faults().get(key)
        if fault == "404" or not os.path.isfile(path):
            return self.send_json({"message": "Not Found"}, 404)
        if fault == "flaky" and key not in FLAKY_SEEN:
            FLAKY_SEEN.add(key)
            return self.send_json({"message": "busy"}, 503)
        data = open(path, "rb").read()
        if fault == "stall":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            time.sleep(ARGS.stall_seconds)
            return
        if fault == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            time.sleep(ARGS.slow_seconds)
            self.wfile.write(data[len(data) // 2:])
            return
        if fault == "truncate":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.send_bytes(200, data, "application/octet-stream")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--pid-file", help="where to write this process's id (for kill)")
    p.add_argument("--lifetime", type=float, default=300, help="seconds before the server exits by itself")
    p.add_argument("--stall-seconds", type=float, default=60)
    p.add_argument("--slow-seconds", type=float, default=2)
    p.add_argument("--refuse", choices=["ratelimit", "proxyauth", "toomany"])
    ARGS = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if ARGS.pid_file:
        with open(ARGS.pid_file, "w") as f:
            f.write(str(os.getpid()))
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    threading.Timer(ARGS.lifetime, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
