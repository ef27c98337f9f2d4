#!/bin/bash
# Placeholder main job until the data path lands: shows the module loaded and
# its family answering rvsadm.
set -e
echo "rvs.ko loaded: $(grep '^rvs ' /proc/modules)"
rvsadm -L -n
