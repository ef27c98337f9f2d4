/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C API rvs's Rust code is built against. bindgen turns this header into
 * rvs/bindings_generated.rs (see Kbuild); rvs/bindings.allow narrows it to the
 * items rvs uses. Static inline functions and macros are reached through
 * rvs/helpers.h instead.
 */
#ifndef RVS_BINDINGS_H
#define RVS_BINDINGS_H

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/genetlink.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/ip6_route.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/ip_tunnels.h>
#include <net/udp.h>
#include <net/ip6_checksum.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysctl.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kthread.h>
#include <net/sock.h>

#include "uapi/rvs.h"
#include "helpers.h"

#endif /* RVS_BINDINGS_H */
