#!/usr/bin/python3
"""A proxy on loopback for the forwarding tests: an HTTP CONNECT proxy, or
with --socks5 a SOCKS5 one (no authentication; a name is resolved here, as
socks5h asks). Tunnels each connection to its target and appends
`HOST:PORT` to --record, one a line. Prints port=N first."""
import argparse
import socket
import socketserver
import threading

arguments = argparse.ArgumentParser()
arguments.add_argument("--record", required=True)
arguments.add_argument("--socks5", action="store_true")
options = arguments.parse_args()
lock = threading.Lock()


def pipe(source, destination):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            destination.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, destination):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


class Tunnel(socketserver.BaseRequestHandler):
    def handle(self):
        if options.socks5:
            return self.socks5()
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65536:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        words = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(words) != 3 or words[0] != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Only CONNECT\r\nContent-Length: 0\r\n\r\n")
            return
        with lock, open(options.record, "a") as record:
            record.write(words[1] + "\n")
        host, _, port = words[1].rpartition(":")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except (OSError, ValueError):
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        upstream.settimeout(None)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        back = threading.Thread(target=pipe, args=(upstream, self.request), daemon=True)
        back.start()
        pipe(self.request, upstream)
        back.join()


    def socks5(self):
        """RFC 1928: no authentication, CONNECT to an IPv4 address or a name."""
        try:
            version, methods = exactly(self.request, 2)
            exactly(self.request, methods)
            if version != 5:
                return
            self.request.sendall(b"\x05\x00")
            version, command, _, kind = exactly(self.request, 4)
            if kind == 1:
                host = socket.inet_ntoa(exactly(self.request, 4))
            elif kind == 3:
                host = exactly(self.request, exactly(self.request, 1)[0]).decode("idna")
            else:
                self.request.sendall(b"\x05\x08\x00\x01" + bytes(6))
                return
            port = int.from_bytes(exactly(self.request, 2), "big")
        except OSError:
            return
        with lock, open(options.record, "a") as record:
            record.write("%s:%d\n" % (host, port))
        try:
            upstream = socket.create_connection((host, port), timeout=10)
        except OSError:
            self.request.sendall(b"\x05\x05\x00\x01" + bytes(6))
            return
        upstream.settimeout(None)
        self.request.sendall(b"\x05\x00\x00\x01" + bytes(6))
        back = threading.Thread(target=pipe, args=(upstream, self.request), daemon=True)
        back.start()
        pipe(self.request, upstream)
        back.join()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", 0), Tunnel)
print("port=%d" % server.server_address[1], flush=True)
server.serve_forever()
