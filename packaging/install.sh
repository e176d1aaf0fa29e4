#!/bin/bash
# Installs ccrelay from this folder (the tarball of `make dist`), for a machine
# that is not online yet, or removes what it installed. Needs bash, coreutils,
# sed, grep and find (all on every Debian and Ubuntu system).
#   ./install.sh [--prefix PREFIX] [--destdir DIR | --root DIR]
#   ./install.sh --uninstall [--purge] [--prefix PREFIX] [--destdir DIR | --root DIR]
#     --prefix     where it goes (default /usr/local): PREFIX/bin/ccrelay,
#                  PREFIX/libexec/ccrelay/, PREFIX/share/, PREFIX/lib/systemd/
#     --destdir    install under DIR (a staging root); no user is made then
#     --root       install into the system whose root is DIR (a chroot, a
#                  disk mounted there): its user ccrelay is made in DIR
#     --uninstall  remove exactly what install.sh installed (its list is
#                  PREFIX/share/ccrelay/manifest); /etc/ccrelay and
#                  /var/lib/ccrelay (configuration, journal) stay
#     --purge      with --uninstall: remove those two too, and the user and
#                  group ccrelay when install.sh made them
# It first checks that the libraries the programs link are there (else it
# names the Debian packages to bring); as root it then makes the system user
# and group ccrelay, installs the files, the D-Bus policy last, and has a
# running system bus read that policy (for the system service: systemctl
# enable --now ccrelay). The .deb and this install do not mix: it refuses while the
# package ccrelay is installed, and the package refuses while this install is.
set -euo pipefail
prefix=/usr/local
destdir=
root=
mode=install
purge=
while [ $# -gt 0 ]; do
    case $1 in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    --destdir) destdir=${2:?--destdir needs a folder}; shift 2 ;;
    --root) root=${2:?--root needs a folder}; shift 2 ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $prefix in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 2 ;; esac
if [ -n "$destdir" ] && [ -n "$root" ]; then echo "install.sh: --destdir and --root exclude each other" >&2; exit 2; fi
if [ -n "$purge" ] && [ "$mode" != uninstall ]; then echo "install.sh: --purge goes with --uninstall" >&2; exit 2; fi
root=${root%/}
# Where the files go: under the staging folder or the other system's root.
under=${destdir:-$root}
# The system's own steps (its user, its bus, systemd): as root, not into a staging folder.
system=
if [ -z "$destdir" ] && [ "$(id -u)" = 0 ]; then system=1; fi
here=$(cd "$(dirname "$0")" && pwd)
from=$here/root/usr/local
manifest=$prefix/share/ccrelay/manifest
PATH=$PATH:/usr/sbin:/sbin

# What the package manager says of the package ccrelay on that system (empty: not there).
package_status() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    dpkg-query ${root:+--root="$root"} -W -f '${db:Status-Status}' ccrelay 2>/dev/null || true
}

# The system bus reads a new policy when told to; quiet when none runs (a chroot, a disk).
reload_bus() {
    local socket=$root/run/dbus/system_bus_socket
    [ -S "$socket" ] || return 0
    if command -v dbus-send >/dev/null 2>&1; then
        DBUS_SYSTEM_BUS_ADDRESS=unix:path=$socket dbus-send --system --print-reply --dest=org.freedesktop.DBus \
            / org.freedesktop.DBus.ReloadConfig >/dev/null && { echo "the system bus read the new policy"; return 0; }
    elif [ -z "$root" ] && [ -d /run/systemd/system ] && systemctl reload dbus 2>/dev/null; then
        echo "the system bus read the new policy"; return 0
    fi
    echo "install.sh: the system bus did not reload; run: systemctl reload dbus" >&2
}

if [ "$mode" = uninstall ]; then
    # shellcheck source=packaging/uninstall.sh
    . "$here/uninstall.sh"
    exit 0
fi

[ -d "$from" ] || { echo "install.sh: run the install.sh of the unpacked tarball (this copy only uninstalls: --uninstall)" >&2; exit 2; }

# 1. The libraries the programs link (listed by make dist from the programs
#    themselves: soname, ldconfig's kind, Debian package), before anything is written.
missing=() packages=()
cache=$(ldconfig ${root:+-r "$root"} -p 2>/dev/null) ||
    { echo "install.sh: cannot list this system's libraries (ldconfig -p failed)" >&2; exit 1; }
while IFS=$'\t' read -r soname kind package; do
    found=$(awk -v name="$soname" -v kind="($kind" '$1 == name && index($2, kind) == 1 { print "yes"; exit }' <<<"$cache")
    if [ -z "$found" ]; then
        missing+=("$soname")
        case " ${packages[*]} " in *" $package "*) ;; *) packages+=("$package") ;; esac
    fi
done <"$here/needs"
if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh: ccrelay cannot run on this system: it lacks ${missing[*]}." >&2
    echo "Install these packages first (copied over as .debs, or once online), then run install.sh again:" >&2
    echo "    apt install ${packages[*]}" >&2
    exit 1
fi

# 2. The .deb and this install must not fight: the files in PREFIX would
#    shadow the package's (/usr/local/bin comes first in PATH, and systemd
#    prefers /usr/local/lib/systemd), and its /etc files would be conffiles
#    dpkg asks about. Whichever comes second refuses, naming the command.
status=$(package_status)
if [ -n "$status" ] && [ "$status" != not-installed ] && [ "$status" != config-files ]; then
    echo "install.sh: the package ccrelay is installed (dpkg: $status); this install would shadow it." >&2
    echo "Keep the package (apt upgrades it), or remove it first: apt remove ccrelay" >&2
    exit 1
fi

# The list of what this run installs; an earlier install's files go first (an upgrade).
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ -f "$under$manifest" ]; then
    grep -E '^(user|group|dir) ' "$under$manifest" >>"$list" || true
    sed -n 's/^file //p' "$under$manifest" | while read -r file; do rm -f "$under$file"; done
fi

# make_dir DIR: makes DIR under the root, listing each folder it makes.
make_dir() {
    local dir=$1
    while [ "$dir" != / ] && [ ! -d "$under$dir" ]; do
        echo "dir $dir" >>"$list"
        dir=$(dirname "$dir")
    done
    mkdir -p "$under$1"
}
# place SOURCE TARGET MODE: copies (with /usr/local/bin made the prefix's in text files that name it).
place() {
    make_dir "$(dirname "$2")"
    case $2 in
    */lib/systemd/*|*/dbus-1/services/*|/etc/xdg/*) sed "s|/usr/local/bin|$prefix/bin|g" "$1" >"$under$2" ;;
    *) cp "$1" "$under$2" ;;
    esac
    chmod "$3" "$under$2"
    echo "file $2" >>"$list"
}

# 3. The system user and group, before the bus can read a policy that names them.
if [ -n "$system" ]; then
    if ! grep -q '^ccrelay:' "$root/etc/passwd" 2>/dev/null; then
        grep -q '^ccrelay:' "$root/etc/group" 2>/dev/null || echo "group ccrelay" >>"$list"
        if command -v systemd-sysusers >/dev/null 2>&1; then
            systemd-sysusers ${root:+--root="$root"} - <"$from/lib/sysusers.d/ccrelay.conf"
        else
            useradd ${root:+--prefix "$root"} --system --user-group --home-dir /var/lib/ccrelay --no-create-home \
                --shell /usr/sbin/nologin --comment "CC Relay system service" ccrelay
        fi
        echo "user ccrelay" >>"$list"
        echo "made the system user and group ccrelay"
    fi
fi

# 4. Every file, the bus policy last. The system bus reads policies only
#    under /usr/share and /etc: another prefix's goes to /etc.
policy=
while read -r file; do
    relative=${file#./}
    case $relative in
    share/dbus-1/system.d/*)
        policy=$relative
        continue ;;
    esac
    place "$from/$relative" "$prefix/$relative" "$([ -x "$from/$relative" ] && echo 755 || echo 644)"
done < <(cd "$from" && find . -type f | sort)
# The desktop's autostart entry (XDG looks only in /etc/xdg).
while read -r file; do place "$here/root/$file" "/$file" 644; done < <(cd "$here/root" && find etc -type f | sort)
place "$here/install.sh" "$prefix/share/ccrelay/install.sh" 755
place "$here/uninstall.sh" "$prefix/share/ccrelay/uninstall.sh" 644
place "$here/needs" "$prefix/share/ccrelay/needs" 644
if [ "$prefix" = /usr ]; then policy_target=/usr/$policy; else policy_target=/etc/dbus-1/system.d/${policy##*/}; fi
place "$from/$policy" "$policy_target" 644

# 5. The manifest: what --uninstall removes.
make_dir "$(dirname "$manifest")"
{
    echo "# ccrelay $(cat "$here/version") installed by install.sh --prefix $prefix: what install.sh --uninstall removes"
    sort -u "$list"
} >"$under$manifest"
echo "installed ccrelay into $under$prefix (uninstall: $prefix/share/ccrelay/install.sh --uninstall)"
case $prefix in
/usr|/usr/local) ;;
*) echo "systemd finds units in /usr/local/lib/systemd and /etc/systemd only: systemctl link $prefix/lib/systemd/system/ccrelay.service" ;;
esac

# 6. The running system reads what changed.
if [ -n "$system" ]; then
    reload_bus
    if [ -z "$root" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload 2>/dev/null || true; fi
    echo "the system service: write /etc/ccrelay/ccrelay.conf, then: systemctl enable --now ccrelay"
fi
