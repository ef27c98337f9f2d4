// SPDX-License-Identifier: GPL-2.0

//! Numbers of the rvs netlink protocol used by the pure decoders here.
//!
//! `rvs/uapi/rvs.h` is their single source: a host test reads that header
//! and checks every value below against it, and the module build checks
//! them against its bindgen-generated copy at compile time.

/// `RVS_SVC_ATTR_*`: attributes nested in a service.
pub mod svc {
    /// Address family (u16).
    pub const AF: u16 = 1;
    /// Protocol (u16).
    pub const PROTOCOL: u16 = 2;
    /// Address (4 or 16 bytes).
    pub const ADDR: u16 = 3;
    /// Port (u16, network order).
    pub const PORT: u16 = 4;
    /// Firewall mark (u32).
    pub const FWMARK: u16 = 5;
    /// Scheduler name (string).
    pub const SCHED_NAME: u16 = 6;
    /// Flags (struct rvs_flags).
    pub const FLAGS: u16 = 7;
    /// Persistence timeout (u32).
    pub const TIMEOUT: u16 = 8;
    /// Persistence netmask (u32).
    pub const NETMASK: u16 = 9;
    /// Statistics (nested).
    pub const STATS: u16 = 10;
    /// Persistence engine name (string).
    pub const PE_NAME: u16 = 11;
    /// 64-bit statistics (nested).
    pub const STATS64: u16 = 12;
    /// Largest service attribute.
    pub const MAX: u16 = 12;
}

/// `RVS_DEST_ATTR_*`: attributes nested in a destination.
pub mod dest {
    /// Address (4 or 16 bytes).
    pub const ADDR: u16 = 1;
    /// Port (u16, network order).
    pub const PORT: u16 = 2;
    /// Forwarding method (u32).
    pub const FWD_METHOD: u16 = 3;
    /// Weight (u32).
    pub const WEIGHT: u16 = 4;
    /// Upper connection threshold (u32).
    pub const U_THRESH: u16 = 5;
    /// Lower connection threshold (u32).
    pub const L_THRESH: u16 = 6;
    /// Active connections (u32, replies only).
    pub const ACTIVE_CONNS: u16 = 7;
    /// Inactive connections (u32, replies only).
    pub const INACT_CONNS: u16 = 8;
    /// Persistent connections (u32, replies only).
    pub const PERSIST_CONNS: u16 = 9;
    /// Statistics (nested).
    pub const STATS: u16 = 10;
    /// Address family (u16).
    pub const ADDR_FAMILY: u16 = 11;
    /// 64-bit statistics (nested).
    pub const STATS64: u16 = 12;
    /// Tunnel type (u8).
    pub const TUN_TYPE: u16 = 13;
    /// Tunnel port (u16, network order).
    pub const TUN_PORT: u16 = 14;
    /// Tunnel flags (u16).
    pub const TUN_FLAGS: u16 = 15;
    /// Largest destination attribute.
    pub const MAX: u16 = 15;
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

    #[test]
    fn numbers_match_the_uapi_header() {
        let h = header_values();
        let check = |name: &str, v: u16| {
            assert_eq!(h.get(name).copied(), Some(i64::from(v)), "{name}");
        };
        use super::{dest, svc};
        check("RVS_SVC_ATTR_AF", svc::AF);
        check("RVS_SVC_ATTR_PROTOCOL", svc::PROTOCOL);
        check("RVS_SVC_ATTR_ADDR", svc::ADDR);
        check("RVS_SVC_ATTR_PORT", svc::PORT);
        check("RVS_SVC_ATTR_FWMARK", svc::FWMARK);
        check("RVS_SVC_ATTR_SCHED_NAME", svc::SCHED_NAME);
        check("RVS_SVC_ATTR_FLAGS", svc::FLAGS);
        check("RVS_SVC_ATTR_TIMEOUT", svc::TIMEOUT);
        check("RVS_SVC_ATTR_NETMASK", svc::NETMASK);
        check("RVS_SVC_ATTR_STATS", svc::STATS);
        check("RVS_SVC_ATTR_PE_NAME", svc::PE_NAME);
        check("RVS_SVC_ATTR_STATS64", svc::STATS64);
        check("__RVS_SVC_ATTR_MAX", svc::MAX + 1);
        check("RVS_DEST_ATTR_ADDR", dest::ADDR);
        check("RVS_DEST_ATTR_PORT", dest::PORT);
        check("RVS_DEST_ATTR_FWD_METHOD", dest::FWD_METHOD);
        check("RVS_DEST_ATTR_WEIGHT", dest::WEIGHT);
        check("RVS_DEST_ATTR_U_THRESH", dest::U_THRESH);
        check("RVS_DEST_ATTR_L_THRESH", dest::L_THRESH);
        check("RVS_DEST_ATTR_ACTIVE_CONNS", dest::ACTIVE_CONNS);
        check("RVS_DEST_ATTR_INACT_CONNS", dest::INACT_CONNS);
        check("RVS_DEST_ATTR_PERSIST_CONNS", dest::PERSIST_CONNS);
        check("RVS_DEST_ATTR_STATS", dest::STATS);
        check("RVS_DEST_ATTR_ADDR_FAMILY", dest::ADDR_FAMILY);
        check("RVS_DEST_ATTR_STATS64", dest::STATS64);
        check("RVS_DEST_ATTR_TUN_TYPE", dest::TUN_TYPE);
        check("RVS_DEST_ATTR_TUN_PORT", dest::TUN_PORT);
        check("RVS_DEST_ATTR_TUN_FLAGS", dest::TUN_FLAGS);
        check("__RVS_DEST_ATTR_MAX", dest::MAX + 1);
        use super::super::tunnel;
        check("RVS_TUN_TYPE_IPIP", u16::from(tunnel::TYPE_IPIP));
        check("RVS_TUN_TYPE_GUE", u16::from(tunnel::TYPE_GUE));
        check("RVS_TUN_TYPE_GRE", u16::from(tunnel::TYPE_GRE));
    }

    /// Every setting is the attribute `RVS_CMD_ATTR_<NAME>`, and settings
    /// are the last top-level attributes (the module's policy relies on it).
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
        assert_eq!(h.get("RVS_CMD_ATTR_CONN").copied(), Some(7));
        assert_eq!(SETTINGS.iter().map(|s| s.attr).min(), Some(8));
    }
}
