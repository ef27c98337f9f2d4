// SPDX-License-Identifier: GPL-2.0

//! Numbers of the rvs generic netlink protocol: the one Rust mirror of
//! `rvs/uapi/rvs.h`, used by the pure decoders here, by rvsadm and by the
//! netlink fuzzer. The names are the header's.
//!
//! The header is the single source: `tests/uapi.rs` parses it and checks
//! every constant defined here (and every constant of the header) against
//! it, and the module build checks a sample against its bindgen-generated
//! copy at compile time (rvs/sys/ffi.rs).

// Each name is the header's and documented there.
#![allow(missing_docs)]

/// Generic netlink family name.
pub const RVS_GENL_NAME: &str = "RVS";
/// The family name also answered with `ipvs_compat=1`: IPVS's.
pub const RVS_IPVS_GENL_NAME: &str = "IPVS";
/// The RVS family's multicast group of configuration changes.
pub const RVS_GENL_MCGRP_EVENTS: &str = "events";

macro_rules! uapi_consts {
    ($( $(#[$m:meta])* $name:ident : $ty:ty = $val:expr; )*) => {
        $( $(#[$m])* pub const $name: $ty = $val; )*

        /// Every numeric constant of this module with its name, for the
        /// consistency test against the C header.
        pub const ALL: &[(&str, u64)] = &[ $( (stringify!($name), $name as u64), )* ];
    };
}

uapi_consts! {
    /// Generic netlink family version.
    RVS_GENL_VERSION: u8 = 0x1;
    /// Version reported by GET_INFO (1.2.1, like IPVS).
    RVS_VERSION_CODE: u32 = 0x010201;

    RVS_SCHEDNAME_MAXLEN: usize = 16;
    RVS_PENAME_MAXLEN: usize = 16;

    // Service flags.
    RVS_SVC_F_PERSISTENT: u32 = 0x0001;
    RVS_SVC_F_HASHED: u32 = 0x0002;
    RVS_SVC_F_ONEPACKET: u32 = 0x0004;
    RVS_SVC_F_SCHED1: u32 = 0x0008;
    RVS_SVC_F_SCHED2: u32 = 0x0010;
    RVS_SVC_F_SCHED3: u32 = 0x0020;

    // Forwarding methods.
    RVS_CONN_F_FWD_MASK: u32 = 0x0007;
    RVS_CONN_F_MASQ: u32 = 0x0000;
    RVS_CONN_F_LOCALNODE: u32 = 0x0001;
    RVS_CONN_F_TUNNEL: u32 = 0x0002;
    RVS_CONN_F_DROUTE: u32 = 0x0003;
    RVS_CONN_F_BYPASS: u32 = 0x0004;
    RVS_CONN_F_FULLNAT: u32 = 0x0005;
    RVS_CONN_F_ENAT: u32 = 0x0006;

    RVS_DEST_WEIGHT_MAX: u32 = 65535;

    // enum rvs_cmd
    RVS_CMD_UNSPEC: u8 = 0;
    RVS_CMD_NEW_SERVICE: u8 = 1;
    RVS_CMD_SET_SERVICE: u8 = 2;
    RVS_CMD_DEL_SERVICE: u8 = 3;
    RVS_CMD_GET_SERVICE: u8 = 4;
    RVS_CMD_NEW_DEST: u8 = 5;
    RVS_CMD_SET_DEST: u8 = 6;
    RVS_CMD_DEL_DEST: u8 = 7;
    RVS_CMD_GET_DEST: u8 = 8;
    RVS_CMD_NEW_DAEMON: u8 = 9;
    RVS_CMD_DEL_DAEMON: u8 = 10;
    RVS_CMD_GET_DAEMON: u8 = 11;
    RVS_CMD_SET_CONFIG: u8 = 12;
    RVS_CMD_GET_CONFIG: u8 = 13;
    RVS_CMD_SET_INFO: u8 = 14;
    RVS_CMD_GET_INFO: u8 = 15;
    RVS_CMD_ZERO: u8 = 16;
    RVS_CMD_FLUSH: u8 = 17;
    RVS_CMD_GET_CONN: u8 = 18;
    RVS_CMD_FLUSH_CONNS: u8 = 19;
    RVS_CMD_APPLY: u8 = 20;
    RVS_CMD_MAX: u8 = 20;

    // enum rvs_attr (top level)
    RVS_CMD_ATTR_UNSPEC: u16 = 0;
    RVS_CMD_ATTR_SERVICE: u16 = 1;
    RVS_CMD_ATTR_DEST: u16 = 2;
    RVS_CMD_ATTR_DAEMON: u16 = 3;
    RVS_CMD_ATTR_TIMEOUT_TCP: u16 = 4;
    RVS_CMD_ATTR_TIMEOUT_TCP_FIN: u16 = 5;
    RVS_CMD_ATTR_TIMEOUT_UDP: u16 = 6;
    RVS_CMD_ATTR_CONN: u16 = 7;
    RVS_CMD_ATTR_EXPIRE_NODEST_CONN: u16 = 8;
    RVS_CMD_ATTR_EXPIRE_QUIESCENT_TEMPLATE: u16 = 9;
    RVS_CMD_ATTR_CONNTRACK: u16 = 10;
    RVS_CMD_ATTR_CONN_MAX: u16 = 11;
    RVS_CMD_ATTR_DROP_ENTRY: u16 = 12;
    RVS_CMD_ATTR_SECURE_TCP: u16 = 13;
    RVS_CMD_ATTR_CONN_REUSE_MODE: u16 = 14;
    RVS_CMD_ATTR_SLOPPY_TCP: u16 = 15;
    RVS_CMD_ATTR_SLOPPY_SCTP: u16 = 16;
    RVS_CMD_ATTR_VIP_GUARD: u16 = 17;
    RVS_CMD_ATTR_FULLNAT_PORT_MIN: u16 = 18;
    RVS_CMD_ATTR_FULLNAT_PORT_MAX: u16 = 19;
    RVS_CMD_ATTR_SYNC_RESYNC: u16 = 20;
    RVS_CMD_ATTR_SYNC_THRESHOLD: u16 = 21;
    RVS_CMD_ATTR_SYNC_PERIOD: u16 = 22;
    RVS_CMD_ATTR_OP: u16 = 23;
    RVS_CMD_ATTR_FASTPATH: u16 = 24;
    RVS_CMD_ATTR_MAX: u16 = 24;

    // enum rvs_op_attr
    RVS_OP_ATTR_UNSPEC: u16 = 0;
    RVS_OP_ATTR_SERVICE: u16 = 1;
    RVS_OP_ATTR_DEST: u16 = 2;
    RVS_OP_ATTR_CMD: u16 = 3;
    RVS_OP_ATTR_MAX: u16 = 3;

    // enum rvs_svc_attr
    RVS_SVC_ATTR_UNSPEC: u16 = 0;
    RVS_SVC_ATTR_AF: u16 = 1;
    RVS_SVC_ATTR_PROTOCOL: u16 = 2;
    RVS_SVC_ATTR_ADDR: u16 = 3;
    RVS_SVC_ATTR_PORT: u16 = 4;
    RVS_SVC_ATTR_FWMARK: u16 = 5;
    RVS_SVC_ATTR_SCHED_NAME: u16 = 6;
    RVS_SVC_ATTR_FLAGS: u16 = 7;
    RVS_SVC_ATTR_TIMEOUT: u16 = 8;
    RVS_SVC_ATTR_NETMASK: u16 = 9;
    RVS_SVC_ATTR_STATS: u16 = 10;
    RVS_SVC_ATTR_PE_NAME: u16 = 11;
    RVS_SVC_ATTR_STATS64: u16 = 12;
    RVS_SVC_ATTR_LADDRS: u16 = 13;
    RVS_SVC_ATTR_MAX: u16 = 13;

    // enum rvs_laddr_attr
    RVS_LADDR_ATTR_UNSPEC: u16 = 0;
    RVS_LADDR_ATTR_ADDR: u16 = 1;
    RVS_LADDR_ATTR_MAX: u16 = 1;
    RVS_LADDRS_MAX: usize = 64;

    // enum rvs_dest_attr
    RVS_DEST_ATTR_UNSPEC: u16 = 0;
    RVS_DEST_ATTR_ADDR: u16 = 1;
    RVS_DEST_ATTR_PORT: u16 = 2;
    RVS_DEST_ATTR_FWD_METHOD: u16 = 3;
    RVS_DEST_ATTR_WEIGHT: u16 = 4;
    RVS_DEST_ATTR_U_THRESH: u16 = 5;
    RVS_DEST_ATTR_L_THRESH: u16 = 6;
    RVS_DEST_ATTR_ACTIVE_CONNS: u16 = 7;
    RVS_DEST_ATTR_INACT_CONNS: u16 = 8;
    RVS_DEST_ATTR_PERSIST_CONNS: u16 = 9;
    RVS_DEST_ATTR_STATS: u16 = 10;
    RVS_DEST_ATTR_ADDR_FAMILY: u16 = 11;
    RVS_DEST_ATTR_STATS64: u16 = 12;
    RVS_DEST_ATTR_TUN_TYPE: u16 = 13;
    RVS_DEST_ATTR_TUN_PORT: u16 = 14;
    RVS_DEST_ATTR_TUN_FLAGS: u16 = 15;
    RVS_DEST_ATTR_DRAIN: u16 = 16;
    RVS_DEST_ATTR_MAX: u16 = 16;

    // enum rvs_tun_type, tunnel flags
    RVS_TUN_TYPE_IPIP: u8 = 0;
    RVS_TUN_TYPE_GUE: u8 = 1;
    RVS_TUN_TYPE_GRE: u8 = 2;
    RVS_TUN_F_CSUM: u16 = 0x0001;
    RVS_TUN_F_REMCSUM: u16 = 0x0002;

    // enum rvs_stats_attr
    RVS_STATS_ATTR_UNSPEC: u16 = 0;
    RVS_STATS_ATTR_CONNS: u16 = 1;
    RVS_STATS_ATTR_INPKTS: u16 = 2;
    RVS_STATS_ATTR_OUTPKTS: u16 = 3;
    RVS_STATS_ATTR_INBYTES: u16 = 4;
    RVS_STATS_ATTR_OUTBYTES: u16 = 5;
    RVS_STATS_ATTR_CPS: u16 = 6;
    RVS_STATS_ATTR_INPPS: u16 = 7;
    RVS_STATS_ATTR_OUTPPS: u16 = 8;
    RVS_STATS_ATTR_INBPS: u16 = 9;
    RVS_STATS_ATTR_OUTBPS: u16 = 10;
    RVS_STATS_ATTR_PAD: u16 = 11;
    RVS_STATS_ATTR_MAX: u16 = 11;

    // enum rvs_conn_attr (rvs addition)
    RVS_CONN_ATTR_UNSPEC: u16 = 0;
    RVS_CONN_ATTR_AF: u16 = 1;
    RVS_CONN_ATTR_PROTOCOL: u16 = 2;
    RVS_CONN_ATTR_CADDR: u16 = 3;
    RVS_CONN_ATTR_CPORT: u16 = 4;
    RVS_CONN_ATTR_VADDR: u16 = 5;
    RVS_CONN_ATTR_VPORT: u16 = 6;
    RVS_CONN_ATTR_DADDR: u16 = 7;
    RVS_CONN_ATTR_DPORT: u16 = 8;
    RVS_CONN_ATTR_STATE: u16 = 9;
    RVS_CONN_ATTR_EXPIRES: u16 = 10;
    RVS_CONN_ATTR_FWD_METHOD: u16 = 11;
    RVS_CONN_ATTR_DEST_AF: u16 = 12;
    RVS_CONN_ATTR_LADDR: u16 = 13;
    RVS_CONN_ATTR_LPORT: u16 = 14;
    RVS_CONN_ATTR_MAX: u16 = 14;

    // enum rvs_daemon_attr
    RVS_DAEMON_ATTR_UNSPEC: u16 = 0;
    RVS_DAEMON_ATTR_STATE: u16 = 1;
    RVS_DAEMON_ATTR_MCAST_IFN: u16 = 2;
    RVS_DAEMON_ATTR_SYNC_ID: u16 = 3;
    RVS_DAEMON_ATTR_SYNC_MAXLEN: u16 = 4;
    RVS_DAEMON_ATTR_MCAST_GROUP: u16 = 5;
    RVS_DAEMON_ATTR_MCAST_GROUP6: u16 = 6;
    RVS_DAEMON_ATTR_MCAST_PORT: u16 = 7;
    RVS_DAEMON_ATTR_MCAST_TTL: u16 = 8;
    RVS_DAEMON_ATTR_PAD: u16 = 9;
    RVS_DAEMON_ATTR_MSGS: u16 = 10;
    RVS_DAEMON_ATTR_CONNS: u16 = 11;
    RVS_DAEMON_ATTR_REFUSED: u16 = 12;
    RVS_DAEMON_ATTR_LOST: u16 = 13;
    RVS_DAEMON_ATTR_RESYNCS: u16 = 14;
    RVS_DAEMON_ATTR_MAX: u16 = 14;
    RVS_DAEMON_MASTER: u32 = 1;
    RVS_DAEMON_BACKUP: u32 = 2;

    // enum rvs_info_attr
    RVS_INFO_ATTR_UNSPEC: u16 = 0;
    RVS_INFO_ATTR_VERSION: u16 = 1;
    RVS_INFO_ATTR_CONN_TAB_SIZE: u16 = 2;
    RVS_INFO_ATTR_CONN_COUNT: u16 = 3;
    RVS_INFO_ATTR_CONN_MEMORY: u16 = 4;
    RVS_INFO_ATTR_CONN_REFUSED: u16 = 5;
    RVS_INFO_ATTR_CONN_EVICTED: u16 = 6;
    RVS_INFO_ATTR_PAD: u16 = 7;
    RVS_INFO_ATTR_VIP_GUARDED: u16 = 8;
    RVS_INFO_ATTR_CONN_FLUSHED: u16 = 9;
    RVS_INFO_ATTR_FULLNAT_NO_PORT: u16 = 10;
    RVS_INFO_ATTR_ENAT_NO_ROOM: u16 = 11;
    RVS_INFO_ATTR_CONN_TAB_MAX: u16 = 12;
    RVS_INFO_ATTR_MAX: u16 = 12;
}

/// Size in bytes of `struct rvs_flags { __u32 flags; __u32 mask; }`.
pub const RVS_FLAGS_SIZE: usize = 8;

/// Address families and protocols (Linux ABI values, not from rvs.h).
pub mod linux {
    pub const AF_INET: u16 = 2;
    pub const AF_INET6: u16 = 10;
    pub const IPPROTO_TCP: u16 = 6;
    pub const IPPROTO_UDP: u16 = 17;
    pub const IPPROTO_SCTP: u16 = 132;
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::string::String;

    /// Reads the enum members of `rvs/uapi/rvs.h` with their values.
    fn header_values() -> HashMap<String, i64> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../uapi/rvs.h");
        let text = std::fs::read_to_string(path).expect("read rvs/uapi/rvs.h");
        let mut values = HashMap::new();
        let mut next = 0i64;
        let mut in_enum = false;
        for line in text.lines() {
            let line = line.split("/*").next().unwrap_or("").trim();
            if line.starts_with("enum ") {
                in_enum = true;
                next = 0;
                continue;
            }
            if in_enum && line.starts_with('}') {
                in_enum = false;
                continue;
            }
            if !in_enum || line.is_empty() {
                continue;
            }
            let item = line.trim_end_matches(',');
            let (name, value) = match item.split_once('=') {
                Some((n, v)) => (n.trim(), v.trim().parse::<i64>().expect("enum value")),
                None => (item.trim(), next),
            };
            values.insert(String::from(name), value);
            next = value + 1;
        }
        values
    }

    /// Every setting is the attribute `RVS_CMD_ATTR_<NAME>`, and settings
    /// are the top-level attributes from 8 to the last but
    /// `RVS_CMD_ATTR_OP` (the module's policy relies on it).
    #[test]
    fn settings_match_the_uapi_header() {
        use super::super::settings::SETTINGS;
        let h = header_values();
        for spec in SETTINGS.iter() {
            let name = std::format!("RVS_CMD_ATTR_{}", spec.name.to_uppercase());
            assert_eq!(h.get(&name).copied(), Some(i64::from(spec.attr)), "{name}");
        }
        let last = SETTINGS.iter().map(|s| s.attr).max().unwrap();
        assert_eq!(
            h.get("__RVS_CMD_ATTR_MAX").copied(),
            Some(i64::from(last) + 1)
        );
        let op = super::RVS_CMD_ATTR_OP;
        assert_eq!(h.get("RVS_CMD_ATTR_OP").copied(), Some(i64::from(op)));
        // Every attribute from 8 to the last is a setting, but OP.
        for a in 8..=last {
            assert_eq!(
                SETTINGS.iter().any(|s| s.attr == a),
                a != op,
                "attribute {a}"
            );
        }
        assert_eq!(h.get("RVS_CMD_ATTR_CONN").copied(), Some(7));
        assert_eq!(SETTINGS.iter().map(|s| s.attr).min(), Some(8));
    }
}
