"""The measuring half of bench/idle (see there). For each interval: a ccsim
of its own; each daemon (fresh state, so a fresh login) warmed up, then
counted by `perf stat` for some intervals; the C floor (bench/floor.c) the
same way; then curl + sleep for as many keep-alives, counted by the rusage of
its reaped children. A binary is a build folder holding `ccrelay`, or the
floor program itself; a build folder followed by `#metrics` runs with
`[metrics] textfile` on (issue 36: the file is written when a snapshot is
published, at most once a minute for the session's expiry alone). Then a
Srun row: `ccsim --protocol srun`, each ccrelay checking `rad_user_info`
every 10 s (its shortest poll) on one kept connection, per check, next to
curl + sleep doing the same check."""
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


def sessions(control):
    with opener.open(control + "sessions", timeout=5) as answer:
        return [s["session"] for s in json.load(answer)]


def smaps(pid):
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                values[parts[0].rstrip(":")] = int(parts[1])
    return values


def start_daemon(binary, url, srun=False):
    state = f"{directory}/state-{time.time_ns()}"
    environment = dict(os.environ, XDG_STATE_HOME=state, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent")
    log = open(f"{directory}/daemon.log", "a")
    if os.path.isfile(binary):
        os.makedirs(state)
        return subprocess.Popen([binary, url, f"{directory}/ca.pem", f"{directory}/client.pem", f"{directory}/client.key", state],
                                env=environment, stderr=log)
    metrics = binary.endswith("#metrics")
    binary = binary.removesuffix("#metrics")
    config = f"{directory}/idle.conf"
    os.makedirs(f"{directory}/textfiles", exist_ok=True)
    textfile = f"[metrics]\ntextfile = {directory}/textfiles/ccrelay.prom\n" if metrics else ""
    if srun:
        with open(f"{directory}/srun-password", "w") as f:
            f.write("bench-pw\n")
        os.chmod(f"{directory}/srun-password", 0o600)
        with open(config, "w") as f:
            f.write(f"[server]\nprotocol = srun\nurl = {url}\n[auth]\nuser = 2024000001\npassword-file = {directory}/srun-password\n"
                    "[srun]\npoll = 10\n[keepalive]\nlogout-on-exit = false\n[probe]\nmode = off\n" + textfile)
        os.chmod(config, 0o600)
        return subprocess.Popen([f"{binary}/ccrelay", "daemon", "--config", config], env=environment, stderr=log)
    with open(config, "w") as f:
        f.write(f"[server]\nurl = {url}\nca-file = {directory}/ca.pem\n[auth]\ncertificate = {directory}/client.pem\n"
                f"key = {directory}/client.key\n[keepalive]\nlogout-on-exit = false\n"
                # The outside check runs at the login, a minute later when it failed (this machine has no
                # internet) and every 20 minutes: not per keep-alive, so not what is measured here.
                "[probe]\nmode = off\n" + textfile)
    os.chmod(config, 0o600)
    return subprocess.Popen([f"{binary}/ccrelay", "daemon", "--config", config], env=environment, stderr=log)


def threads_now(pid):
    try:
        return set(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return set()


def measure_daemon(binary, interval, url, control):
    """Warm-up (three accepted keep-alives), then `perf stat` on the daemon for
    `extra` intervals: its counters are inherited by every thread started in
    the window and folded back when one exits, so nothing that lived is missed."""
    earlier = set(sessions(control))
    daemon = start_daemon(binary, url)
    try:
        end = time.time() + 60 + 4 * interval
        session = None
        while time.time() < end:
            session = next((s for s in sessions(control) if s not in earlier), None)
            if session and accepted(control, session) >= 3:
                break
            time.sleep(0.2)
        k0 = accepted(control, session)
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "context-switches,task-clock", "-p", str(daemon.pid),
                                 "--", "sleep", str(extra * interval)], stderr=subprocess.PIPE, text=True)
        seen = threads_now(daemon.pid)
        while perf.poll() is None:
            seen |= threads_now(daemon.pid)
            time.sleep(0.1)
        counters = {line.split(",")[2]: float(line.split(",")[0]) for line in perf.stderr.read().splitlines()
                    if line.count(",") >= 3 and line.split(",")[0].replace(".", "").isdigit()}
        k1 = accepted(control, session)
        memory = smaps(daemon.pid)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait()
    keepalives = max(k1 - k0, 1)
    return {
        "keepalives": k1 - k0, "switches": counters.get("context-switches", 0) / keepalives,
        "cpu_ms": counters.get("task-clock", 0) / keepalives, "rss": memory.get("Rss", 0) / 1024,
        "dirty": memory.get("Private_Dirty", 0) / 1024, "threads": len(seen),
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
        print(f"interval {interval} s: per keep-alive, steady state, every thread that lived ({extra} intervals measured)")
        for label, binary in binaries:
            r = measure_daemon(binary, interval, url, control)
            print(f"  {label:26s} {r['switches']:5.1f} context switches  CPU {r['cpu_ms']:.2f} ms  "
                  f"threads {r['threads']}  RSS {r['rss']:.1f} MiB  private dirty {r['dirty']:.1f} MiB  [{r['keepalives']} keep-alives]")
        c = measure_curl(interval, url, min(extra, 10))
        print(f"  curl + sleep {'':14s} {c['switches']:5.1f} context switches  CPU {c['cpu_ms']:.2f} ms  "
              f"[{c['keepalives']} keep-alives]")
    finally:
        sim.terminate()
        sim.wait()


def checks(control):
    """rad_user_info requests the Srun portal has had (its request log keeps the newest 1000)."""
    with opener.open(control + "requests", timeout=5) as answer:
        return sum(1 for r in json.load(answer) if r.get("path", "").endswith("rad_user_info"))


def measure_srun(binary, control, url, polls):
    daemon = start_daemon(binary, url, srun=True)
    try:
        end = time.time() + 120
        while time.time() < end and checks(control) < 3:
            time.sleep(0.2)
        c0 = checks(control)
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "context-switches,task-clock", "-p", str(daemon.pid),
                                 "--", "sleep", str(polls * 10)], stderr=subprocess.PIPE, text=True)
        seen = threads_now(daemon.pid)
        while perf.poll() is None:
            seen |= threads_now(daemon.pid)
            time.sleep(0.1)
        counters = {line.split(",")[2]: float(line.split(",")[0]) for line in perf.stderr.read().splitlines()
                    if line.count(",") >= 3 and line.split(",")[0].replace(".", "").isdigit()}
        c1 = checks(control)
        memory = smaps(daemon.pid)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait()
    done = max(c1 - c0, 1)
    return {"checks": c1 - c0, "switches": counters.get("context-switches", 0) / done, "cpu_ms": counters.get("task-clock", 0) / done,
            "rss": memory.get("Rss", 0) / 1024, "dirty": memory.get("Private_Dirty", 0) / 1024, "threads": len(seen)}


def measure_srun_curl(url, count):
    script = f'''for i in $(seq {count}); do
  curl -s --noproxy '*' "{url}cgi-bin/rad_user_info?callback=c&_=$i" -o /dev/null
  sleep 10
done'''
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["bash", "-c", script], check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    switches = (after.ru_nvcsw + after.ru_nivcsw) - (before.ru_nvcsw + before.ru_nivcsw)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"checks": count, "switches": switches / count, "cpu_ms": 1000 * cpu / count}


srun_out = open(f"{directory}/sim-srun.out", "w+")
srun_sim = subprocess.Popen([ccsim, "--protocol", "srun", "--user", "2024000001:bench-pw"], stdout=srun_out)
try:
    for _ in range(200):
        srun_out.seek(0)
        found = dict(line.strip().split("=", 1) for line in srun_out if "=" in line)
        if "control" in found:
            break
        time.sleep(0.05)
    srun_url, srun_control = found["url"], found["control"]
    polls = min(extra, 6)
    print(f"Srun portal, a check every 10 s: per check, steady state, every thread that lived ({polls} checks measured)")
    for label, binary in binaries:
        if os.path.isfile(binary) or not label.startswith("ccrelay now"):
            continue  # the floor speaks CC/1 only, and a build from before Srun none
        r = measure_srun(binary, srun_control, srun_url, polls)
        print(f"  {label:26s} {r['switches']:5.1f} context switches  CPU {r['cpu_ms']:.2f} ms  "
              f"threads {r['threads']}  RSS {r['rss']:.1f} MiB  private dirty {r['dirty']:.1f} MiB  [{r['checks']} checks]")
    c = measure_srun_curl(srun_url, min(polls, 6))
    print(f"  curl + sleep {'':14s} {c['switches']:5.1f} context switches  CPU {c['cpu_ms']:.2f} ms  [{c['checks']} checks]")
finally:
    srun_sim.terminate()
    srun_sim.wait()
