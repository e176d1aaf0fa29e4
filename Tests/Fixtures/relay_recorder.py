#!/usr/bin/python3
"""A loopback relay target for ccrelay's forwarding tests.

Speaks the publish API of ntfy (JSON publishing: POST / with topic, title,
message, priority, tags), gotify (POST /message?token=...: title, message,
priority), a webhook (any POST), or one of the push services (bark,
serverchan, pushplus, wecom, dingtalk, feishu, telegram: their documented
request, checked field by field and type by type as the real service checks
it, DingTalk's and Feishu's signatures recomputed from --secret, Bark's
payload limit), answers the way those servers do (a push service's refusals
are HTTP 200 with an error code, in its own words), and appends every
request it receives (method, path, query, headers, body, and "problem" when
it refused it) to --record as one JSON object per line, answered or not.

  --api NAME                  which server to be
  --chat C                    telegram: the chat the bot may write to
  --secret S                  dingtalk, feishu: the signing secret (checked when given)
  --port N                    listen on N (0: any free port); prints port=N first
  --token T                   gotify: the application token it accepts
  --hang-first N              never answer the first N requests (keep them open)
  --cert FILE --key FILE      serve HTTPS with this certificate
  --behave B                  quota: ServerChan's answer when the day's messages are spent;
                              how to answer a webhook: normal; slow-body (200, then the
                              body a byte a second); endless-body (200, a body that never
                              ends, as fast as it is read); echo-401 (401 with a page that
                              echoes the request: its query, headers and body)
"""
import argparse
import base64
import hashlib
import hmac
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

arguments = argparse.ArgumentParser()
PUSH = ["bark", "serverchan", "pushplus", "wecom", "dingtalk", "feishu", "telegram"]
arguments.add_argument("--api", choices=["ntfy", "gotify", "webhook"] + PUSH, required=True)
arguments.add_argument("--chat", default="")
arguments.add_argument("--secret", default="")
arguments.add_argument("--port", type=int, default=0)
arguments.add_argument("--record", required=True)
arguments.add_argument("--token", default="")
arguments.add_argument("--hang-first", type=int, default=0)
arguments.add_argument("--cert")
arguments.add_argument("--key")
arguments.add_argument("--behave", choices=["normal", "slow-body", "endless-body", "echo-401", "quota"], default="normal")
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
        if options.behave not in ("normal", "quota") and self.misbehave(body):
            return
        status, answer = push_answer(url, self.headers, body) if options.api in PUSH else self.answer(url, body)
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


def fields(message, **types):
    """The names in `types` missing from `message` or not of their type, as a sentence (None: all there)."""
    for name, kind in types.items():
        if not isinstance(message.get(name), kind) or isinstance(message.get(name), bool) and kind is not bool:
            return "%s missing or not %s" % (name, kind.__name__)
    return None


def signature(key, data):
    return base64.b64encode(hmac.new(key.encode(), data.encode(), hashlib.sha256).digest()).decode()


def recent(milliseconds):
    """Within an hour of now, as DingTalk and Feishu require."""
    return abs(time.time() * 1000 - milliseconds) < 3600 * 1000


def push_answer(url, headers, body):
    """The service's answer, and why it refused (recorded), as each documents them."""
    query = parse_qs(url.query)
    if "json" not in headers.get("Content-Type", ""):
        return refuse(400, "not JSON")
    try:
        message = json.loads(body)
    except ValueError:
        return refuse(400, "body is not JSON")
    api = options.api
    if api == "bark":
        if url.path != "/push":
            return refuse(404, "no such path", {"code": 404, "message": "not found"})
        if len(body.encode()) > 4096:
            return refuse(200, "payload too large", {"code": 400, "message": "push failed: PayloadTooLarge"})
        problem = fields(message, device_key=str, title=str, body=str, level=str, group=str)
        if problem or message["level"] not in ("critical", "timeSensitive", "active", "passive"):
            return refuse(200, problem or "bad level", {"code": 400, "message": problem or "bad level"})
        if message["device_key"] != options.token:
            return refuse(200, "unknown device", {"code": 400, "message": "failed to get device token: failed to get [%s] device token from database" % message["device_key"]})
        return 200, {"code": 200, "message": "success", "timestamp": int(time.time())}
    if api == "serverchan":
        if url.path not in ("/%s.send" % options.token, "/send/%s.send" % options.token):
            return refuse(200, "bad sendkey", {"code": 40001, "message": "[AUTH]用户不存在或者权限不足", "data": None})
        problem = fields(message, title=str, desp=str)
        if problem or len(message["title"]) > 32:
            return refuse(200, problem or "title too long", {"code": 40002, "message": problem or "title too long", "data": None})
        if options.behave == "quota":
            return refuse(200, "quota", {"code": 40001, "message": "今日免费额度已用完", "info": "超过当天的发送次数限制[5]", "data": None})
        return 200, {"code": 0, "message": "", "data": {"pushid": "1", "readkey": "r", "error": "SUCCESS", "errno": 0}}
    if api == "pushplus":
        problem = fields(message, token=str, title=str, content=str, template=str)
        if url.path != "/send" or problem:
            return refuse(200, problem or "no such path", {"code": 400, "msg": problem or "not found", "data": None})
        if message["token"] != options.token:
            return refuse(200, "bad token", {"code": 903, "msg": "无效的用户token", "data": None})
        return 200, {"code": 200, "msg": "请求成功", "data": "7a5b"}
    if api == "wecom":
        if url.path != "/cgi-bin/webhook/send" or query.get("key", [""])[0] != options.token:
            return refuse(200, "bad key", {"errcode": 93000, "errmsg": "invalid webhook url, hint: [1]"})
        text = message.get("text") if isinstance(message.get("text"), dict) else {}
        if message.get("msgtype") != "text" or not isinstance(text.get("content"), str) or len(text["content"].encode()) > 2048:
            return refuse(200, "bad text", {"errcode": 40008, "errmsg": "invalid message type"})
        return 200, {"errcode": 0, "errmsg": "ok"}
    if api == "dingtalk":
        if url.path != "/robot/send" or query.get("access_token", [""])[0] != options.token:
            return refuse(200, "bad token", {"errcode": 300001, "errmsg": "token is not exist"})
        if options.secret:
            stamp = query.get("timestamp", ["0"])[0]
            if not stamp.isdigit() or not recent(int(stamp)) or query.get("sign", [""])[0] != signature(options.secret, stamp + "\n" + options.secret):
                return refuse(200, "bad sign", {"errcode": 310000, "errmsg": "sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]"})
        text = message.get("text") if isinstance(message.get("text"), dict) else {}
        if message.get("msgtype") != "text" or not isinstance(text.get("content"), str):
            return refuse(200, "bad text", {"errcode": 40035, "errmsg": "缺少参数 json"})
        return 200, {"errcode": 0, "errmsg": "ok"}
    if api == "feishu":
        if url.path != "/open-apis/bot/v2/hook/%s" % options.token:
            return refuse(200, "bad hook", {"code": 19001, "msg": "param invalid: incoming webhook access token invalid", "data": {}})
        if options.secret:
            stamp = message.get("timestamp")
            key = "%s\n%s" % (stamp, options.secret)
            good = base64.b64encode(hmac.new(key.encode(), b"", hashlib.sha256).digest()).decode()
            if not isinstance(stamp, str) or not stamp.isdigit() or not recent(int(stamp) * 1000) or message.get("sign") != good:
                return refuse(200, "bad sign", {"code": 19021, "msg": "sign match fail or timestamp is not within one hour from current time", "data": {}})
        content = message.get("content") if isinstance(message.get("content"), dict) else {}
        if message.get("msg_type") != "text" or not isinstance(content.get("text"), str):
            return refuse(200, "bad text", {"code": 9499, "msg": "Bad Request", "data": {}})
        return 200, {"StatusCode": 0, "StatusMessage": "success", "code": 0, "data": {}, "msg": "success"}
    if api == "telegram":
        if url.path != "/bot%s/sendMessage" % options.token:
            return refuse(404, "bad token", {"ok": False, "error_code": 404, "description": "Not Found"})
        problem = fields(message, text=str, disable_notification=bool)
        # Telegram counts UTF-16 code units (an emoji outside the BMP is two), as its API documents for entities.
        if problem or len(message["text"].encode("utf-16-le")) // 2 > 4096 or not isinstance(message.get("chat_id"), (str, int)):
            return refuse(400, problem or "bad text", {"ok": False, "error_code": 400, "description": "Bad Request: " + (problem or "message is too long")})
        if str(message["chat_id"]) != options.chat:
            return refuse(400, "bad chat", {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"})
        return 200, {"ok": True, "result": {"message_id": message_id, "chat": {"id": options.chat}, "date": int(time.time()),
                                             "text": message["text"]}}
    return refuse(500, "unknown api")


def refuse(status, why, answer=None):
    with lock, open(options.record, "a", encoding="utf-8") as record:
        record.write(json.dumps({"problem": why}, ensure_ascii=False) + "\n")
    return status, answer if answer is not None else {"error": why}


server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
server.daemon_threads = True
if options.cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
print("port=%d" % server.server_address[1], flush=True)
sys.stdout.close()
server.serve_forever()
