// SPDX-License-Identifier: GPL-2.0

//! IPVS's sysctl knobs (`/proc/sys/net/ipv4/vs/*`, with `ipvs_compat=1`)
//! and what each one is in rvs: one of rvs's settings under the same
//! name, IPVS's on/off mode over a setting rvs keeps in other units, or a
//! behaviour rvs has without a knob, whose file shows that behaviour and
//! refuses to be set to anything else. No file takes a value and then
//! ignores it: a refused write fails (EOPNOTSUPP, and the module says why
//! in the kernel log), so a tool that sets a knob rvs lacks finds out.
//!
//! Absent: `sync_threshold` (two numbers: rvs's settings `sync_threshold`
//! and `sync_period`), `sync_qlen_max` (rvs's queue is a fixed 256
//! messages) and `est_cpulist` (a CPU list).
//! `debug_level` exists in IPVS only with CONFIG_IP_VS_DEBUG.
//!
//! C counterpart: `vs_vars` and `ip_vs_control_net_init_sysctl` in
//! net/netfilter/ipvs/ip_vs_ctl.c.

#![forbid(unsafe_code)]

use super::config::{EINVAL, EOPNOTSUPP};
use super::settings::{self, Setting};
use core::ffi::CStr;

/// What a knob's file is in rvs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// The rvs setting of the same name and values (`--set-option`).
    Same(Setting),
    /// IPVS's defence mode (0 off, 1 automatic, 2 on, 3 always on) over an
    /// rvs setting with other units. Reads 1 while the setting is on, 0
    /// while off; writing 0 turns it off, 1 turns it on at `on` unless it
    /// is on already (rvs's defences are automatic: they act under load
    /// only); 2 and 3 are refused.
    Mode {
        /// The rvs setting.
        setting: Setting,
        /// Its value when 1 turns it on.
        on: u32,
    },
    /// No knob in rvs: it behaves as `value` says. Writing `value` changes
    /// nothing; any other value is refused for the reason `why`.
    Fixed {
        /// What rvs does, in IPVS's terms.
        value: i32,
        /// Why another value is refused, for the kernel log.
        why: &'static CStr,
    },
}

/// One file of the directory.
#[derive(Debug)]
pub struct KnobSpec {
    /// The file's name (IPVS's).
    pub name: &'static CStr,
    /// What it is in rvs.
    pub knob: Knob,
}

const SYNC_V1: &CStr = c"rvs's sync master sends protocol version 1 (its backup reads 0 and 1)";
const SYNC_NO_REFRESH: &CStr = c"rvs resends a connection at its packet counts and state changes only (sync_refresh_period and sync_retries are not offered)";

/// The files, in IPVS's order.
pub static KNOBS: [KnobSpec; 26] = [
    fixed(
        c"amemthresh",
        1024,
        c"rvs's defences act on conn_max (rvsadm --set-option conn_max), not on free memory",
    ),
    fixed(
        c"am_droprate",
        10,
        c"rvs drops no packets at random; its defences act on conn_max",
    ),
    KnobSpec {
        name: c"drop_entry",
        knob: Knob::Mode {
            setting: Setting::DropEntry,
            on: DROP_ENTRY_ON,
        },
    },
    fixed(
        c"drop_packet",
        0,
        c"rvs drops no packets at random; its defences act on conn_max",
    ),
    same(c"conntrack", Setting::Conntrack),
    KnobSpec {
        name: c"secure_tcp",
        knob: Knob::Mode {
            setting: Setting::SecureTcp,
            on: SECURE_TCP_ON,
        },
    },
    fixed(
        c"snat_reroute",
        0,
        c"rvs does not route a NAT reply again after rewriting its source",
    ),
    fixed(c"sync_version", 1, SYNC_V1),
    fixed(
        c"sync_ports",
        1,
        c"rvs runs one sync thread and port per daemon",
    ),
    fixed(
        c"sync_persist_mode",
        0,
        c"rvs's sync master sends connections under persistence with their templates",
    ),
    fixed(
        c"sync_sock_size",
        0,
        c"rvs's sync sockets keep the kernel's default buffer sizes",
    ),
    fixed(
        c"cache_bypass",
        0,
        c"rvs never forwards a packet for a service without an available server",
    ),
    same(c"expire_nodest_conn", Setting::ExpireNodestConn),
    same(c"sloppy_tcp", Setting::SloppyTcp),
    same(c"sloppy_sctp", Setting::SloppySctp),
    same(
        c"expire_quiescent_template",
        Setting::ExpireQuiescentTemplate,
    ),
    fixed(c"sync_refresh_period", 0, SYNC_NO_REFRESH),
    fixed(c"sync_retries", 0, SYNC_NO_REFRESH),
    fixed(
        c"nat_icmp_send",
        0,
        c"rvs sends no ICMP error for a NAT reply without a connection",
    ),
    fixed(
        c"pmtu_disc",
        1,
        c"rvs always answers DF packets too big for the path with ICMP",
    ),
    fixed(
        c"backup_only",
        0,
        c"rvs balances its own services while its backup sync daemon runs",
    ),
    same(c"conn_reuse_mode", Setting::ConnReuseMode),
    fixed(
        c"schedule_icmp",
        0,
        c"rvs schedules no connection for an ICMP error",
    ),
    fixed(
        c"ignore_tunneled",
        0,
        c"rvs balances decapsulated packets as any other",
    ),
    fixed(c"run_estimation", 1, c"rvs always estimates rates"),
    fixed(
        c"est_nice",
        0,
        c"rvs estimates rates in its namespace's work item, not in kernel threads of their own",
    ),
];

/// `drop_entry` set to 1 ("automatic") in the IPVS file: rvs evicts
/// half-open entries once the table is this many percent of `conn_max`.
pub const DROP_ENTRY_ON: u32 = 90;
/// `secure_tcp` set to 1 in the IPVS file: half-open TCP entries live this
/// many seconds (SYN_RECV's own timeout) and are not kept alive by the
/// real server's retransmissions.
pub const SECURE_TCP_ON: u32 = 60;

const fn fixed(name: &'static CStr, value: i32, why: &'static CStr) -> KnobSpec {
    KnobSpec {
        name,
        knob: Knob::Fixed { value, why },
    }
}

const fn same(name: &'static CStr, setting: Setting) -> KnobSpec {
    KnobSpec {
        name,
        knob: Knob::Same(setting),
    }
}

/// A refused write: the errno for the writer and, for a knob rvs does
/// not have, the reason for the kernel log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Positive errno: EINVAL for a value outside a real knob's range,
    /// EOPNOTSUPP for a value rvs cannot honour.
    pub errno: i32,
    /// Why, when it is worth a line in the kernel log.
    pub why: Option<&'static CStr>,
}

const MODE_ALWAYS: &CStr =
    c"rvs's defences act under load only (IPVS's mode 1); 2 and 3 are not implemented";

/// The value a read shows; `current` gives rvs's settings.
pub fn read(knob: Knob, current: impl Fn(Setting) -> u32) -> i32 {
    match knob {
        Knob::Same(s) => i32::try_from(current(s)).unwrap_or(i32::MAX),
        Knob::Mode { setting, .. } => i32::from(current(setting) != 0),
        Knob::Fixed { value, .. } => value,
    }
}

/// What a write of `value` does: `Ok(Some((setting, v)))` stores `v`,
/// `Ok(None)` changes nothing (the value rvs already has).
pub fn write(
    knob: Knob,
    current: impl Fn(Setting) -> u32,
    value: i32,
) -> Result<Option<(Setting, u32)>, Refusal> {
    let invalid = Refusal {
        errno: EINVAL,
        why: None,
    };
    match knob {
        Knob::Same(s) => {
            let v = u32::try_from(value).map_err(|_| invalid)?;
            let v = settings::validate(s.spec(), v).map_err(|_| invalid)?;
            Ok(Some((s, v)))
        }
        Knob::Mode { setting, on } => match value {
            0 => Ok(Some((setting, 0))),
            1 if current(setting) != 0 => Ok(None),
            1 => Ok(Some((setting, on))),
            2 | 3 => Err(Refusal {
                errno: EOPNOTSUPP,
                why: Some(MODE_ALWAYS),
            }),
            _ => Err(invalid),
        },
        Knob::Fixed { value: v, .. } if v == value => Ok(None),
        Knob::Fixed { why, .. } => Err(Refusal {
            errno: EOPNOTSUPP,
            why: Some(why),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(name: &str) -> Knob {
        KNOBS
            .iter()
            .find(|k| k.name.to_str() == Ok(name))
            .map(|k| k.knob)
            .unwrap()
    }

    fn defaults(s: Setting) -> u32 {
        s.spec().default
    }

    /// The file names are IPVS's (vs_vars in ip_vs_ctl.c, 6.12), those
    /// rvs leaves out aside.
    #[test]
    fn names_are_ipvs_names() {
        let ipvs = [
            "amemthresh",
            "am_droprate",
            "drop_entry",
            "drop_packet",
            "conntrack",
            "secure_tcp",
            "snat_reroute",
            "sync_version",
            "sync_ports",
            "sync_persist_mode",
            "sync_qlen_max",
            "sync_sock_size",
            "cache_bypass",
            "expire_nodest_conn",
            "sloppy_tcp",
            "sloppy_sctp",
            "expire_quiescent_template",
            "sync_threshold",
            "sync_refresh_period",
            "sync_retries",
            "nat_icmp_send",
            "pmtu_disc",
            "backup_only",
            "conn_reuse_mode",
            "schedule_icmp",
            "ignore_tunneled",
            "run_estimation",
            "est_cpulist",
            "est_nice",
            "debug_level",
        ];
        let absent = [
            "sync_qlen_max",
            "sync_threshold",
            "est_cpulist",
            "debug_level",
        ];
        let ours: std::vec::Vec<&str> = KNOBS.iter().map(|k| k.name.to_str().unwrap()).collect();
        let expected: std::vec::Vec<&str> = ipvs
            .iter()
            .copied()
            .filter(|n| !absent.contains(n))
            .collect();
        assert_eq!(ours, expected);
    }

    /// Every rvs setting with an IPVS name is that file, not a fixed one.
    #[test]
    fn settings_are_their_files() {
        for s in [
            Setting::Conntrack,
            Setting::ConnReuseMode,
            Setting::ExpireNodestConn,
            Setting::ExpireQuiescentTemplate,
            Setting::SloppyTcp,
            Setting::SloppySctp,
        ] {
            assert_eq!(knob(s.spec().name), Knob::Same(s));
        }
    }

    #[test]
    fn same_reads_and_writes_the_setting() {
        let k = knob("conn_reuse_mode");
        assert_eq!(read(k, defaults), 1);
        assert_eq!(read(k, |_| 3), 3);
        assert_eq!(write(k, defaults, 2), Ok(Some((Setting::ConnReuseMode, 2))));
        assert_eq!(write(k, defaults, 4).unwrap_err().errno, EINVAL);
        assert_eq!(write(k, defaults, -1).unwrap_err().errno, EINVAL);
        assert_eq!(
            write(knob("sloppy_tcp"), defaults, 1),
            Ok(Some((Setting::SloppyTcp, 1)))
        );
    }

    #[test]
    fn modes_map_onto_rvs_units() {
        let k = knob("drop_entry");
        assert_eq!(read(k, defaults), 0);
        assert_eq!(read(k, |_| 75), 1);
        assert_eq!(
            write(k, defaults, 1),
            Ok(Some((Setting::DropEntry, DROP_ENTRY_ON)))
        );
        assert_eq!(write(k, |_| 75, 1), Ok(None), "an rvs percentage is kept");
        assert_eq!(write(k, |_| 75, 0), Ok(Some((Setting::DropEntry, 0))));
        let always = write(k, defaults, 3).unwrap_err();
        assert_eq!(always.errno, EOPNOTSUPP);
        assert!(always.why.is_some());
        assert_eq!(
            write(k, defaults, 4).unwrap_err(),
            Refusal {
                errno: EINVAL,
                why: None
            }
        );
        let s = knob("secure_tcp");
        assert_eq!(
            write(s, defaults, 1),
            Ok(Some((Setting::SecureTcp, SECURE_TCP_ON)))
        );
        assert_eq!(write(s, defaults, 2).unwrap_err().errno, EOPNOTSUPP);
        assert!(settings::validate(Setting::SecureTcp.spec(), SECURE_TCP_ON).is_ok());
        assert!(settings::validate(Setting::DropEntry.spec(), DROP_ENTRY_ON).is_ok());
    }

    #[test]
    fn fixed_knobs_take_only_their_value() {
        let k = knob("sync_version");
        assert_eq!(read(k, defaults), 1);
        assert_eq!(write(k, defaults, 1), Ok(None));
        let r = write(k, defaults, 0).unwrap_err();
        assert_eq!(r.errno, EOPNOTSUPP);
        assert_eq!(r.why, Some(SYNC_V1));
        assert_eq!(
            write(knob("run_estimation"), defaults, 0)
                .unwrap_err()
                .errno,
            EOPNOTSUPP
        );
        for k in &KNOBS {
            if let Knob::Fixed { value, why } = k.knob {
                assert_eq!(write(k.knob, defaults, value), Ok(None), "{:?}", k.name);
                assert!(write(k.knob, defaults, value + 1).is_err(), "{:?}", k.name);
                assert!(!why.is_empty());
            }
        }
    }
}
