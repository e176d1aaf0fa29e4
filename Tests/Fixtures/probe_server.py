#!/usr/bin/python3
"""A loopback stand-in for the generate_204 endpoints ccrelay probes, and
for what a campus puts in their way. Listens on 127.0.0.1 (or the IPv4
address given as its argument) and [::1] (the same port), prints port=N,
and answers by path:

  /generate_204   204, empty: outside access
  /204-body       204 with a Content-Length and a page (a portal that lies)
  /page           200 with a login page
  /redirect       302 to a portal
  /status-503     503
  /hang           takes the request and never answers (holds it 90 s)
  /reset          closes the connection without a word
"""
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading

PAGE = b"<html><body><form action=/login>Campus login</form></body></html>"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/generate_204":
            self.send_response(204)
            self.end_headers()
        elif path == "/204-body":
            self.send_response(204)
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        elif path == "/page":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        elif path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://portal.campus.example/login")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/status-503":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/hang":
            time.sleep(90)
        elif path == "/reset":
            # SO_LINGER 0: closing sends a reset, not a goodbye.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            self.rfile.close()
            self.wfile.close()
            self.connection.close()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


class Server4(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a reset on purpose is no error


class Server6(Server4):
    address_family = socket.AF_INET6


four = Server4((sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1", 0), Handler)
port = four.server_address[1]
six = Server6(("::1", port), Handler)
print(f"port={port}", flush=True)
threading.Thread(target=six.serve_forever, daemon=True).start()
four.serve_forever()
