// SPDX-License-Identifier: GPL-2.0

//! A sync daemon's settings, from the nest of a NEW_DAEMON or DEL_DAEMON
//! request (`ip_vs_genl_new_daemon`, `ip_vs_genl_del_daemon`,
//! `start_sync_thread`'s defaults), checked before anything starts.
//!
//! Where IPVS silently truncates (a syncid above 255 kept as its low byte)
//! rvs refuses with EINVAL and says why.

#![forbid(unsafe_code)]

use super::super::config::{ConfigError, EINVAL};
use super::super::nlattr;
use super::super::uapi::*;
use super::{SYNC_GROUP_V4, SYNC_PORT};
use core::ffi::CStr;

/// Longest interface name, NUL included (`IFNAMSIZ`).
pub const IFNAMSIZ: usize = 16;

/// Which daemon: the sender or the receiver (IPVS's `IP_VS_STATE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends this director's connections (`IP_VS_STATE_MASTER`).
    Master,
    /// Receives another director's (`IP_VS_STATE_BACKUP`).
    Backup,
}

impl Role {
    /// The uapi number.
    pub fn to_u32(self) -> u32 {
        match self {
            Role::Master => RVS_DAEMON_MASTER,
            Role::Backup => RVS_DAEMON_BACKUP,
        }
    }

    /// Index of the role's slot (and thread): master 0, backup 1.
    pub fn index(self) -> usize {
        match self {
            Role::Master => 0,
            Role::Backup => 1,
        }
    }

    fn from_u32(v: u32) -> Option<Role> {
        match v {
            RVS_DAEMON_MASTER => Some(Role::Master),
            RVS_DAEMON_BACKUP => Some(Role::Backup),
            _ => None,
        }
    }
}

/// A daemon's settings, defaults filled in (but `maxlen` as requested: 0
/// means the interface's size, [`super::policy::sync_maxlen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaemonConfig {
    /// Master or backup.
    pub role: Role,
    /// The interface's name, NUL-terminated within the array.
    pub ifname: [u8; IFNAMSIZ],
    /// The syncid the master sends, or the one a backup accepts (0: any).
    pub syncid: u8,
    /// Most bytes of a datagram's payload, as requested (0: default).
    pub maxlen: u16,
    /// The group is IPv6.
    pub group_v6: bool,
    /// The group address: 4 bytes then zeros, or 16.
    pub group: [u8; 16],
    /// UDP port, host order.
    pub port: u16,
    /// Multicast TTL (hop limit).
    pub ttl: u8,
}

impl DaemonConfig {
    /// The interface name as a C string.
    pub fn ifname(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.ifname).unwrap_or(c"")
    }
}

const fn err(msg: &'static CStr) -> ConfigError {
    ConfigError::new(EINVAL, msg)
}

fn table(nest: &[u8]) -> Result<[Option<&[u8]>; RVS_DAEMON_ATTR_MAX as usize + 1], ConfigError> {
    let mut t = [None; RVS_DAEMON_ATTR_MAX as usize + 1];
    nlattr::parse_nested(nest, &mut t).map_err(|e| err(e.msg()))?;
    Ok(t)
}

fn role(t: &[Option<&[u8]>]) -> Result<Role, ConfigError> {
    let Some(Some(p)) = t.get(usize::from(RVS_DAEMON_ATTR_STATE)) else {
        return Err(err(c"sync daemon state (master or backup) missing"));
    };
    let v = nlattr::get_u32(RVS_DAEMON_ATTR_STATE, p).map_err(|e| err(e.msg()))?;
    Role::from_u32(v).ok_or(err(c"sync daemon state must be 1 (master) or 2 (backup)"))
}

/// The role a DEL_DAEMON nest names.
pub fn parse_del(nest: &[u8]) -> Result<Role, ConfigError> {
    role(&table(nest)?)
}

/// The settings a NEW_DAEMON nest gives, checked, with IPVS's defaults:
/// group 224.0.0.81, port 8848, TTL 1.
pub fn parse_new(nest: &[u8]) -> Result<DaemonConfig, ConfigError> {
    let t = table(nest)?;
    let role = role(&t)?;
    let get = |kind: u16| t.get(usize::from(kind)).copied().flatten();
    let bad = |e: nlattr::AttrError| err(e.msg());

    let name = get(RVS_DAEMON_ATTR_MCAST_IFN).ok_or(err(c"sync interface name missing"))?;
    // A NUL-terminated string (NLA_NUL_STRING) of at most IFNAMSIZ - 1
    // characters.
    let name = match name.iter().position(|&b| b == 0) {
        Some(n) => name.get(..n).unwrap_or(&[]),
        None => return Err(err(c"sync interface name is not NUL-terminated")),
    };
    if name.is_empty() || name.len() >= IFNAMSIZ {
        return Err(err(c"sync interface name must have 1 to 15 characters"));
    }
    let mut ifname = [0u8; IFNAMSIZ];
    if let Some(dst) = ifname.get_mut(..name.len()) {
        dst.copy_from_slice(name);
    }

    let syncid = get(RVS_DAEMON_ATTR_SYNC_ID).ok_or(err(c"syncid missing"))?;
    let syncid = nlattr::get_u32(RVS_DAEMON_ATTR_SYNC_ID, syncid).map_err(bad)?;
    let syncid = u8::try_from(syncid).map_err(|_| err(c"syncid must be 0 to 255"))?;

    let maxlen = match get(RVS_DAEMON_ATTR_SYNC_MAXLEN) {
        Some(p) => nlattr::get_u16(RVS_DAEMON_ATTR_SYNC_MAXLEN, p).map_err(bad)?,
        None => 0,
    };

    let v4 = |[a, b, c, d]: [u8; 4]| [a, b, c, d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let (group_v6, group) = match (
        get(RVS_DAEMON_ATTR_MCAST_GROUP),
        get(RVS_DAEMON_ATTR_MCAST_GROUP6),
    ) {
        // IPVS reads the IPv4 group first and ignores the IPv6 one then.
        (Some(p), _) => {
            let a = <[u8; 4]>::try_from(p).map_err(|_| err(c"IPv4 sync group must be 4 bytes"))?;
            let [first, ..] = a;
            if first & 0xf0 != 0xe0 {
                return Err(err(c"sync group is not an IPv4 multicast address"));
            }
            (false, v4(a))
        }
        (None, Some(p)) => {
            let a =
                <[u8; 16]>::try_from(p).map_err(|_| err(c"IPv6 sync group must be 16 bytes"))?;
            let [first, ..] = a;
            if first != 0xff {
                return Err(err(c"sync group is not an IPv6 multicast address"));
            }
            (true, a)
        }
        (None, None) => (false, v4(SYNC_GROUP_V4)),
    };

    let port = match get(RVS_DAEMON_ATTR_MCAST_PORT) {
        Some(p) => nlattr::get_u16(RVS_DAEMON_ATTR_MCAST_PORT, p).map_err(bad)?,
        None => 0,
    };
    let ttl = match get(RVS_DAEMON_ATTR_MCAST_TTL) {
        Some(p) => nlattr::get_u8(RVS_DAEMON_ATTR_MCAST_TTL, p).map_err(bad)?,
        None => 0,
    };
    Ok(DaemonConfig {
        role,
        ifname,
        syncid,
        maxlen,
        group_v6,
        group,
        // 0 means the default, as in IPVS.
        port: if port == 0 { SYNC_PORT } else { port },
        ttl: if ttl == 0 { 1 } else { ttl },
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::nlattr::test_attr as attr;
    use super::*;
    use std::vec::Vec;

    fn nest(parts: &[Vec<u8>]) -> Vec<u8> {
        parts.concat()
    }

    fn base(state: u32) -> Vec<Vec<u8>> {
        std::vec![
            attr(RVS_DAEMON_ATTR_STATE, &state.to_ne_bytes()),
            attr(RVS_DAEMON_ATTR_MCAST_IFN, b"eth1\0"),
            attr(RVS_DAEMON_ATTR_SYNC_ID, &7u32.to_ne_bytes()),
        ]
    }

    #[test]
    fn defaults_are_ipvs_s() {
        let c = parse_new(&nest(&base(1))).unwrap();
        assert_eq!(c.role, Role::Master);
        assert_eq!(c.ifname(), c"eth1");
        assert_eq!(c.syncid, 7);
        assert_eq!(c.maxlen, 0);
        assert!(!c.group_v6);
        assert_eq!(c.group[..4], [224, 0, 0, 81]);
        assert_eq!(c.port, 8848);
        assert_eq!(c.ttl, 1);
    }

    #[test]
    fn every_option_is_read() {
        let mut p = base(2);
        p.push(attr(RVS_DAEMON_ATTR_SYNC_MAXLEN, &1400u16.to_ne_bytes()));
        p.push(attr(
            RVS_DAEMON_ATTR_MCAST_GROUP6,
            &[0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x48],
        ));
        p.push(attr(RVS_DAEMON_ATTR_MCAST_PORT, &9000u16.to_ne_bytes()));
        p.push(attr(RVS_DAEMON_ATTR_MCAST_TTL, &[4]));
        let c = parse_new(&nest(&p)).unwrap();
        assert_eq!(c.role, Role::Backup);
        assert_eq!(c.maxlen, 1400);
        assert!(c.group_v6);
        assert_eq!(c.group[15], 0x48);
        assert_eq!((c.port, c.ttl), (9000, 4));
    }

    #[test]
    fn refusals_say_why() {
        let msg = |p: &[Vec<u8>]| parse_new(&nest(p)).unwrap_err().msg;
        assert_eq!(
            msg(&base(3)),
            c"sync daemon state must be 1 (master) or 2 (backup)"
        );
        let b = base(1);
        assert_eq!(
            msg(&b[1..]),
            c"sync daemon state (master or backup) missing"
        );
        assert_eq!(
            msg(&[b[0].clone(), b[2].clone()]),
            c"sync interface name missing"
        );
        assert_eq!(msg(&b[..2]), c"syncid missing");
        let mut p = base(1);
        p[2] = attr(RVS_DAEMON_ATTR_SYNC_ID, &256u32.to_ne_bytes());
        assert_eq!(msg(&p), c"syncid must be 0 to 255");
        let mut p = base(1);
        p[1] = attr(RVS_DAEMON_ATTR_MCAST_IFN, b"eth1");
        assert_eq!(msg(&p), c"sync interface name is not NUL-terminated");
        let mut p = base(1);
        p[1] = attr(RVS_DAEMON_ATTR_MCAST_IFN, b"a-very-long-name\0");
        assert_eq!(msg(&p), c"sync interface name must have 1 to 15 characters");
        let mut p = base(1);
        p.push(attr(RVS_DAEMON_ATTR_MCAST_GROUP, &[10, 0, 0, 1]));
        assert_eq!(msg(&p), c"sync group is not an IPv4 multicast address");
        let mut p = base(1);
        p.push(attr(RVS_DAEMON_ATTR_MCAST_GROUP6, &[0xfe; 16]));
        assert_eq!(msg(&p), c"sync group is not an IPv6 multicast address");
        assert_eq!(parse_del(&nest(&base(2)[..1])), Ok(Role::Backup));
        for e in [&b[..0], &b[1..2]] {
            assert_eq!(parse_del(&nest(e)).unwrap_err().errno, EINVAL);
        }
    }
}
