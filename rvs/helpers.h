/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thin C helpers: one line each, wrapping a static inline function or macro
 * of the kernel's C API that bindgen cannot expose as a callable symbol.
 * No logic lives here; it is all in Rust.
 */
#ifndef RVS_HELPERS_H
#define RVS_HELPERS_H

#include <linux/types.h>

struct net;

/* The conn_tab_bits module parameter's default. */
#define RVS_CONN_TAB_BITS_DEFAULT 20
unsigned int rvs_conn_tab_bits(void);
bool rvs_ipvs_compat(void);

void *rvs_net_generic(const struct net *net, unsigned int id);
struct net *rvs_netdev_event_net(void *info);
void rvs_rcu_read_lock(void);
void rvs_rcu_read_unlock(void);

/* generic netlink */
struct sk_buff;
struct genl_info;
struct genl_family;
struct netlink_callback;
struct nlattr;

struct sk_buff *rvs_genlmsg_new(size_t payload);
void *rvs_genlmsg_put_reply(struct sk_buff *skb, struct genl_info *info,
			    const struct genl_family *family, u8 cmd);
void *rvs_genlmsg_put_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct genl_family *family, u8 cmd);
void rvs_genlmsg_end(struct sk_buff *skb, void *hdr);
void rvs_genlmsg_cancel(struct sk_buff *skb, void *hdr);
int rvs_genlmsg_reply(struct sk_buff *skb, struct genl_info *info);
void rvs_nlmsg_free(struct sk_buff *skb);
struct nlattr *rvs_nla_nest_start(struct sk_buff *skb, int type);
void rvs_nla_nest_end(struct sk_buff *skb, struct nlattr *start);
void rvs_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start);
struct net *rvs_genl_info_net(const struct genl_info *info);
struct net *rvs_genl_dump_net(struct netlink_callback *cb);
struct nlattr **rvs_genl_dump_attrs(struct netlink_callback *cb);
u32 rvs_skb_len(const struct sk_buff *skb);
/* consume_skb is an inline kfree_skb in kernels without CONFIG_TRACEPOINTS. */
void rvs_consume_skb(struct sk_buff *skb);
struct sk_buff *rvs_skb_build(const void *data, unsigned int len, bool v6,
			      unsigned int l4_off);
const struct genl_family *rvs_genl_dump_family(struct netlink_callback *cb);
/* The largest request echoed to the events group; a larger one (an APPLY
 * of thousands of changes) sets ENOBUFS on the listeners instead. */
#define RVS_GENL_ECHO_MAX (1 << 20)
int rvs_genl_echo(const struct genl_family *family, struct genl_info *info);
/* BIT() is not a constant bindgen can read. */
enum { RVS_GENL_MCAST_CAP_NET_ADMIN = 1 };
u8 rvs_genl_dump_cmd(struct netlink_callback *cb);

/* RCU, bottom halves, time, work */
struct delayed_work;
struct work_struct;
void rvs_local_bh_disable(void);
void rvs_local_bh_enable(void);
unsigned long rvs_jiffies(void);
unsigned long rvs_hz(void);
void rvs_init_delayed_work(struct delayed_work *dw, void (*fn)(struct work_struct *));
bool rvs_queue_delayed_work(struct delayed_work *dw, unsigned long delay);
bool rvs_mod_delayed_work(struct delayed_work *dw, unsigned long delay);
struct delayed_work *rvs_to_delayed_work(struct work_struct *work);
void rvs_cond_resched(void);

/* sk_buff */
bool rvs_pskb_may_pull(struct sk_buff *skb, unsigned int len);
unsigned int rvs_skb_headlen(const struct sk_buff *skb);
unsigned char *rvs_skb_data(const struct sk_buff *skb);
bool rvs_skb_is_gso(const struct sk_buff *skb);
u16 rvs_skb_frag_max_size(const struct sk_buff *skb, bool v6);
bool rvs_skb_csum_offsets(const struct sk_buff *skb, u16 *start, u16 *offset);
void rvs_skb_remcsum_handed_off(struct sk_buff *skb);
bool rvs_skb_is_xmit(const struct sk_buff *skb);
void rvs_skb_mark_xmit(struct sk_buff *skb);
u32 rvs_skb_fwmark(const struct sk_buff *skb);
void rvs_skb_notrack(struct sk_buff *skb);
struct nf_conn;
struct nf_conntrack_tuple;
struct nf_conn *rvs_ct_get(const struct sk_buff *skb, u32 *ctinfo);
void rvs_ct_alter_reply(struct nf_conn *ct, const struct nf_conntrack_tuple *reply);
int rvs_ct_confirm_detach(struct sk_buff *skb);
int rvs_ip_defrag_forward(struct net *net, struct sk_buff *skb);
int rvs_defrag6_enable(struct net *net);
void rvs_defrag6_disable(struct net *net);
void rvs_skb_orphan(struct sk_buff *skb);
void rvs_skb_forward_prepare(struct sk_buff *skb);

/* The ingress fast path (sys::ingress, lb::fastpath) */
struct net_device;
int rvs_skb_ingress_family(const struct sk_buff *skb);
int rvs_fast_output(struct net *net, struct sk_buff *skb, bool v6);
unsigned int rvs_fast_route_input(struct sk_buff *skb, bool v6);
bool rvs_net_has_xfrm_policy(const struct net *net);
void rvs_skb_dst_drop(struct sk_buff *skb);
struct net_device *rvs_netdev_event_dev(void *info);
struct net_device *rvs_net_next_dev(struct net *net, struct net_device *dev);
bool rvs_dev_is_loopback(const struct net_device *dev);
struct net *rvs_dev_net(const struct net_device *dev);
void rvs_inet_proto_csum_replace2(__sum16 *sum, struct sk_buff *skb,
				  __be16 from, __be16 to, bool pseudohdr);
int rvs_skb_cow_head(struct sk_buff *skb, unsigned int headroom);
unsigned int rvs_skb_headroom(const struct sk_buff *skb);
void rvs_skb_reset_network_header(struct sk_buff *skb);
void rvs_skb_set_transport_header(struct sk_buff *skb, int offset);
void rvs_skb_move_csum_start(struct sk_buff *skb, int delta);
bool rvs_ip6_update_pmtu_at(struct sk_buff *skb, struct net *net, unsigned int off, u32 mtu);
void rvs_icmp_send(struct sk_buff *skb, u8 type, u8 code, __be32 info);
bool rvs_skb_pull_to(struct sk_buff *skb, unsigned int off, unsigned int ihl);

/* routing and output */
struct rtable;
int rvs_nf_local_out(struct net *net, struct sk_buff *skb);
bool rvs_skb_csum_partial(const struct sk_buff *skb);
bool rvs_skb_csum_unnecessary(const struct sk_buff *skb);
void rvs_skb_csum_none(struct sk_buff *skb);
void rvs_tunnel_finish(struct net *net, struct sk_buff *skb, bool outer_v6);
int rvs_tunnel_prepare(struct sk_buff *skb, int gso_type, u8 inner_proto);
void rvs_skb_reset_transport_header(struct sk_buff *skb);
u16 rvs_udp_flow_src_port(struct net *net, struct sk_buff *skb);
void rvs_gre_push(struct sk_buff *skb, bool csum, bool inner_v6);

/* IPv6 (addresses as 16 bytes, network order) */
struct dst_entry;
void rvs_inet_proto_csum_replace16(__sum16 *sum, struct sk_buff *skb,
				   const u8 *from, const u8 *to);
unsigned int rvs_dst_mtu(const struct dst_entry *dst);
void rvs_skb_set_dst(struct sk_buff *skb, struct dst_entry *dst);
void rvs_dst_release(struct dst_entry *dst);
void rvs_icmp6_send(struct net *net, struct sk_buff *skb, u8 type, u8 code, u32 info);
int rvs_nf_local_out6(struct net *net, struct sk_buff *skb);
void rvs_skb_cb_clear(struct sk_buff *skb);

/* per-CPU statistics */
struct rvs_cpu_stats {
	u64 conns;
	u64 inpkts;
	u64 outpkts;
	u64 inbytes;
	u64 outbytes;
};
struct rvs_cpu_stats *rvs_stats_alloc(void);
void rvs_stats_free(struct rvs_cpu_stats *stats);
void rvs_stats_in(struct rvs_cpu_stats *stats, u32 bytes, bool new_conn);
void rvs_stats_out(struct rvs_cpu_stats *stats, u32 bytes);
const struct rvs_cpu_stats *rvs_stats_cpu(struct rvs_cpu_stats *stats, int cpu);
int rvs_cpu_possible_next(int cpu);

struct kmem_cache;
struct kmem_cache *rvs_kmem_cache_create(const char *name, unsigned int size,
					 unsigned int align);
void *rvs_kmem_cache_alloc_atomic(struct kmem_cache *cache);

struct dst_cache;
struct dst_entry;
struct in6_addr;
int rvs_dst6_saddr(struct net *net, struct dst_entry *dst,
		   const struct in6_addr *daddr, struct in6_addr *saddr);
bool rvs_dst6_is_local(const struct dst_entry *dst);
struct dst_entry *rvs_rt_dst(struct rtable *rt);
int rvs_dst_cache_init(struct dst_cache *cache);
void rvs_dst_cache_reset(struct dst_cache *cache);

struct proc_dir_entry;
struct seq_file;
struct proc_dir_entry *rvs_proc_net_dir(struct net *net);
struct seq_operations;
struct net *rvs_seq_file_single_net(struct seq_file *seq);
struct proc_dir_entry *rvs_proc_create_net_seq(const char *name,
					       struct proc_dir_entry *parent,
					       const struct seq_operations *ops);
struct net *rvs_seq_file_net(struct seq_file *seq);
bool rvs_module_is(const void *module, const char *name);
int rvs_notifier_from_errno(int err);

/* the sync daemon's threads and multicast sockets (rvs/sys/kthread.rs,
 * rvs/sys/mcast.rs) */
struct socket;
struct task_struct;
struct task_struct *rvs_kthread_start(int (*fn)(void *), void *data,
				      const char *name, int *err);
void rvs_kthread_stop(struct task_struct *task);
void rvs_sleep_interruptible(long jiffies);
int rvs_netdev_by_name(struct net *net, const char *name, int *ifindex,
		       unsigned int *mtu, __be32 *addr4);
int rvs_sock_create_udp(struct net *net, bool v6, struct socket **sock);
int rvs_sock_setopt(struct socket *sock, int level, int opt, const void *val,
		    unsigned int len);
int rvs_sock_bind_addr(struct socket *sock, bool v6, const u8 *addr, u16 port,
		       bool connect);
int rvs_sock_join_group(struct socket *sock, bool v6, const u8 *group,
			int ifindex);
int rvs_sock_send(struct socket *sock, const void *buf, size_t len);
int rvs_sock_recv(struct socket *sock, void *buf, size_t len);
void rvs_sock_wait_readable(struct socket *sock, long timeout);

int rvs_route_me_harder(struct net *net, struct sk_buff *skb, bool v6);

#endif /* RVS_HELPERS_H */
