#!/usr/bin/env bash
# Runs a command, and every process it starts, held to a fraction of one core by the cgroup v1
# cpu controller: a slow CI host on a fast machine. The busy processes of tools/busy.sh make a
# machine crowded (and its load average high, which the tests' deadlines follow); a quota makes
# it slow without raising the load average, which is how a CI host with little CPU behaves.
#
#   tools/quota.sh [-c FRACTION] COMMAND [ARGS...]      default FRACTION: 0.35
#
# e.g. `NATS_KEY=oldest tools/quota.sh -c 0.35 tools/soak.sh 6 crash` (deploy/STREAMS.md,
# "Delivery modes and server versions": how 2.10.26's push consumers were caught losing a
# delivery). Needs a writable /sys/fs/cgroup/cpu (root); the exit status is COMMAND's.
set -euo pipefail
fraction=0.35
if [ "${1:-}" = -c ]; then fraction=${2:?"-c takes a fraction of a core"}; shift 2; fi
[ "$#" -gt 0 ] || { echo "usage: tools/quota.sh [-c FRACTION] COMMAND [ARGS...]" >&2; exit 2; }
root=/sys/fs/cgroup/cpu
[ -w "$root" ] || { echo "quota: $root is not writable (cgroup v1 cpu controller, as root)" >&2; exit 2; }
group="$root/arbiter-quota-$$"
mkdir "$group"
period=$(cat "$root/cpu.cfs_period_us" 2>/dev/null || echo 100000)
awk -v f="$fraction" -v p="$period" 'BEGIN { q = int(f * p); if (q < 1000) q = 1000; print q }' > "$group/cpu.cfs_quota_us"
cleanup() {
  # The group is removed once empty; a process left behind keeps it (and says so).
  rmdir "$group" 2>/dev/null || echo "quota: $group still holds processes" >&2
}
trap cleanup EXIT
echo "quota: $fraction of a core ($(cat "$group/cpu.cfs_quota_us") us every $period us) for: $*" >&2
# The command in the group, in a subshell, so that this script can remove the group after.
( echo "$BASHPID" > "$group/cgroup.procs"; exec "$@" )
