#!/bin/sh
# Installs ccrelay from this folder (the tarball of `make dist`), for a machine
# that is not online yet. Needs nothing but coreutils, sed and find.
#   ./install.sh [--prefix PREFIX] [--destdir DIR]
#     --prefix   where it goes (default /usr/local): PREFIX/bin/ccrelay,
#                PREFIX/libexec/ccrelay/, PREFIX/share/, PREFIX/lib/systemd/
#     --destdir  install under DIR (a staging root); no user is made then
# As root without --destdir it also makes the system user and group ccrelay
# (for the system service: systemctl enable --now ccrelay).
set -eu
prefix=/usr/local
destdir=
while [ $# -gt 0 ]; do
    case $1 in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --destdir) destdir=${2:?--destdir needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $prefix in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
from=$here/root/usr/local
# Every file, with /usr/local/bin in the units and D-Bus files made the prefix's.
(cd "$from" && find . -type f) | while read -r file; do
    relative=${file#./}
    target=$destdir$prefix/$relative
    case $relative in
    # The system bus reads policies only under /usr/share and /etc: another prefix's goes to /etc.
    share/dbus-1/system.d/*) [ "$prefix" = /usr ] || target=$destdir/etc/dbus-1/system.d/${relative##*/} ;;
    esac
    mkdir -p "$(dirname "$target")"
    case $relative in
    lib/systemd/*|share/dbus-1/services/*) sed "s|/usr/local/bin|$prefix/bin|g" "$from/$file" > "$target" && chmod 644 "$target" ;;
    *) cp "$from/$file" "$target" && chmod "$( [ -x "$from/$file" ] && echo 755 || echo 644)" "$target" ;;
    esac
done
# The desktop's autostart entry (XDG looks only in /etc/xdg).
(cd "$here/root" && find etc -type f) | while read -r file; do
    mkdir -p "$(dirname "$destdir/$file")"
    sed "s|/usr/local/bin|$prefix/bin|g" "$here/root/$file" > "$destdir/$file"
    chmod 644 "$destdir/$file"
done
echo "installed ccrelay into $destdir$prefix"
case $prefix in
/usr|/usr/local) ;;
*) echo "systemd finds units in /usr/local/lib/systemd and /etc/systemd only: systemctl link $prefix/lib/systemd/system/ccrelay.service" ;;
esac
if [ -z "$destdir" ] && [ "$(id -u)" = 0 ]; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
        systemd-sysusers "$prefix/lib/sysusers.d/ccrelay.conf"
    elif ! grep -q '^ccrelay:' /etc/passwd; then
        useradd --system --user-group --home-dir /var/lib/ccrelay --no-create-home --shell /usr/sbin/nologin ccrelay
    fi
    command -v systemctl >/dev/null 2>&1 && systemctl daemon-reload 2>/dev/null || true
    echo "the system service: write /etc/ccrelay/ccrelay.conf, then: systemctl enable --now ccrelay"
fi
