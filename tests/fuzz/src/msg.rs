//! Netlink message building: attribute trees, the RVS family's valid
//! messages (numbers from rvs/uapi/rvs.h, IPVS's), and the framing.

#![allow(dead_code)]

use std::sync::OnceLock;

use crate::rng::Rng;

pub const NLMSG_HDRLEN: usize = 16;
pub const GENL_HDRLEN: usize = 4;
pub const NLA_HDRLEN: usize = 4;
pub const NLA_F_NESTED: u16 = 0x8000;
pub const NLA_F_NET_BYTEORDER: u16 = 0x4000;
pub const NLA_TYPE_MASK: u16 = 0x3fff;

pub const NLMSG_NOOP: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;

pub const NLM_F_REQUEST: u16 = 0x1;
pub const NLM_F_MULTI: u16 = 0x2;
pub const NLM_F_ACK: u16 = 0x4;
pub const NLM_F_ECHO: u16 = 0x8;
pub const NLM_F_ROOT: u16 = 0x100;
pub const NLM_F_MATCH: u16 = 0x200;
pub const NLM_F_DUMP: u16 = NLM_F_ROOT | NLM_F_MATCH;
pub const NLM_F_CAPPED: u16 = 0x100;
pub const NLM_F_ACK_TLVS: u16 = 0x200;

pub const GENL_ID_CTRL: u16 = 16;
pub const CTRL_CMD_GETFAMILY: u8 = 3;
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;

// The RVS protocol numbers: rvs-core's mirror of rvs/uapi/rvs.h, the one
// Rust copy (checked against the header by rvs/core/tests/uapi.rs).
pub use rvs_core::uapi::*;

/// Largest netlink message the fuzzer sends (header included).
pub const MAX_MSG: usize = 65536 + NLMSG_HDRLEN + GENL_HDRLEN;

/// An attribute payload: raw bytes or nested attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Raw(Vec<u8>),
    Nest(Vec<Attr>),
}

/// One attribute; `kind` carries the flag bits too (NLA_F_NESTED, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub kind: u16,
    pub body: Body,
}

impl Attr {
    pub fn raw(kind: u16, bytes: &[u8]) -> Attr {
        Attr {
            kind,
            body: Body::Raw(bytes.to_vec()),
        }
    }
    pub fn u16(kind: u16, v: u16) -> Attr {
        Attr::raw(kind, &v.to_ne_bytes())
    }
    pub fn be16(kind: u16, v: u16) -> Attr {
        Attr::raw(kind, &v.to_be_bytes())
    }
    pub fn u32(kind: u16, v: u32) -> Attr {
        Attr::raw(kind, &v.to_ne_bytes())
    }
    pub fn nest(kind: u16, children: Vec<Attr>) -> Attr {
        Attr {
            kind: kind | NLA_F_NESTED,
            body: Body::Nest(children),
        }
    }

    /// Appends the attribute, padded to 4 bytes. A payload longer than
    /// `nla_len` can say gets a wrapped (lying) length, on purpose.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; NLA_HDRLEN]);
        match &self.body {
            Body::Raw(b) => out.extend_from_slice(b),
            Body::Nest(c) => c.iter().for_each(|a| a.encode(out)),
        }
        let len = (out.len() - start) as u16;
        out[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        out[start + 2..start + 4].copy_from_slice(&self.kind.to_ne_bytes());
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }

    /// Encoded size, padding included.
    pub fn size(&self) -> usize {
        let inner = match &self.body {
            Body::Raw(b) => b.len(),
            Body::Nest(c) => c.iter().map(Attr::size).sum(),
        };
        (NLA_HDRLEN + inner + 3) & !3
    }
}

/// Encodes an attribute stream.
pub fn encode_attrs(attrs: &[Attr]) -> Vec<u8> {
    let mut out = Vec::new();
    attrs.iter().for_each(|a| a.encode(&mut out));
    out
}

/// A generic netlink request before framing.
#[derive(Clone, Debug, PartialEq)]
pub struct GenlMsg {
    pub cmd: u8,
    pub version: u8,
    pub reserved: u16,
    pub attrs: Vec<Attr>,
    /// Send as a dump (NLM_F_DUMP).
    pub dump: bool,
}

impl GenlMsg {
    pub fn new(cmd: u8, attrs: Vec<Attr>) -> GenlMsg {
        GenlMsg {
            cmd,
            version: 1,
            reserved: 0,
            attrs,
            dump: false,
        }
    }

    /// genlmsghdr + attributes.
    pub fn payload(&self) -> Vec<u8> {
        let mut p = vec![self.cmd, self.version];
        p.extend_from_slice(&self.reserved.to_ne_bytes());
        self.attrs.iter().for_each(|a| a.encode(&mut p));
        p
    }
}

/// Frames `payload` in a netlink header with a truthful length.
pub fn nlmsg(ty: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(NLMSG_HDRLEN + payload.len());
    m.extend_from_slice(&((NLMSG_HDRLEN + payload.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&ty.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(payload);
    m
}

/// The CTRL_CMD_GETFAMILY request for `name`.
pub fn getfamily(name: &str, seq: u32) -> Vec<u8> {
    let mut n = name.as_bytes().to_vec();
    n.push(0);
    let mut p = vec![CTRL_CMD_GETFAMILY, 1, 0, 0];
    Attr::raw(CTRL_ATTR_FAMILY_NAME, &n).encode(&mut p);
    nlmsg(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, seq, &p)
}

fn addr16(v4: [u8; 4]) -> Vec<u8> {
    let mut a = v4.to_vec();
    a.extend_from_slice(&[0; 12]);
    a
}

/// The namespace's own addresses (`sock::host_addrs`, set once at the
/// start): valid FullNAT local addresses are mostly drawn from them, so a
/// module that wants local addresses to be the director's takes them.
/// Without them (unit tests, a namespace with none) the pools below serve.
pub static HOST_ADDRS: OnceLock<HostAddrs> = OnceLock::new();

/// A namespace's IPv4 and IPv6 addresses.
pub type HostAddrs = (Vec<[u8; 4]>, Vec<[u8; 16]>);

/// A unicast local address of family `af` (a pool of the fuzzer's own
/// or, mostly, the namespace's), in the form a client sends: IPv6 in 16
/// bytes, IPv4 in 4 or 16 (both are taken).
fn laddr_bytes(r: &mut Rng, af: u16) -> Vec<u8> {
    let host = HOST_ADDRS.get();
    let n = 1 + r.below(16) as u8;
    // Drawn whether or not there are host addresses, so that the rest of
    // a seed's run does not depend on them.
    let from_host = r.chance(3, 4);
    let which = r.next_u64() as usize;
    if af == 10 {
        match host.map(|h| &h.1[..]) {
            Some(v6) if !v6.is_empty() && from_host => v6[which % v6.len()].to_vec(),
            _ => {
                let mut a = vec![0xfd, 0, 2, 4];
                a.extend_from_slice(&[0; 11]);
                a.push(n);
                a
            }
        }
    } else {
        let a = match host.map(|h| &h.0[..]) {
            Some(v4) if !v4.is_empty() && from_host => v4[which % v4.len()],
            _ => [10, 0, 204, n],
        };
        if r.chance(1, 2) {
            a.to_vec()
        } else {
            addr16(a)
        }
    }
}

/// The kinds of `RVS_SVC_ATTR_LADDRS` nests [`laddrs`] makes, in order.
pub const LADDRS_KINDS: &[&str] = &[
    "valid",
    "empty",
    "over-long",
    "wrong-length",
    "wrong-type",
    "not-unicast",
    "not-nested",
];

/// A service's local addresses (`RVS_SVC_ATTR_LADDRS`) for family `af`,
/// of kind `LADDRS_KINDS[kind]`: a few valid ones (duplicates possible),
/// an empty nest (clears them), 64 or 65 (one past `RVS_LADDRS_MAX`),
/// entries of a wrong length, of a wrong inner type (or nested), of a
/// loopback, multicast, broadcast or unspecified address, or the list
/// without its NLA_F_NESTED flag.
pub fn laddrs_of_kind(r: &mut Rng, af: u16, kind: usize) -> Attr {
    let addr = |r: &mut Rng| Attr::raw(RVS_LADDR_ATTR_ADDR, &laddr_bytes(r, af));
    let v6 = af == 10;
    let children = match kind {
        0 => (0..r.range(1, 4)).map(|_| addr(r)).collect(),
        1 => vec![],
        2 => {
            let n = r.pick(&[RVS_LADDRS_MAX, RVS_LADDRS_MAX + 1]);
            (1..=n)
                .map(|i| {
                    let i = i as u8;
                    if v6 {
                        let mut a = vec![0xfd, 0, 2, 5];
                        a.extend_from_slice(&[0; 11]);
                        a.push(i);
                        Attr::raw(RVS_LADDR_ATTR_ADDR, &a)
                    } else {
                        Attr::raw(RVS_LADDR_ATTR_ADDR, &[10, 0, 205, i])
                    }
                })
                .collect()
        }
        3 => {
            let n = r.pick(&[0usize, 1, 3, 5, 8, 15, 17, 20]);
            let mut v = vec![addr(r)];
            v.insert(
                r.below(2) as usize,
                Attr::raw(RVS_LADDR_ATTR_ADDR, &r.bytes(n)),
            );
            v
        }
        4 => {
            let bytes = laddr_bytes(r, af);
            let bad = match r.below(3) {
                0 => Attr::raw(
                    r.pick(&[0, RVS_LADDR_ATTR_MAX + 1, 7, NLA_TYPE_MASK]),
                    &bytes,
                ),
                1 => Attr::nest(
                    RVS_LADDR_ATTR_ADDR,
                    vec![Attr::raw(RVS_LADDR_ATTR_ADDR, &bytes)],
                ),
                _ => Attr::raw(RVS_LADDR_ATTR_ADDR | NLA_F_NET_BYTEORDER, &bytes),
            };
            vec![addr(r), bad]
        }
        5 => {
            let a: Vec<u8> = if v6 {
                let mut lo = vec![0; 16];
                match r.below(3) {
                    0 => lo[15] = 1,
                    1 => {}
                    _ => {
                        lo[0] = 0xff;
                        lo[1] = 2;
                        lo[15] = 1;
                    }
                }
                lo
            } else {
                addr16(r.pick(&[[127, 0, 0, 1], [0; 4], [255; 4], [224, 0, 0, 1]]))
            };
            vec![Attr::raw(RVS_LADDR_ATTR_ADDR, &a)]
        }
        _ => return Attr::raw(RVS_SVC_ATTR_LADDRS, &encode_attrs(&[addr(r), addr(r)])),
    };
    Attr::nest(RVS_SVC_ATTR_LADDRS, children)
}

/// [`laddrs_of_kind`] of a random kind, valid ones most often.
pub fn laddrs(r: &mut Rng, af: u16) -> Attr {
    let kind = if r.chance(1, 3) {
        0
    } else {
        r.below(LADDRS_KINDS.len() as u64) as usize
    };
    laddrs_of_kind(r, af, kind)
}

const SCHEDS: &[&str] = &[
    "rr", "wrr", "lc", "wlc", "sh", "mh", "dh", "sed", "nq", "fo", "nosuch", "",
];
const PORTS: &[u16] = &[80, 443, 8080, 1, 65535, 0, 53];

/// A service nest from small pools (so edits and deletes hit existing
/// entries and the table stays bounded); `full` adds the add/edit fields.
pub fn service(r: &mut Rng, full: bool) -> Attr {
    let mut v = Vec::new();
    let af = if r.chance(1, 12) {
        r.pick(&[10u16, 0, 7, 0xffff])
    } else {
        2
    };
    v.push(Attr::u16(RVS_SVC_ATTR_AF, af));
    v.push(Attr::u16(
        RVS_SVC_ATTR_PROTOCOL,
        if r.chance(1, 12) {
            r.below(256) as u16
        } else {
            r.pick(&[6u16, 17])
        },
    ));
    let host = 1 + r.below(16) as u8;
    let addr = if af == 10 {
        let mut a = vec![0x20, 0x01, 0x0d, 0xb8];
        a.extend_from_slice(&[0; 11]);
        a.push(host);
        a
    } else {
        addr16([10, 0, 200, host])
    };
    v.push(Attr::raw(RVS_SVC_ATTR_ADDR, &addr));
    v.push(Attr::be16(
        RVS_SVC_ATTR_PORT,
        if r.chance(1, 10) {
            r.next_u64() as u16
        } else {
            r.pick(PORTS)
        },
    ));
    if r.chance(1, 20) {
        v.push(Attr::u32(RVS_SVC_ATTR_FWMARK, r.interesting_u32()));
    }
    if full {
        let mut s = r.pick(SCHEDS).as_bytes().to_vec();
        s.push(0);
        v.push(Attr::raw(RVS_SVC_ATTR_SCHED_NAME, &s));
        let mut fl = r
            .pick(&[0u32, 1, 2, 4, 7, 0xffff_ffff])
            .to_ne_bytes()
            .to_vec();
        fl.extend_from_slice(&r.pick(&[0u32, 0xffff_ffff, 1]).to_ne_bytes());
        v.push(Attr::raw(RVS_SVC_ATTR_FLAGS, &fl));
        v.push(Attr::u32(
            RVS_SVC_ATTR_TIMEOUT,
            r.pick(&[0, 300, 0xffff_ffff]),
        ));
        v.push(Attr::u32(
            RVS_SVC_ATTR_NETMASK,
            r.pick(&[0xffff_ffff, 0, 0x00ff_ffff]),
        ));
        if r.chance(1, 10) {
            v.push(Attr::raw(RVS_SVC_ATTR_PE_NAME, b"sip\0"));
        }
        if r.chance(1, 4) {
            // FullNAT's local addresses: set, cleared or wrong.
            v.push(laddrs(r, af));
        }
    }
    if r.chance(1, 4) {
        // Rotate: attribute order must not matter.
        let k = r.below(v.len() as u64) as usize;
        v.rotate_left(k);
    }
    Attr::nest(RVS_CMD_ATTR_SERVICE, v)
}

/// A destination nest; `full` adds the add/edit fields.
pub fn destination(r: &mut Rng, full: bool) -> Attr {
    let mut v = vec![
        Attr::raw(
            RVS_DEST_ATTR_ADDR,
            &addr16([10, 0, 201, 1 + r.below(16) as u8]),
        ),
        Attr::be16(RVS_DEST_ATTR_PORT, r.pick(PORTS)),
    ];
    if full {
        v.push(Attr::u32(
            RVS_DEST_ATTR_FWD_METHOD,
            if r.chance(1, 8) {
                r.interesting_u32()
            } else {
                // NAT, tunnel, direct routing, FullNAT.
                r.pick(&[0, 2, 3, 5])
            },
        ));
        v.push(Attr::u32(
            RVS_DEST_ATTR_WEIGHT,
            if r.chance(1, 6) {
                r.interesting_u32()
            } else {
                r.below(10) as u32
            },
        ));
        v.push(Attr::u32(
            RVS_DEST_ATTR_U_THRESH,
            r.pick(&[0, 5, 100, 0xffff_ffff]),
        ));
        v.push(Attr::u32(RVS_DEST_ATTR_L_THRESH, r.pick(&[0, 1, 9, 200])));
    }
    if r.chance(3, 4) {
        v.push(Attr::u16(
            RVS_DEST_ATTR_ADDR_FAMILY,
            if r.chance(1, 10) {
                r.pick(&[10u16, 0, 99])
            } else {
                2
            },
        ));
    }
    if r.chance(1, 10) {
        v.push(Attr::raw(RVS_DEST_ATTR_TUN_TYPE, &[r.below(4) as u8]));
        v.push(Attr::be16(RVS_DEST_ATTR_TUN_PORT, 6080));
    }
    Attr::nest(RVS_CMD_ATTR_DEST, v)
}

/// Random attributes (types 0..=max+2, random small payloads).
pub fn random_attrs(r: &mut Rng, max: u16) -> Vec<Attr> {
    (0..r.range(0, 5))
        .map(|_| {
            let kind = r.below(u64::from(max) + 3) as u16;
            let n = r.pick(&[0usize, 1, 2, 4, 8, 16, 17]);
            Attr::raw(kind, &r.bytes(n))
        })
        .collect()
}

/// One runtime setting from the module's own table (rvs-core's
/// `settings::SETTINGS`, so a new setting is fuzzed as soon as it exists):
/// mostly a value in its range (its bounds, its default), sometimes one
/// just outside it or a wild one.
pub fn setting(r: &mut Rng) -> Attr {
    let spec =
        &rvs_core::settings::SETTINGS[r.below(rvs_core::settings::SETTINGS.len() as u64) as usize];
    let v = match r.below(8) {
        0 => spec.min,
        1 => spec.max,
        2 => spec.default,
        3 => spec.max.saturating_add(1),
        4 => spec.min.wrapping_sub(1),
        5 => r.interesting_u32(),
        _ => spec.min + r.below(u64::from(spec.max - spec.min) + 1) as u32,
    };
    Attr::u32(spec.attr, v)
}

/// One change of an APPLY request (`RVS_CMD_ATTR_OP`): mostly what
/// `rvsadm -R --atomic` sends (a service or real-server command with its
/// nests, or a flush), sometimes a command that cannot be part of one, a
/// missing or extra nest, or random attributes.
fn change(r: &mut Rng) -> Attr {
    let cmd = r.pick(&[
        RVS_CMD_NEW_SERVICE,
        RVS_CMD_SET_SERVICE,
        RVS_CMD_DEL_SERVICE,
        RVS_CMD_NEW_DEST,
        RVS_CMD_SET_DEST,
        RVS_CMD_DEL_DEST,
        RVS_CMD_FLUSH,
        RVS_CMD_ZERO,
    ]);
    let mut inner = match r.below(10) {
        0 => random_attrs(r, RVS_OP_ATTR_MAX),
        1 => vec![service(r, true), destination(r, true)],
        _ => valid(r, cmd).attrs,
    };
    if !r.chance(1, 20) {
        inner.push(Attr::u32(RVS_OP_ATTR_CMD, u32::from(cmd)));
    }
    Attr::nest(RVS_CMD_ATTR_OP, inner)
}

/// A well-formed request for command `c` (what a correct client sends;
/// the kernel may still refuse it, e.g. a duplicate or a missing entry).
pub fn valid(r: &mut Rng, c: u8) -> GenlMsg {
    let attrs = match c {
        RVS_CMD_NEW_SERVICE | RVS_CMD_SET_SERVICE => vec![service(r, true)],
        RVS_CMD_DEL_SERVICE | RVS_CMD_GET_SERVICE => vec![service(r, false)],
        RVS_CMD_NEW_DEST | RVS_CMD_SET_DEST => vec![service(r, false), destination(r, true)],
        RVS_CMD_DEL_DEST => {
            let mut dest = destination(r, false);
            if r.chance(1, 3) {
                // A drain: seconds, the bounds rvsadm keeps and beyond.
                let secs = r.pick(&[0, 1, 30, 86400, 0xffff_ffff]);
                if let Body::Nest(v) = &mut dest.body {
                    v.push(Attr::u32(RVS_DEST_ATTR_DRAIN, secs));
                }
            }
            vec![service(r, false), dest]
        }
        RVS_CMD_GET_DEST => vec![service(r, false)],
        RVS_CMD_NEW_DAEMON | RVS_CMD_DEL_DAEMON => {
            vec![Attr::nest(RVS_CMD_ATTR_DAEMON, random_attrs(r, 8))]
        }
        RVS_CMD_SET_CONFIG => vec![
            Attr::u32(RVS_CMD_ATTR_TIMEOUT_TCP, r.pick(&[0, 900, 0xffff_ffff])),
            Attr::u32(RVS_CMD_ATTR_TIMEOUT_TCP_FIN, r.pick(&[0, 120])),
            Attr::u32(RVS_CMD_ATTR_TIMEOUT_UDP, r.pick(&[0, 300])),
            setting(r),
        ],
        RVS_CMD_ZERO if r.chance(1, 2) => vec![service(r, false)],
        RVS_CMD_FLUSH_CONNS if r.chance(1, 2) => vec![service(r, false), destination(r, false)],
        RVS_CMD_FLUSH_CONNS => vec![service(r, false)],
        RVS_CMD_APPLY => (0..r.range(0, 4)).map(|_| change(r)).collect(),
        RVS_CMD_GET_DAEMON | RVS_CMD_GET_CONFIG | RVS_CMD_GET_INFO | RVS_CMD_ZERO
        | RVS_CMD_FLUSH => vec![],
        _ => random_attrs(r, RVS_CMD_ATTR_MAX),
    };
    let mut m = GenlMsg::new(c, attrs);
    m.dump = c == RVS_CMD_GET_DEST || (c == RVS_CMD_GET_SERVICE && r.chance(1, 2));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_encoding_is_padded_and_sized() {
        let a = Attr::raw(3, &[1, 2, 3, 4, 5]);
        let mut out = Vec::new();
        a.encode(&mut out);
        assert_eq!(out.len(), 12);
        assert_eq!(a.size(), 12);
        assert_eq!(u16::from_ne_bytes([out[0], out[1]]), 9);
        assert_eq!(u16::from_ne_bytes([out[2], out[3]]), 3);
        assert_eq!(&out[9..], &[0, 0, 0]);
    }

    #[test]
    fn nests_carry_the_flag_and_children() {
        let n = Attr::nest(
            RVS_CMD_ATTR_SERVICE,
            vec![
                Attr::u16(RVS_SVC_ATTR_AF, 2),
                Attr::be16(RVS_SVC_ATTR_PORT, 80),
            ],
        );
        let b = encode_attrs(std::slice::from_ref(&n));
        assert_eq!(b.len(), n.size());
        assert_eq!(
            u16::from_ne_bytes([b[2], b[3]]),
            RVS_CMD_ATTR_SERVICE | NLA_F_NESTED
        );
        assert_eq!(u16::from_ne_bytes([b[0], b[1]]) as usize, 4 + 8 + 8);
        assert_eq!(&b[16..18], &[0, 80]); // port in network order
    }

    #[test]
    fn framing_has_true_length() {
        let m = nlmsg(0x20, NLM_F_REQUEST | NLM_F_ACK, 7, &[1, 2, 3, 4]);
        assert_eq!(m.len(), 20);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 20);
        assert_eq!(u32::from_ne_bytes(m[8..12].try_into().unwrap()), 7);
    }

    #[test]
    fn valid_builders_cover_every_command() {
        let mut r = Rng::new(1);
        for c in 0..=20u8 {
            for _ in 0..50 {
                let m = valid(&mut r, c);
                let p = m.payload();
                assert_eq!(p[0], c);
                // 65 IPv6 local addresses (over-long LADDRS) take 1,300;
                // APPLY carries up to 4 such requests.
                let max = if c == RVS_CMD_APPLY { 8192 } else { 2048 };
                assert!(p.len() < max, "cmd {c}: {} bytes", p.len());
                if c == RVS_CMD_NEW_SERVICE {
                    assert_eq!(m.attrs[0].kind, RVS_CMD_ATTR_SERVICE | NLA_F_NESTED);
                }
                if c == RVS_CMD_GET_DEST {
                    assert!(m.dump);
                }
            }
        }
    }

    #[test]
    fn del_dest_drains_sometimes_and_flush_conns_names_a_service() {
        let mut r = Rng::new(3);
        let (mut drains, mut with_dest) = (0, 0);
        for _ in 0..300 {
            let m = valid(&mut r, RVS_CMD_DEL_DEST);
            let Body::Nest(d) = &m.attrs[1].body else {
                panic!("DEST not nested")
            };
            drains += d.iter().filter(|a| a.kind == RVS_DEST_ATTR_DRAIN).count();
            let f = valid(&mut r, RVS_CMD_FLUSH_CONNS);
            assert_eq!(f.attrs[0].kind, RVS_CMD_ATTR_SERVICE | NLA_F_NESTED);
            with_dest += usize::from(f.attrs.len() == 2);
        }
        assert!((50..200).contains(&drains), "{drains} drains");
        assert!((100..200).contains(&with_dest), "{with_dest} with a DEST");
    }

    /// Every kind of LADDRS nest comes up, in services of add and edit
    /// requests; FullNAT is among the forwarding methods.
    #[test]
    fn fullnat_attributes() {
        let mut r = Rng::new(13);
        let mut seen = std::collections::BTreeSet::new();
        let mut fullnat = 0;
        for _ in 0..2000 {
            let m = valid(&mut r, RVS_CMD_NEW_SERVICE);
            let Body::Nest(svc) = &m.attrs[0].body else {
                panic!("SERVICE not nested")
            };
            for a in svc
                .iter()
                .filter(|a| a.kind & NLA_TYPE_MASK == RVS_SVC_ATTR_LADDRS)
            {
                seen.insert(match &a.body {
                    Body::Raw(_) => "not-nested",
                    Body::Nest(c) if c.is_empty() => "empty",
                    Body::Nest(c) if c.len() > RVS_LADDRS_MAX => "over-long",
                    Body::Nest(_) => "listed",
                });
            }
            let d = valid(&mut r, RVS_CMD_NEW_DEST);
            let Body::Nest(dest) = &d.attrs[1].body else {
                panic!("DEST not nested")
            };
            fullnat += dest
                .iter()
                .filter(|a| {
                    a.kind == RVS_DEST_ATTR_FWD_METHOD
                        && a.body == Body::Raw(5u32.to_ne_bytes().to_vec())
                })
                .count();
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
        assert!(fullnat > 100, "{fullnat} FullNAT real servers");
        // Each kind, for both families, as documented.
        for af in [2u16, 10] {
            let size = if af == 10 { 16 } else { 4 };
            for (kind, name) in LADDRS_KINDS.iter().enumerate() {
                for _ in 0..20 {
                    let a = laddrs_of_kind(&mut r, af, kind);
                    let (nested, children) = match &a.body {
                        Body::Nest(c) => (true, c.clone()),
                        Body::Raw(_) => (false, vec![]),
                    };
                    assert_eq!(a.kind & NLA_TYPE_MASK, RVS_SVC_ATTR_LADDRS);
                    assert_eq!(nested, *name != "not-nested", "{name}");
                    let raw_len = |c: &Attr| match &c.body {
                        Body::Raw(b) => Some(b.len()),
                        Body::Nest(_) => None,
                    };
                    let well_formed = |c: &Attr| {
                        c.kind == RVS_LADDR_ATTR_ADDR
                            && matches!(raw_len(c), Some(n) if n == size || n == 16)
                    };
                    match *name {
                        "valid" => assert!(
                            (1..=4).contains(&children.len()) && children.iter().all(well_formed)
                        ),
                        "empty" => assert!(children.is_empty()),
                        "over-long" => {
                            assert!([64, 65].contains(&children.len()));
                            assert!(children.iter().all(well_formed));
                        }
                        "wrong-length" => {
                            assert!(children.iter().any(|c| !matches!(raw_len(c), Some(4 | 16))))
                        }
                        "wrong-type" => assert!(!children
                            .iter()
                            .all(|c| c.kind == RVS_LADDR_ATTR_ADDR && raw_len(c).is_some())),
                        "not-unicast" => assert_eq!(children.len(), 1),
                        _ => {}
                    }
                }
            }
        }
        // The namespace's addresses, once known, are the valid ones.
        let _ = HOST_ADDRS.set((vec![[192, 0, 2, 7]], vec![]));
        let mut from_host = 0;
        for _ in 0..200 {
            let Body::Nest(c) = laddrs_of_kind(&mut r, 2, 0).body else {
                panic!()
            };
            from_host += c
                .iter()
                .filter(|a| matches!(&a.body, Body::Raw(b) if b[..4] == [192, 0, 2, 7]))
                .count();
        }
        assert!(from_host > 100, "{from_host}");
    }

    #[test]
    fn settings_cover_every_setting_with_valid_values() {
        let mut r = Rng::new(7);
        let mut valid_seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let a = setting(&mut r);
            let spec = rvs_core::settings::by_attr(a.kind).expect("a setting's attribute");
            let Body::Raw(b) = &a.body else {
                panic!("nest")
            };
            let v = u32::from_ne_bytes(b[..].try_into().unwrap());
            if (spec.min..=spec.max).contains(&v) {
                valid_seen.insert(a.kind);
            }
        }
        assert_eq!(valid_seen.len(), rvs_core::settings::SETTINGS.len());
    }

    #[test]
    fn oversized_payload_wraps_the_length() {
        let a = Attr::raw(1, &vec![0u8; 70000]);
        let b = encode_attrs(&[a]);
        assert_eq!(u16::from_ne_bytes([b[0], b[1]]), (70004 % 65536) as u16);
    }
}
