// SPDX-License-Identifier: GPL-2.0

//! Runtime settings of a namespace: IPVS's sysctl knobs (and rvs's own),
//! carried as flat u32 attributes of SET_CONFIG / GET_CONFIG.
//!
//! One table, [`SETTINGS`], names every setting once: its netlink
//! attribute, its range and its default. The module keeps one atomic per
//! row and validates writes with [`validate`]; rvsadm uses the same table
//! for `--set-option NAME=VALUE` and `--show-options`, so a new setting is
//! one new row plus the code that reads it.

#![forbid(unsafe_code)]

use super::config::{ConfigError, ERANGE};
use super::defense;
use super::uapi;
use core::ffi::CStr;

/// A setting, in [`SETTINGS`] order (its discriminant is its row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `expire_nodest_conn`: drop connections of a deleted real server on
    /// their next packet (1) instead of keeping them until they time out.
    ExpireNodestConn = 0,
    /// `expire_quiescent_template`: persistence templates pointing at a
    /// real server of weight 0 expire on their next use (1).
    ExpireQuiescentTemplate = 1,
    /// `conn_max`: most connection entries of the namespace; new
    /// connections beyond it are dropped and counted.
    ConnMax = 2,
    /// `drop_entry`: percent of `conn_max` above which embryonic entries
    /// are evicted (0 = off); see `defense`.
    DropEntry = 3,
    /// `secure_tcp`: lifetime in seconds of embryonic TCP entries, not
    /// extended by the real server's retransmissions (0 = off).
    SecureTcp = 4,
    /// `conntrack`: packets rvs forwards are tracked by netfilter's
    /// conntrack, and a NAT connection's entry expects its real server's
    /// replies, so nftables NAT and conntrack matches see rvs's
    /// connections (1); untracked as by default in IPVS (0).
    Conntrack = 5,
    /// `conn_reuse_mode`: what a SYN reusing the addresses and ports of an
    /// entry whose connection ended does: bit 1 (value 1) schedules it
    /// afresh when the old one is in TIME_WAIT or CLOSE, bit 2 (value 2)
    /// also when it is in FIN_WAIT with no reply seen (Direct Routing and
    /// tunnels see no reply); 0 sends it along the old entry (IPVS's knob
    /// and default, 1).
    ConnReuseMode = 6,
    /// `sloppy_tcp`: any TCP segment but a reset may open a connection
    /// (1), not only a SYN (0, IPVS's default): a director taking over
    /// from another without its connection table still forwards the
    /// flows already under way.
    SloppyTcp = 7,
    /// `sloppy_sctp`: any SCTP packet but an ABORT may open an
    /// association (1), not only an INIT (0).
    SloppySctp = 8,
    /// `vip_guard`: what happens to a TCP SYN, SCTP INIT or UDP datagram
    /// from outside to the address of a virtual service that matches no
    /// service of that address: 0 (`off`) delivers it to the director's
    /// own sockets, as IPVS does (so a VIP exposes every local listener
    /// bound to the wildcard address); 1 (`drop`) drops it; 2 (`reject`)
    /// answers ICMP port unreachable.
    VipGuard = 9,
    /// `fullnat_port_min`: lowest local port a FullNAT connection is given
    /// on its local address (see `fullnat`).
    FullnatPortMin = 10,
    /// `fullnat_port_max`: highest such port; a connection that finds no
    /// free port in the range is dropped and counted.
    FullnatPortMax = 11,
    /// `sync_resync`: a backup sync daemon asks for its masters' whole
    /// table when it starts, and a master answers such requests (1); 0
    /// keeps to IPVS's protocol alone (see `sync::resync`).
    SyncResync = 12,
    /// `sync_threshold`: a sync master sends a connection when its count
    /// of client packets, modulo `sync_period`, equals this (IPVS's
    /// `sync_threshold` sysctl, first number; default 3).
    SyncThreshold = 13,
    /// `sync_period`: see `SyncThreshold` (IPVS's second number; default
    /// 50; 0 sends only at the threshold itself).
    SyncPeriod = 14,
    /// `fastpath`: packets of established connections are handled at the
    /// receiving device's ingress hook, before IP receive, routing and the
    /// filter chains (1); every packet takes the IPVS path (0, default).
    /// See `Documentation/fastpath.md`.
    Fastpath = 15,
}

/// Number of settings (rows of [`SETTINGS`]).
pub const COUNT: usize = 16;

/// One row of the settings table.
#[derive(Debug)]
pub struct SettingSpec {
    /// Which setting this row describes.
    pub setting: Setting,
    /// Name as users write it (IPVS's sysctl name where there is one).
    pub name: &'static str,
    /// `RVS_CMD_ATTR_*` carrying it in SET_CONFIG / GET_CONFIG.
    pub attr: u16,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// Value of a new namespace.
    pub default: u32,
    /// Extended-ACK text for a value outside `min..=max`.
    pub range_msg: &'static CStr,
    /// One line for `--show-options` and the man page.
    pub help: &'static str,
    /// Names of the values, by value (`off`, `drop`, ...), for settings
    /// that are a choice rather than a number; empty for numbers.
    pub names: &'static [&'static str],
}

/// Every setting, indexed by `Setting as usize`.
pub static SETTINGS: [SettingSpec; COUNT] = [
    SettingSpec {
        setting: Setting::ExpireNodestConn,
        name: "expire_nodest_conn",
        attr: uapi::RVS_CMD_ATTR_EXPIRE_NODEST_CONN,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"expire_nodest_conn must be 0 or 1",
        help: "drop a deleted real server's connections on their next packet",
        names: &[],
    },
    SettingSpec {
        setting: Setting::ExpireQuiescentTemplate,
        name: "expire_quiescent_template",
        attr: uapi::RVS_CMD_ATTR_EXPIRE_QUIESCENT_TEMPLATE,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"expire_quiescent_template must be 0 or 1",
        help: "expire persistence templates of weight-0 real servers",
        names: &[],
    },
    SettingSpec {
        setting: Setting::ConnMax,
        name: "conn_max",
        attr: uapi::RVS_CMD_ATTR_CONN_MAX,
        min: defense::CONN_MAX_MIN,
        max: defense::CONN_MAX_MAX,
        default: defense::CONN_MAX_DEFAULT,
        range_msg: c"conn_max must be between 16 and 16777216",
        help: "most connection entries; new connections beyond are dropped",
        names: &[],
    },
    SettingSpec {
        setting: Setting::DropEntry,
        name: "drop_entry",
        attr: uapi::RVS_CMD_ATTR_DROP_ENTRY,
        min: 0,
        max: 100,
        default: 0,
        range_msg: c"drop_entry must be a percentage of conn_max, 0 (off) to 100",
        help: "above this % of conn_max, evict half-open entries (0: off)",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SecureTcp,
        name: "secure_tcp",
        attr: uapi::RVS_CMD_ATTR_SECURE_TCP,
        min: 0,
        max: defense::SECURE_TCP_MAX,
        default: 0,
        range_msg: c"secure_tcp must be 0 (off) to 60 seconds",
        help: "half-open TCP entries live this many seconds (0: off)",
        names: &[],
    },
    SettingSpec {
        setting: Setting::Conntrack,
        name: "conntrack",
        attr: uapi::RVS_CMD_ATTR_CONNTRACK,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"conntrack must be 0 or 1",
        help: "let conntrack and nftables NAT see forwarded connections",
        names: &[],
    },
    SettingSpec {
        setting: Setting::ConnReuseMode,
        name: "conn_reuse_mode",
        attr: uapi::RVS_CMD_ATTR_CONN_REUSE_MODE,
        min: 0,
        max: 3,
        default: 1,
        range_msg: c"conn_reuse_mode is a bitmap of 1 and 2 (0 to 3)",
        help: "reschedule a SYN reusing an ended connection's ports (bits 1, 2)",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SloppyTcp,
        name: "sloppy_tcp",
        attr: uapi::RVS_CMD_ATTR_SLOPPY_TCP,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"sloppy_tcp must be 0 or 1",
        help: "let any TCP segment but a reset open a connection, not only a SYN",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SloppySctp,
        name: "sloppy_sctp",
        attr: uapi::RVS_CMD_ATTR_SLOPPY_SCTP,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"sloppy_sctp must be 0 or 1",
        help: "let any SCTP packet but an ABORT open an association, not only an INIT",
        names: &[],
    },
    SettingSpec {
        setting: Setting::VipGuard,
        name: "vip_guard",
        attr: uapi::RVS_CMD_ATTR_VIP_GUARD,
        min: 0,
        max: 2,
        default: 0,
        range_msg: c"vip_guard must be 0 (off), 1 (drop) or 2 (reject)",
        help: "new flows to a VIP's other ports: off (to local sockets), drop, reject",
        names: &["off", "drop", "reject"],
    },
    SettingSpec {
        setting: Setting::FullnatPortMin,
        name: "fullnat_port_min",
        attr: uapi::RVS_CMD_ATTR_FULLNAT_PORT_MIN,
        min: 1,
        max: 65535,
        default: 1024,
        range_msg: c"fullnat_port_min must be 1 to 65535",
        help: "lowest local port of FullNAT connections",
        names: &[],
    },
    SettingSpec {
        setting: Setting::FullnatPortMax,
        name: "fullnat_port_max",
        attr: uapi::RVS_CMD_ATTR_FULLNAT_PORT_MAX,
        min: 1,
        max: 65535,
        default: 65535,
        range_msg: c"fullnat_port_max must be 1 to 65535",
        help: "highest local port of FullNAT connections",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SyncResync,
        name: "sync_resync",
        attr: uapi::RVS_CMD_ATTR_SYNC_RESYNC,
        min: 0,
        max: 1,
        default: 1,
        range_msg: c"sync_resync must be 0 or 1",
        help: "sync daemons exchange whole tables when a backup starts",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SyncThreshold,
        name: "sync_threshold",
        attr: uapi::RVS_CMD_ATTR_SYNC_THRESHOLD,
        min: 0,
        max: 255,
        default: 3,
        range_msg: c"sync_threshold must be 0 to 255",
        help: "a sync master sends a connection at this packet count (modulo sync_period)",
        names: &[],
    },
    SettingSpec {
        setting: Setting::SyncPeriod,
        name: "sync_period",
        attr: uapi::RVS_CMD_ATTR_SYNC_PERIOD,
        min: 0,
        max: 250,
        default: 50,
        range_msg: c"sync_period must be 0 to 250",
        help: "packets between two sends of a connection by a sync master (0: once)",
        names: &[],
    },
    SettingSpec {
        setting: Setting::Fastpath,
        name: "fastpath",
        attr: uapi::RVS_CMD_ATTR_FASTPATH,
        min: 0,
        max: 1,
        default: 0,
        range_msg: c"fastpath must be 0 or 1",
        help: "handle established connections at the devices' ingress hook (skips filter chains)",
        names: &[],
    },
];

impl Setting {
    /// Its row in [`SETTINGS`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its row's description.
    pub fn spec(self) -> &'static SettingSpec {
        // The discriminants are the rows; `table_is_consistent` checks it.
        let [first, ..] = &SETTINGS;
        SETTINGS.get(self.index()).unwrap_or(first)
    }
}

/// The row whose netlink attribute is `attr`.
pub fn by_attr(attr: u16) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.attr == attr)
}

/// The row called `name`.
pub fn by_name(name: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// The value called `name` in `spec`'s names, or `name` as a number.
pub fn parse_value(spec: &SettingSpec, name: &str) -> Option<u32> {
    match spec.names.iter().position(|n| *n == name) {
        Some(i) => u32::try_from(i).ok(),
        None => name.parse().ok(),
    }
}

/// The name of `value` in `spec`, if its values have names.
pub fn value_name(spec: &SettingSpec, value: u32) -> Option<&'static str> {
    spec.names.get(usize::try_from(value).ok()?).copied()
}

/// Checks a value for `spec`: ERANGE with the row's message when outside
/// its range.
pub fn validate(spec: &SettingSpec, value: u32) -> Result<u32, ConfigError> {
    if (spec.min..=spec.max).contains(&value) {
        Ok(value)
    } else {
        Err(ConfigError::new(ERANGE, spec.range_msg))
    }
}

/// The defaults of every setting, in row order (a new namespace's values).
pub fn defaults() -> [u32; COUNT] {
    let mut v = [0; COUNT];
    for (slot, spec) in v.iter_mut().zip(SETTINGS.iter()) {
        *slot = spec.default;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, spec) in SETTINGS.iter().enumerate() {
            assert_eq!(spec.setting.index(), i, "{} is in the wrong row", spec.name);
            assert!(
                spec.min <= spec.default && spec.default <= spec.max,
                "{}",
                spec.name
            );
            assert!(spec.attr >= 8, "{}: attributes 1..7 are IPVS's", spec.name);
            assert!(!spec.help.is_empty());
            assert!(
                spec.names.is_empty() || spec.names.len() as u32 == spec.max - spec.min + 1,
                "{}: a name for every value",
                spec.name
            );
            assert!(spec
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_'));
            for other in &SETTINGS[i + 1..] {
                assert_ne!(spec.attr, other.attr, "{} and {}", spec.name, other.name);
                assert_ne!(spec.name, other.name);
            }
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(
            by_name("expire_nodest_conn").map(|s| s.setting),
            Some(Setting::ExpireNodestConn)
        );
        assert_eq!(
            by_attr(9).map(|s| s.name),
            Some("expire_quiescent_template")
        );
        assert!(by_name("nope").is_none());
        assert!(by_attr(4).is_none(), "timeouts are not settings");
        assert_eq!(Setting::ExpireQuiescentTemplate.spec().attr, 9);
    }

    #[test]
    fn validation() {
        let spec = Setting::ExpireNodestConn.spec();
        assert_eq!(validate(spec, 1), Ok(1));
        assert_eq!(validate(spec, 0), Ok(0));
        let e = validate(spec, 2).unwrap_err();
        assert_eq!(e.errno, ERANGE);
        assert_eq!(e.msg, c"expire_nodest_conn must be 0 or 1");
        assert_eq!(
            defaults(),
            [0, 0, 1 << 20, 0, 0, 0, 1, 0, 0, 0, 1024, 65535, 1, 3, 50, 0]
        );
        let guard = Setting::VipGuard.spec();
        assert_eq!(parse_value(guard, "reject"), Some(2));
        assert_eq!(parse_value(guard, "1"), Some(1));
        assert_eq!(parse_value(guard, "on"), None);
        assert_eq!(value_name(guard, 0), Some("off"));
        assert_eq!(value_name(guard, 3), None);
        assert_eq!(value_name(Setting::ConnMax.spec(), 0), None);
        assert_eq!(parse_value(Setting::ConnMax.spec(), "16"), Some(16));
        assert_eq!(by_name("conntrack").map(|s| s.attr), Some(10));
        assert!(validate(Setting::Conntrack.spec(), 2).is_err());
        let max = Setting::ConnMax.spec();
        assert_eq!(validate(max, 15).unwrap_err().errno, ERANGE);
        assert_eq!(validate(max, 16), Ok(16));
        assert_eq!(validate(max, 1 << 24), Ok(1 << 24));
        assert!(validate(max, (1 << 24) + 1).is_err());
        assert!(validate(Setting::DropEntry.spec(), 101).is_err());
        assert_eq!(validate(Setting::SecureTcp.spec(), 60), Ok(60));
        assert!(validate(Setting::SecureTcp.spec(), 61).is_err());
    }
}
