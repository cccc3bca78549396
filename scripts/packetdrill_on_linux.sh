#!/bin/bash
# Runs packetdrill scripts against this machine's own kernel with upstream packetdrill, each
# from Linux's default TCP sysctls (CUBIC, SACK, timestamps, ECN 2, RACK, TLP, F-RTO 2,
# slow start after idle, tcp_rmem[2] 6 MiB so a SYN-ACK's window scale is 7), restoring the
# host's congestion control and tcp_rmem at the end (docs/packetdrill.md, "Our own scripts
# against Linux"). Needs root, /dev/net/tun and a packetdrill binary built from
# google/packetdrill (gtests/net/packetdrill: ./configure && make; it needs bison and flex).
#
#   sudo PACKETDRILL=/path/to/packetdrill scripts/packetdrill_on_linux.sh tests/packetdrill/*.pkt
#
# Prints PASS or FAIL (with packetdrill's last lines) per script; VERBOSE=1 prints its output.
set -u
PD=${PACKETDRILL:?set PACKETDRILL to the packetdrill binary}
ipv4=/proc/sys/net/ipv4
defaults() {
    sysctl -q net.ipv4.tcp_sack=1 net.ipv4.tcp_timestamps=1 net.ipv4.tcp_ecn=2 \
        net.ipv4.tcp_recovery=1 net.ipv4.tcp_early_retrans=3 net.ipv4.tcp_frto=2 \
        net.ipv4.tcp_dsack=1 net.ipv4.tcp_slow_start_after_idle=1 \
        net.ipv4.tcp_congestion_control=cubic
    sysctl -q net.ipv4.tcp_rmem="4096 131072 6291456"
}
saved_cc=$(cat $ipv4/tcp_congestion_control)
saved_rmem=$(cat $ipv4/tcp_rmem)
trap 'defaults; sysctl -q net.ipv4.tcp_congestion_control="$saved_cc"; sysctl -q net.ipv4.tcp_rmem="$saved_rmem"' EXIT
for f in "$@"; do
    defaults
    out=$(cd "$(dirname "$f")" && timeout 60 "$PD" "$(basename "$f")" 2>&1)
    rc=$?
    [ -n "${VERBOSE:-}" ] && echo "$out"
    if [ $rc -eq 0 ]; then
        echo "PASS $f"
    else
        echo "FAIL $f :: $(echo "$out" | grep -v '^\s*$' | tail -3 | tr '\n' ' ' | cut -c1-400)"
    fi
done
