#!/bin/sh
# Restarts the NATS servers (deploy/k8s/nats-values.yaml, whose StatefulSet rolls only when told
# to: updateStrategy OnDelete) one at a time, each only once every stream and consumer replica is
# current, so that no server stops while another is still catching up (deploy/STREAMS.md,
# "Upgrading the servers"). Run it after `helm upgrade nats ...` has changed the StatefulSet; the
# arbiter chart's suspended CronJob shogi-arbiter-nats-replicas is the check
# (`shogi-arbiter streams replicas --wait`, as `admin`), made into a Job before each server.
#
#   NAMESPACE=shogi-arbiter sh deploy/k8s/upgrade-nats.sh
#
# Steps, highest ordinal first as a StatefulSet rolls:
#   1. the check; nothing is restarted unless every replica is current;
#   2. for each pod not yet at the StatefulSet's update revision: delete it, wait until it is
#      Ready again, run the check; when the check runs out (a server that stays behind, seen on
#      nats-server 2.10.26), delete that pod once more and check again; a second failure stops
#      the upgrade there (docs/runbooks/server-not-catching-up.md).
# tests/tests/cluster.rs (`rolling_upgrade`) runs the same steps on three nats-servers.
set -eu

NAMESPACE=${NAMESPACE:-shogi-arbiter}
STATEFULSET=${STATEFULSET:-nats}
CHECK=${CHECK:-shogi-arbiter-nats-replicas}
READY_TIMEOUT=${READY_TIMEOUT:-600s}

k() { kubectl -n "$NAMESPACE" "$@"; }
die() { echo "upgrade-nats: $*" >&2; exit 1; }

# Runs the check as a Job and prints its lines; succeeds when it said every replica is current.
checks=0
check() {
    checks=$((checks + 1))
    job="$CHECK-$(date +%s)-$checks"
    k create job "$job" --from="cronjob/$CHECK" >/dev/null
    while :; do
        # succeeded/failed/the Failed condition (a check past its activeDeadlineSeconds)
        state=$(k get job "$job" -o jsonpath='{.status.succeeded}/{.status.failed}/{.status.conditions[?(@.type=="Failed")].status}')
        case "$state" in
            1/*) ok=0; break ;;
            */[1-9]*/* | */True) ok=1; break ;;
        esac
        sleep 5
    done
    k logs "job/$job" || true
    k delete job "$job" --wait=false >/dev/null
    return "$ok"
}

# Deletes a pod and waits until the StatefulSet's new one is Ready.
restart() {
    k delete pod "$1" --wait=true
    until k get pod "$1" >/dev/null 2>&1; do sleep 2; done
    k wait --for=condition=Ready "pod/$1" --timeout="$READY_TIMEOUT"
}

strategy=$(k get statefulset "$STATEFULSET" -o jsonpath='{.spec.updateStrategy.type}')
[ "$strategy" = OnDelete ] ||
    die "statefulset $STATEFULSET rolls by itself ($strategy): set updateStrategy OnDelete (deploy/k8s/nats-values.yaml)"
replicas=$(k get statefulset "$STATEFULSET" -o jsonpath='{.spec.replicas}')
revision=$(k get statefulset "$STATEFULSET" -o jsonpath='{.status.updateRevision}')

check || die "not every replica is current before the upgrade: nothing restarted"
i=$((replicas - 1))
while [ "$i" -ge 0 ]; do
    pod="$STATEFULSET-$i"
    i=$((i - 1))
    if [ "$(k get pod "$pod" -o jsonpath='{.metadata.labels.controller-revision-hash}')" = "$revision" ]; then
        echo "$pod: already at $revision"
        continue
    fi
    echo "$pod: restarting"
    restart "$pod"
    if ! check; then
        echo "$pod: still behind after the wait: restarted once more"
        restart "$pod"
        check || die "$pod still behind: stopped here (docs/runbooks/server-not-catching-up.md)"
    fi
done
echo "every server at $revision, every replica current"
