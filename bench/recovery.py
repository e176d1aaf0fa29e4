"""The measuring half of bench/recovery: injects each fault into ccsim, heals
it, and times how long until the server has accepted a request made after
the heal and the daemon's State is online again (polled every 20 ms)."""
import json, statistics, subprocess, sys, time, urllib.request

label, control, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(control + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with opener.open(request, timeout=5) as answer:
        return json.loads(answer.read() or b"null")

def state():
    result = subprocess.run(["busctl", "--user", "get-property", "io.github.ccrelay.CCRelay", "/io/github/ccrelay/CCRelay",
                             "io.github.ccrelay.CCRelay1", "State"], capture_output=True, text=True)
    return result.stdout.split('"')[1] if '"' in result.stdout else ""

def accepted_after(moment):
    for session in call("GET", "sessions"):
        if any(report.get("accepted") and report["at"] >= moment for report in session.get("reports", [])):
            return True
    return False

def wait_online(timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if state() == "online":
            return True
        time.sleep(0.05)
    return False

scenarios = [
    ("hang 3 s", {"endpoint": "any", "kind": "hang"}, 3),
    ("hang 12 s", {"endpoint": "any", "kind": "hang"}, 12),
    ("503 for 12 s", {"endpoint": "any", "kind": "status", "status": 503}, 12),
]
if not wait_online():
    sys.exit(f"{label}: the daemon did not come online")
print(f"{label}:")
for name, fault, seconds in scenarios:
    times = []
    for _ in range(runs):
        wait_online()
        time.sleep(2.5)
        sessions_before = len(call("GET", "sessions"))
        call("POST", "fault", fault)
        time.sleep(seconds)
        call("DELETE", "fault")
        healed = time.time()
        end = healed + 120
        while time.time() < end:
            new_login = len(call("GET", "sessions")) > sessions_before
            if state() == "online" and (new_login or accepted_after(healed)):
                break
            time.sleep(0.02)
        times.append(time.time() - healed)
    print(f"  {name:13s} online {statistics.median(times):5.1f} s after the heal (median of {runs}; "
          f"{', '.join(f'{t:.1f}' for t in times)})")
