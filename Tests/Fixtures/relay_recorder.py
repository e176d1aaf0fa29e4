#!/usr/bin/python3
"""A loopback relay target for ccrelay's forwarding tests.

Speaks the publish API of ntfy (JSON publishing: POST / with topic, title,
message, priority, tags), gotify (POST /message?token=...: title, message,
priority) or a webhook (any POST), answers the way those servers do, and
appends every request it receives (method, path, query, headers, body) to
--record as one JSON object per line, answered or not.

  --api ntfy|gotify|webhook   which server to be
  --port N                    listen on N (0: any free port); prints port=N first
  --token T                   gotify: the application token it accepts
  --hang-first N              never answer the first N requests (keep them open)
  --cert FILE --key FILE      serve HTTPS with this certificate
  --behave B                  how to answer a webhook: normal; slow-body (200, then the
                              body a byte a second); endless-body (200, a body that never
                              ends, as fast as it is read); echo-401 (401 with a page that
                              echoes the request: its query, headers and body)
"""
import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

arguments = argparse.ArgumentParser()
arguments.add_argument("--api", choices=["ntfy", "gotify", "webhook"], required=True)
arguments.add_argument("--port", type=int, default=0)
arguments.add_argument("--record", required=True)
arguments.add_argument("--token", default="")
arguments.add_argument("--hang-first", type=int, default=0)
arguments.add_argument("--cert")
arguments.add_argument("--key")
arguments.add_argument("--behave", choices=["normal", "slow-body", "endless-body", "echo-401"], default="normal")
options = arguments.parse_args()

lock = threading.Lock()
received = 0
message_id = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def do_POST(self):
        global received, message_id
        length = min(int(self.headers.get("Content-Length", "0")), 1 << 20)
        body = self.rfile.read(length).decode("utf-8", "replace")
        url = urlsplit(self.path)
        with lock:
            received += 1
            number = received
            entry = {
                "method": "POST", "path": url.path, "query": url.query, "headers": dict(self.headers.items()),
                "body": body, "received_at": time.time(), "answered": number > options.hang_first,
            }
            with open(options.record, "a", encoding="utf-8") as record:
                record.write(json.dumps(entry, ensure_ascii=False) + "\n")
            message_id += 1
        if number <= options.hang_first:
            # A target that takes the request and never answers.
            time.sleep(3600)
            return
        if options.behave != "normal" and self.misbehave(body):
            return
        status, answer = self.answer(url, body)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def misbehave(self, body):
        """The hostile answers; true when one was given."""
        try:
            if options.behave == "slow-body":
                self.send_response(200)
                self.send_header("Content-Length", "60")
                self.end_headers()
                for _ in range(60):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            elif options.behave == "endless-body":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                chunk = b"y" * 65536
                while True:
                    self.wfile.write(chunk)
            elif options.behave == "echo-401":
                page = ("401 Unauthorized: you sent %s?%s\n" % (self.path.split("?")[0], urlsplit(self.path).query)
                        + "".join("%s: %s\n" % item for item in self.headers.items()) + body).encode()
                self.send_response(401)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return True

    def answer(self, url, body):
        try:
            message = json.loads(body)
        except ValueError:
            return 400, {"error": "not JSON"}
        if options.api == "ntfy":
            if url.path != "/" or "topic" not in message:
                return 400, {"code": 40001, "http": 400, "error": "invalid request: topic missing"}
            return 200, {"id": "m%d" % message_id, "time": int(time.time()), "event": "message",
                         "topic": message["topic"], "title": message.get("title", ""), "message": message.get("message", "")}
        if options.api == "gotify":
            token = parse_qs(url.query).get("token", [""])[0] or self.headers.get("X-Gotify-Key", "")
            if url.path != "/message" or token != options.token:
                return 401, {"error": "Unauthorized", "errorCode": 401, "errorDescription": "you need to provide a valid access token"}
            return 200, {"id": message_id, "appid": 1, "title": message.get("title", ""), "message": message.get("message", ""),
                         "priority": message.get("priority", 0)}
        return 200, {"ok": True}


server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
server.daemon_threads = True
if options.cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print("port=%d" % server.server_address[1], flush=True)
sys.stdout.close()
server.serve_forever()
