#!/usr/bin/env bash
# scripts/netns.sh - an emulated network for data-parallel experiments on
# one machine (docs/distributed.md): N network namespaces grove-r0..r<N-1>,
# each with a veth link to the bridge grovebr0 (10.77.0.254/24, in the
# initial namespace, where mpirun's PMIx server must be reachable), the
# ranks at 10.77.0.1..N, every rank's link shaped by tc (tbf, both
# directions) to RATE. Only addresses it creates; `down` removes
# everything it made.
#
#   sudo scripts/netns.sh up N RATE [BURST]   # e.g. up 4 1gbit 125kb
#   sudo scripts/netns.sh down
#   scripts/netns.sh exec CMD...        # under mpirun: CMD in grove-r<rank>
#
# Ranks run with  mpirun --mca btl self,tcp --mca btl_tcp_if_include
# 10.77.0.0/24 ... scripts/netns.sh exec app  so that they talk over the
# shaped links (not shared memory).
set -euo pipefail
PREFIX=grove
BRIDGE=grovebr0

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$PREFIX-r[0-9]+$" || true); do
    ip netns delete "$ns"
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link delete "$BRIDGE"
  fi
  # A namespace outlives its name while anything still holds it (a killed
  # rank's sockets), and with it the veth pair: delete our host ends
  # (gv<i>b, which takes the peer along). The kernel frees the rest
  # asynchronously; wait (at most 5 s) so that `up` can reuse the names.
  local link
  for link in $(ip -o link show | grep -oE ": gv[0-9]+b[@:]" | tr -d ':@ '); do
    ip link delete "$link" 2>/dev/null || true
  done
  for ((tries = 0; tries < 50; tries++)); do
    ip -o link show | grep -qE ": gv[0-9]+b[@:]" || return 0
    sleep 0.1
  done
  echo "netns.sh: veth links still present after 5 s" >&2
  return 1
}

up() {
  # tbf's bucket: about a millisecond of the rate (the kernel refills it
  # per timer tick; much less cannot reach the rate, much more lets
  # small messages through at line speed).
  local n=$1 rate=$2 burst=${3:-}
  burst=${burst:-128kb}
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le 16 ]] || {
    echo "netns.sh: 1 to 16 ranks, got '$n'" >&2
    exit 2
  }
  down
  ip link add "$BRIDGE" type bridge
  ip addr add 10.77.0.254/24 dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((i = 0; i < n; i++)); do
    local ns=$PREFIX-r$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add "gv${i}b" type veth peer name "gv${i}a" netns "$ns"
    ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev "gv${i}a"
    ip -n "$ns" link set "gv${i}a" up
    ip link set "gv${i}b" master "$BRIDGE"
    ip link set "gv${i}b" up
    # Egress of both ends: the rank's sends and what the bridge sends to it.
    tc -n "$ns" qdisc add dev "gv${i}a" root tbf rate "$rate" \
      burst "$burst" latency 50ms
    tc qdisc add dev "gv${i}b" root tbf rate "$rate" burst "$burst" \
      latency 50ms
  done
  echo "netns.sh: $n ranks at $rate: namespaces $PREFIX-r0..r$((n - 1)), 10.77.0.1-$n"
}

case "${1:-}" in
up) up "${2:?ranks}" "${3:?rate, e.g. 1gbit}" "${4:-}" ;;
down) down ;;
exec)
  shift
  rank=${OMPI_COMM_WORLD_RANK:?netns.sh exec runs under mpirun}
  exec ip netns exec "$PREFIX-r$rank" "$@"
  ;;
*)
  sed -n '2,17p' "$0" >&2
  exit 2
  ;;
esac
