// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C helpers for rvs: static inline functions and macros of the kernel's
 * C API made callable from Rust. Keep each one a single call; rvs's logic is
 * in Rust.
 */
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/dst_cache.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/genetlink.h>
#include <linux/workqueue.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/icmp.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/addrconf.h>
#include <linux/icmpv6.h>
#include <net/icmp.h>
#include <net/route.h>
#include <net/xfrm.h>
#include <net/dst.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/ipv6/nf_defrag_ipv6.h>
#include <net/udp.h>
#include <net/gre.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file_net.h>

#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <net/sock.h>
#include "helpers.h"

/*
 * Module parameter, as IPVS's: log2 of the most buckets each network
 * namespace's connection table may grow to (it starts at 256 and resizes
 * with its entries). A macro, so it lives here; the module's
 * init checks the range (rvs_core::config::validate_conn_tab_bits).
 */
#ifndef RVS_COMPANION	/* rvs_rs.ko (rvs/rs_helpers.c) has no parameters */
static unsigned int conn_tab_bits = RVS_CONN_TAB_BITS_DEFAULT;
module_param(conn_tab_bits, uint, 0444);
MODULE_PARM_DESC(conn_tab_bits,
		 "log2 of the most buckets each network namespace's connection table grows to, 8 to 24 (default 20: 1048576 buckets, 8 MiB at most)");
#else
static const unsigned int conn_tab_bits = RVS_CONN_TAB_BITS_DEFAULT;
#endif

unsigned int rvs_conn_tab_bits(void)
{
	return conn_tab_bits;
}

/*
 * Module parameter: also answer as the generic netlink family "IPVS", so
 * that IPVS's own clients (ipvsadm, keepalived, ...) drive rvs unchanged
 * (Documentation/ipvs-compat.md). ip_vs cannot be loaded beside it then.
 */
#ifndef RVS_COMPANION
static bool ipvs_compat;
module_param(ipvs_compat, bool, 0444);
MODULE_PARM_DESC(ipvs_compat,
		 "also register the generic netlink family \"IPVS\" for IPVS's clients (default 0; ip_vs cannot load beside it)");
#else
static const bool ipvs_compat;
#endif

bool rvs_ipvs_compat(void)
{
	return ipvs_compat;
}

void *rvs_net_generic(const struct net *net, unsigned int id)
{
	return net_generic(net, id);
}

struct net *rvs_netdev_event_net(void *info)
{
	return dev_net(netdev_notifier_info_to_dev(info));
}

void rvs_rcu_read_lock(void)
{
	rcu_read_lock();
}

void rvs_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

/* generic netlink */

struct sk_buff *rvs_genlmsg_new(size_t payload)
{
	return genlmsg_new(payload, GFP_KERNEL);
}

void *rvs_genlmsg_put_reply(struct sk_buff *skb, struct genl_info *info,
			    const struct genl_family *family, u8 cmd)
{
	return genlmsg_put_reply(skb, info, family, 0, cmd);
}

void *rvs_genlmsg_put_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct genl_family *family, u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   family, NLM_F_MULTI, cmd);
}

void rvs_genlmsg_end(struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
}

void rvs_genlmsg_cancel(struct sk_buff *skb, void *hdr)
{
	genlmsg_cancel(skb, hdr);
}

int rvs_genlmsg_reply(struct sk_buff *skb, struct genl_info *info)
{
	return genlmsg_reply(skb, info);
}

void rvs_nlmsg_free(struct sk_buff *skb)
{
	nlmsg_free(skb);
}

struct nlattr *rvs_nla_nest_start(struct sk_buff *skb, int type)
{
	return nla_nest_start(skb, type);
}

void rvs_nla_nest_end(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_end(skb, start);
}

void rvs_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_cancel(skb, start);
}

struct net *rvs_genl_info_net(const struct genl_info *info)
{
	return genl_info_net(info);
}

struct net *rvs_genl_dump_net(struct netlink_callback *cb)
{
	return sock_net(cb->skb->sk);
}

struct nlattr **rvs_genl_dump_attrs(struct netlink_callback *cb)
{
	return genl_info_dump(cb)->attrs;
}

u32 rvs_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

void rvs_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

/* A packet rvs sends on its own (a TCP reset): the `len` bytes of IP
 * packet at `data`, with room for any link layer or tunnel header in
 * front, its network and transport headers set. */
struct sk_buff *rvs_skb_build(const void *data, unsigned int len, bool v6,
			      unsigned int l4_off)
{
	struct sk_buff *skb = alloc_skb(MAX_HEADER + len, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb_reserve(skb, MAX_HEADER);
	skb_put_data(skb, data, len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l4_off);
	skb->protocol = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	return skb;
}

const struct genl_family *rvs_genl_dump_family(struct netlink_callback *cb)
{
	return genl_dumpit_info(cb)->info.family;
}

u8 rvs_genl_dump_cmd(struct netlink_callback *cb)
{
	return genl_dumpit_info(cb)->op.cmd;
}

/* RCU, bottom halves, time, work */

void rvs_local_bh_disable(void)
{
	local_bh_disable();
}

void rvs_local_bh_enable(void)
{
	local_bh_enable();
}

unsigned long rvs_jiffies(void)
{
	return jiffies;
}

unsigned long rvs_hz(void)
{
	return HZ;
}

void rvs_init_delayed_work(struct delayed_work *dw, void (*fn)(struct work_struct *))
{
	INIT_DELAYED_WORK(dw, fn);
}

bool rvs_queue_delayed_work(struct delayed_work *dw, unsigned long delay)
{
	return queue_delayed_work(system_long_wq, dw, delay);
}

bool rvs_mod_delayed_work(struct delayed_work *dw, unsigned long delay)
{
	return mod_delayed_work(system_long_wq, dw, delay);
}

struct delayed_work *rvs_to_delayed_work(struct work_struct *work)
{
	return to_delayed_work(work);
}

void rvs_cond_resched(void)
{
	cond_resched();
}

/* sk_buff */

bool rvs_pskb_may_pull(struct sk_buff *skb, unsigned int len)
{
	return pskb_may_pull(skb, len);
}

unsigned int rvs_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
}

unsigned char *rvs_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

bool rvs_skb_is_gso(const struct sk_buff *skb)
{
	return skb_is_gso(skb);
}

/*
 * The largest fragment a packet reassembled by netfilter's defragmentation
 * came in (0 for a packet that was never fragmented): IPCB / IP6CB.
 */
u16 rvs_skb_frag_max_size(const struct sk_buff *skb, bool v6)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (v6)
		return IP6CB(skb)->frag_max_size;
#endif
	return IPCB(skb)->frag_max_size;
}

/*
 * rvs marks the packets it transmits so its hooks pass them when they
 * re-enter netfilter, the way IPVS does: skb->ipvs_property exists only
 * with CONFIG_IP_VS (y or m). See Documentation/architecture.md.
 */
#if !IS_ENABLED(CONFIG_IP_VS)
#error "rvs needs CONFIG_IP_VS=m or =y for skb->ipvs_property (see Documentation/architecture.md)"
#endif

bool rvs_skb_is_xmit(const struct sk_buff *skb)
{
	return skb->ipvs_property;
}

u32 rvs_skb_fwmark(const struct sk_buff *skb)
{
	return skb->mark;
}

void rvs_skb_mark_xmit(struct sk_buff *skb)
{
	skb->ipvs_property = 1;
}

void rvs_skb_notrack(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_reset_ct(skb);
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
#endif
}

/* The packet's conntrack entry and its ctinfo (nf_ct_get is inline), or NULL. */
struct nf_conn *rvs_ct_get(const struct sk_buff *skb, u32 *ctinfo)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	enum ip_conntrack_info info;
	struct nf_conn *ct = nf_ct_get(skb, &info);

	*ctinfo = info;
	return ct;
#else
	return NULL;
#endif
}

/* nf_conntrack_alter_reply, present only with conntrack built. */
void rvs_ct_alter_reply(struct nf_conn *ct, const struct nf_conntrack_tuple *reply)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_conntrack_alter_reply(ct, reply);
#endif
}

/*
 * A tracked packet that was just encapsulated: its entry (the inner
 * connection's) is confirmed, then detached, so that the outer packet is
 * tracked as a connection of its own and NAT rules apply to the outer
 * headers (IPVS's ip_vs_tunnel_xmit_prepare). Returns the verdict of the
 * confirmation: NF_ACCEPT, or NF_DROP if it failed.
 */
int rvs_ct_confirm_detach(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	int ret = nf_conntrack_confirm(skb);

	if (ret != NF_ACCEPT)
		return ret;
	nf_reset_ct(skb);
#endif
	return NF_ACCEPT;
}

/*
 * IPv4 fragments seen at FORWARD, which the stack reassembles only for
 * local delivery (or conntrack): gathered into the whole packet, as IPVS
 * does for its replies (ip_vs_gather_frags). 0: @skb is now the whole
 * packet; otherwise it was queued or freed and is no longer the caller's.
 */
int rvs_ip_defrag_forward(struct net *net, struct sk_buff *skb)
{
	int err;

	local_bh_disable();
	err = ip_defrag(net, skb, IP_DEFRAG_VS_FWD);
	local_bh_enable();
	if (!err)
		ip_send_check(ip_hdr(skb));
	return err;
}

/*
 * IPv6 fragments reach LOCAL_IN one by one (the stack reassembles after
 * it): netfilter's IPv6 defragmentation at PREROUTING, enabled per
 * namespace while it has IPv6 services, gives rvs whole packets.
 */
int rvs_defrag6_enable(struct net *net)
{
#if IS_ENABLED(CONFIG_NF_DEFRAG_IPV6)
	return nf_defrag_ipv6_enable(net);
#else
	return 0;
#endif
}

void rvs_defrag6_disable(struct net *net)
{
#if IS_ENABLED(CONFIG_NF_DEFRAG_IPV6)
	nf_defrag_ipv6_disable(net);
#endif
}

/*
 * A packet about to be sent on (not delivered here), as ip_forward() and
 * IPVS prepare one: a checksum the receiving device computed over the
 * packet as it arrived does not describe what leaves, and a receive
 * timestamp is no departure time (the fq qdisc drops a packet whose stamp
 * lies beyond its horizon). Locally sent packets (no device yet) keep the
 * socket's departure time.
 */
void rvs_skb_forward_prepare(struct sk_buff *skb)
{
	skb_forward_csum(skb);
	if (skb->dev)
		skb_clear_tstamp(skb);
}

/* The network layer of a packet at a device's ingress hook, if the fast
 * path may take it: 4 (IPv4) or 6 (IPv6); 0 for anything not addressed to
 * this host at the link layer, VLAN-tagged, or received by a device whose
 * frames belong to an upper device (bridge, bond, macvlan: rx_handler). */
int rvs_skb_ingress_family(const struct sk_buff *skb)
{
	if (skb->pkt_type != PACKET_HOST || skb_vlan_tag_present(skb) ||
	    rcu_access_pointer(skb->dev->rx_handler))
		return 0;
	if (skb->protocol == htons(ETH_P_IP))
		return 4;
	if (skb->protocol == htons(ETH_P_IPV6))
		return 6;
	return 0;
}

/* Sends a packet that the ingress hook rewrote along its attached route,
 * as ip_forward_finish and ip6_forward_finish do (dst_output: POSTROUTING,
 * fragmentation of GSO segments, the neighbour), with the control block
 * the IP layer expects of a forwarded packet. */
int rvs_fast_output(struct net *net, struct sk_buff *skb, bool v6)
{
	memset(skb->cb, 0, sizeof(skb->cb));
	if (v6)
		IP6CB(skb)->flags = IP6SKB_FORWARDED;
	else
		IPCB(skb)->flags = IPSKB_FORWARDED;
	return dst_output(net, NULL, skb);
}

/* Routes a packet at the ingress hook as ip_rcv_finish and ip6_rcv_finish
 * would (same lookup keys: addresses, TOS or flow label, input device,
 * mark), and returns the forwarding MTU if the route forwards it (unicast,
 * not local, forwarding on); else 0, with no route left attached. */
unsigned int rvs_fast_route_input(struct sk_buff *skb, bool v6)
{
	struct dst_entry *dst;

	if (!v6) {
		const struct iphdr *iph = ip_hdr(skb);

		if (ip_route_input_noref(skb, iph->daddr, iph->saddr, iph->tos,
					 skb->dev))
			goto none;
		if (skb_rtable(skb)->rt_type != RTN_UNICAST ||
		    (skb_rtable(skb)->rt_flags & RTCF_LOCAL))
			goto none;
		return ip_dst_mtu_maybe_forward(skb_dst(skb), true);
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);
		struct net *net = dev_net(skb->dev);
		struct flowi6 fl6 = {
			.flowi6_iif = skb->dev->ifindex,
			.daddr = ip6h->daddr,
			.saddr = ip6h->saddr,
			.flowlabel = ip6_flowinfo(ip6h),
			.flowi6_mark = skb->mark,
			.flowi6_proto = ip6h->nexthdr,
		};

		if (!READ_ONCE(net->ipv6.devconf_all->forwarding))
			return 0;
		skb_dst_drop(skb);
		skb_dst_set_noref(skb, ip6_route_input_lookup(net, skb->dev, &fl6, skb,
							       RT6_LOOKUP_F_HAS_SADDR |
							       RT6_LOOKUP_F_DST_NOREF));
		dst = skb_dst(skb);
		if (!dst || dst->error || (dst->dev->flags & IFF_LOOPBACK) ||
		    (dst_rt6_info(dst)->rt6i_flags & (RTF_LOCAL | RTF_ANYCAST)))
			goto none;
		return ip6_dst_mtu_maybe_forward(dst, true);
	}
none:
	skb_dst_drop(skb);
	return 0;
}

void rvs_skb_dst_drop(struct sk_buff *skb)
{
	skb_dst_drop(skb);
}

/* IPsec policies apply to what the namespace forwards or sends: the fast
 * path leaves such namespaces' packets to the stack. */
bool rvs_net_has_xfrm_policy(const struct net *net)
{
#ifdef CONFIG_XFRM
	return net->xfrm.policy_count[XFRM_POLICY_FWD] ||
	       net->xfrm.policy_count[XFRM_POLICY_OUT] ||
	       net->xfrm.policy_count[XFRM_POLICY_FWD + XFRM_POLICY_MAX] ||
	       net->xfrm.policy_count[XFRM_POLICY_OUT + XFRM_POLICY_MAX];
#else
	return false;
#endif
}

struct net_device *rvs_netdev_event_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

/* The namespace's first device (dev NULL) or the one after dev (RTNL). */
struct net_device *rvs_net_next_dev(struct net *net, struct net_device *dev)
{
	ASSERT_RTNL();
	return dev ? next_net_device(dev) : first_net_device(net);
}

bool rvs_dev_is_loopback(const struct net_device *dev)
{
	return dev->flags & IFF_LOOPBACK;
}

struct net *rvs_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

void rvs_skb_orphan(struct sk_buff *skb)
{
	skb_orphan(skb);
}

void rvs_inet_proto_csum_replace2(__sum16 *sum, struct sk_buff *skb,
				  __be16 from, __be16 to, bool pseudohdr)
{
	inet_proto_csum_replace2(sum, skb, from, to, pseudohdr);
}

int rvs_skb_cow_head(struct sk_buff *skb, unsigned int headroom)
{
	return skb_cow_head(skb, headroom);
}

unsigned int rvs_skb_headroom(const struct sk_buff *skb)
{
	return skb_headroom(skb);
}

void rvs_skb_reset_network_header(struct sk_buff *skb)
{
	skb_reset_network_header(skb);
}

void rvs_skb_set_transport_header(struct sk_buff *skb, int offset)
{
	skb_set_transport_header(skb, offset);
}

/* Moves a CHECKSUM_PARTIAL packet's checksum start by delta bytes. */
void rvs_skb_move_csum_start(struct sk_buff *skb, int delta)
{
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		skb->csum_start += delta;
}

void rvs_icmp_send(struct sk_buff *skb, u8 type, u8 code, __be32 info)
{
	icmp_send(skb, type, code, info);
}

/*
 * Makes the IPv4 packet quoted @off bytes in the skb's network header, with
 * its @ihl-byte header linear, as ipv4_update_pmtu() and icmp_send() read
 * it; the outer packet's IP options no longer apply.
 */
bool rvs_skb_pull_to(struct sk_buff *skb, unsigned int off, unsigned int ihl)
{
	if (!pskb_pull(skb, off))
		return false;
	skb_reset_network_header(skb);
	memset(&IPCB(skb)->opt, 0, sizeof(IPCB(skb)->opt));
	if (!pskb_may_pull(skb, ihl) || ip_hdr(skb)->ihl * 4 != ihl)
		return false;
	skb_set_transport_header(skb, ihl);
	return true;
}

/*
 * Records path MTU mtu for the IPv6 packet quoted off bytes in (an ICMPv6
 * "packet too big" about it): its source and destination name the route.
 * false if the quote is too short or memory is short (the packet is then
 * only fit to be freed).
 */
bool rvs_ip6_update_pmtu_at(struct sk_buff *skb, struct net *net, unsigned int off, u32 mtu)
{
	if (!pskb_pull(skb, off) || !pskb_may_pull(skb, sizeof(struct ipv6hdr)))
		return false;
	ip6_update_pmtu(skb, net, htonl(mtu), 0, 0, INVALID_UID);
	return true;
}

/* routing and output */

int rvs_nf_local_out(struct net *net, struct sk_buff *skb)
{
	return NF_HOOK(NFPROTO_IPV4, NF_INET_LOCAL_OUT, net, NULL, skb, NULL,
		       skb_dst(skb)->dev, dst_output);
}

bool rvs_skb_csum_partial(const struct sk_buff *skb)
{
	return skb->ip_summed == CHECKSUM_PARTIAL;
}

/* The transport checksum needs no check: the device verified it, or a
 * local sender left it to be filled in (skb_csum_unnecessary). */
bool rvs_skb_csum_unnecessary(const struct sk_buff *skb)
{
	return skb_csum_unnecessary(skb);
}

/* The transport checksum was computed in full: nothing is left for the
 * device to fill in, and no earlier verdict on it holds. */
void rvs_skb_csum_none(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_NONE;
}

void rvs_tunnel_finish(struct net *net, struct sk_buff *skb, bool outer_v6)
{
	if (outer_v6) {
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		skb->protocol = htons(ETH_P_IP);
		ip_select_ident(net, skb, NULL);
		ip_send_check(ip_hdr(skb));
	}
}

/* IPv6 */

void rvs_inet_proto_csum_replace16(__sum16 *sum, struct sk_buff *skb,
				   const u8 *from, const u8 *to)
{
	__be32 f[4], t[4];

	memcpy(f, from, sizeof(f));
	memcpy(t, to, sizeof(t));
	inet_proto_csum_replace16(sum, skb, f, t, true);
}

unsigned int rvs_dst_mtu(const struct dst_entry *dst)
{
	return dst_mtu(dst);
}

void rvs_skb_set_dst(struct sk_buff *skb, struct dst_entry *dst)
{
	skb_dst_drop(skb);
	skb_dst_set(skb, dst);
}

void rvs_dst_release(struct dst_entry *dst)
{
	dst_release(dst);
}

void rvs_icmp6_send(struct net *net, struct sk_buff *skb, u8 type, u8 code, u32 info)
{
	if (!skb->dev)
		skb->dev = net->loopback_dev;
	icmpv6_send(skb, type, code, info);
}

int rvs_nf_local_out6(struct net *net, struct sk_buff *skb)
{
	return NF_HOOK(NFPROTO_IPV6, NF_INET_LOCAL_OUT, net, NULL, skb, NULL,
		       skb_dst(skb)->dev, dst_output);
}

void rvs_skb_cb_clear(struct sk_buff *skb)
{
	memset(skb->cb, 0, sizeof(skb->cb));
}

/*
 * Before tunnel headers go in front of an IP packet: GSO packets learn
 * how to be segmented (gso_type), the inner headers are recorded (inner mac
 * = inner network header: there is no inner link layer), as ip_tunnel does.
 */
int rvs_tunnel_prepare(struct sk_buff *skb, int gso_type, u8 inner_proto)
{
	int err = iptunnel_handle_offloads(skb, gso_type);

	if (err)
		return err;
	skb->transport_header = skb->network_header;
	skb_set_inner_ipproto(skb, inner_proto);
	skb_set_inner_mac_header(skb, skb_inner_network_offset(skb));
	return 0;
}

/*
 * For CHECKSUM_PARTIAL: the checksum's start from skb->data and its field's
 * offset from there (GUE remote checksum offload). false otherwise, and for
 * a checksum that is no Internet checksum (SCTP's CRC32c), which a remote
 * checksum offload receiver could not complete.
 */
bool rvs_skb_csum_offsets(const struct sk_buff *skb, u16 *start, u16 *offset)
{
	int s;

	if (skb->ip_summed != CHECKSUM_PARTIAL || skb->csum_not_inet)
		return false;
	s = skb_checksum_start_offset(skb);
	if (s < 0 || s > U16_MAX)
		return false;
	*start = s;
	*offset = skb->csum_offset;
	return true;
}

void rvs_skb_remcsum_handed_off(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_NONE;
	skb->encapsulation = 0;
}

void rvs_skb_reset_transport_header(struct sk_buff *skb)
{
	skb_reset_transport_header(skb);
}

/* UDP source port of a tunnel: a hash of the inner flow (RFC 8086). */
u16 rvs_udp_flow_src_port(struct net *net, struct sk_buff *skb)
{
	return ntohs(udp_flow_src_port(net, skb, 0, 0, false));
}

/* Pushes a GRE header (with checksum if csum) in front of an IPv4 packet. */
void rvs_gre_push(struct sk_buff *skb, bool csum, bool inner_v6)
{
	IP_TUNNEL_DECLARE_FLAGS(flags) = { };

	if (csum)
		__set_bit(IP_TUNNEL_CSUM_BIT, flags);
	gre_build_header(skb, gre_calc_hlen(flags), flags,
			 htons(inner_v6 ? ETH_P_IPV6 : ETH_P_IP), 0, 0);
}

/*
 * Per-CPU statistics. The pointers are __percpu on the C side; Rust only
 * passes them back here. this_cpu_add() is one instruction on x86 and safe
 * with preemption enabled (LOCAL_OUT runs in process context).
 */

struct rvs_cpu_stats *rvs_stats_alloc(void)
{
	/* Charged to the configuring task's memory cgroup (see privileges.md). */
	return (struct rvs_cpu_stats __force *)alloc_percpu_gfp(struct rvs_cpu_stats,
							       GFP_KERNEL_ACCOUNT);
}

void rvs_stats_free(struct rvs_cpu_stats *stats)
{
	free_percpu((struct rvs_cpu_stats __percpu __force *)stats);
}

void rvs_stats_in(struct rvs_cpu_stats *stats, u32 bytes, bool new_conn)
{
	struct rvs_cpu_stats __percpu *s = (struct rvs_cpu_stats __percpu __force *)stats;

	if (new_conn)
		this_cpu_inc(s->conns);
	this_cpu_inc(s->inpkts);
	this_cpu_add(s->inbytes, bytes);
}

void rvs_stats_out(struct rvs_cpu_stats *stats, u32 bytes)
{
	struct rvs_cpu_stats __percpu *s = (struct rvs_cpu_stats __percpu __force *)stats;

	this_cpu_inc(s->outpkts);
	this_cpu_add(s->outbytes, bytes);
}

/* @cpu's copy of @stats (per_cpu_ptr is a macro); Rust sums them. */
const struct rvs_cpu_stats *rvs_stats_cpu(struct rvs_cpu_stats *stats, int cpu)
{
	return per_cpu_ptr((struct rvs_cpu_stats __percpu __force *)stats, cpu);
}

/* The possible CPU after @cpu (-1: the first one), or -1 after the last. */
int rvs_cpu_possible_next(int cpu)
{
	unsigned int next = cpumask_next(cpu, cpu_possible_mask);

	return next < nr_cpu_ids ? next : -1;
}

/* slab cache of connection entries (kmem_cache_create and _alloc are macros) */

struct kmem_cache *rvs_kmem_cache_create(const char *name, unsigned int size,
					 unsigned int align)
{
	/*
	 * Accounted: an entry made in a task's context (a client on the
	 * director, LOCAL_OUT) is charged to its memory cgroup; entries made
	 * in softirq context have none to charge (bounded by conn_max).
	 */
	return kmem_cache_create(name, size, align, SLAB_NO_MERGE | SLAB_ACCOUNT, NULL);
}

void *rvs_kmem_cache_alloc_atomic(struct kmem_cache *cache)
{
	return kmem_cache_alloc(cache, GFP_ATOMIC);
}

/* routes to real servers, and their per-CPU caches */

int rvs_dst6_saddr(struct net *net, struct dst_entry *dst,
		   const struct in6_addr *daddr, struct in6_addr *saddr)
{
	return ipv6_dev_get_saddr(net, ip6_dst_idev(dst)->dev, daddr, 0, saddr);
}

bool rvs_dst6_is_local(const struct dst_entry *dst)
{
	return dst->dev && (dst->dev->flags & IFF_LOOPBACK);
}

struct dst_entry *rvs_rt_dst(struct rtable *rt)
{
	return rt ? &rt->dst : NULL;
}

int rvs_dst_cache_init(struct dst_cache *cache)
{
	return dst_cache_init(cache, GFP_KERNEL);
}

void rvs_dst_cache_reset(struct dst_cache *cache)
{
	dst_cache_reset(cache);
}

/* /proc/net files of a namespace (rvs/sys/procfs.rs) */

struct proc_dir_entry *rvs_proc_net_dir(struct net *net)
{
	return net->proc_net;
}

struct net *rvs_seq_file_single_net(struct seq_file *seq)
{
	return seq_file_single_net(seq);
}

struct proc_dir_entry *rvs_proc_create_net_seq(const char *name,
					       struct proc_dir_entry *parent,
					       const struct seq_operations *ops)
{
	return proc_create_net(name, 0444, parent, ops,
			       sizeof(struct seq_net_private));
}

struct net *rvs_seq_file_net(struct seq_file *seq)
{
	return seq_file_net(seq);
}

/* modules refused by name (rvs/sys/modwatch.rs) */

bool rvs_module_is(const void *module, const char *name)
{
	return strcmp(((const struct module *)module)->name, name) == 0;
}

int rvs_notifier_from_errno(int err)
{
	return notifier_from_errno(err);
}

/* the sync daemon's threads and multicast sockets */

/* A thread holding a reference to its task, so that stopping it is safe
 * even after its function returned (kthread_stop's rule). */
struct task_struct *rvs_kthread_start(int (*fn)(void *), void *data,
				      const char *name, int *err)
{
	struct task_struct *task = kthread_create(fn, data, "%s", name);

	if (IS_ERR(task)) {
		*err = PTR_ERR(task);
		return NULL;
	}
	get_task_struct(task);
	wake_up_process(task);
	return task;
}

void rvs_kthread_stop(struct task_struct *task)
{
	kthread_stop(task);
	put_task_struct(task);
}

void rvs_sleep_interruptible(long jiffies)
{
	schedule_timeout_interruptible(jiffies);
}

/* The ifindex, MTU and first IPv4 address (0 if none) of device `name`. */
int rvs_netdev_by_name(struct net *net, const char *name, int *ifindex,
		       unsigned int *mtu, __be32 *addr4)
{
	struct net_device *dev;

	rcu_read_lock();
	dev = dev_get_by_name_rcu(net, name);
	if (dev) {
		*ifindex = dev->ifindex;
		*mtu = READ_ONCE(dev->mtu);
		*addr4 = inet_select_addr(dev, 0, RT_SCOPE_UNIVERSE);
	}
	rcu_read_unlock();
	return dev ? 0 : -ENODEV;
}

int rvs_sock_create_udp(struct net *net, bool v6, struct socket **sock)
{
	return sock_create_kern(net, v6 ? AF_INET6 : AF_INET, SOCK_DGRAM,
				IPPROTO_UDP, sock);
}

/* setsockopt(2) on a kernel socket, from a kernel buffer. */
int rvs_sock_setopt(struct socket *sock, int level, int opt, const void *val,
		    unsigned int len)
{
	sockptr_t p = KERNEL_SOCKPTR((void *)val);

	if (level == SOL_SOCKET)
		return sock_setsockopt(sock, level, opt, p, len);
	return sock->ops->setsockopt(sock, level, opt, p, len);
}

/* bind(2) or connect(2) to `addr` (4 or 16 bytes) and `port` (host order). */
int rvs_sock_bind_addr(struct socket *sock, bool v6, const u8 *addr, u16 port,
		       bool connect)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr *sa = (struct sockaddr *)&sin;
	int len = sizeof(sin);

	if (v6) {
		memcpy(&sin6.sin6_addr, addr, 16);
		sin6.sin6_port = htons(port);
		sa = (struct sockaddr *)&sin6;
		len = sizeof(sin6);
	} else {
		memcpy(&sin.sin_addr, addr, 4);
		sin.sin_port = htons(port);
	}
	return connect ? kernel_connect(sock, sa, len, 0) :
			 kernel_bind(sock, sa, len);
}

/* IP_ADD_MEMBERSHIP / IPV6_ADD_MEMBERSHIP of `group` on `ifindex`. */
int rvs_sock_join_group(struct socket *sock, bool v6, const u8 *group,
			int ifindex)
{
	struct ipv6_mreq m6 = { .ipv6mr_ifindex = ifindex };
	struct ip_mreqn m4 = { .imr_ifindex = ifindex };

	if (v6) {
		memcpy(&m6.ipv6mr_multiaddr, group, 16);
		return rvs_sock_setopt(sock, SOL_IPV6, IPV6_ADD_MEMBERSHIP,
				       &m6, sizeof(m6));
	}
	memcpy(&m4.imr_multiaddr, group, 4);
	return rvs_sock_setopt(sock, SOL_IP, IP_ADD_MEMBERSHIP, &m4, sizeof(m4));
}

/* One datagram on a connected socket, without blocking. */
int rvs_sock_send(struct socket *sock, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };

	return kernel_sendmsg(sock, &msg, &iov, 1, len);
}

/* One datagram, without blocking (-EAGAIN when none is queued); a longer
 * one is truncated to `len` (its length is then still `len`). */
int rvs_sock_recv(struct socket *sock, void *buf, size_t len)
{
	struct msghdr msg = { NULL, };
	struct kvec iov = { .iov_base = buf, .iov_len = len };

	return kernel_recvmsg(sock, &msg, &iov, 1, len, MSG_DONTWAIT);
}

/* Sleeps until a datagram is queued, the thread is asked to stop, or
 * `timeout` jiffies pass. */
void rvs_sock_wait_readable(struct socket *sock, long timeout)
{
	struct sock *sk = sock->sk;

	wait_event_interruptible_timeout(*sk_sleep(sk),
		!skb_queue_empty_lockless(&sk->sk_receive_queue) ||
		kthread_should_stop(), timeout);
}

/* Multicasts a copy of a request (its command and attributes) on group 0
 * of `family`, to the listeners of the request's namespace. */
static_assert(RVS_GENL_MCAST_CAP_NET_ADMIN == GENL_MCAST_CAP_NET_ADMIN);

int rvs_genl_echo(const struct genl_family *family, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	int len = genlmsg_len(info->genlhdr);
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(family, net, 0))
		return 0;
	/* A copy too big to make (an APPLY of megabytes), or no memory for
	 * it: the listeners learn that they missed a change (ENOBUFS, as
	 * when their own buffer overflows). */
	if (len > RVS_GENL_ECHO_MAX)
		goto lost;
	skb = genlmsg_new(len, GFP_KERNEL);
	if (!skb)
		goto lost;
	hdr = genlmsg_put(skb, 0, 0, family, 0, info->genlhdr->cmd);
	if (!hdr) {
		nlmsg_free(skb);
		goto lost;
	}
	skb_put_data(skb, genlmsg_data(info->genlhdr), len);
	genlmsg_end(skb, hdr);
	return genlmsg_multicast_netns(family, net, skb, 0, 0, GFP_KERNEL);
lost:
	/* netlink_set_err takes a negative code. */
	genl_set_err(family, net, 0, 0, -ENOBUFS);
	return -ENOBUFS;
}

/* Routes a packet the LOCAL_OUT hook readdressed again, as netfilter's NAT
 * does (the socket, if any, for its bound device and mark). */
int rvs_route_me_harder(struct net *net, struct sk_buff *skb, bool v6)
{
	if (v6)
		return ip6_route_me_harder(net, skb->sk, skb);
	return ip_route_me_harder(net, skb->sk, skb, RTN_UNSPEC);
}
