#!/bin/bash
# Namespaces can be created and deleted while rvs is loaded, also in a
# burst, and the module still unloads cleanly afterwards.
. "$(dirname "$0")/../lib.sh"

for round in 1 2 3; do
  for i in $(seq 1 10); do ip netns add "$NS_PREFIX-d$i" || fail "netns add"; done
  for i in $(seq 1 10); do ip netns del "$NS_PREFIX-d$i" || fail "netns del"; done
done
# Namespace teardown is asynchronous (cleanup_net); let it run.
sleep 2
rmmod rvs || fail "rmmod after namespace churn"
insmod "$RVS_ROOT/rvs.ko" || fail "insmod after namespace churn"
pass "30 namespaces created and deleted"
