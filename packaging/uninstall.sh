# Sourced by install.sh --uninstall (it sets prefix, root, under, system,
# purge, manifest and reload_bus): removes exactly what install.sh listed in
# its manifest — the files, then the folders it made when they are empty;
# the configuration (/etc/ccrelay) and the journal (/var/lib/ccrelay) stay
# unless --purge, which also removes the user and group it made.
if [ ! -f "$under$manifest" ]; then
    echo "install.sh: no ccrelay installed by install.sh in $under$prefix (no $manifest); nothing removed" >&2
    if [ -f "$under$prefix/bin/ccrelay" ]; then echo "(a make install? then: make uninstall PREFIX=$prefix)" >&2; fi
    exit 1
fi
listed=$(cat "$under$manifest")
# The system service stops first: its units are about to go.
if [ -n "$system" ] && [ -z "$root" ] && [ -d /run/systemd/system ]; then
    mapfile -t units < <(systemctl list-units --all --plain --no-legend 'ccrelay.service' 'ccrelay@*.service' | awk '{ print $1 }')
    systemctl disable --now ccrelay.service "${units[@]}" >/dev/null 2>&1 || true
fi
rm -f "$under$manifest"
sed -n 's/^file //p' <<<"$listed" | while read -r file; do rm -f "$under$file"; done
sed -n 's/^dir //p' <<<"$listed" | sort -r | while read -r dir; do rmdir "$under$dir" 2>/dev/null || true; done
if [ -n "$purge" ]; then
    rm -rf "$under/etc/ccrelay" "$under/var/lib/ccrelay"
    if [ -n "$system" ]; then
        if grep -qx 'user ccrelay' <<<"$listed" && grep -q '^ccrelay:' "$root/etc/passwd"; then
            userdel ${root:+--prefix "$root"} ccrelay
        fi
        if grep -qx 'group ccrelay' <<<"$listed" && grep -q '^ccrelay:' "$root/etc/group"; then
            groupdel ${root:+--prefix "$root"} ccrelay
        fi
    fi
    echo "removed ccrelay from $under$prefix, its configuration (/etc/ccrelay) and journal (/var/lib/ccrelay)"
else
    echo "removed ccrelay from $under$prefix; kept /etc/ccrelay and /var/lib/ccrelay (configuration, journal; --purge removes them)"
fi
if [ -n "$system" ]; then
    reload_bus
    if [ -z "$root" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload 2>/dev/null || true; fi
fi
