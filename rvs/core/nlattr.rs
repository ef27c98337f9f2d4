// SPDX-License-Identifier: GPL-2.0

//! Bounded parsing of netlink attribute streams (`struct nlattr` TLVs).
//!
//! The netlink core validates the top level of a request against the
//! family's policy; nested attributes (a service, a destination) are parsed
//! here, in safe code with every length checked, so that a hostile message
//! can only ever produce an error.

use core::ffi::CStr;

/// Size of `struct nlattr` (u16 length, u16 type).
pub const NLA_HDRLEN: usize = 4;
/// Type bits of `nla_type` (the top two bits are flags).
pub const NLA_TYPE_MASK: u16 = 0x3fff;

/// Why an attribute stream was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrError {
    /// A header or payload runs past the end of the stream.
    Truncated,
    /// An attribute type above the largest one this nest defines.
    UnknownType(u16),
    /// An attribute whose payload has the wrong size for its type.
    BadLength(u16),
}

impl AttrError {
    /// The message for the extended ACK.
    pub fn msg(self) -> &'static CStr {
        match self {
            AttrError::Truncated => c"truncated nested attribute",
            AttrError::UnknownType(_) => c"unknown nested attribute type",
            AttrError::BadLength(_) => c"nested attribute has the wrong length",
        }
    }
}

/// Iterates over `(type, payload)` pairs of an attribute stream.
pub struct AttrIter<'a> {
    rest: &'a [u8],
}

impl<'a> AttrIter<'a> {
    /// Starts iterating over `buf` (a nest's payload).
    pub fn new(buf: &'a [u8]) -> AttrIter<'a> {
        AttrIter { rest: buf }
    }
}

impl<'a> Iterator for AttrIter<'a> {
    type Item = Result<(u16, &'a [u8]), AttrError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (len, kind) = match self.rest {
            [l0, l1, t0, t1, ..] => (
                usize::from(u16::from_ne_bytes([*l0, *l1])),
                u16::from_ne_bytes([*t0, *t1]) & NLA_TYPE_MASK,
            ),
            _ => {
                self.rest = &[];
                return Some(Err(AttrError::Truncated));
            }
        };
        let payload = match (len.checked_sub(NLA_HDRLEN), self.rest.get(NLA_HDRLEN..len)) {
            (Some(_), Some(p)) => p,
            _ => {
                self.rest = &[];
                return Some(Err(AttrError::Truncated));
            }
        };
        // Attributes are 4-byte aligned; the last one may omit its padding.
        let next = len.saturating_add(3) & !3;
        self.rest = self.rest.get(next..).unwrap_or(&[]);
        Some(Ok((kind, payload)))
    }
}

/// Parses a nest into `table` indexed by type (index 0 unused). Unknown
/// types are refused, as the kernel's strict validation does; a repeated
/// type keeps the last occurrence, as `nla_parse` does.
pub fn parse_nested<'a, const N: usize>(
    buf: &'a [u8],
    table: &mut [Option<&'a [u8]>; N],
) -> Result<(), AttrError> {
    for item in AttrIter::new(buf) {
        let (kind, payload) = item?;
        match table.get_mut(usize::from(kind)) {
            Some(slot) if kind != 0 => *slot = Some(payload),
            _ => return Err(AttrError::UnknownType(kind)),
        }
    }
    Ok(())
}

/// A `u8` payload, exactly 1 byte.
pub fn get_u8(kind: u16, p: &[u8]) -> Result<u8, AttrError> {
    match p {
        [a] => Ok(*a),
        _ => Err(AttrError::BadLength(kind)),
    }
}

/// A `u16` payload in host order, exactly 2 bytes.
pub fn get_u16(kind: u16, p: &[u8]) -> Result<u16, AttrError> {
    match p {
        [a, b] => Ok(u16::from_ne_bytes([*a, *b])),
        _ => Err(AttrError::BadLength(kind)),
    }
}

/// A `u16` payload in network order (ports), exactly 2 bytes.
pub fn get_be16(kind: u16, p: &[u8]) -> Result<u16, AttrError> {
    match p {
        [a, b] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(AttrError::BadLength(kind)),
    }
}

/// A `u32` payload in host order, exactly 4 bytes.
pub fn get_u32(kind: u16, p: &[u8]) -> Result<u32, AttrError> {
    match p {
        [a, b, c, d] => Ok(u32::from_ne_bytes([*a, *b, *c, *d])),
        _ => Err(AttrError::BadLength(kind)),
    }
}

/// One attribute, padded, as the kernel lays it out: for the tests of
/// the decoders that read attributes.
#[cfg(test)]
pub(crate) fn test_attr(kind: u16, payload: &[u8]) -> std::vec::Vec<u8> {
    let len = (NLA_HDRLEN + payload.len()) as u16;
    let mut v = std::vec::Vec::new();
    v.extend_from_slice(&len.to_ne_bytes());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(payload);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::test_attr as attr;
    use super::*;

    #[test]
    fn parses_aligned_stream() {
        let mut buf = attr(1, &2u16.to_ne_bytes());
        buf.extend(attr(3, &[1, 2, 3, 4, 5]));
        buf.extend(attr(4 | 0x8000, &80u16.to_be_bytes()));
        let mut t: [Option<&[u8]>; 5] = [None; 5];
        parse_nested(&buf, &mut t).unwrap();
        assert_eq!(get_u16(1, t[1].unwrap()), Ok(2));
        assert_eq!(t[3].unwrap(), &[1, 2, 3, 4, 5]);
        assert_eq!(get_be16(4, t[4].unwrap()), Ok(80));
        assert!(t[2].is_none());
    }

    #[test]
    fn refuses_unknown_and_zero_types() {
        let buf = attr(9, &[0; 4]);
        let mut t: [Option<&[u8]>; 5] = [None; 5];
        assert_eq!(parse_nested(&buf, &mut t), Err(AttrError::UnknownType(9)));
        let buf = attr(0, &[0; 4]);
        assert_eq!(parse_nested(&buf, &mut t), Err(AttrError::UnknownType(0)));
    }

    #[test]
    fn refuses_truncation_everywhere() {
        let full = attr(1, &[1, 2, 3, 4]);
        for cut in 1..full.len() {
            let mut t: [Option<&[u8]>; 5] = [None; 5];
            assert_eq!(
                parse_nested(&full[..cut], &mut t),
                Err(AttrError::Truncated),
                "cut at {cut}"
            );
        }
        // A length below the header size.
        let mut bad = full.clone();
        bad[0] = 2;
        bad[1] = 0;
        let mut t: [Option<&[u8]>; 5] = [None; 5];
        assert_eq!(parse_nested(&bad, &mut t), Err(AttrError::Truncated));
    }

    #[test]
    fn fixed_size_getters_check_length() {
        assert_eq!(get_u32(5, &[1, 0, 0]), Err(AttrError::BadLength(5)));
        assert_eq!(get_u16(5, &[1, 0, 0]), Err(AttrError::BadLength(5)));
        assert_eq!(get_be16(5, &[0x1f, 0x90]), Ok(8080));
    }

    #[test]
    fn last_duplicate_wins() {
        let mut buf = attr(2, &1u32.to_ne_bytes());
        buf.extend(attr(2, &7u32.to_ne_bytes()));
        let mut t: [Option<&[u8]>; 3] = [None; 3];
        parse_nested(&buf, &mut t).unwrap();
        assert_eq!(get_u32(2, t[2].unwrap()), Ok(7));
    }
}
