// SPDX-License-Identifier: GPL-2.0

//! Decoding of the nested service and destination attributes of a request
//! into typed, validated values.
//!
//! C counterparts: `ip_vs_genl_parse_service` and `ip_vs_genl_parse_dest`
//! (net/netfilter/ipvs/ip_vs_ctl.c). As there, `full` asks for everything
//! an add or edit needs; without it only the identifying attributes are
//! required (delete, get, and the service half of destination commands).

use super::config::{self, AddrFamily, ConfigError, FwdMethod, EINVAL, ENOENT, ERANGE};
use super::nlattr::{self, AttrError};
use super::sched::SchedKind;
use super::tunnel::{self, Tunnel};
use super::uapi::*;
use core::ffi::CStr;

/// What identifies a service: (af, protocol, address, port), or (af,
/// firewall mark) for a firewall-mark service, whose protocol is TCP and
/// address and port zero as in IPVS (they are not used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceKey {
    /// Address family.
    pub af: AddrFamily,
    /// IPPROTO_TCP or IPPROTO_UDP.
    pub protocol: u8,
    /// Virtual address, 16-byte form.
    pub addr: [u8; 16],
    /// Virtual port, host order.
    pub port: u16,
    /// Firewall mark (`-f`); 0 for an address/port service.
    pub fwmark: u32,
}

impl ServiceKey {
    /// Whether this is a firewall-mark service.
    pub fn is_fwmark(&self) -> bool {
        self.fwmark != 0
    }

    /// Whether real servers of this service may use `fwd`: ENAT needs a
    /// TCP service given by address and port (its client's address rides
    /// in a TCP option; a mark service may carry UDP too).
    pub fn check_fwd(&self, fwd: FwdMethod) -> Result<(), ConfigError> {
        if fwd != FwdMethod::Enat {
            return Ok(());
        }
        if self.is_fwmark() {
            return Err(ConfigError::new(
                EINVAL,
                c"ENAT needs a TCP service given by address and port, not a firewall mark",
            ));
        }
        if self.protocol != IPPROTO_TCP {
            return Err(ConfigError::new(
                EINVAL,
                c"ENAT needs a TCP service: UDP and SCTP have no header option to carry the client's address",
            ));
        }
        Ok(())
    }
}

/// `RVS_SVC_F_PERSISTENT` (IPVS's `IP_VS_SVC_F_PERSISTENT`).
pub const SVC_F_PERSISTENT: u32 = 0x0001;
/// `RVS_SVC_F_ONEPACKET` (IPVS's `IP_VS_SVC_F_ONEPACKET`).
pub const SVC_F_ONEPACKET: u32 = 0x0004;

/// The settings of a service (add/edit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceParams {
    /// Scheduler.
    pub sched: SchedKind,
    /// `RVS_SVC_F_*` flags after applying the mask.
    pub flags: u32,
    /// Persistence timeout in seconds.
    pub timeout: u32,
    /// Persistence netmask (network order value as sent).
    pub netmask: u32,
}

/// A destination as given in a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DestParams {
    /// Real server address family (the service's unless tunnelled).
    pub af: AddrFamily,
    /// Real server address, 16-byte form.
    pub addr: [u8; 16],
    /// Real server port, host order.
    pub port: u16,
    /// Forwarding method (add/edit only; Route otherwise).
    pub fwd: FwdMethod,
    /// Weight (add/edit only).
    pub weight: u32,
    /// Upper connection threshold, 0 = none.
    pub u_thresh: u32,
    /// Lower connection threshold.
    pub l_thresh: u32,
    /// Encapsulation when forwarding by tunnel (`--tun-type` ...).
    pub tunnel: Tunnel,
}

fn attr_err(e: AttrError) -> ConfigError {
    ConfigError::new(EINVAL, e.msg())
}

fn missing(msg: &'static CStr) -> ConfigError {
    ConfigError::new(EINVAL, msg)
}

/// Decodes a service nest: the key always, the parameters when `full`.
pub fn parse_service(
    nest: &[u8],
    full: bool,
) -> Result<(ServiceKey, Option<ServiceParams>), ConfigError> {
    let mut t: [Option<&[u8]>; RVS_SVC_ATTR_MAX as usize + 1] =
        [None; RVS_SVC_ATTR_MAX as usize + 1];
    nlattr::parse_nested(nest, &mut t).map_err(attr_err)?;
    let get = |k: u16| t.get(usize::from(k)).copied().flatten();

    let af = get(RVS_SVC_ATTR_AF).ok_or(missing(c"service address family missing"))?;
    let af = config::validate_af(nlattr::get_u16(RVS_SVC_ATTR_AF, af).map_err(attr_err)?)?;
    let fwmark = match get(RVS_SVC_ATTR_FWMARK) {
        Some(p) => nlattr::get_u32(RVS_SVC_ATTR_FWMARK, p).map_err(attr_err)?,
        None => 0,
    };
    let key = if fwmark != 0 {
        // As IPVS: a mark names the service; protocol, address and port,
        // if sent, are ignored.
        ServiceKey {
            af,
            protocol: IPPROTO_TCP,
            addr: [0; 16],
            port: 0,
            fwmark,
        }
    } else {
        parse_addr_key(af, &get)?
    };
    if !full {
        return Ok((key, None));
    }
    let params = parse_params(af, &get)?;
    if params.flags & SVC_F_ONEPACKET != 0 && !key.is_fwmark() && key.protocol != IPPROTO_UDP {
        return Err(ConfigError::new(
            EINVAL,
            c"one-packet scheduling is only for UDP services",
        ));
    }
    if !key.is_fwmark() && key.port == 0 && params.flags & SVC_F_PERSISTENT == 0 {
        // IPVS's ipvsadm refuses it too; the kernel's IPVS would accept it
        // and then log "port zero only supported in persistent services"
        // for every packet.
        return Err(ConfigError::new(
            EINVAL,
            c"port 0 (all ports) is only for persistent services (-p)",
        ));
    }
    Ok((key, Some(params)))
}

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// The protocol, address and port of an address/port service.
fn parse_addr_key<'a>(
    af: AddrFamily,
    get: &impl Fn(u16) -> Option<&'a [u8]>,
) -> Result<ServiceKey, ConfigError> {
    let protocol = get(RVS_SVC_ATTR_PROTOCOL).ok_or(missing(c"service protocol missing"))?;
    let protocol = config::validate_protocol(
        nlattr::get_u16(RVS_SVC_ATTR_PROTOCOL, protocol).map_err(attr_err)?,
    )?;
    let addr = get(RVS_SVC_ATTR_ADDR).ok_or(missing(c"service address missing"))?;
    let addr = config::parse_addr(af, addr)?;
    let port = get(RVS_SVC_ATTR_PORT).ok_or(missing(c"service port missing"))?;
    // Port 0 is the "all ports" service (checked to be persistent with
    // the parameters; a key alone may name it).
    let port = nlattr::get_be16(RVS_SVC_ATTR_PORT, port).map_err(attr_err)?;
    Ok(ServiceKey {
        af,
        protocol,
        addr,
        port,
        fwmark: 0,
    })
}

/// The settings of an add or edit.
fn parse_params<'a>(
    af: AddrFamily,
    get: &impl Fn(u16) -> Option<&'a [u8]>,
) -> Result<ServiceParams, ConfigError> {
    let sched = match get(RVS_SVC_ATTR_SCHED_NAME) {
        Some(name) => config::parse_sched_name(name)?,
        None => return Err(missing(c"scheduler name missing")),
    };
    let flags = match get(RVS_SVC_ATTR_FLAGS) {
        Some(p) => match p {
            [f0, f1, f2, f3, m0, m1, m2, m3] => {
                let f = u32::from_ne_bytes([*f0, *f1, *f2, *f3]);
                let m = u32::from_ne_bytes([*m0, *m1, *m2, *m3]);
                f & m
            }
            _ => return Err(attr_err(AttrError::BadLength(RVS_SVC_ATTR_FLAGS))),
        },
        None => 0,
    };
    let timeout = match get(RVS_SVC_ATTR_TIMEOUT) {
        Some(p) => nlattr::get_u32(RVS_SVC_ATTR_TIMEOUT, p).map_err(attr_err)?,
        None => 0,
    };
    // IPv4: a mask (all ones by default); IPv6: a prefix length (128).
    let netmask = match get(RVS_SVC_ATTR_NETMASK) {
        Some(p) => nlattr::get_u32(RVS_SVC_ATTR_NETMASK, p).map_err(attr_err)?,
        None if af == AddrFamily::Inet6 => 128,
        None => u32::MAX,
    };
    config::validate_netmask(af, netmask)?;
    if let Some(pe) = get(RVS_SVC_ATTR_PE_NAME) {
        if pe.first().copied().unwrap_or(0) != 0 {
            return Err(ConfigError::new(
                ENOENT,
                c"persistence engines are not supported",
            ));
        }
    }
    Ok(ServiceParams {
        sched,
        flags,
        timeout,
        netmask,
    })
}

/// Decodes a destination nest of the service `svc`: address and port
/// always, the rest when `full`. Port 0 is allowed only for a
/// firewall-mark or an all-ports service (its packets then keep their
/// destination port).
/// A real server of the other family is accepted only for tunnelling, and
/// only checked when `full` (IPVS does not check it on delete).
pub fn parse_dest(nest: &[u8], svc: &ServiceKey, full: bool) -> Result<DestParams, ConfigError> {
    let svc_af = svc.af;
    let mut t: [Option<&[u8]>; RVS_DEST_ATTR_MAX as usize + 1] =
        [None; RVS_DEST_ATTR_MAX as usize + 1];
    nlattr::parse_nested(nest, &mut t).map_err(attr_err)?;
    let get = |k: u16| t.get(usize::from(k)).copied().flatten();

    let af = match get(RVS_DEST_ATTR_ADDR_FAMILY) {
        Some(p) => {
            config::validate_af(nlattr::get_u16(RVS_DEST_ATTR_ADDR_FAMILY, p).map_err(attr_err)?)?
        }
        None => svc_af,
    };
    let addr = get(RVS_DEST_ATTR_ADDR).ok_or(missing(c"real server address missing"))?;
    let addr = config::parse_addr(af, addr)?;
    let port = get(RVS_DEST_ATTR_PORT).ok_or(missing(c"real server port missing"))?;
    let port = nlattr::get_be16(RVS_DEST_ATTR_PORT, port).map_err(attr_err)?;
    if !svc.is_fwmark() && svc.port != 0 {
        config::validate_port(port)?;
    }
    let mut d = DestParams {
        af,
        addr,
        port,
        fwd: FwdMethod::Route,
        weight: 1,
        u_thresh: 0,
        l_thresh: 0,
        tunnel: Tunnel::Ipip,
    };
    if !full {
        return Ok(d);
    }
    let fwd = get(RVS_DEST_ATTR_FWD_METHOD).ok_or(missing(c"forwarding method missing"))?;
    let fwd_raw = nlattr::get_u32(RVS_DEST_ATTR_FWD_METHOD, fwd).map_err(attr_err)?;
    d.fwd = config::validate_fwd_method(fwd_raw)?;
    config::validate_dest_family(svc_af, af, fwd_raw)?;
    config::validate_dest_addr(af, &addr)?;
    let weight = get(RVS_DEST_ATTR_WEIGHT).ok_or(missing(c"weight missing"))?;
    d.weight = nlattr::get_u32(RVS_DEST_ATTR_WEIGHT, weight).map_err(attr_err)?;
    config::validate_weight(d.weight)?;
    if let Some(p) = get(RVS_DEST_ATTR_U_THRESH) {
        d.u_thresh = nlattr::get_u32(RVS_DEST_ATTR_U_THRESH, p).map_err(attr_err)?;
    }
    if let Some(p) = get(RVS_DEST_ATTR_L_THRESH) {
        d.l_thresh = nlattr::get_u32(RVS_DEST_ATTR_L_THRESH, p).map_err(attr_err)?;
    }
    config::validate_thresholds(d.u_thresh, d.l_thresh)?;
    let tun_type = match get(RVS_DEST_ATTR_TUN_TYPE) {
        Some(p) => nlattr::get_u8(RVS_DEST_ATTR_TUN_TYPE, p).map_err(attr_err)?,
        None => tunnel::TYPE_IPIP,
    };
    let tun_port = match get(RVS_DEST_ATTR_TUN_PORT) {
        Some(p) => nlattr::get_be16(RVS_DEST_ATTR_TUN_PORT, p).map_err(attr_err)?,
        None => 0,
    };
    let tun_flags = match get(RVS_DEST_ATTR_TUN_FLAGS) {
        Some(p) => nlattr::get_u16(RVS_DEST_ATTR_TUN_FLAGS, p).map_err(attr_err)?,
        None => 0,
    };
    d.tunnel = Tunnel::from_uapi(tun_type, tun_port, tun_flags)?;
    Ok(d)
}

/// The longest drain (`RVS_DEST_ATTR_DRAIN`) accepted: a day. A drain is
/// for connections to finish on their own; anything longer is a
/// forgotten server, which `-e` (cancel) or a weight of 0 says better.
pub const MAX_DRAIN_SECS: u32 = 86_400;

/// The drain of a delete request's destination nest: `Some(seconds)`
/// when it asks to drain (1 to [`MAX_DRAIN_SECS`]), `None` to delete now.
pub fn parse_drain(nest: &[u8]) -> Result<Option<u32>, ConfigError> {
    let mut t: [Option<&[u8]>; RVS_DEST_ATTR_MAX as usize + 1] =
        [None; RVS_DEST_ATTR_MAX as usize + 1];
    nlattr::parse_nested(nest, &mut t).map_err(attr_err)?;
    let Some(p) = t.get(usize::from(RVS_DEST_ATTR_DRAIN)).copied().flatten() else {
        return Ok(None);
    };
    let secs = nlattr::get_u32(RVS_DEST_ATTR_DRAIN, p).map_err(attr_err)?;
    if secs == 0 || secs > MAX_DRAIN_SECS {
        return Err(ConfigError::new(
            ERANGE,
            c"drain must last 1 to 86400 seconds",
        ));
    }
    Ok(Some(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enat_needs_a_tcp_address_service() {
        let key = |protocol: u8, fwmark: u32| ServiceKey {
            af: AddrFamily::Inet,
            protocol,
            addr: [0; 16],
            port: if fwmark == 0 { 80 } else { 0 },
            fwmark,
        };
        assert!(key(6, 0).check_fwd(FwdMethod::Enat).is_ok());
        for k in [key(17, 0), key(132, 0), key(6, 7)] {
            let e = k.check_fwd(FwdMethod::Enat).unwrap_err();
            assert_eq!(e.errno, EINVAL);
            assert!(e
                .msg
                .to_str()
                .unwrap()
                .starts_with("ENAT needs a TCP service"));
            // Other methods are not concerned.
            assert!(k.check_fwd(FwdMethod::FullNat).is_ok());
            assert!(k.check_fwd(FwdMethod::Masq).is_ok());
        }
    }
    use std::vec::Vec;

    #[test]
    fn drain_is_optional_and_bounded() {
        let addr = attr(RVS_DEST_ATTR_ADDR, &[10, 0, 0, 1]);
        assert_eq!(parse_drain(&addr).unwrap(), None);
        let with = |secs: u32| {
            let mut n = addr.clone();
            n.extend(attr(RVS_DEST_ATTR_DRAIN, &secs.to_ne_bytes()));
            parse_drain(&n)
        };
        assert_eq!(with(30).unwrap(), Some(30));
        assert_eq!(with(MAX_DRAIN_SECS).unwrap(), Some(MAX_DRAIN_SECS));
        assert_eq!(with(0).unwrap_err().errno, ERANGE);
        assert_eq!(with(MAX_DRAIN_SECS + 1).unwrap_err().errno, ERANGE);
        let mut short = addr.clone();
        short.extend(attr(RVS_DEST_ATTR_DRAIN, &[1, 0]));
        assert_eq!(parse_drain(&short).unwrap_err().errno, EINVAL);
    }

    use super::super::nlattr::test_attr as attr;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[..4].copy_from_slice(&a);
        x
    }

    fn svc_nest(port: u16, sched: &[u8]) -> Vec<u8> {
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_ADDR, &v4([10, 0, 0, 1])));
        b.extend(attr(RVS_SVC_ATTR_PORT, &port.to_be_bytes()));
        b.extend(attr(RVS_SVC_ATTR_SCHED_NAME, sched));
        let mut flags = Vec::new();
        flags.extend_from_slice(&0u32.to_ne_bytes());
        flags.extend_from_slice(&u32::MAX.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FLAGS, &flags));
        b.extend(attr(RVS_SVC_ATTR_TIMEOUT, &0u32.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_NETMASK, &u32::MAX.to_ne_bytes()));
        b
    }

    #[test]
    fn full_service_decodes() {
        let (k, p) = parse_service(&svc_nest(80, b"rr\0"), true).unwrap();
        assert_eq!(k.port, 80);
        assert_eq!(k.protocol, 6);
        assert_eq!(k.addr, v4([10, 0, 0, 1]));
        assert_eq!(p.unwrap().sched, SchedKind::Rr);
    }

    #[test]
    fn service_errors_are_precise() {
        // Port 0 (all ports) only with persistence; any key may name it.
        let e = parse_service(&svc_nest(0, b"rr\0"), true).unwrap_err();
        assert_eq!(
            (e.errno, e.msg),
            (
                EINVAL,
                c"port 0 (all ports) is only for persistent services (-p)"
            )
        );
        let (k, _) = parse_service(&svc_nest(0, b"rr\0"), false).unwrap();
        assert_eq!(k.port, 0);
        let mut persistent = svc_nest(0, b"rr\0");
        // The flags word: after FLAGS's header, before TIMEOUT and NETMASK.
        let at = persistent.len() - 8 - 8 - 12 + 4;
        persistent[at..at + 4].copy_from_slice(&SVC_F_PERSISTENT.to_ne_bytes());
        let (k, p) = parse_service(&persistent, true).unwrap();
        assert_eq!((k.port, p.unwrap().flags), (0, SVC_F_PERSISTENT));
        let e = parse_service(&svc_nest(80, b"nosuch\0"), true).unwrap_err();
        assert_eq!((e.errno, e.msg), (ENOENT, c"unknown scheduler"));
        let mut b = attr(RVS_SVC_ATTR_AF, &7u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes()));
        assert_eq!(
            parse_service(&b, false).unwrap_err().errno,
            config::EAFNOSUPPORT
        );
        // Identifying attributes only: missing scheduler is fine.
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &17u16.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_ADDR, &[10, 0, 0, 1]));
        b.extend(attr(RVS_SVC_ATTR_PORT, &53u16.to_be_bytes()));
        let (k, p) = parse_service(&b, false).unwrap();
        assert_eq!((k.protocol, k.port, p), (17, 53, None));
        assert_eq!(
            parse_service(&b, true).unwrap_err().msg,
            c"scheduler name missing"
        );
        // Wrong length port.
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_ADDR, &[10, 0, 0, 1]));
        b.extend(attr(RVS_SVC_ATTR_PORT, &[0, 80, 0]));
        assert_eq!(parse_service(&b, false).unwrap_err().errno, EINVAL);
    }

    fn dest_nest(port: u16, fwd: u32, weight: u32) -> Vec<u8> {
        let mut b = attr(RVS_DEST_ATTR_ADDR, &v4([10, 0, 1, 1]));
        b.extend(attr(RVS_DEST_ATTR_PORT, &port.to_be_bytes()));
        b.extend(attr(RVS_DEST_ATTR_FWD_METHOD, &fwd.to_ne_bytes()));
        b.extend(attr(RVS_DEST_ATTR_WEIGHT, &weight.to_ne_bytes()));
        b.extend(attr(RVS_DEST_ATTR_U_THRESH, &0u32.to_ne_bytes()));
        b.extend(attr(RVS_DEST_ATTR_L_THRESH, &0u32.to_ne_bytes()));
        b.extend(attr(RVS_DEST_ATTR_ADDR_FAMILY, &2u16.to_ne_bytes()));
        b
    }

    fn key(af: AddrFamily, fwmark: u32) -> ServiceKey {
        ServiceKey {
            af,
            protocol: 6,
            addr: v4([10, 0, 0, 1]),
            port: 80,
            fwmark,
        }
    }

    fn v6(last: u8) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        x[15] = last;
        x
    }

    #[test]
    fn ipv6_service_and_dests() {
        let mut b = attr(RVS_SVC_ATTR_AF, &10u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &17u16.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_ADDR, &v6(1)));
        b.extend(attr(RVS_SVC_ATTR_PORT, &53u16.to_be_bytes()));
        let (k, _) = parse_service(&b, false).unwrap();
        assert_eq!((k.af, k.addr, k.port), (AddrFamily::Inet6, v6(1), 53));
        // Four bytes are not an IPv6 address.
        let mut short = attr(RVS_SVC_ATTR_AF, &10u16.to_ne_bytes());
        short.extend(attr(RVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes()));
        short.extend(attr(RVS_SVC_ATTR_ADDR, &[10, 0, 0, 1]));
        short.extend(attr(RVS_SVC_ATTR_PORT, &80u16.to_be_bytes()));
        assert_eq!(parse_service(&short, false).unwrap_err().errno, EINVAL);
        // Netmask: a prefix length, 128 by default.
        let mut full = b.clone();
        full.extend(attr(RVS_SVC_ATTR_SCHED_NAME, b"rr\0"));
        let (_, p) = parse_service(&full, true).unwrap();
        assert_eq!(p.unwrap().netmask, 128);
        let mut bad = full.clone();
        bad.extend(attr(RVS_SVC_ATTR_NETMASK, &129u32.to_ne_bytes()));
        let e = parse_service(&bad, true).unwrap_err();
        assert_eq!(e.msg, c"IPv6 netmask must be a prefix length 1..128");

        let dest6 = |addr: [u8; 16], fwd: u32| {
            let mut d = attr(RVS_DEST_ATTR_ADDR, &addr);
            d.extend(attr(RVS_DEST_ATTR_PORT, &53u16.to_be_bytes()));
            d.extend(attr(RVS_DEST_ATTR_FWD_METHOD, &fwd.to_ne_bytes()));
            d.extend(attr(RVS_DEST_ATTR_WEIGHT, &1u32.to_ne_bytes()));
            d.extend(attr(RVS_DEST_ATTR_ADDR_FAMILY, &10u16.to_ne_bytes()));
            d
        };
        let d = parse_dest(&dest6(v6(10), 0), &key(AddrFamily::Inet6, 0), true).unwrap();
        assert_eq!((d.af, d.addr), (AddrFamily::Inet6, v6(10)));
        // An IPv6 server of an IPv4 service: tunnel only.
        assert!(parse_dest(&dest6(v6(10), 2), &key(AddrFamily::Inet, 0), true).is_ok());
        let e = parse_dest(&dest6(v6(10), 3), &key(AddrFamily::Inet, 0), true).unwrap_err();
        assert_eq!(e.errno, EINVAL);
        // GUE and GRE carry both families, under both outer families.
        for svc_af in [AddrFamily::Inet, AddrFamily::Inet6] {
            let mut gue = dest6(v6(10), 2);
            gue.extend(attr(RVS_DEST_ATTR_TUN_TYPE, &[tunnel::TYPE_GUE]));
            gue.extend(attr(RVS_DEST_ATTR_TUN_PORT, &6080u16.to_be_bytes()));
            let d = parse_dest(&gue, &key(svc_af, 0), true).unwrap();
            assert_eq!(
                d.tunnel,
                Tunnel::Gue {
                    port: 6080,
                    csum: false,
                    remcsum: false
                }
            );
            let mut gre = dest6(v6(10), 2);
            gre.extend(attr(RVS_DEST_ATTR_TUN_TYPE, &[tunnel::TYPE_GRE]));
            let d = parse_dest(&gre, &key(svc_af, 0), true).unwrap();
            assert_eq!(d.tunnel, Tunnel::Gre { csum: false });
        }
        // Link-local and multicast servers are refused.
        let mut ll = [0u8; 16];
        ll[..2].copy_from_slice(&[0xfe, 0x80]);
        ll[15] = 1;
        assert_eq!(
            parse_dest(&dest6(ll, 0), &key(AddrFamily::Inet6, 0), true)
                .unwrap_err()
                .errno,
            EINVAL
        );
        let mut mc = ll;
        mc[..2].copy_from_slice(&[0xff, 0x02]);
        assert_eq!(
            parse_dest(&dest6(mc, 0), &key(AddrFamily::Inet6, 0), true)
                .unwrap_err()
                .errno,
            EINVAL
        );
    }

    #[test]
    fn dest_decodes_and_validates() {
        let inet = key(AddrFamily::Inet, 0);
        let d = parse_dest(&dest_nest(8080, 0, 3), &inet, true).unwrap();
        assert_eq!((d.port, d.fwd, d.weight), (8080, FwdMethod::Masq, 3));
        let e = parse_dest(&dest_nest(80, 0, 70000), &inet, true).unwrap_err();
        assert_eq!(e.errno, config::ERANGE);
        // Local (1) is a method now, Bypass (4) is not.
        let d = parse_dest(&dest_nest(80, 1, 1), &inet, true).unwrap();
        assert_eq!(d.fwd, FwdMethod::Local);
        let e = parse_dest(&dest_nest(80, 4, 1), &inet, true).unwrap_err();
        assert_eq!(e.errno, EINVAL);
        // An IPv4 server of an IPv6 service: only tunnelled.
        let inet6 = key(AddrFamily::Inet6, 0);
        let e = parse_dest(&dest_nest(80, 0, 1), &inet6, true).unwrap_err();
        assert_eq!(e.errno, EINVAL);
        let d = parse_dest(&dest_nest(80, 2, 1), &inet6, true).unwrap();
        assert_eq!((d.af, d.fwd), (AddrFamily::Inet, FwdMethod::Tunnel));
        // Delete does not check the method.
        let d = parse_dest(&dest_nest(80, 0, 1), &inet6, false).unwrap();
        assert_eq!(d.af, AddrFamily::Inet);
        let d = parse_dest(&dest_nest(80, 0, 70000), &inet, false).unwrap();
        assert_eq!(d.port, 80);
        // Port 0 only for a firewall-mark service.
        let e = parse_dest(&dest_nest(0, 3, 1), &inet, true).unwrap_err();
        assert_eq!((e.errno, e.msg), (EINVAL, c"port must not be 0"));
        let d = parse_dest(&dest_nest(0, 3, 1), &key(AddrFamily::Inet, 7), true).unwrap();
        assert_eq!((d.port, d.fwd), (0, FwdMethod::Route));
        // ... or an all-ports (port 0) service.
        let all = ServiceKey {
            port: 0,
            ..key(AddrFamily::Inet, 0)
        };
        let d = parse_dest(&dest_nest(0, 0, 1), &all, true).unwrap();
        assert_eq!((d.port, d.fwd), (0, FwdMethod::Masq));
    }

    fn fwm_nest(mark: u32, flags: u32) -> Vec<u8> {
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FWMARK, &mark.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_SCHED_NAME, b"rr\0"));
        let mut f = Vec::new();
        f.extend_from_slice(&flags.to_ne_bytes());
        f.extend_from_slice(&u32::MAX.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FLAGS, &f));
        b
    }

    #[test]
    fn fwmark_services() {
        let (k, p) = parse_service(&fwm_nest(7, SVC_F_ONEPACKET), true).unwrap();
        assert_eq!(
            k,
            ServiceKey {
                af: AddrFamily::Inet,
                protocol: 6,
                addr: [0; 16],
                port: 0,
                fwmark: 7
            }
        );
        assert!(k.is_fwmark());
        assert_eq!(p.unwrap().flags, SVC_F_ONEPACKET);
        // Only AF and mark identify it.
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FWMARK, &7u32.to_ne_bytes()));
        assert_eq!(parse_service(&b, false).unwrap(), (k, None));
        // Address attributes next to a mark are ignored, as in IPVS.
        let mut b = svc_nest(80, b"rr\0");
        b.extend(attr(RVS_SVC_ATTR_FWMARK, &7u32.to_ne_bytes()));
        assert_eq!(parse_service(&b, false).unwrap().0, k);
        // Mark 0 is no mark: the address attributes count.
        let mut b = svc_nest(80, b"rr\0");
        b.extend(attr(RVS_SVC_ATTR_FWMARK, &0u32.to_ne_bytes()));
        assert_eq!(parse_service(&b, false).unwrap().0.fwmark, 0);
        // A wrongly sized mark.
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FWMARK, &[7, 0]));
        assert_eq!(parse_service(&b, false).unwrap_err().errno, EINVAL);
        // Neither mark nor address.
        let b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        assert_eq!(
            parse_service(&b, false).unwrap_err().msg,
            c"service protocol missing"
        );
    }

    #[test]
    fn one_packet_only_for_udp() {
        let mut b = attr(RVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes()));
        b.extend(attr(RVS_SVC_ATTR_ADDR, &v4([10, 0, 0, 1])));
        b.extend(attr(RVS_SVC_ATTR_PORT, &80u16.to_be_bytes()));
        b.extend(attr(RVS_SVC_ATTR_SCHED_NAME, b"rr\0"));
        let mut f = Vec::new();
        f.extend_from_slice(&SVC_F_ONEPACKET.to_ne_bytes());
        f.extend_from_slice(&u32::MAX.to_ne_bytes());
        b.extend(attr(RVS_SVC_ATTR_FLAGS, &f));
        let e = parse_service(&b, true).unwrap_err();
        assert_eq!(
            (e.errno, e.msg),
            (EINVAL, c"one-packet scheduling is only for UDP services")
        );
        // The same for UDP is fine; the flag survives the mask.
        let pos = 8 + 4; // the AF attribute (8 bytes), PROTOCOL's header
        b[pos] = 17;
        let (k, p) = parse_service(&b, true).unwrap();
        assert_eq!((k.protocol, p.unwrap().flags), (17, SVC_F_ONEPACKET));
    }
}
