"""The measuring half of bench/idle (see there). For each interval: a ccsim
of its own; each daemon run for a short and a long time (fresh state, so a
fresh login each), reaped with wait4; then curl + sleep for as many keep-alives."""
import json, os, resource, signal, subprocess, sys, time, urllib.request

directory, ccsim, extra = sys.argv[1], sys.argv[2], int(sys.argv[3])
binaries = [entry.split("=", 1) for entry in sys.argv[4:]]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def start_sim(interval):
    out = open(f"{directory}/sim-{interval}.out", "w+")
    sim = subprocess.Popen([ccsim, "--tls-cert", f"{directory}/server.pem", "--tls-key", f"{directory}/server.key",
                            "--client-ca", f"{directory}/ca.pem", "--interval", str(interval), "--timeout", str(interval * 15)],
                           stdout=out)
    for _ in range(200):
        out.seek(0)
        lines = dict(line.strip().split("=", 1) for line in out if "=" in line)
        if "control" in lines:
            return sim, lines["url"], lines["control"]
        time.sleep(0.05)
    raise SystemExit("ccsim did not start")


def accepted(control, session):
    with opener.open(control + "sessions", timeout=5) as answer:
        sessions = json.load(answer)
    return sum(1 for s in sessions if s["session"] == session for r in s["reports"] if r.get("accepted"))


def newest_session(control):
    with opener.open(control + "sessions", timeout=5) as answer:
        sessions = json.load(answer)
    return sessions[-1]["session"] if sessions else None


def proc_sum(pid, name, field):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/{name}") as f:
                total += int(f.read().split()[field])
        except OSError:
            pass
    return total


def smaps(pid):
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                values[parts[0].rstrip(":")] = int(parts[1])
    return values


def run_daemon(binary, url, seconds):
    """One run: returns (keep-alives, switches, rusage CPU s, schedstat CPU ns, RSS kB, private dirty kB, max threads)."""
    state = f"{directory}/state-{time.time_ns()}"
    config = f"{directory}/idle.conf"
    with open(config, "w") as f:
        f.write(f"[server]\nurl = {url}\nca-file = {directory}/ca.pem\n[auth]\ncertificate = {directory}/client.pem\n"
                f"key = {directory}/client.key\n[keepalive]\nlogout-on-exit = false\n")
    os.chmod(config, 0o600)
    environment = dict(os.environ, XDG_STATE_HOME=state, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent")
    log = open(f"{directory}/daemon.log", "a")
    daemon = subprocess.Popen([f"{binary}/ccrelay", "daemon", "--config", config], env=environment, stderr=log)
    threads = 0
    end = time.time() + seconds
    while time.time() < end:
        try:
            with open(f"/proc/{daemon.pid}/status") as f:
                threads = max(threads, next(int(l.split()[1]) for l in f if l.startswith("Threads:")))
        except (OSError, StopIteration):
            pass
        time.sleep(0.5)
    schedstat = proc_sum(daemon.pid, "schedstat", 0)
    memory = smaps(daemon.pid)
    daemon.send_signal(signal.SIGTERM)
    _, _, usage = os.wait4(daemon.pid, 0)
    daemon.returncode = 0
    return usage, schedstat, memory, threads


def measure_daemon(binary, interval, url, control):
    short = 4 * interval + 4
    long = short + extra * interval
    results = []
    for seconds in (short, long):
        usage, schedstat, memory, threads = run_daemon(binary, url, seconds)
        session = newest_session(control)
        results.append((accepted(control, session), usage.ru_nvcsw + usage.ru_nivcsw, usage.ru_utime + usage.ru_stime,
                        schedstat, memory, threads))
    (k0, s0, c0, n0, _, t0), (k1, s1, c1, n1, memory, t1) = results
    keepalives = max(k1 - k0, 1)
    return {
        "keepalives": k1 - k0, "switches": (s1 - s0) / keepalives, "cpu_ms": 1000 * (c1 - c0) / keepalives,
        "sched_ms": (n1 - n0) / 1e6 / keepalives, "rss": memory.get("Rss", 0) / 1024,
        "dirty": memory.get("Private_Dirty", 0) / 1024, "threads": max(t0, t1),
    }


def measure_curl(interval, url, count):
    token = None
    login = subprocess.run(["curl", "-s", "--noproxy", "*", "--cacert", f"{directory}/ca.pem", "--cert", f"{directory}/client.pem",
                            "--key", f"{directory}/client.key", "-H", "Content-Type: application/json", "-d",
                            '{"client":{"name":"bench","version":"1","platform":"linux"},"device":"bench"}',
                            url + "cc/v1/session"], capture_output=True, text=True)
    token = json.loads(login.stdout)["session"]
    script = f'''for seq in $(seq {count}); do
  curl -s --noproxy '*' --cacert {directory}/ca.pem --cert {directory}/client.pem --key {directory}/client.key \\
    -H "Authorization: CC-Session {token}" -H "Content-Type: application/json" \\
    -d "{{\\"seq\\":$seq}}" {url}cc/v1/session/keepalive -o /dev/null
  sleep {interval}
done'''
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["bash", "-c", script], check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    switches = (after.ru_nvcsw + after.ru_nivcsw) - (before.ru_nvcsw + before.ru_nivcsw)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"keepalives": count, "switches": switches / count, "cpu_ms": 1000 * cpu / count}


for interval in (2, 10):
    sim, url, control = start_sim(interval)
    try:
        print(f"interval {interval} s: per keep-alive, steady state ({extra} keep-alives between a short and a long run)")
        for label, binary in binaries:
            r = measure_daemon(binary, interval, url, control)
            print(f"  ccrelay {label:18s} {r['switches']:5.1f} context switches  CPU {r['cpu_ms']:.2f} ms (rusage), "
                  f"{r['sched_ms']:.2f} ms (schedstat)  threads {r['threads']}  RSS {r['rss']:.1f} MiB  "
                  f"private dirty {r['dirty']:.1f} MiB  [{r['keepalives']} keep-alives]")
        c = measure_curl(interval, url, min(extra, 10))
        print(f"  curl + sleep {'':14s} {c['switches']:5.1f} context switches  CPU {c['cpu_ms']:.2f} ms (rusage)  "
              f"[{c['keepalives']} keep-alives]")
    finally:
        sim.terminate()
        sim.wait()
