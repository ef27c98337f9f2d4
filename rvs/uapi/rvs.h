/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rvs generic netlink protocol: the single source of its numbers.
 *
 * Commands and attributes use IPVS's numbering and layout
 * (include/uapi/linux/ip_vs.h) so that the same messages can later be
 * answered under the family name "IPVS" for unmodified ipvsadm. Anything rvs
 * adds is numbered after IPVS's last value.
 *
 * The module's bindings are generated from this file; rvsadm's constants are
 * checked against it by a host test (rvs/core/tests/uapi.rs).
 */
#ifndef _UAPI_RVS_H
#define _UAPI_RVS_H

#define RVS_GENL_NAME		"RVS"
#define RVS_GENL_VERSION	0x1
/*
 * With the module parameter ipvs_compat=1 the same commands are also
 * answered under IPVS's family name (same version), for IPVS's clients.
 */
#define RVS_IPVS_GENL_NAME	"IPVS"
/* The RVS family's multicast group: after each configuration command
 * that succeeds (in either family), a message with the request's command
 * and a copy of its attributes. Joining it needs CAP_NET_ADMIN. */
#define RVS_GENL_MCGRP_EVENTS	"events"

/* Version reported by GET_INFO: 1.2.1, like IPVS. */
#define RVS_VERSION_CODE	0x010201

#define RVS_SCHEDNAME_MAXLEN	16
#define RVS_PENAME_MAXLEN	16

/* Service flags (RVS_SVC_ATTR_FLAGS carries struct rvs_flags). */
#define RVS_SVC_F_PERSISTENT	0x0001
#define RVS_SVC_F_HASHED	0x0002
#define RVS_SVC_F_ONEPACKET	0x0004
/* Scheduler flags (ipvsadm -b): sh-/mh-fallback, sh-/mh-port, flag-3. */
#define RVS_SVC_F_SCHED1	0x0008
#define RVS_SVC_F_SCHED2	0x0010
#define RVS_SVC_F_SCHED3	0x0020

/* Forwarding methods (RVS_DEST_ATTR_FWD_METHOD), IPVS's values. */
#define RVS_CONN_F_FWD_MASK	0x0007
#define RVS_CONN_F_MASQ		0x0000
#define RVS_CONN_F_LOCALNODE	0x0001
#define RVS_CONN_F_TUNNEL	0x0002
#define RVS_CONN_F_DROUTE	0x0003
#define RVS_CONN_F_BYPASS	0x0004
/* rvs addition: FullNAT (DPVS's number): source and destination both
 * rewritten, the source to one of the service's local addresses
 * (RVS_SVC_ATTR_LADDRS) and a port allocated for the connection. */
#define RVS_CONN_F_FULLNAT	0x0005
/* rvs addition: ENAT (Alibaba's "enhanced NAT"): the request leaves from
 * the VIP and a port allocated for the connection, toward the real
 * server's address at the service's port, and the client's SYN carries its
 * address in a TCP option (kind 253); the real server's companion module
 * (rvs_rs.ko) sends the replies straight to the client, from the VIP. TCP
 * services given by address only. */
#define RVS_CONN_F_ENAT		0x0006

/* Weight limits for real servers. */
#define RVS_DEST_WEIGHT_MAX	65535

struct rvs_flags {
	__u32 flags;
	__u32 mask;
};

enum rvs_cmd {
	RVS_CMD_UNSPEC = 0,
	RVS_CMD_NEW_SERVICE,	/* 1 */
	RVS_CMD_SET_SERVICE,	/* 2 */
	RVS_CMD_DEL_SERVICE,	/* 3 */
	RVS_CMD_GET_SERVICE,	/* 4 */
	RVS_CMD_NEW_DEST,	/* 5 */
	RVS_CMD_SET_DEST,	/* 6 */
	RVS_CMD_DEL_DEST,	/* 7 */
	RVS_CMD_GET_DEST,	/* 8 */
	RVS_CMD_NEW_DAEMON,	/* 9 */
	RVS_CMD_DEL_DAEMON,	/* 10 */
	RVS_CMD_GET_DAEMON,	/* 11 */
	RVS_CMD_SET_CONFIG,	/* 12 */
	RVS_CMD_GET_CONFIG,	/* 13 */
	RVS_CMD_SET_INFO,	/* 14 */
	RVS_CMD_GET_INFO,	/* 15 */
	RVS_CMD_ZERO,		/* 16 */
	RVS_CMD_FLUSH,		/* 17 */
	/* rvs additions, after IPVS's numbers */
	RVS_CMD_GET_CONN,	/* 18: dump connections (IPVS: /proc/net/ip_vs_conn) */
	/* 19: end the connections of a service (SERVICE) or of one of its
	 * real servers (SERVICE and DEST: address, port) now: TCP reset
	 * toward both ends, other entries removed. The reply, of this
	 * command, carries RVS_INFO_ATTR_CONN_FLUSHED: how many ended. */
	RVS_CMD_FLUSH_CONNS,
	/* 20: service and real-server changes applied all or nothing
	 * (rvsadm -R --atomic): one RVS_CMD_ATTR_OP per change, in order.
	 * Every change takes effect, at one instant for new connections, or
	 * none does; an error's NLMSGERR_ATTR_OFFS points at the
	 * RVS_CMD_ATTR_OP that failed. */
	RVS_CMD_APPLY,
	__RVS_CMD_MAX,
};
#define RVS_CMD_MAX (__RVS_CMD_MAX - 1)

/* Top-level attributes. */
enum rvs_attr {
	RVS_CMD_ATTR_UNSPEC = 0,
	RVS_CMD_ATTR_SERVICE,		/* 1: nested service */
	RVS_CMD_ATTR_DEST,		/* 2: nested destination */
	RVS_CMD_ATTR_DAEMON,		/* 3: nested sync daemon */
	RVS_CMD_ATTR_TIMEOUT_TCP,	/* 4: u32 seconds */
	RVS_CMD_ATTR_TIMEOUT_TCP_FIN,	/* 5: u32 seconds */
	RVS_CMD_ATTR_TIMEOUT_UDP,	/* 6: u32 seconds */
	/* rvs additions, after IPVS's numbers */
	RVS_CMD_ATTR_CONN,		/* 7: nested connection (GET_CONN replies) */
	/* runtime settings, u32 each, named in rvs/core/settings.rs */
	RVS_CMD_ATTR_EXPIRE_NODEST_CONN,	/* 8: 0/1 */
	RVS_CMD_ATTR_EXPIRE_QUIESCENT_TEMPLATE,	/* 9: 0/1 */
	RVS_CMD_ATTR_CONNTRACK,		/* 10: 0/1 */
	RVS_CMD_ATTR_CONN_MAX,		/* 11: entries, 16..16777216 */
	RVS_CMD_ATTR_DROP_ENTRY,	/* 12: percent of conn_max, 0 = off */
	RVS_CMD_ATTR_SECURE_TCP,	/* 13: seconds, 0 = off */
	RVS_CMD_ATTR_CONN_REUSE_MODE,	/* 14: bits 1 and 2, as IPVS's */
	RVS_CMD_ATTR_SLOPPY_TCP,	/* 15: 0/1 */
	RVS_CMD_ATTR_SLOPPY_SCTP,	/* 16: 0/1 */
	RVS_CMD_ATTR_VIP_GUARD,		/* 17: 0 off, 1 drop, 2 reject */
	RVS_CMD_ATTR_FULLNAT_PORT_MIN,	/* 18: lowest FullNAT local port, 1..65535 */
	RVS_CMD_ATTR_FULLNAT_PORT_MAX,	/* 19: highest FullNAT local port, 1..65535 */
	RVS_CMD_ATTR_SYNC_RESYNC,	/* 20: 0/1, whole-table resync of sync daemons */
	RVS_CMD_ATTR_SYNC_THRESHOLD,	/* 21: 0..255, IPVS's sync_threshold[0] */
	RVS_CMD_ATTR_SYNC_PERIOD,	/* 22: 0..250, IPVS's sync_threshold[1] */
	/* end of the first runtime settings */
	RVS_CMD_ATTR_OP,		/* 23: nested change (RVS_CMD_APPLY) */
	/* runtime settings added after RVS_CMD_ATTR_OP, u32 each */
	RVS_CMD_ATTR_FASTPATH,		/* 24: 0/1, the ingress fast path */
	__RVS_CMD_ATTR_MAX,
};
#define RVS_CMD_ATTR_MAX (__RVS_CMD_ATTR_MAX - 1)

/* Attributes nested in RVS_CMD_ATTR_OP: one change of RVS_CMD_APPLY,
 * with the attributes the command would have at top level. */
enum rvs_op_attr {
	RVS_OP_ATTR_UNSPEC = 0,
	RVS_OP_ATTR_SERVICE,	/* 1: nested service, as RVS_CMD_ATTR_SERVICE */
	RVS_OP_ATTR_DEST,	/* 2: nested real server, as RVS_CMD_ATTR_DEST */
	RVS_OP_ATTR_CMD,	/* 3: u32 NEW/SET/DEL_SERVICE, NEW/SET/DEL_DEST, FLUSH */
	__RVS_OP_ATTR_MAX,
};
#define RVS_OP_ATTR_MAX (__RVS_OP_ATTR_MAX - 1)

/* Attributes nested in RVS_CMD_ATTR_SERVICE. */
enum rvs_svc_attr {
	RVS_SVC_ATTR_UNSPEC = 0,
	RVS_SVC_ATTR_AF,	/* 1: u16 address family */
	RVS_SVC_ATTR_PROTOCOL,	/* 2: u16 IPPROTO_TCP / _UDP / _SCTP */
	RVS_SVC_ATTR_ADDR,	/* 3: 4 or 16 bytes, network order */
	RVS_SVC_ATTR_PORT,	/* 4: u16, network order */
	RVS_SVC_ATTR_FWMARK,	/* 5: u32 */
	RVS_SVC_ATTR_SCHED_NAME,/* 6: string */
	RVS_SVC_ATTR_FLAGS,	/* 7: struct rvs_flags */
	RVS_SVC_ATTR_TIMEOUT,	/* 8: u32 persistence timeout, seconds */
	RVS_SVC_ATTR_NETMASK,	/* 9: u32 persistence netmask */
	RVS_SVC_ATTR_STATS,	/* 10: nested stats (32-bit) */
	RVS_SVC_ATTR_PE_NAME,	/* 11: string */
	RVS_SVC_ATTR_STATS64,	/* 12: nested stats (64-bit) */
	/* rvs additions */
	RVS_SVC_ATTR_LADDRS,	/* 13: nested RVS_LADDR_ATTR_ADDR list: the local
				 * addresses FullNAT real servers are reached
				 * from (at most RVS_LADDRS_MAX; NEW/SET_SERVICE:
				 * absent keeps them, an empty nest clears them) */
	__RVS_SVC_ATTR_MAX,
};
#define RVS_SVC_ATTR_MAX (__RVS_SVC_ATTR_MAX - 1)

/* Attributes nested in RVS_SVC_ATTR_LADDRS (rvs addition). */
enum rvs_laddr_attr {
	RVS_LADDR_ATTR_UNSPEC = 0,
	RVS_LADDR_ATTR_ADDR,	/* 1: 4 or 16 bytes (the service's family), network order */
	__RVS_LADDR_ATTR_MAX,
};
#define RVS_LADDR_ATTR_MAX (__RVS_LADDR_ATTR_MAX - 1)
/* Most local addresses of one service. */
#define RVS_LADDRS_MAX		64

/* Attributes nested in RVS_CMD_ATTR_DEST. */
enum rvs_dest_attr {
	RVS_DEST_ATTR_UNSPEC = 0,
	RVS_DEST_ATTR_ADDR,		/* 1: 4 or 16 bytes, network order */
	RVS_DEST_ATTR_PORT,		/* 2: u16, network order */
	RVS_DEST_ATTR_FWD_METHOD,	/* 3: u32 RVS_CONN_F_* */
	RVS_DEST_ATTR_WEIGHT,		/* 4: u32 */
	RVS_DEST_ATTR_U_THRESH,		/* 5: u32 */
	RVS_DEST_ATTR_L_THRESH,		/* 6: u32 */
	RVS_DEST_ATTR_ACTIVE_CONNS,	/* 7: u32 */
	RVS_DEST_ATTR_INACT_CONNS,	/* 8: u32 */
	RVS_DEST_ATTR_PERSIST_CONNS,	/* 9: u32 */
	RVS_DEST_ATTR_STATS,		/* 10: nested stats */
	RVS_DEST_ATTR_ADDR_FAMILY,	/* 11: u16 */
	RVS_DEST_ATTR_STATS64,		/* 12: nested stats64 */
	RVS_DEST_ATTR_TUN_TYPE,		/* 13: u8 */
	RVS_DEST_ATTR_TUN_PORT,		/* 14: u16, network order */
	RVS_DEST_ATTR_TUN_FLAGS,	/* 15: u16 */
	/* rvs additions */
	RVS_DEST_ATTR_DRAIN,		/* 16: u32 seconds. DEL_DEST: drain for this long,
					 * then flush and delete; GET_DEST: seconds
					 * left, present while draining */
	__RVS_DEST_ATTR_MAX,
};
#define RVS_DEST_ATTR_MAX (__RVS_DEST_ATTR_MAX - 1)

/* Tunnel types (RVS_DEST_ATTR_TUN_TYPE): IPVS's IP_VS_CONN_F_TUNNEL_TYPE_*. */
enum rvs_tun_type {
	RVS_TUN_TYPE_IPIP = 0,
	RVS_TUN_TYPE_GUE,	/* 1 */
	RVS_TUN_TYPE_GRE,	/* 2 */
};

/* Tunnel flags (RVS_DEST_ATTR_TUN_FLAGS): IPVS's IP_VS_TUNNEL_ENCAP_FLAG_*. */
#define RVS_TUN_F_CSUM		0x0001
#define RVS_TUN_F_REMCSUM	0x0002

/* Attributes nested in *_STATS / *_STATS64. */
enum rvs_stats_attr {
	RVS_STATS_ATTR_UNSPEC = 0,
	RVS_STATS_ATTR_CONNS,	/* 1: connections scheduled */
	RVS_STATS_ATTR_INPKTS,	/* 2: incoming packets */
	RVS_STATS_ATTR_OUTPKTS,	/* 3: outgoing packets */
	RVS_STATS_ATTR_INBYTES,	/* 4: incoming bytes */
	RVS_STATS_ATTR_OUTBYTES,/* 5: outgoing bytes */
	RVS_STATS_ATTR_CPS,	/* 6: connections per second */
	RVS_STATS_ATTR_INPPS,	/* 7 */
	RVS_STATS_ATTR_OUTPPS,	/* 8 */
	RVS_STATS_ATTR_INBPS,	/* 9 */
	RVS_STATS_ATTR_OUTBPS,	/* 10 */
	RVS_STATS_ATTR_PAD,	/* 11 */
	__RVS_STATS_ATTR_MAX,
};
#define RVS_STATS_ATTR_MAX (__RVS_STATS_ATTR_MAX - 1)

/* Attributes nested in RVS_CMD_ATTR_CONN (rvs addition). */
enum rvs_conn_attr {
	RVS_CONN_ATTR_UNSPEC = 0,
	RVS_CONN_ATTR_AF,		/* 1: u16 address family */
	RVS_CONN_ATTR_PROTOCOL,		/* 2: u16 */
	RVS_CONN_ATTR_CADDR,		/* 3: 16 bytes, client address */
	RVS_CONN_ATTR_CPORT,		/* 4: u16, network order */
	RVS_CONN_ATTR_VADDR,		/* 5: 16 bytes, virtual address */
	RVS_CONN_ATTR_VPORT,		/* 6: u16, network order */
	RVS_CONN_ATTR_DADDR,		/* 7: 16 bytes, real server address */
	RVS_CONN_ATTR_DPORT,		/* 8: u16, network order */
	RVS_CONN_ATTR_STATE,		/* 9: string, e.g. "ESTABLISHED", "UDP" */
	RVS_CONN_ATTR_EXPIRES,		/* 10: u32, milliseconds until expiry */
	RVS_CONN_ATTR_FWD_METHOD,	/* 11: u32 RVS_CONN_F_* */
	RVS_CONN_ATTR_DEST_AF,		/* 12: u16 real server's family (differs when tunnelled) */
	RVS_CONN_ATTR_LADDR,		/* 13: 16 bytes, FullNAT local address (FullNAT only) */
	RVS_CONN_ATTR_LPORT,		/* 14: u16, network order, FullNAT local port */
	__RVS_CONN_ATTR_MAX,
};
#define RVS_CONN_ATTR_MAX (__RVS_CONN_ATTR_MAX - 1)

/* Attributes nested in RVS_CMD_ATTR_DAEMON: a connection sync daemon
 * (NEW_DAEMON, DEL_DAEMON, GET_DAEMON replies). 1..8 are IPVS's. */
enum rvs_daemon_attr {
	RVS_DAEMON_ATTR_UNSPEC = 0,
	RVS_DAEMON_ATTR_STATE,		/* 1: u32 RVS_DAEMON_MASTER or _BACKUP */
	RVS_DAEMON_ATTR_MCAST_IFN,	/* 2: string, the sync interface */
	RVS_DAEMON_ATTR_SYNC_ID,	/* 3: u32, 0..255 */
	RVS_DAEMON_ATTR_SYNC_MAXLEN,	/* 4: u16, the UDP payload's most bytes */
	RVS_DAEMON_ATTR_MCAST_GROUP,	/* 5: u32, IPv4 group, network order */
	RVS_DAEMON_ATTR_MCAST_GROUP6,	/* 6: 16 bytes, IPv6 group */
	RVS_DAEMON_ATTR_MCAST_PORT,	/* 7: u16 */
	RVS_DAEMON_ATTR_MCAST_TTL,	/* 8: u8 */
	/* rvs additions: the daemon's counters (GET_DAEMON replies, RVS
	 * family only), u64 each */
	RVS_DAEMON_ATTR_PAD,		/* 9 */
	RVS_DAEMON_ATTR_MSGS,		/* 10: datagrams sent (master) or received (backup) */
	RVS_DAEMON_ATTR_CONNS,		/* 11: records sent, or applied */
	RVS_DAEMON_ATTR_REFUSED,	/* 12: datagrams or records refused (malformed, wrong
					 * syncid, unknown service or real server) */
	RVS_DAEMON_ATTR_LOST,		/* 13: records not sent (no memory, queue full,
					 * send error) */
	RVS_DAEMON_ATTR_RESYNCS,	/* 14: whole tables sent (master) or asked
					 * for (backup); see sync_resync */
	__RVS_DAEMON_ATTR_MAX,
};
#define RVS_DAEMON_ATTR_MAX (__RVS_DAEMON_ATTR_MAX - 1)

/* RVS_DAEMON_ATTR_STATE values (IPVS's IP_VS_STATE_*). */
#define RVS_DAEMON_MASTER	1
#define RVS_DAEMON_BACKUP	2

/* Attributes of GET_INFO replies. */
enum rvs_info_attr {
	RVS_INFO_ATTR_UNSPEC = 0,
	RVS_INFO_ATTR_VERSION,		/* 1: u32 */
	RVS_INFO_ATTR_CONN_TAB_SIZE,	/* 2: u32 */
	/* rvs additions, after IPVS's numbers */
	RVS_INFO_ATTR_CONN_COUNT,	/* 3: u32 entries in the connection table */
	RVS_INFO_ATTR_CONN_MEMORY,	/* 4: u64 bytes held by the connection table */
	RVS_INFO_ATTR_CONN_REFUSED,	/* 5: u64 new connections refused (table full, no memory) */
	RVS_INFO_ATTR_CONN_EVICTED,	/* 6: u64 embryonic entries evicted (drop_entry) */
	RVS_INFO_ATTR_PAD,		/* 7: padding for the u64 attributes */
	RVS_INFO_ATTR_VIP_GUARDED,	/* 8: u64 packets the VIP port guard dropped or refused */
	RVS_INFO_ATTR_CONN_FLUSHED,	/* 9: u64 connections ended by flushes and drains
					 * (FLUSH_CONNS reply: by that flush) */
	RVS_INFO_ATTR_FULLNAT_NO_PORT,	/* 10: u64 packets that would open a FullNAT connection,
					 * dropped: no free local port (a client's
					 * retransmitted SYNs count each) */
	RVS_INFO_ATTR_ENAT_NO_ROOM,	/* 11: u64 client SYNs of ENAT connections dropped:
					 * no room in their TCP header for the option */
	RVS_INFO_ATTR_CONN_TAB_MAX,	/* 12: u32 the most buckets the connection table
					 * grows to (2^conn_tab_bits; CONN_TAB_SIZE is
					 * its size now) */
	__RVS_INFO_ATTR_MAX,
};
#define RVS_INFO_ATTR_MAX (__RVS_INFO_ATTR_MAX - 1)

#endif /* _UAPI_RVS_H */
