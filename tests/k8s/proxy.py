# SPDX-License-Identifier: Apache-2.0
"""A fault-injecting proxy in front of a real kube-apiserver (standard library only), for the
faults a real server will not produce on demand: 5xx, 429 with Retry-After, dropped
connections, dropped watches, 410 Gone on a watch, slow answers.  It also keeps a request log,
so tests can check how the client talks (a watch, not polling; how many retries).

    px = FaultProxy(cp).start()                       # http://127.0.0.1:PORT -> cp.server
    kc = cp.kubeconfig(path, token=tok, server=px.url)
    px.fault(type="status", code=503, count=2, method="PATCH", path="/nodes/n1")
    ... run the client ...
    px.requests()       # [{"method","path","query","watch","status","userAgent","tokenSha","t"}]
    px.stop()

The client speaks plain HTTP to the proxy (loopback only); the proxy speaks HTTPS to the API
server with the client's own Authorization header, so authentication and RBAC stay the real
server's.  The log keeps no token, only `tokenSha` (token_sha(): the first 16 hex digits of its
SHA-256), so a test can tell which token a request carried.  Fault rules (the first matching rule with count > 0 applies, then count drops by 1):
  type "status"   answer `code` with a Status body (`message`, `reason`; `retryAfter` seconds)
  type "drop"     close the connection without an answer
  type "gone"     a watch gets one ERROR event with a 410 Expired Status (`as: "http"`: HTTP 410)
  type "delay"    forward after `delayMs` (any rule may carry delayMs, and `before`: a function
                  called before the request is forwarded, e.g. a concurrent write)
  type "huge"     200 with valid JSON of exactly `bytes` bytes: a List with a long padding string,
                  or for a watch one ADDED event line of that size
  type "reset"    the headers and half the body that Content-Length promises, then a TCP reset
  type "invalid-json"  200, Content-Type application/json, a body cut short (`body`)
  type "non-status"    `code` (502) with a body that is not a Status (a load balancer's HTML page)
  match keys: `method`, `path` (substring of the path), `watch` (true/false), `count` (1).

`TcpRelay(cp).start()` is the other tool here: a byte relay in front of the real server (TLS and
HTTP/2 stay end to end) that counts the TCP connections a client opens (`.connections`), so a
test can see how many TLS handshakes a run costs the server."""

import hashlib
import http.client
import json
import socket
import struct
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection",
        "host", "content-length"}


def token_sha(token):
    """The first 16 hex digits of the SHA-256 of @token: how the log names a bearer token."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def status_body(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _serve(self):
        px = self.server.proxy
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        watch = q.get("watch", ["0"])[0] in ("1", "true")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        entry = {"method": self.command, "path": u.path, "query": u.query, "watch": watch, "status": 0,
                 "userAgent": self.headers.get("User-Agent", ""), "contentType": self.headers.get("Content-Type", ""),
                 "auth": "token" if self.headers.get("Authorization") else "none", "t": time.time()}
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            entry["tokenSha"] = token_sha(auth[len("Bearer "):])
        px._log(entry)
        rule = px._match(self.command, u.path, watch)
        if rule and rule.get("delayMs"):
            time.sleep(rule["delayMs"] / 1000.0)
        if rule and rule.get("before"):
            rule["before"]()  # e.g. someone else writes the object first (a conflict)
        kind = rule.get("type") if rule else None
        if kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if kind == "status":
            code = int(rule.get("code", 500))
            extra = {"Retry-After": str(rule["retryAfter"])} if "retryAfter" in rule else {}
            self._json(code, status_body(code, rule.get("reason", "InternalError"),
                                         rule.get("message", "fault injected by the test proxy")), extra)
            entry["status"] = code
            return
        if kind in ("huge", "reset", "invalid-json", "non-status"):
            entry["status"] = self._odd_answer(kind, rule, watch)
            return
        if kind == "gone" and watch:
            st = status_body(410, "Expired", "too old resource version (fault injected by the test proxy)")
            if rule.get("as") == "http":
                self._json(410, st)
            else:
                self._send_head(200, {"Content-Type": "application/json"}, chunked=True)
                self._chunk(json.dumps({"type": "ERROR", "object": st}).encode() + b"\n")
                self._chunk(b"")
            entry["status"] = 410
            return
        self._forward(body, watch, entry)

    def _odd_answer(self, kind, rule, watch):
        """The answers a healthy API server never gives (see the module's doc); -> the status."""
        if kind == "non-status":
            code = int(rule.get("code", 502))
            self._raw(code, rule.get("contentType", "text/html"),
                      rule.get("body", "<html><body><h1>502 Bad Gateway</h1></body></html>\n").encode())
            return code
        if kind == "invalid-json":
            self._raw(200, "application/json", rule.get("body", '{"kind": "Pod", "metadata": {').encode())
            return 200
        if kind == "reset":
            body = json.dumps(status_body(200, "", "x" * 512)).encode()
            self._send_head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()  # SO_LINGER 0: a TCP reset, not an orderly end
            return 0
        size = int(rule.get("bytes", 64 << 20))  # huge
        if watch:
            head = (b'{"type":"ADDED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"huge",'
                    b'"resourceVersion":"1"},"padding":"')
            tail = b'"}}\n'
        else:
            head = b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[],"padding":"'
            tail = b'"}\n'
        pad = max(0, size - len(head) - len(tail))
        hdrs = {"Content-Type": "application/json"}
        if not watch:
            hdrs["Content-Length"] = str(len(head) + pad + len(tail))
        self._send_head(200, hdrs, chunked=watch)
        out = self._chunk if watch else self.wfile.write
        block = b"x" * 65536
        try:
            out(head)
            while pad > 0:
                out(block[:min(pad, len(block))])
                pad -= min(pad, len(block))
            out(tail)
            if watch:
                self._chunk(b"")
        except OSError:
            pass
        self.close_connection = True
        return 200

    def _raw(self, code, content_type, data):
        self._send_head(code, {"Content-Type": content_type, "Content-Length": str(len(data))})
        self.wfile.write(data)

    # -- plumbing ----------------------------------------------------------------------------
    def _json(self, code, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_head(self, code, headers, chunked=False):
        self.send_response(code)
        for k, v in headers.items():
            self.send_header(k, v)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _forward(self, body, watch, entry):
        px = self.server.proxy
        up = urllib.parse.urlsplit(px.upstream)
        conn = http.client.HTTPSConnection(up.hostname, up.port, context=px.cp.ssl, timeout=3600 if watch else 60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        try:
            conn.request(self.command, self.path, body=body or None, headers=headers)
            r = conn.getresponse()
        except OSError as e:
            self._json(502, status_body(502, "BadGateway", f"test proxy: upstream: {e}"))
            entry["status"] = 502
            return
        entry["status"] = r.status
        out = {k: v for k, v in r.getheaders() if k.lower() not in _HOP}
        if not watch or r.status != 200:
            data = r.read()
            out["Content-Length"] = str(len(data))
            self._send_head(r.status, out)
            self.wfile.write(data)
            conn.close()
            return
        self._send_head(r.status, out, chunked=True)
        gen = px.watch_gen
        with px.lock:
            px.open_watches.add(conn)
        try:
            while True:
                line = r.readline()
                if not line or px.watch_gen != gen:
                    break
                self._chunk(line)
            if px.watch_gen == gen:
                self._chunk(b"")
            else:  # dropped on purpose: no final chunk, the connection is cut
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            self.close_connection = True
        finally:
            with px.lock:
                px.open_watches.discard(conn)
            conn.close()


class FaultProxy:
    def __init__(self, cp, upstream=None):
        self.cp = cp
        self.upstream = upstream or cp.server
        self.lock = threading.Lock()
        self.rules = []
        self.log = []
        self.open_watches = set()
        self.watch_gen = 0
        self.httpd = None
        self.url = None

    def start(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.proxy = self
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fault-proxy").start()
        return self

    def stop(self):
        if self.httpd:
            self.drop_watches()
            self.httpd.shutdown()
            self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- control -------------------------------------------------------------------------------
    def fault(self, **rule):
        """Add a fault rule (see the module's doc)."""
        rule.setdefault("count", 1)
        with self.lock:
            self.rules.append(rule)

    def clear_faults(self):
        with self.lock:
            self.rules.clear()

    def drop_watches(self):
        """Cut every open watch stream (no final chunk): the client must resume."""
        with self.lock:
            self.watch_gen += 1
            conns = list(self.open_watches)
        for c in conns:
            try:
                c.sock and c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def requests(self):
        with self.lock:
            return [dict(e) for e in self.log]

    def clear_requests(self):
        with self.lock:
            self.log.clear()

    # -- internals -----------------------------------------------------------------------------
    def _log(self, entry):
        with self.lock:
            self.log.append(entry)

    def _match(self, method, path, watch):
        with self.lock:
            for r in self.rules:
                if r["count"] <= 0:
                    continue
                if r.get("method") and r["method"] != method:
                    continue
                if r.get("path") and r["path"] not in path:
                    continue
                if "watch" in r and bool(r["watch"]) != watch:
                    continue
                r["count"] -= 1
                return dict(r)
        return None


class TcpRelay:
    """Relays bytes between clients and the API server unchanged; counts accepted connections.

        relay = TcpRelay(cp).start()      # https://127.0.0.1:PORT (the server's certificate names
        ...                               # 127.0.0.1, so verification still passes)
        relay.connections                 # TCP connections accepted so far
        relay.stop()"""

    def __init__(self, cp):
        up = urllib.parse.urlsplit(cp.server)
        self.upstream = (up.hostname, up.port)
        self.connections = 0
        self.lock = threading.Lock()
        self.sock = None
        self.url = None
        self.open = set()

    def start(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "https://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="tcp-relay").start()
        return self

    def stop(self):
        s, self.sock = self.sock, None
        if s:
            s.close()
        with self.lock:
            conns = list(self.open)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _accept(self):
        while self.sock:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                self.open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            with self.lock:
                self.open.discard(src)
            src.close()
