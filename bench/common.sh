# Shared by the bench/ scripts (source it): release builds made as the
# .deb's are (packaging/release-build, in .build/bench), a throwaway CA
# with server and client certificates, ccsim over TLS on loopback, a private
# session bus, and a ccrelay.conf for them. Sets: bin, dir, url, control,
# DBUS_SESSION_BUS_ADDRESS (exported), pids (killed on exit).
#   bench_setup INTERVAL TIMEOUT
#   start_daemon [BIN]  -> $daemon (pid); its log is $dir/daemon.log
#   build_before REV    -> $before_bin (REV built the same way, for side-by-side runs)

bench_setup() {
    local interval=$1 timeout=$2
    [ -d /opt/swift/usr/bin ] && export PATH=/opt/swift/usr/bin:$PATH
    local build=(packaging/release-build .build/bench)
    "${build[@]}" --product ccsim >/dev/null
    "${build[@]}" --product ccrelay >/dev/null
    "${build[@]}" --product ccrelay-daemon >/dev/null
    bin=$("${build[@]}" --show-bin-path)
    dir=$(mktemp -d /tmp/ccrelay-bench.XXXXXX)
    pids=()
    trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT

    source scripts/pki.sh
    make_pki "$dir"

    "$bin/ccsim" --tls-cert "$dir/server.pem" --tls-key "$dir/server.key" --client-ca "$dir/ca.pem" \
        --interval "$interval" --timeout "$timeout" > "$dir/sim.out" &
    pids+=($!)
    dbus-daemon --session --nofork --print-address=1 --address=unix:tmpdir=/tmp > "$dir/bus" 2>/dev/null &
    pids+=($!)
    for _ in $(seq 100); do grep -q '^control=' "$dir/sim.out" 2>/dev/null && [ -s "$dir/bus" ] && break; sleep 0.05; done
    url=$(sed -n 's/^url=//p' "$dir/sim.out")
    control=$(sed -n 's/^control=//p' "$dir/sim.out")
    DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$dir/bus")
    export DBUS_SESSION_BUS_ADDRESS
    cat > "$dir/ccrelay.conf" <<CONF
[server]
url = $url
ca-file = $dir/ca.pem
[auth]
certificate = $dir/client.pem
key = $dir/client.key
# The outside check runs at login and every 20 minutes, never per keep-alive: not what is measured here.
[probe]
mode = off
CONF
    chmod 600 "$dir/ccrelay.conf"
}

# start_daemon [BIN]: the daemon of BIN (default: $bin) with a fresh state directory.
start_daemon() {
    local from=${1:-$bin}
    rm -rf "$dir/state"
    XDG_STATE_HOME=$dir/state DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent \
        "$from/ccrelay" daemon --config "$dir/ccrelay.conf" 2>"$dir/daemon.log" &
    daemon=$!
    pids+=($daemon)
}

# build_before REV: the same release build of commit REV, in a git worktree
# under .build/bench-before (kept for later runs); sets before_bin.
build_before() {
    local tree=.build/bench-before/$1
    [ -d "$tree" ] || git worktree add --detach "$tree" "$1" >/dev/null 2>&1
    # REV's own release build: packaging/release-build where REV has it.
    local build=(swift build -c release --static-swift-stdlib)
    [ -x "$tree/packaging/release-build" ] && build=(packaging/release-build .build)
    (cd "$tree" && for product in ccrelay ccrelay-daemon; do
        "${build[@]}" --product "$product" >/dev/null || exit 1
    done)
    before_bin=$(cd "$tree" && "${build[@]}" --show-bin-path)
}
