#!/usr/bin/python3
"""Runs a command on a pseudo-terminal and answers its prompts, as a person
typing would: each STEP is EXPECTED=>ANSWER (wait until the output so far,
since the last answer, contains EXPECTED, then type ANSWER and Enter).
Prints the whole transcript; exits with the command's status, or 124 when
an expected text did not come within 30 s.

  pty_drive.py [--step EXPECTED=>ANSWER]... -- COMMAND [ARG...]
"""
import os
import pty
import select
import sys
import time


def main():
    args = sys.argv[1:]
    steps = []
    while args and args[0] == "--step":
        expected, answer = args[1].split("=>", 1)
        steps.append((expected, answer))
        args = args[2:]
    if not args or args[0] != "--":
        sys.exit(__doc__)
    command = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    transcript = b""
    seen = 0

    def read(deadline):
        nonlocal transcript
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    return False
                if not chunk:
                    return False
                transcript += chunk
                return True
        return True

    for expected, answer in steps:
        deadline = time.monotonic() + 30
        while expected.encode() not in transcript[seen:]:
            if time.monotonic() >= deadline or not read(deadline):
                sys.stdout.write(transcript.decode("utf-8", "replace"))
                sys.stdout.write("\npty_drive: never saw %r\n" % expected)
                os.kill(pid, 9)
                sys.exit(124)
        seen = len(transcript)
        os.write(fd, answer.encode() + b"\r")
    deadline = time.monotonic() + 60
    while read(deadline) and time.monotonic() < deadline:
        pass
    if time.monotonic() >= deadline:
        # A command still waiting (for input that never comes) fails the test instead of hanging it.
        transcript += b"\npty_drive: the command did not end within 60 s\n"
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(transcript.decode("utf-8", "replace"))
    sys.exit(os.waitstatus_to_exitcode(status))


main()
