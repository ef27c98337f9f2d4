// SPDX-License-Identifier: GPL-2.0

//! Tunnel encapsulations for TUN real servers: plain IP-in-IP, IP in
//! GUE (Generic UDP Encapsulation) and IP in GRE, with ipvsadm's
//! `--tun-type`, `--tun-port` and checksum options.
//!
//! C counterparts: `ipvs_gue_encap` and `ipvs_gre_encap` in
//! net/netfilter/ipvs/ip_vs_xmit.c, the checks in `ip_vs_add_dest`. Here:
//! validation and the bytes of the headers between the outer IP header and
//! the inner packet; the module pushes them and has the kernel fill in
//! checksums.

#![forbid(unsafe_code)]

use super::config::{ConfigError, EINVAL};

/// `IP_VS_CONN_F_TUNNEL_TYPE_IPIP`.
pub const TYPE_IPIP: u8 = super::uapi::RVS_TUN_TYPE_IPIP;
/// `IP_VS_CONN_F_TUNNEL_TYPE_GUE`.
pub const TYPE_GUE: u8 = super::uapi::RVS_TUN_TYPE_GUE;
/// `IP_VS_CONN_F_TUNNEL_TYPE_GRE`.
pub const TYPE_GRE: u8 = super::uapi::RVS_TUN_TYPE_GRE;
/// `IP_VS_TUNNEL_ENCAP_FLAG_CSUM`: checksum the tunnel (UDP or GRE).
pub const FLAG_CSUM: u16 = super::uapi::RVS_TUN_F_CSUM;
/// `IP_VS_TUNNEL_ENCAP_FLAG_REMCSUM`: GUE remote checksum offload.
pub const FLAG_REMCSUM: u16 = super::uapi::RVS_TUN_F_REMCSUM;

/// `IPPROTO_UDP`, the outer protocol of GUE.
pub const IPPROTO_UDP: u8 = 17;
/// `IPPROTO_GRE`.
pub const IPPROTO_GRE: u8 = 47;
/// `IPPROTO_IPIP`, the outer protocol of plain IP-in-IP.
pub const IPPROTO_IPIP: u8 = 4;

/// UDP header length.
pub(crate) const UDP_HLEN: usize = 8;
/// GUE base header length (no options).
const GUE_BASE_HLEN: usize = 4;
/// GRE base header length (flags and protocol).
const GRE_HLEN: usize = 4;
/// GRE checksum field and reserved word.
const GRE_CSUM_LEN: usize = 4;
/// `IPPROTO_IPV6` (an IPv6 inner packet in GUE).
const IPPROTO_IPV6: u8 = 41;

/// UDP and GUE headers together, as [`Tunnel::gue_header`] writes them
/// without options.
pub const GUE_HLEN: usize = UDP_HLEN + GUE_BASE_HLEN;
/// GUE's remote checksum offload option: the private flags word and the
/// checksum start and offset (`GUE_LEN_PRIV + GUE_PLEN_REMCSUM`).
const GUE_REMCSUM_LEN: usize = 8;
/// The longest UDP + GUE header rvs writes.
pub const GUE_HLEN_MAX: usize = GUE_HLEN + GUE_REMCSUM_LEN;
/// `GUE_FLAG_PRIV`: private flags follow the header.
const GUE_FLAG_PRIV: u16 = 1;
/// `GUE_PFLAG_REMCSUM`: the private option holds checksum start/offset.
const GUE_PFLAG_REMCSUM: u32 = 1 << 31;

/// Encapsulation of one TUN real server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tunnel {
    /// IP-in-IP (the default, `--tun-type ipip`).
    #[default]
    Ipip,
    /// IP in GUE to UDP port `port` (host order), UDP checksum if `csum`.
    Gue {
        /// Destination UDP port of the real server's GUE receiver.
        port: u16,
        /// Whether the UDP checksum is computed (`--tun-csum`; implied by
        /// `remcsum`).
        csum: bool,
        /// Remote checksum offload (`--tun-remcsum`): a packet whose
        /// transport checksum is left to the device carries, in a GUE
        /// option, where that checksum starts and is stored; the real
        /// server's GUE receiver completes it (RFC draft-herbert-remotecsumoffload).
        remcsum: bool,
    },
    /// IP in GRE, with the GRE checksum if `csum`.
    Gre {
        /// Whether the GRE checksum is present (`--tun-csum`).
        csum: bool,
    },
}

impl Tunnel {
    /// Decodes and checks the three netlink attributes (absent ones are 0),
    /// like IPVS: GUE needs a port; checksum flags only make sense for GUE
    /// and GRE, remote checksum offload only for GUE (it implies the UDP
    /// checksum, as in IPVS).
    pub fn from_uapi(kind: u8, port: u16, flags: u16) -> Result<Tunnel, ConfigError> {
        if flags & !(FLAG_CSUM | FLAG_REMCSUM) != 0 {
            return Err(ConfigError::new(EINVAL, c"unknown tunnel flags"));
        }
        let remcsum = flags & FLAG_REMCSUM != 0;
        if remcsum && kind != TYPE_GUE {
            return Err(ConfigError::new(
                EINVAL,
                c"remote checksum offload (--tun-remcsum) needs --tun-type gue",
            ));
        }
        let csum = flags & FLAG_CSUM != 0 || remcsum;
        match kind {
            TYPE_IPIP if csum => Err(ConfigError::new(
                EINVAL,
                c"tunnel checksums need --tun-type gue or gre",
            )),
            TYPE_IPIP => Ok(Tunnel::Ipip),
            TYPE_GUE if port == 0 => Err(ConfigError::new(
                EINVAL,
                c"GUE tunnels need a port (--tun-port)",
            )),
            TYPE_GUE => Ok(Tunnel::Gue {
                port,
                csum,
                remcsum,
            }),
            TYPE_GRE => Ok(Tunnel::Gre { csum }),
            _ => Err(ConfigError::new(EINVAL, c"unknown tunnel type")),
        }
    }

    /// The netlink attributes' values: (type, port, flags).
    pub fn to_uapi(self) -> (u8, u16, u16) {
        let flag = |csum: bool| if csum { FLAG_CSUM } else { 0 };
        match self {
            Tunnel::Ipip => (TYPE_IPIP, 0, 0),
            Tunnel::Gue {
                port,
                remcsum: true,
                ..
            } => (TYPE_GUE, port, FLAG_REMCSUM),
            Tunnel::Gue { port, csum, .. } => (TYPE_GUE, port, flag(csum)),
            Tunnel::Gre { csum } => (TYPE_GRE, 0, flag(csum)),
        }
    }

    /// The configuration in one word, for an atomic in the real server
    /// (type | flags << 8 | port << 16).
    pub fn pack(self) -> u32 {
        let (kind, port, flags) = self.to_uapi();
        u32::from(kind) | (u32::from(flags & 0xff) << 8) | (u32::from(port) << 16)
    }

    /// The inverse of [`Tunnel::pack`]; a word that does not decode gives
    /// IP-in-IP.
    pub fn unpack(v: u32) -> Tunnel {
        let [kind, flags, p0, p1] = v.to_le_bytes();
        Tunnel::from_uapi(kind, u16::from_le_bytes([p0, p1]), u16::from(flags)).unwrap_or_default()
    }

    /// Bytes between the outer IP header and the inner packet, for a
    /// packet whose transport checksum is left to the device if `partial`
    /// (with remote checksum offload, only those carry the option).
    pub fn header_len(self, partial: bool) -> usize {
        match self {
            Tunnel::Ipip => 0,
            Tunnel::Gue { remcsum: true, .. } if partial => GUE_HLEN + GUE_REMCSUM_LEN,
            Tunnel::Gue { .. } => GUE_HLEN,
            Tunnel::Gre { csum: false } => GRE_HLEN,
            Tunnel::Gre { csum: true } => GRE_HLEN + GRE_CSUM_LEN,
        }
    }

    /// Whether this is GUE with remote checksum offload.
    pub fn remcsum(self) -> bool {
        matches!(self, Tunnel::Gue { remcsum: true, .. })
    }

    /// The outer IP header's protocol.
    pub fn outer_protocol(self) -> u8 {
        match self {
            Tunnel::Ipip => IPPROTO_IPIP,
            Tunnel::Gue { .. } => IPPROTO_UDP,
            Tunnel::Gre { .. } => IPPROTO_GRE,
        }
    }

    /// Writes UDP and GUE headers for an inner packet of `inner_len` bytes
    /// (IPv6 if `inner_v6`) into `out`, UDP source port `sport` (a flow
    /// hash, so receivers can spread flows); the UDP checksum is left 0
    /// for the kernel. `remcsum`: the inner packet's checksum start and
    /// the offset of its checksum field from there, for the remote
    /// checksum offload option (only with `--tun-remcsum`, for a packet
    /// whose checksum is left to the device). Returns the header's length;
    /// `None` unless this is a GUE tunnel and the packet fits a UDP length
    /// (and the checksum field lies inside it). (GRE headers come from the
    /// kernel's `gre_build_header`.)
    pub fn gue_header(
        self,
        inner_len: usize,
        inner_v6: bool,
        sport: u16,
        remcsum: Option<(u16, u16)>,
        out: &mut [u8; GUE_HLEN_MAX],
    ) -> Option<usize> {
        let Tunnel::Gue {
            port, remcsum: r, ..
        } = self
        else {
            return None;
        };
        let opt = if r { remcsum } else { None };
        let hlen = match opt {
            Some(_) => GUE_HLEN + GUE_REMCSUM_LEN,
            None => GUE_HLEN,
        };
        let udp_len = u16::try_from(inner_len.checked_add(hlen)?).ok()?;
        out.fill(0);
        out.get_mut(0..2)?.copy_from_slice(&sport.to_be_bytes());
        out.get_mut(2..4)?.copy_from_slice(&port.to_be_bytes());
        out.get_mut(4..6)?.copy_from_slice(&udp_len.to_be_bytes());
        // GUE version 0, control 0; the protocol field names the inner
        // packet.
        *out.get_mut(UDP_HLEN + 1)? = if inner_v6 { IPPROTO_IPV6 } else { IPPROTO_IPIP };
        if let Some((start, offset)) = opt {
            let field = usize::from(start).checked_add(usize::from(offset))?;
            if field.checked_add(2)? > inner_len {
                return None;
            }
            // hlen counts the option's 4-byte words; the private flags
            // word says which option follows.
            *out.get_mut(UDP_HLEN)? = (GUE_REMCSUM_LEN / 4) as u8;
            out.get_mut(UDP_HLEN + 2..UDP_HLEN + 4)?
                .copy_from_slice(&GUE_FLAG_PRIV.to_be_bytes());
            out.get_mut(GUE_HLEN..GUE_HLEN + 4)?
                .copy_from_slice(&GUE_PFLAG_REMCSUM.to_be_bytes());
            out.get_mut(GUE_HLEN + 4..GUE_HLEN + 6)?
                .copy_from_slice(&start.to_be_bytes());
            out.get_mut(GUE_HLEN + 6..GUE_HLEN + 8)?
                .copy_from_slice(&u16::try_from(field).ok()?.to_be_bytes());
        }
        Some(hlen)
    }

    /// ipvsadm's name of the type (`--tun-type`).
    pub fn type_name(self) -> &'static str {
        match self {
            Tunnel::Ipip => "ipip",
            Tunnel::Gue { .. } => "gue",
            Tunnel::Gre { .. } => "gre",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uapi_round_trip_and_checks() {
        for t in [
            Tunnel::Ipip,
            Tunnel::Gue {
                port: 6080,
                csum: false,
                remcsum: false,
            },
            Tunnel::Gue {
                port: 6080,
                csum: true,
                remcsum: false,
            },
            Tunnel::Gre { csum: false },
            Tunnel::Gre { csum: true },
        ] {
            let (k, p, f) = t.to_uapi();
            assert_eq!(Tunnel::from_uapi(k, p, f), Ok(t));
            assert_eq!(Tunnel::unpack(t.pack()), t);
        }
        let err = |k, p, f| Tunnel::from_uapi(k, p, f).unwrap_err();
        assert_eq!(err(TYPE_GUE, 0, 0).errno, EINVAL);
        assert_eq!(
            err(TYPE_GUE, 0, 0).msg,
            c"GUE tunnels need a port (--tun-port)"
        );
        assert_eq!(err(3, 0, 0).msg, c"unknown tunnel type");
        assert_eq!(err(TYPE_IPIP, 0, FLAG_CSUM).errno, EINVAL);
        assert_eq!(
            err(TYPE_GRE, 0, FLAG_REMCSUM).msg,
            c"remote checksum offload (--tun-remcsum) needs --tun-type gue"
        );
        // Remote checksum offload implies the UDP checksum.
        let r = Tunnel::from_uapi(TYPE_GUE, 1, FLAG_REMCSUM).unwrap();
        assert_eq!(
            r,
            Tunnel::Gue {
                port: 1,
                csum: true,
                remcsum: true
            }
        );
        assert_eq!(r.to_uapi(), (TYPE_GUE, 1, FLAG_REMCSUM));
        assert_eq!(Tunnel::unpack(r.pack()), r);
        assert_eq!(err(TYPE_GRE, 0, 4).msg, c"unknown tunnel flags");
        assert_eq!(Tunnel::unpack(0xffff_ffff), Tunnel::Ipip);
        // A port with GRE or IPIP is ignored, as by IPVS's transmitter.
        assert_eq!(
            Tunnel::from_uapi(TYPE_GRE, 7, 0),
            Ok(Tunnel::Gre { csum: false })
        );
    }

    #[test]
    fn gue_header_bytes() {
        let mut b = [0xaau8; GUE_HLEN_MAX];
        let t = Tunnel::Gue {
            port: 6080,
            csum: true,
            remcsum: false,
        };
        assert_eq!(t.gue_header(100, false, 0xc001, None, &mut b), Some(12));
        assert_eq!(b[..12], [0xc0, 0x01, 0x17, 0xc0, 0, 112, 0, 0, 0, 4, 0, 0]);
        assert_eq!(t.outer_protocol(), IPPROTO_UDP);
        t.gue_header(100, true, 1, None, &mut b).unwrap();
        assert_eq!(b[9], 41);
        // Offsets without --tun-remcsum are ignored.
        assert_eq!(
            t.gue_header(100, false, 1, Some((20, 16)), &mut b),
            Some(12)
        );
        // Too long for a UDP length: refused, not truncated.
        assert_eq!(t.gue_header(65530, false, 1, None, &mut b), None);
        assert_eq!(
            Tunnel::Gre { csum: false }.gue_header(10, false, 1, None, &mut b),
            None
        );
    }

    #[test]
    fn gue_remcsum_option() {
        let mut b = [0xaau8; GUE_HLEN_MAX];
        let t = Tunnel::Gue {
            port: 6080,
            csum: true,
            remcsum: true,
        };
        // A TCP segment: checksum starts at the TCP header (20), its field
        // 16 bytes further.
        assert_eq!(
            t.gue_header(100, false, 0xc001, Some((20, 16)), &mut b),
            Some(20)
        );
        assert_eq!(
            b,
            [
                0xc0, 0x01, 0x17, 0xc0, 0, 120, 0, 0, // UDP, length 100 + 20
                2, 4, 0, 1, // GUE: hlen 2 words, IPIP, flags PRIV
                0x80, 0, 0, 0, // private flags: REMCSUM
                0, 20, 0, 36, // checksum start, checksum field
            ]
        );
        // A packet whose checksum is done already gets no option.
        assert_eq!(t.gue_header(100, false, 1, None, &mut b), Some(12));
        assert_eq!(b[8], 0);
        // A checksum field outside the packet is refused.
        assert_eq!(t.gue_header(30, false, 1, Some((20, 16)), &mut b), None);
        assert_eq!(
            t.gue_header(100, false, 1, Some((u16::MAX, 16)), &mut b),
            None
        );
    }

    #[test]
    fn header_lengths() {
        assert_eq!(Tunnel::Ipip.header_len(true), 0);
        let gue = |remcsum| Tunnel::Gue {
            port: 1,
            csum: remcsum,
            remcsum,
        };
        assert_eq!(gue(false).header_len(true), 12);
        assert_eq!(gue(true).header_len(false), 12);
        assert_eq!(gue(true).header_len(true), 20);
        assert!(gue(true).remcsum() && !gue(false).remcsum() && !Tunnel::Ipip.remcsum());
        assert_eq!(Tunnel::Gre { csum: false }.header_len(true), 4);
        assert_eq!(Tunnel::Gre { csum: true }.header_len(false), 8);
        assert_eq!(Tunnel::Gre { csum: true }.outer_protocol(), IPPROTO_GRE);
        assert_eq!(Tunnel::Ipip.outer_protocol(), IPPROTO_IPIP);
    }
}
