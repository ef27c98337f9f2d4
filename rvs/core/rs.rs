// SPDX-License-Identifier: GPL-2.0

//! The real-server companion's pure parts (rvs_rs.ko, `rvs/rs/`): the
//! directors it trusts, as its `net.rvs_rs.directors` sysctl reads and
//! writes them; which option names which forwarding method; and how long
//! a connection's entry lives.
//!
//! A FullNAT or ENAT director puts the client's address in a TCP option
//! of the client's SYN (`super::fullnat`). The companion believes that
//! option only from the addresses it was told are directors (FullNAT's
//! local addresses, ENAT's VIPs): anyone else could otherwise make the
//! real server's applications see any address they like.

#![forbid(unsafe_code)]

use super::config::{AddrFamily, ConfigError, EINVAL, ERANGE};
use super::fullnat::{ENAT_KIND, TOA_KIND};
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// How many directors `net.rvs_rs.directors` holds at most.
pub const DIRECTORS_MAX: usize = 16;

/// `net.rvs_rs.max_entries` by default: connections tracked at most.
pub const MAX_ENTRIES_DEFAULT: u32 = 65536;
/// Its highest value.
pub const MAX_ENTRIES_MAX: u32 = 1 << 22;

/// An entry's lifetime without packets while its connection is open.
pub const OPEN_SECS: u32 = 900;
/// Its lifetime once a FIN or a reset was seen either way, or while only
/// the client's SYN was (the real server's TIME_WAIT is 60 s).
pub const CLOSING_SECS: u32 = 60;

/// The forwarding method a connection came by, from its option's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// FullNAT (kind 254, TOA): replies go back to the director's local
    /// address and port.
    FullNat,
    /// ENAT (kind 253): replies leave from the VIP straight to the client.
    Enat,
}

impl Mode {
    /// Both, in the order the packet path looks for their options.
    pub const ALL: [Mode; 2] = [Mode::FullNat, Mode::Enat];

    /// The TCP option kind that announces this method.
    pub fn kind(self) -> u8 {
        match self {
            Mode::FullNat => TOA_KIND,
            Mode::Enat => ENAT_KIND,
        }
    }
}

/// How long an entry lives from now, in seconds: `open` once the real
/// server answered and no FIN or reset was seen.
pub fn lifetime_secs(answered: bool, closing: bool) -> u32 {
    if answered && !closing {
        OPEN_SECS
    } else {
        CLOSING_SECS
    }
}

/// Checks a `net.rvs_rs.max_entries` value.
pub fn validate_max_entries(v: i32) -> Result<u32, ConfigError> {
    match u32::try_from(v) {
        Ok(n) if (1..=MAX_ENTRIES_MAX).contains(&n) => Ok(n),
        _ => Err(ConfigError::new(ERANGE, c"max_entries must be 1..4194304")),
    }
}

/// The addresses the companion trusts, IPv4 and IPv6 (16-byte form, IPv4
/// in the first four bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directors {
    addrs: [(AddrFamily, [u8; 16]); DIRECTORS_MAX],
    len: usize,
}

impl Default for Directors {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Directors {
    /// None: the companion is off.
    pub const EMPTY: Directors = Directors {
        addrs: [(AddrFamily::Inet, [0; 16]); DIRECTORS_MAX],
        len: 0,
    };

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The addresses.
    pub fn iter(&self) -> impl Iterator<Item = &(AddrFamily, [u8; 16])> {
        self.addrs.iter().take(self.len)
    }

    /// Whether `addr` (of family `af`) is one of them.
    pub fn contains(&self, af: AddrFamily, addr: &[u8; 16]) -> bool {
        let n = af.addr_len();
        self.iter()
            .any(|(f, a)| *f == af && a.get(..n) == addr.get(..n))
    }

    /// Parses the sysctl's text: addresses separated by spaces, tabs or
    /// commas, IPv4 or IPv6; none at all (or only separators) empties the
    /// list. An address given twice counts once.
    pub fn parse(text: &[u8]) -> Result<Directors, ConfigError> {
        let text = core::str::from_utf8(text)
            .map_err(|_| ConfigError::new(EINVAL, c"directors: not an address list"))?;
        let mut out = Directors::EMPTY;
        for word in text.split([' ', '\t', ',', '\n']).filter(|w| !w.is_empty()) {
            let (af, addr) = parse_addr(word)?;
            if out.contains(af, &addr) {
                continue;
            }
            let slot = out
                .addrs
                .get_mut(out.len)
                .ok_or(ConfigError::new(EINVAL, c"directors: at most 16 addresses"))?;
            *slot = (af, addr);
            out.len = out.len.saturating_add(1);
        }
        Ok(out)
    }
}

/// One address, IPv4 or IPv6, in the 16-byte form.
fn parse_addr(word: &str) -> Result<(AddrFamily, [u8; 16]), ConfigError> {
    let mut addr = [0u8; 16];
    if let Ok(a) = word.parse::<Ipv4Addr>() {
        for (d, s) in addr.iter_mut().zip(a.octets()) {
            *d = s;
        }
        return Ok((AddrFamily::Inet, addr));
    }
    let a = word
        .parse::<Ipv6Addr>()
        .map_err(|_| ConfigError::new(EINVAL, c"directors: not an IPv4 or IPv6 address"))?;
    Ok((AddrFamily::Inet6, a.octets()))
}

/// The list as the sysctl shows it: addresses in canonical form,
/// separated by single spaces.
impl fmt::Display for Directors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (af, a)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match af {
                AddrFamily::Inet => {
                    let [a0, a1, a2, a3, ..] = *a;
                    write!(f, "{}", Ipv4Addr::new(a0, a1, a2, a3))?;
                }
                AddrFamily::Inet6 => write!(f, "{}", Ipv6Addr::from(*a))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn parses_and_prints_both_families() {
        let d = Directors::parse(b"10.0.2.1, fd00:2:0::1\t10.0.100.1,,").unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(d.to_string(), "10.0.2.1 fd00:2::1 10.0.100.1");
        let mut v4 = [0u8; 16];
        v4[..4].copy_from_slice(&[10, 0, 2, 1]);
        assert!(d.contains(AddrFamily::Inet, &v4));
        assert!(!d.contains(AddrFamily::Inet6, &v4), "a family of its own");
        v4[3] = 2;
        assert!(!d.contains(AddrFamily::Inet, &v4));
        let six = Ipv6Addr::new(0xfd00, 2, 0, 0, 0, 0, 0, 1).octets();
        assert!(d.contains(AddrFamily::Inet6, &six));
    }

    #[test]
    fn empty_text_turns_it_off() {
        for t in [&b""[..], b"\n", b" , "] {
            let d = Directors::parse(t).unwrap();
            assert!(d.is_empty());
            assert_eq!(d.to_string(), "");
        }
    }

    #[test]
    fn refuses_bad_addresses_and_too_many() {
        for t in [
            &b"10.0.0.999"[..],
            b"10.0.0.1 bogus",
            b"10.0.0.1/24",
            b"\xff",
        ] {
            assert_eq!(Directors::parse(t).unwrap_err().errno, EINVAL, "{t:?}");
        }
        let many: std::string::String = (1..=17).map(|i| std::format!("10.0.0.{i} ")).collect();
        let e = Directors::parse(many.as_bytes()).unwrap_err();
        assert_eq!(e.msg, c"directors: at most 16 addresses");
        let sixteen: std::string::String = (1..=16).map(|i| std::format!("10.0.0.{i} ")).collect();
        assert_eq!(Directors::parse(sixteen.as_bytes()).unwrap().len(), 16);
        // Twice counts once.
        assert_eq!(Directors::parse(b"10.0.0.1 10.0.0.1").unwrap().len(), 1);
    }

    #[test]
    fn lifetimes_and_limits() {
        assert_eq!(lifetime_secs(true, false), OPEN_SECS);
        assert_eq!(lifetime_secs(false, false), CLOSING_SECS);
        assert_eq!(lifetime_secs(true, true), CLOSING_SECS);
        assert_eq!(validate_max_entries(1), Ok(1));
        assert_eq!(validate_max_entries(1 << 22), Ok(1 << 22));
        for bad in [0, -1, (1 << 22) + 1] {
            assert_eq!(validate_max_entries(bad).unwrap_err().errno, ERANGE);
        }
        assert_eq!(Mode::FullNat.kind(), 254);
        assert_eq!(Mode::Enat.kind(), 253);
    }
}
