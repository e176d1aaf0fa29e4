#!/usr/bin/python3
"""A loopback stand-in for a Srun portal's CGI, answering from a script,
for SrunClient's tests (the real simulator is `ccsim --protocol srun`).
Listens on 127.0.0.1 (or --address), prints port=N, and answers GET requests by path:
each request to a path takes the next answer of that path's list in the
script (the last one repeats); a path with no list answers 404.

  --script FILE     JSON: {"/cgi-bin/get_challenge": [answer, ...], ...}
  --record FILE     appends every request as one JSON line: path, query
                    (name -> value, decoded), raw (the query as sent),
                    headers, and the client's port (one per connection)
  --address A       listen on this IPv4 address instead of 127.0.0.1
  --cert FILE --key FILE   serve HTTPS with this certificate
  --token T         check a login's chksum (SHA-1 over the token and the
                    fields) with T, as the portal does: sign_error when wrong

An answer is an object:
  "json": {...}     the body is callback(<compact json>) with the request's
                    callback, or the bare JSON when it sent none
  "callback": "cb"  wrap the json in this callback instead
  "raw": "text"     this body as it is ("times": N repeats it N times)
  "status": N       the HTTP status (200 unless given)
  "headers": {...}  more headers (Location for a redirect)
  "delay": S        wait S seconds before answering
"""
import argparse
import hashlib
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

arguments = argparse.ArgumentParser()
arguments.add_argument("--script", required=True)
arguments.add_argument("--record", required=True)
arguments.add_argument("--address", default="127.0.0.1")
arguments.add_argument("--cert")
arguments.add_argument("--key")
arguments.add_argument("--token")
options = arguments.parse_args()

with open(options.script, encoding="utf-8") as file:
    script = json.load(file)
taken = {}
lock = threading.Lock()


def chksum_error(query):
    token = options.token
    fields = ["username", "password", "ac_id", "ip", "n", "type", "info"]
    values = [query.get(name, "") for name in fields]
    values[1] = values[1][len("{MD5}"):] if values[1].startswith("{MD5}") else values[1]
    expected = hashlib.sha1("".join(token + value for value in values).encode()).hexdigest()
    return query.get("chksum", "").rstrip() != expected


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        with lock:
            with open(options.record, "a", encoding="utf-8") as record:
                record.write(json.dumps({"path": parts.path, "query": query, "raw": parts.query, "headers": dict(self.headers),
                                         "port": self.client_address[1]}) + "\n")
            answers = script.get(parts.path, [])
            index = taken.get(parts.path, 0)
            taken[parts.path] = index + 1
        if not answers:
            return self.answer(404, b"", {})
        answer = answers[min(index, len(answers) - 1)]
        time.sleep(answer.get("delay", 0))
        if "json" in answer:
            value = answer["json"]
            if options.token and parts.path == "/cgi-bin/srun_portal" and query.get("action") == "login" and chksum_error(query):
                value = {"error": "sign_error", "res": "sign_error", "ecode": "", "error_msg": ""}
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            callback = answer.get("callback", query.get("callback"))
            body = (f"{callback}({text})" if callback else text).encode()
        else:
            body = answer.get("raw", "").encode() * answer.get("times", 1)
        self.answer(answer.get("status", 200), body, answer.get("headers", {}))

    def answer(self, status, body, headers):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True


server = Server((options.address, 0), Handler)
if options.cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"port={server.server_address[1]}", flush=True)
server.serve_forever()
