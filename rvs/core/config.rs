// SPDX-License-Identifier: GPL-2.0

//! Validation of service and destination configuration received over
//! netlink, with precise errors.
//!
//! C counterparts: `ip_vs_genl_parse_service`, `ip_vs_genl_parse_dest`,
//! `ip_vs_add_service`, `ip_vs_add_dest` in net/netfilter/ipvs/ip_vs_ctl.c.
//! Numbers are those of include/uapi/linux/ip_vs.h (mirrored in
//! rvs/uapi/rvs.h). Each check returns a positive errno plus a message the
//! module can hand back as a netlink extended ACK.

#![forbid(unsafe_code)]

use super::sched::SchedKind;
use super::uapi;
use core::ffi::CStr;

/// A configuration error: the errno to return (positive; the kernel side
/// negates it) and a human-readable reason for the extended ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Positive errno, one of the constants in this module.
    pub errno: i32,
    /// Why, in words a user of rvsadm/ipvsadm understands.
    pub msg: &'static CStr,
}

impl ConfigError {
    /// Builds an error; `const` so errors can be constants.
    pub const fn new(errno: i32, msg: &'static CStr) -> ConfigError {
        ConfigError { errno, msg }
    }
}

/// No such file or directory; IPVS's answer for an unknown scheduler.
pub const ENOENT: i32 = 2;
/// No such process; IPVS's answer for an unknown service.
pub const ESRCH: i32 = 3;
/// File exists; duplicate service or destination.
pub const EEXIST: i32 = 17;
/// Device or resource busy.
pub const EBUSY: i32 = 16;
/// Invalid argument.
pub const EINVAL: i32 = 22;
/// Result out of range; IPVS's answer for bad weights and thresholds.
pub const ERANGE: i32 = 34;
/// Protocol not supported.
pub const EPROTONOSUPPORT: i32 = 93;
/// Operation not supported.
pub const EOPNOTSUPP: i32 = 95;
/// Address family not supported.
pub const EAFNOSUPPORT: i32 = 97;

/// `AF_INET`.
pub const AF_INET: u16 = 2;
/// `AF_INET6`.
pub const AF_INET6: u16 = 10;

/// Largest destination weight (`RVS_DEST_WEIGHT_MAX`, ipvsadm's limit).
pub const WEIGHT_MAX: u32 = uapi::RVS_DEST_WEIGHT_MAX;

/// Longest scheduler name, without the NUL (`IP_VS_SCHEDNAME_MAXLEN - 1`).
pub const SCHED_NAME_MAX: usize = 15;

/// Address family of a service or destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrFamily {
    /// IPv4.
    Inet,
    /// IPv6.
    Inet6,
}

impl AddrFamily {
    /// The `AF_*` value.
    pub fn to_u16(self) -> u16 {
        match self {
            AddrFamily::Inet => AF_INET,
            AddrFamily::Inet6 => AF_INET6,
        }
    }

    /// Bytes of an address of this family.
    pub fn addr_len(self) -> usize {
        match self {
            AddrFamily::Inet => 4,
            AddrFamily::Inet6 => 16,
        }
    }
}

/// Smallest `conn_tab_bits` (log2 of the most buckets a namespace's
/// connection table may grow to; the module parameter): IPVS's lower
/// bound.
pub const CONN_TAB_BITS_MIN: u32 = 8;
/// Largest `conn_tab_bits`: 2^24 buckets are 128 MiB of pointers, which a
/// table reaches only with more than 2^23 connections (it grows with its
/// entries, `table_size`); IPVS's limit is 20.
pub const CONN_TAB_BITS_MAX: u32 = 24;

/// Checks the `conn_tab_bits` module parameter: rvs refuses to load with
/// a size it will not use, rather than silently clamping it as IPVS does.
pub fn validate_conn_tab_bits(bits: u32) -> Result<u32, ConfigError> {
    if (CONN_TAB_BITS_MIN..=CONN_TAB_BITS_MAX).contains(&bits) {
        Ok(bits)
    } else {
        Err(ConfigError::new(
            ERANGE,
            c"conn_tab_bits must be from 8 to 24",
        ))
    }
}

/// Checks a service's or destination's address family (IPv4 or IPv6).
pub fn validate_af(af: u16) -> Result<AddrFamily, ConfigError> {
    match af {
        AF_INET => Ok(AddrFamily::Inet),
        AF_INET6 => Ok(AddrFamily::Inet6),
        _ => Err(ConfigError::new(EAFNOSUPPORT, c"unknown address family")),
    }
}

/// Checks that a real server of family `dest_af` may serve a service of
/// family `svc_af`. As in IPVS (`ip_vs_genl_set_cmd`), a real server of the
/// other family is only reachable through a tunnel (IPv4 in IPv6 or IPv6 in
/// IPv4), and the raw forwarding attribute must be exactly "tunnel";
/// anything else is EINVAL. Deleting is not checked (the caller skips it).
pub fn validate_dest_family(
    svc_af: AddrFamily,
    dest_af: AddrFamily,
    fwd_raw: u32,
) -> Result<(), ConfigError> {
    if svc_af == dest_af || fwd_raw == FwdMethod::Tunnel.to_uapi() {
        Ok(())
    } else {
        Err(ConfigError::new(
            EINVAL,
            c"a real server of another address family needs tunnelling (-i)",
        ))
    }
}

/// Checks an IPv6 real server address as IPVS's `ip_vs_new_dest` does: it
/// must be unicast and not link-local (so not `::`, multicast, fe80::/10,
/// or IPv4-mapped). IPv4 addresses are not checked here.
pub fn validate_dest_addr(af: AddrFamily, addr: &[u8; 16]) -> Result<(), ConfigError> {
    if af != AddrFamily::Inet6 {
        return Ok(());
    }
    let unspecified = addr.iter().all(|&b| b == 0);
    let multicast = addr[0] == 0xff;
    let link_local = addr[0] == 0xfe && addr[1] & 0xc0 == 0x80;
    let mapped = addr[..10].iter().all(|&b| b == 0) && addr[10] == 0xff && addr[11] == 0xff;
    if unspecified || multicast || link_local || mapped {
        Err(ConfigError::new(
            EINVAL,
            c"real server address must be a global or unique-local IPv6 unicast address",
        ))
    } else {
        Ok(())
    }
}

/// Checks an IPv6 service's persistence netmask, which is a prefix length
/// (1..128) as in IPVS's `ip_vs_add_service`.
pub fn validate_netmask(af: AddrFamily, netmask: u32) -> Result<(), ConfigError> {
    if af == AddrFamily::Inet6 && !(1..=128).contains(&netmask) {
        Err(ConfigError::new(
            EINVAL,
            c"IPv6 netmask must be a prefix length 1..128",
        ))
    } else {
        Ok(())
    }
}

/// The persistence mask of a service in the 16-byte address form: an IPv4
/// netmask attribute is the mask itself (bytes as sent), an IPv6 one a
/// prefix length.
pub fn persistence_mask(af: AddrFamily, netmask: u32) -> [u8; 16] {
    let mut m = [0u8; 16];
    match af {
        AddrFamily::Inet => m[..4].copy_from_slice(&netmask.to_ne_bytes()),
        AddrFamily::Inet6 => {
            let mut bits = netmask.min(128);
            for b in m.iter_mut() {
                let take = bits.min(8);
                *b = (0xff00u16 >> take) as u8;
                bits = bits.saturating_sub(take);
            }
        }
    }
    m
}

/// Checks a service protocol (`-t` TCP = 6, `-u` UDP = 17,
/// `--sctp-service` SCTP = 132) and returns it as the IP protocol number.
pub fn validate_protocol(proto: u16) -> Result<u8, ConfigError> {
    match proto {
        6 => Ok(6),
        17 => Ok(17),
        132 => Ok(132),
        _ => Err(ConfigError::new(
            EPROTONOSUPPORT,
            c"protocol must be TCP, UDP or SCTP",
        )),
    }
}

/// Checks a real server's port (host order). Port 0 ("the packet's port")
/// is only for firewall-mark and all-ports services, which the caller
/// checks.
pub fn validate_port(port: u16) -> Result<(), ConfigError> {
    if port == 0 {
        Err(ConfigError::new(EINVAL, c"port must not be 0"))
    } else {
        Ok(())
    }
}

/// Checks a destination weight (0 quiesces the destination).
pub fn validate_weight(weight: u32) -> Result<(), ConfigError> {
    if weight > WEIGHT_MAX {
        Err(ConfigError::new(ERANGE, c"weight must be 0..65535"))
    } else {
        Ok(())
    }
}

/// How packets reach a real server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwdMethod {
    /// NAT (`-m`): destination rewritten, replies return via the director.
    Masq,
    /// IP-in-IP tunnel (`-i`).
    Tunnel,
    /// Direct routing / gatewaying (`-g`, ipvsadm's default).
    Route,
    /// Local node (IPVS's `IP_VS_CONN_F_LOCALNODE`): the director serves
    /// the connection itself; its packets go on, unchanged, to the local
    /// stack (IPVS's `ip_vs_null_xmit`). ipvsadm lists it as "Local".
    Local,
    /// FullNAT (`--fullnat`, an rvs addition with DPVS's number): source
    /// and destination both rewritten, the source to one of the service's
    /// local addresses and a port of its own, so replies come back to the
    /// director whatever the real server's routes.
    FullNat,
    /// ENAT (`--enat`, Alibaba's "enhanced NAT", an rvs addition): the
    /// request leaves from the VIP and a port of its own toward the real
    /// server at the service's port, the client's address rides in a TCP
    /// option of its SYN, and the real server's companion module
    /// (rvs_rs.ko) sends the replies straight to the client.
    Enat,
}

/// Mask of the forwarding method bits in IPVS connection flags.
pub const FWD_MASK: u32 = uapi::RVS_CONN_F_FWD_MASK;

impl FwdMethod {
    /// The uapi value (`RVS_CONN_F_MASQ` / `_LOCALNODE` / `_TUNNEL` /
    /// `_DROUTE`).
    pub fn to_uapi(self) -> u32 {
        match self {
            FwdMethod::Masq => uapi::RVS_CONN_F_MASQ,
            FwdMethod::Local => uapi::RVS_CONN_F_LOCALNODE,
            FwdMethod::Tunnel => uapi::RVS_CONN_F_TUNNEL,
            FwdMethod::Route => uapi::RVS_CONN_F_DROUTE,
            FwdMethod::FullNat => uapi::RVS_CONN_F_FULLNAT,
            FwdMethod::Enat => uapi::RVS_CONN_F_ENAT,
        }
    }

    /// The name `ipvsadm -L` prints in the Forward column.
    pub fn name(self) -> &'static str {
        match self {
            FwdMethod::Masq => "Masq",
            FwdMethod::Tunnel => "Tunnel",
            FwdMethod::Route => "Route",
            FwdMethod::Local => "Local",
            FwdMethod::FullNat => "FullNat",
            FwdMethod::Enat => "Enat",
        }
    }

    /// Whether the destination port may differ from the service port
    /// (only NAT rewrites the port).
    pub fn allows_port_mapping(self) -> bool {
        matches!(self, FwdMethod::Masq | FwdMethod::FullNat)
    }

    /// Whether replies bypass the director, so the state machine must use
    /// `proto::Dir::InputOnly` (IPVS's NOOUTPUT flag).
    pub fn replies_bypass_director(self) -> bool {
        !matches!(self, FwdMethod::Masq | FwdMethod::FullNat)
    }

    /// Whether a connection leaves the director from a port allocated
    /// for it (FullNAT's local address, ENAT's VIP), which the connection
    /// holds in the port table.
    pub fn has_local_port(self) -> bool {
        matches!(self, FwdMethod::FullNat | FwdMethod::Enat)
    }
}

/// Decodes the destination's forwarding method attribute. As in IPVS only
/// the method bits ([`FWD_MASK`]) are looked at; Bypass (4, IPVS's cache
/// cluster bypass) and undefined values are refused.
pub fn validate_fwd_method(v: u32) -> Result<FwdMethod, ConfigError> {
    match v & FWD_MASK {
        0 => Ok(FwdMethod::Masq),
        1 => Ok(FwdMethod::Local),
        2 => Ok(FwdMethod::Tunnel),
        3 => Ok(FwdMethod::Route),
        5 => Ok(FwdMethod::FullNat),
        6 => Ok(FwdMethod::Enat),
        _ => Err(ConfigError::new(EINVAL, c"unknown forwarding method")),
    }
}

/// Checks the upper (`-x`) and lower (`-y`) connection thresholds, 0 meaning
/// "none". Like IPVS's `ip_vs_add_dest`: lower above upper is ERANGE (so a
/// lower threshold needs an upper one), an upper threshold above `INT_MAX`
/// is EINVAL.
pub fn validate_thresholds(upper: u32, lower: u32) -> Result<(), ConfigError> {
    if lower > upper {
        return Err(ConfigError::new(
            ERANGE,
            c"lower threshold must not exceed upper threshold",
        ));
    }
    if upper > i32::MAX as u32 {
        return Err(ConfigError::new(EINVAL, c"upper threshold is too large"));
    }
    Ok(())
}

/// Looks up a scheduler by the name attribute's bytes. The name ends at the
/// first NUL if there is one (netlink strings carry it). Unknown names are
/// ENOENT like IPVS ("scheduler module not found"); an over-long name is
/// EINVAL like IPVS's attribute policy.
pub fn parse_sched_name(raw: &[u8]) -> Result<SchedKind, ConfigError> {
    let name = match raw.iter().position(|&b| b == 0) {
        Some(n) => raw.get(..n).unwrap_or(raw),
        None => raw,
    };
    if name.len() > SCHED_NAME_MAX {
        return Err(ConfigError::new(EINVAL, c"scheduler name too long"));
    }
    SchedKind::from_name(name).ok_or(ConfigError::new(ENOENT, c"unknown scheduler"))
}

/// Checks the length of an address attribute for `af`: IPv4 addresses come
/// as 4 bytes (moby/ipvs) or as a 16-byte `union nf_inet_addr` (ipvsadm,
/// keepalived); IPv6 as 16 bytes.
pub fn validate_addr_len(af: AddrFamily, len: usize) -> Result<(), ConfigError> {
    let ok = match af {
        AddrFamily::Inet => len == 4 || len == 16,
        AddrFamily::Inet6 => len == 16,
    };
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(EINVAL, c"address has the wrong length"))
    }
}

/// Normalizes an address attribute to the 16-byte form used everywhere in
/// rvs (IPv4 in the first 4 bytes, the rest zero, like `nf_inet_addr`),
/// after [`validate_addr_len`].
pub fn parse_addr(af: AddrFamily, raw: &[u8]) -> Result<[u8; 16], ConfigError> {
    validate_addr_len(af, raw.len())?;
    let n = af.addr_len();
    let src = raw
        .get(..n)
        .ok_or(ConfigError::new(EINVAL, c"address has the wrong length"))?;
    let mut out = [0u8; 16];
    if let Some(dst) = out.get_mut(..n) {
        dst.copy_from_slice(src);
    }
    Ok(out)
}

/// Checks that a destination's port may differ from the service's: only
/// NAT rewrites ports; DR and TUN deliver the packet unchanged, so their
/// destination port must equal the service port.
pub fn port_mapping_allowed(
    fwd: FwdMethod,
    svc_port: u16,
    dest_port: u16,
) -> Result<(), ConfigError> {
    if fwd.allows_port_mapping() || svc_port == dest_port {
        Ok(())
    } else {
        Err(ConfigError::new(
            EINVAL,
            c"port mapping needs masquerading (-m) or FullNAT",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conn_tab_bits_range() {
        assert_eq!(validate_conn_tab_bits(8), Ok(8));
        assert_eq!(validate_conn_tab_bits(18), Ok(18));
        assert_eq!(validate_conn_tab_bits(20), Ok(20));
        assert_eq!(validate_conn_tab_bits(24), Ok(24));
        for bad in [0, 7, 25, 32, u32::MAX] {
            let e = validate_conn_tab_bits(bad).unwrap_err();
            assert_eq!(e.errno, ERANGE);
        }
    }

    #[test]
    fn af() {
        assert_eq!(validate_af(2), Ok(AddrFamily::Inet));
        assert_eq!(validate_af(10), Ok(AddrFamily::Inet6));
        assert_eq!(validate_af(0).unwrap_err().errno, EAFNOSUPPORT);
        assert_eq!(validate_af(7).unwrap_err().errno, EAFNOSUPPORT);
        assert_eq!(AddrFamily::Inet6.to_u16(), 10);
    }

    #[test]
    fn protocol() {
        assert_eq!(validate_protocol(6), Ok(6));
        assert_eq!(validate_protocol(17), Ok(17));
        assert_eq!(validate_protocol(132), Ok(132));
        for p in [0u16, 1, 50, 133, 256 + 6, 256 + 132] {
            let e = validate_protocol(p).unwrap_err();
            assert_eq!(e.errno, EPROTONOSUPPORT);
            assert_eq!(e.msg, c"protocol must be TCP, UDP or SCTP");
        }
    }

    #[test]
    fn port() {
        assert!(validate_port(80).is_ok());
        assert!(validate_port(65535).is_ok());
        assert_eq!(
            validate_port(0),
            Err(ConfigError::new(EINVAL, c"port must not be 0"))
        );
    }

    #[test]
    fn weight() {
        assert!(validate_weight(0).is_ok());
        assert!(validate_weight(65535).is_ok());
        for w in [65536, u32::MAX, 0x8000_0000] {
            assert_eq!(
                validate_weight(w),
                Err(ConfigError::new(ERANGE, c"weight must be 0..65535"))
            );
        }
    }

    #[test]
    fn fwd_method() {
        assert_eq!(validate_fwd_method(0), Ok(FwdMethod::Masq));
        assert_eq!(validate_fwd_method(2), Ok(FwdMethod::Tunnel));
        assert_eq!(validate_fwd_method(3), Ok(FwdMethod::Route));
        // Other flag bits are ignored, as IPVS masks with FWD_MASK.
        assert_eq!(validate_fwd_method(0x0100 | 3), Ok(FwdMethod::Route));
        assert_eq!(validate_fwd_method(5), Ok(FwdMethod::FullNat));
        assert_eq!(validate_fwd_method(6), Ok(FwdMethod::Enat));
        for v in [4u32, 7] {
            assert_eq!(validate_fwd_method(v).unwrap_err().errno, EINVAL);
        }
        assert_eq!(
            validate_fwd_method(4).unwrap_err().msg,
            c"unknown forwarding method"
        );
        for m in [
            FwdMethod::Masq,
            FwdMethod::Tunnel,
            FwdMethod::Route,
            FwdMethod::Local,
            FwdMethod::FullNat,
            FwdMethod::Enat,
        ] {
            assert_eq!(validate_fwd_method(m.to_uapi()), Ok(m));
        }
        // ENAT: no port mapping, replies bypass the director, a local
        // port per connection (as FullNAT's).
        assert_eq!(FwdMethod::Enat.name(), "Enat");
        assert!(!FwdMethod::Enat.allows_port_mapping());
        assert!(FwdMethod::Enat.replies_bypass_director());
        assert!(FwdMethod::Enat.has_local_port() && FwdMethod::FullNat.has_local_port());
        assert!(!FwdMethod::Masq.has_local_port() && !FwdMethod::Route.has_local_port());
        assert!(port_mapping_allowed(FwdMethod::Enat, 80, 8080).is_err());
        assert!(port_mapping_allowed(FwdMethod::Enat, 80, 80).is_ok());
        assert_eq!(FwdMethod::Local.name(), "Local");
        assert!(FwdMethod::Local.replies_bypass_director());
        assert!(!FwdMethod::Local.allows_port_mapping());
        assert_eq!(FwdMethod::Masq.name(), "Masq");
        assert_eq!(FwdMethod::Tunnel.name(), "Tunnel");
        assert_eq!(FwdMethod::Route.name(), "Route");
        assert!(FwdMethod::Route.replies_bypass_director());
        assert!(!FwdMethod::Masq.replies_bypass_director());
    }

    #[test]
    fn thresholds() {
        assert!(validate_thresholds(0, 0).is_ok());
        assert!(validate_thresholds(100, 0).is_ok());
        assert!(validate_thresholds(100, 50).is_ok());
        assert!(validate_thresholds(100, 100).is_ok());
        assert_eq!(validate_thresholds(100, 101).unwrap_err().errno, ERANGE);
        assert_eq!(validate_thresholds(0, 1).unwrap_err().errno, ERANGE);
        assert!(validate_thresholds(i32::MAX as u32, 1).is_ok());
        assert_eq!(validate_thresholds(u32::MAX, 0).unwrap_err().errno, EINVAL);
    }

    #[test]
    fn sched_name() {
        assert_eq!(parse_sched_name(b"rr"), Ok(SchedKind::Rr));
        assert_eq!(parse_sched_name(b"wrr\0"), Ok(SchedKind::Wrr));
        assert_eq!(parse_sched_name(b"lc\0\0\0"), Ok(SchedKind::Lc));
        assert_eq!(parse_sched_name(b"wlc\0garbage"), Ok(SchedKind::Wlc));
        assert_eq!(parse_sched_name(b"lblc\0"), Ok(SchedKind::Lblc));
        assert_eq!(parse_sched_name(b"lblcr"), Ok(SchedKind::Lblcr));
        let e = parse_sched_name(b"lblcrr\0").unwrap_err();
        assert_eq!((e.errno, e.msg), (ENOENT, c"unknown scheduler"));
        assert_eq!(parse_sched_name(b"").unwrap_err().errno, ENOENT);
        assert_eq!(parse_sched_name(b"\0").unwrap_err().errno, ENOENT);
        assert_eq!(parse_sched_name(b"Rr").unwrap_err().errno, ENOENT);
        assert_eq!(
            parse_sched_name(b"0123456789abcdef").unwrap_err().errno,
            EINVAL
        );
    }

    #[test]
    fn addr_len() {
        assert!(validate_addr_len(AddrFamily::Inet, 4).is_ok());
        assert!(validate_addr_len(AddrFamily::Inet, 16).is_ok());
        assert!(validate_addr_len(AddrFamily::Inet6, 16).is_ok());
        for n in [0usize, 3, 5, 15, 17] {
            assert_eq!(
                validate_addr_len(AddrFamily::Inet, n).unwrap_err().errno,
                EINVAL
            );
        }
        assert_eq!(
            validate_addr_len(AddrFamily::Inet6, 4).unwrap_err().errno,
            EINVAL
        );
        let mut want = [0u8; 16];
        want[..4].copy_from_slice(&[10, 0, 0, 1]);
        assert_eq!(parse_addr(AddrFamily::Inet, &[10, 0, 0, 1]), Ok(want));
        let mut raw16 = [0xaau8; 16];
        raw16[..4].copy_from_slice(&[10, 0, 0, 1]);
        assert_eq!(parse_addr(AddrFamily::Inet, &raw16), Ok(want));
        assert_eq!(parse_addr(AddrFamily::Inet6, &raw16), Ok(raw16));
        assert!(parse_addr(AddrFamily::Inet, &[1, 2, 3]).is_err());
    }

    #[test]
    fn mixed_families_only_tunnel() {
        use AddrFamily::*;
        for (s, d) in [(Inet, Inet), (Inet6, Inet6)] {
            for f in [0u32, 2, 3] {
                assert!(validate_dest_family(s, d, f).is_ok());
            }
        }
        for (s, d) in [(Inet, Inet6), (Inet6, Inet)] {
            assert!(validate_dest_family(s, d, 2).is_ok());
            // Only exactly "tunnel", like IPVS's switch on conn_flags.
            for f in [0u32, 3, 2 | 0x100] {
                let e = validate_dest_family(s, d, f).unwrap_err();
                assert_eq!(e.errno, EINVAL);
                assert_eq!(
                    e.msg,
                    c"a real server of another address family needs tunnelling (-i)"
                );
            }
        }
    }

    #[test]
    fn dest_addr6() {
        let a = |s: [u16; 8]| {
            let mut x = [0u8; 16];
            for (i, w) in s.iter().enumerate() {
                x[2 * i..2 * i + 2].copy_from_slice(&w.to_be_bytes());
            }
            x
        };
        let ok = [
            a([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]),
            a([0xfd00, 0, 0, 0, 0, 0, 0, 5]),
            a([0, 0, 0, 0, 0, 0, 0, 1]),
        ];
        for x in ok {
            assert!(validate_dest_addr(AddrFamily::Inet6, &x).is_ok());
        }
        let bad = [
            [0u8; 16],
            a([0xff02, 0, 0, 0, 0, 0, 0, 1]),
            a([0xfe80, 0, 0, 0, 0, 0, 0, 1]),
            a([0xfebf, 0, 0, 0, 0, 0, 0, 1]),
            a([0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]),
        ];
        for x in bad {
            assert_eq!(
                validate_dest_addr(AddrFamily::Inet6, &x).unwrap_err().errno,
                EINVAL
            );
        }
        // IPv4 is not checked here; fec0:: (site-local) is unicast.
        assert!(validate_dest_addr(AddrFamily::Inet, &[0u8; 16]).is_ok());
        assert!(validate_dest_addr(AddrFamily::Inet6, &a([0xfec0, 0, 0, 0, 0, 0, 0, 1])).is_ok());
    }

    #[test]
    fn netmasks() {
        assert!(validate_netmask(AddrFamily::Inet6, 64).is_ok());
        assert!(validate_netmask(AddrFamily::Inet6, 128).is_ok());
        assert!(validate_netmask(AddrFamily::Inet6, 1).is_ok());
        for m in [0u32, 129, u32::MAX] {
            assert_eq!(
                validate_netmask(AddrFamily::Inet6, m).unwrap_err().errno,
                EINVAL
            );
        }
        assert!(validate_netmask(AddrFamily::Inet, 0).is_ok());
        let m = persistence_mask(AddrFamily::Inet6, 64);
        assert_eq!(m[..8], [0xff; 8]);
        assert_eq!(m[8..], [0; 8]);
        let m = persistence_mask(AddrFamily::Inet6, 60);
        assert_eq!(m[7], 0xf0);
        assert_eq!(m[6], 0xff);
        assert_eq!(persistence_mask(AddrFamily::Inet6, 128), [0xff; 16]);
        assert_eq!(persistence_mask(AddrFamily::Inet6, 0), [0; 16]);
        let m = persistence_mask(AddrFamily::Inet, u32::from_ne_bytes([255, 255, 255, 0]));
        assert_eq!(m[..4], [255, 255, 255, 0]);
        assert_eq!(m[4..], [0; 12]);
    }

    #[test]
    fn port_mapping() {
        assert!(port_mapping_allowed(FwdMethod::Masq, 80, 8080).is_ok());
        assert!(port_mapping_allowed(FwdMethod::Route, 80, 80).is_ok());
        assert!(port_mapping_allowed(FwdMethod::Tunnel, 80, 80).is_ok());
        for f in [FwdMethod::Route, FwdMethod::Tunnel] {
            assert_eq!(
                port_mapping_allowed(f, 80, 8080),
                Err(ConfigError::new(
                    EINVAL,
                    c"port mapping needs masquerading (-m) or FullNAT"
                ))
            );
        }
    }
}
