#!/usr/bin/python3
"""A loopback mail server for ccrelay's mail forwarding tests (aiosmtpd).

Takes mail only over TLS — implicit TLS (--tls implicit, as port 465) or
STARTTLS, required before AUTH (--tls starttls, as port 587) — and only after
AUTH with --user and --password; parses each message with Python's email
package and appends what it found (envelope, decoded Subject, From, To, Date
as parsed, Message-ID, the text) to --record, one JSON object per line.
Prints port=N first.

  --tempfail-first N   answer the first N messages 451 (try again later), recorded all the same
  --hang-first N       take the first N messages and never answer (a client killed meanwhile)
  --reject-first N     refuse the first N messages at their end, 554 (their content: spam, say)

Like a real server it refuses (554 at the message's end) a message with a
line over 998 octets (RFC 5322 2.1.1), recorded all the same.
"""
import argparse
import asyncio
import email
import email.policy
import email.utils
import json
import socket
import ssl
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

arguments = argparse.ArgumentParser()
arguments.add_argument("--record", required=True)
arguments.add_argument("--tls", choices=["implicit", "starttls"], required=True)
arguments.add_argument("--cert", required=True)
arguments.add_argument("--key", required=True)
arguments.add_argument("--user", required=True)
arguments.add_argument("--password", required=True)
arguments.add_argument("--tempfail-first", type=int, default=0)
arguments.add_argument("--hang-first", type=int, default=0)
arguments.add_argument("--reject-first", type=int, default=0)
options = arguments.parse_args()
lock = threading.Lock()
received = 0


def authenticate(server, session, envelope, mechanism, auth_data):
    good = isinstance(auth_data, LoginPassword) and auth_data.login == options.user.encode() \
        and auth_data.password == options.password.encode()
    # handled=False: aiosmtpd answers 535 itself (with True it would say nothing, and the client would wait).
    return AuthResult(success=good, handled=False)


class Recorder:
    async def handle_DATA(self, server, session, envelope):
        global received
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        try:
            date = email.utils.parsedate_to_datetime(message["Date"]).isoformat()
        except (TypeError, ValueError):
            date = None
        raw = envelope.original_content or envelope.content
        too_long = any(len(line) > 998 for line in raw.split(b"\r\n"))
        with lock:
            received += 1
            number = received
            rejected = too_long or number <= options.reject_first
            answered = received > options.tempfail_first and received > options.hang_first and not rejected
            entry = {
                "mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos, "subject": str(message["Subject"]),
                "from": str(message["From"]), "to": str(message["To"]), "date": date, "message_id": str(message["Message-ID"]),
                "content_type": message.get_content_type(), "charset": message.get_content_charset(),
                "text": message.get_content(), "tls": options.tls == "implicit" or session.ssl is not None, "answered": answered,
                "rejected": rejected, "too_long": too_long, "received_at": time.time(),
            }
            with open(options.record, "a", encoding="utf-8") as record:
                record.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if number <= options.hang_first:
            await asyncio.sleep(3600)
        if too_long:
            return "554 5.6.0 Message has a line longer than 998 octets"
        if rejected:
            return "554 5.7.1 Message rejected as spam"
        return "250 2.0.0 OK" if answered else "451 4.3.0 Try again later"


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(options.cert, options.key)
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
common = dict(hostname="127.0.0.1", port=port, authenticator=authenticate, auth_required=True)
if options.tls == "implicit":
    # The whole connection is TLS (aiosmtpd's own check knows only STARTTLS).
    controller = Controller(Recorder(), ssl_context=context, auth_require_tls=False, **common)
else:
    controller = Controller(Recorder(), tls_context=context, require_starttls=True, auth_require_tls=True, **common)
controller.start()
print("port=%d" % port, flush=True)
while True:
    time.sleep(3600)
