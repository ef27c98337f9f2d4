// SPDX-License-Identifier: GPL-2.0

//! Keyed hashing for the connection table: SipHash.
//!
//! C counterparts: include/linux/siphash.h (the kernel's SipHash) and
//! `ip_vs_conn_hashkey` in net/netfilter/ipvs/ip_vs_conn.c.
//!
//! Why keyed: every packet from a client is looked up by a tuple the client
//! chooses (its address and port). With an unkeyed or weakly keyed hash a
//! remote sender can pick tuples that all land in one bucket and turn each
//! lookup into a walk of a long chain (hash flooding). SipHash is a PRF: as
//! long as the 128-bit key stays secret (the module fills it from the
//! kernel's random pool at load or per namespace) the bucket of a tuple is
//! unpredictable, so collisions cannot be steered.
//!
//! The connection table's per-packet hash ([`conn_hash`]) is SipHash-1-3,
//! the variant the kernel uses for its own hash tables (`hsiphash` on
//! 64-bit machines) and Rust's standard `HashMap`: flooding needs the key,
//! which a table never shows; SipHash-2-4, the conservative PRF, costs two
//! thirds more rounds on every packet. The other tables keep SipHash-2-4.
//!
//! Byte conventions: the key is 16 bytes read as two little-endian u64s, as
//! in the SipHash paper; ports are hashed as their two big-endian (wire)
//! bytes; addresses as their 16 bytes as given (an IPv4 address occupies
//! the first 4 bytes, the rest zero, like `union nf_inet_addr`).

#![forbid(unsafe_code)]

/// A SipHash key: 128 secret bits. Its `Debug` output is redacted so the
/// key cannot end up in a log.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct SipKey {
    /// First key word (bytes 0..8, little-endian).
    pub k0: u64,
    /// Second key word (bytes 8..16, little-endian).
    pub k1: u64,
}

impl core::fmt::Debug for SipKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SipKey(<secret>)")
    }
}

impl SipKey {
    /// Builds a key from 16 random bytes the way the SipHash reference does.
    pub const fn from_bytes(b: &[u8; 16]) -> SipKey {
        SipKey {
            k0: u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            k1: u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]),
        }
    }
}

/// Incremental SipHash-C-D (64-bit output) over bytes fed in any split:
/// `C` rounds per 8-byte block, `D` to finish.
///
/// Needs no allocation; state is 4 words plus a partial block. No `Debug`:
/// the state is derived from the key.
#[derive(Clone, Copy)]
pub struct SipHasher<const C: u32, const D: u32> {
    v0: u64,
    v1: u64,
    v2: u64,
    v3: u64,
    /// Bytes of the incomplete block; unused bytes are zero.
    tail: [u8; 8],
    /// Number of bytes in `tail` (0..=7).
    ntail: usize,
    /// Total bytes fed, modulo 256 (only the low byte enters the hash).
    len: u8,
}

/// SipHash-2-4, the PRF of the SipHash paper.
pub type SipHasher24 = SipHasher<2, 4>;
/// SipHash-1-3, for hash tables (the kernel's `hsiphash` on 64-bit).
pub type SipHasher13 = SipHasher<1, 3>;

impl<const C: u32, const D: u32> SipHasher<C, D> {
    /// Starts a hash under `key`.
    pub const fn new(key: &SipKey) -> Self {
        SipHasher {
            v0: key.k0 ^ 0x736f_6d65_7073_6575,
            v1: key.k1 ^ 0x646f_7261_6e64_6f6d,
            v2: key.k0 ^ 0x6c79_6765_6e65_7261,
            v3: key.k1 ^ 0x7465_6462_7974_6573,
            tail: [0; 8],
            ntail: 0,
            len: 0,
        }
    }

    #[inline]
    fn round(&mut self) {
        self.v0 = self.v0.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(13);
        self.v1 ^= self.v0;
        self.v0 = self.v0.rotate_left(32);
        self.v2 = self.v2.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(16);
        self.v3 ^= self.v2;
        self.v0 = self.v0.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(21);
        self.v3 ^= self.v0;
        self.v2 = self.v2.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(17);
        self.v1 ^= self.v2;
        self.v2 = self.v2.rotate_left(32);
    }

    #[inline]
    fn compress(&mut self, m: u64) {
        self.v3 ^= m;
        for _ in 0..C {
            self.round();
        }
        self.v0 ^= m;
    }

    /// Feeds one byte.
    #[inline]
    pub fn write_u8(&mut self, b: u8) {
        if let Some(slot) = self.tail.get_mut(self.ntail) {
            *slot = b;
        }
        self.ntail = self.ntail.wrapping_add(1);
        self.len = self.len.wrapping_add(1);
        if self.ntail >= 8 {
            let m = u64::from_le_bytes(self.tail);
            self.compress(m);
            self.tail = [0; 8];
            self.ntail = 0;
        }
    }

    /// Feeds bytes.
    pub fn write(&mut self, data: &[u8]) {
        let mut rest = data;
        // Finish a partial block byte by byte.
        while self.ntail != 0 {
            match rest.split_first() {
                Some((b, r)) => {
                    self.write_u8(*b);
                    rest = r;
                }
                None => return,
            }
        }
        let mut blocks = rest.chunks_exact(8);
        for block in &mut blocks {
            let mut w = [0u8; 8];
            w.copy_from_slice(block);
            self.compress(u64::from_le_bytes(w));
            // Only the low byte of the length matters; 8 mod 256 wraps fine.
            self.len = self.len.wrapping_add(8);
        }
        for b in blocks.remainder() {
            self.write_u8(*b);
        }
    }

    /// Feeds a u16 as its two big-endian (network order) bytes.
    pub fn write_u16_be(&mut self, v: u16) {
        self.write(&v.to_be_bytes());
    }

    /// Finishes and returns the 64-bit hash.
    pub fn finish(mut self) -> u64 {
        let b = (u64::from(self.len) << 56) | u64::from_le_bytes(self.tail);
        self.compress(b);
        self.v2 ^= 0xff;
        for _ in 0..D {
            self.round();
        }
        self.v0 ^ self.v1 ^ self.v2 ^ self.v3
    }
}

/// SipHash-2-4 of `data` under `key`.
pub fn siphash24(key: &SipKey, data: &[u8]) -> u64 {
    let mut h = SipHasher24::new(key);
    h.write(data);
    h.finish()
}

/// Hash of the client side of a connection: protocol, client address and
/// client port.
///
/// Both directions of a connection can be looked up by this tuple (requests
/// carry it as source, NAT replies as destination), which is why IPVS keys
/// its table on it alone and compares the virtual/real addresses in the
/// chain. `port` is the host-order value; it is hashed in wire order.
///
/// SipHash-1-3 (see the module's doc) of the 19 bytes `proto, addr, port
/// (big-endian)`, computed on their three 8-byte words directly: every
/// packet hashes once or twice, and the streaming [`SipHasher`] spends
/// more on its buffer than on its rounds.
#[inline]
pub fn conn_hash(key: &SipKey, proto: u8, addr: &[u8; 16], port: u16) -> u64 {
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = *addr;
    let [p0, p1] = port.to_be_bytes();
    let mut h = SipHasher13::new(key);
    h.compress(u64::from_le_bytes([proto, a0, a1, a2, a3, a4, a5, a6]));
    h.compress(u64::from_le_bytes([a7, a8, a9, a10, a11, a12, a13, a14]));
    h.tail = [a15, p0, p1, 0, 0, 0, 0, 0];
    h.len = 19;
    h.finish()
}

/// Hash of a full tuple: protocol, client address and port, and the
/// virtual (or, for a reply table, real server) address and port.
///
/// For tables that must keep the same client tuple towards different
/// services apart without comparing in the chain (e.g. a future FullNAT
/// reply table keyed on the rewritten tuple).
pub fn conn_hash_tuple(
    key: &SipKey,
    proto: u8,
    caddr: &[u8; 16],
    cport: u16,
    vaddr: &[u8; 16],
    vport: u16,
) -> u64 {
    let mut h = SipHasher24::new(key);
    h.write_u8(proto);
    h.write(caddr);
    h.write_u16_be(cport);
    h.write(vaddr);
    h.write_u16_be(vport);
    h.finish()
}

/// Bucket index of `hash` in a table of `2^bits` buckets (its low bits).
///
/// `bits` is clamped to the width of `usize`; `bits == 0` gives 0.
pub fn bucket(hash: u64, bits: u32) -> usize {
    let bits = bits.min(usize::BITS).min(u64::BITS);
    let mask = match 1u64.checked_shl(bits) {
        Some(n) => n.wrapping_sub(1),
        None => u64::MAX,
    };
    (hash & mask) as usize
}

/// Slots of the NAT reply-source filter ([`nat_source_slot`]).
pub const NAT_SOURCE_SLOTS: usize = 256;

/// The slot of a NAT connection's real server end (`addr`, `port`,
/// protocol `proto`) in a namespace's reply-source filter: a count per
/// slot of the NAT connections whose replies come from there, so that a
/// packet from anywhere else (most forwarded traffic) is known not to be a
/// NAT reply without a SipHash and a chain walk. Not keyed: a collision
/// only costs the lookup the filter would have saved.
pub fn nat_source_slot(proto: u8, addr: &[u8; 16], port: u16) -> usize {
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = *addr;
    // Written out: a loop over the four words compiled to a call of the
    // array iterator's `next` per word (seen in instruction profiles: the
    // filter runs for every packet at two hooks).
    let mix = |x: u32, w: [u8; 4]| {
        (x ^ u32::from_ne_bytes(w))
            .wrapping_mul(0x9e37_79b1)
            .rotate_left(13)
    };
    let mut x = (u32::from(proto) << 16) | u32::from(port);
    x = mix(x, [a0, a1, a2, a3]);
    x = mix(x, [a4, a5, a6, a7]);
    x = mix(x, [a8, a9, a10, a11]);
    x = mix(x, [a12, a13, a14, a15]);
    (x.wrapping_mul(0x85eb_ca6b) >> 24) as usize % NAT_SOURCE_SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nat_sources_spread() {
        // 256 servers on one /24, one port: most slots used, none crowded.
        let mut used = [0u32; NAT_SOURCE_SLOTS];
        for i in 0..=255u8 {
            let mut a = [0u8; 16];
            a[..4].copy_from_slice(&[10, 0, 1, i]);
            used[nat_source_slot(6, &a, 8080)] += 1;
        }
        assert!(used.iter().filter(|&&n| n > 0).count() > 140);
        assert!(used.iter().all(|&n| n <= 6), "{used:?}");
        // Port and protocol count.
        let a = [10, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let slots: std::collections::BTreeSet<_> = (8000..8016)
            .flat_map(|p| [nat_source_slot(6, &a, p), nat_source_slot(17, &a, p)])
            .collect();
        assert!(slots.len() > 24);
    }

    /// SipHash-2-4 64-bit outputs from the reference implementation's
    /// vectors.h (key 00..0f, message 00..(n-1) for n = 0..63), read as
    /// little-endian u64.
    const VECTORS: [u64; 64] = [
        0x726fdb47dd0e0e31,
        0x74f839c593dc67fd,
        0x0d6c8009d9a94f5a,
        0x85676696d7fb7e2d,
        0xcf2794e0277187b7,
        0x18765564cd99a68d,
        0xcbc9466e58fee3ce,
        0xab0200f58b01d137,
        0x93f5f5799a932462,
        0x9e0082df0ba9e4b0,
        0x7a5dbbc594ddb9f3,
        0xf4b32f46226bada7,
        0x751e8fbc860ee5fb,
        0x14ea5627c0843d90,
        0xf723ca908e7af2ee,
        0xa129ca6149be45e5,
        0x3f2acc7f57c29bdb,
        0x699ae9f52cbe4794,
        0x4bc1b3f0968dd39c,
        0xbb6dc91da77961bd,
        0xbed65cf21aa2ee98,
        0xd0f2cbb02e3b67c7,
        0x93536795e3a33e88,
        0xa80c038ccd5ccec8,
        0xb8ad50c6f649af94,
        0xbce192de8a85b8ea,
        0x17d835b85bbb15f3,
        0x2f2e6163076bcfad,
        0xde4daaaca71dc9a5,
        0xa6a2506687956571,
        0xad87a3535c49ef28,
        0x32d892fad841c342,
        0x7127512f72f27cce,
        0xa7f32346f95978e3,
        0x12e0b01abb051238,
        0x15e034d40fa197ae,
        0x314dffbe0815a3b4,
        0x027990f029623981,
        0xcadcd4e59ef40c4d,
        0x9abfd8766a33735c,
        0x0e3ea96b5304a7d0,
        0xad0c42d6fc585992,
        0x187306c89bc215a9,
        0xd4a60abcf3792b95,
        0xf935451de4f21df2,
        0xa9538f0419755787,
        0xdb9acddff56ca510,
        0xd06c98cd5c0975eb,
        0xe612a3cb9ecba951,
        0xc766e62cfcadaf96,
        0xee64435a9752fe72,
        0xa192d576b245165a,
        0x0a8787bf8ecb74b2,
        0x81b3e73d20b49b6f,
        0x7fa8220ba3b2ecea,
        0x245731c13ca42499,
        0xb78dbfaf3a8d83bd,
        0xea1ad565322a1a0b,
        0x60e61c23a3795013,
        0x6606d7e446282b93,
        0x6ca4ecb15c5f91e1,
        0x9f626da15c9625f3,
        0xe51b38608ef25f57,
        0x958a324ceb064572,
    ];

    fn ref_key() -> SipKey {
        let mut k = [0u8; 16];
        for (i, b) in k.iter_mut().enumerate() {
            *b = i as u8;
        }
        SipKey::from_bytes(&k)
    }

    #[test]
    fn reference_vectors() {
        let key = ref_key();
        let mut msg = [0u8; 64];
        for (i, b) in msg.iter_mut().enumerate() {
            *b = i as u8;
        }
        for (n, want) in VECTORS.iter().enumerate() {
            assert_eq!(siphash24(&key, &msg[..n]), *want, "length {n}");
        }
        // The paper's worked example (15-byte message).
        assert_eq!(siphash24(&key, &msg[..15]), 0xa129_ca61_49be_45e5);
    }

    #[test]
    fn incremental_matches_one_shot() {
        let key = ref_key();
        let mut msg = [0u8; 64];
        for (i, b) in msg.iter_mut().enumerate() {
            *b = i as u8;
        }
        for n in 0..64 {
            for split in 0..=n {
                for split2 in split..=n {
                    let mut h = SipHasher24::new(&key);
                    h.write(&msg[..split]);
                    h.write(&msg[split..split2]);
                    h.write(&msg[split2..n]);
                    assert_eq!(h.finish(), VECTORS[n], "n {n} split {split}/{split2}");
                }
            }
        }
    }

    #[test]
    fn conn_hash_is_siphash_of_its_bytes() {
        // Against the streaming hasher, for many inputs.
        let mut x: u64 = 0x1234_5678_9abc_def0;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = SipKey {
                k0: x,
                k1: x.rotate_left(29),
            };
            let mut addr = [0u8; 16];
            for (i, b) in addr.iter_mut().enumerate() {
                *b = (x >> (i % 8 * 8)) as u8 ^ i as u8;
            }
            let (proto, port) = (x as u8, (x >> 20) as u16);
            let mut bytes = [0u8; 19];
            bytes[0] = proto;
            bytes[1..17].copy_from_slice(&addr);
            bytes[17..].copy_from_slice(&port.to_be_bytes());
            let mut h = SipHasher13::new(&key);
            h.write(&bytes);
            assert_eq!(conn_hash(&key, proto, &addr, port), h.finish());
        }
    }

    /// SipHash-1-3 against the kernel's `hsiphash` vectors on 64-bit
    /// machines (lib/siphash_kunit.c: key 00..0f, message 00..(n-1), the
    /// low 32 bits of the output).
    #[test]
    fn siphash13_matches_the_kernels_hsiphash() {
        const HSIPHASH: [u32; 8] = [
            0x050fc4dc, 0x7d57ca93, 0x4dc7d44d, 0xe7ddf7fb, 0x88d38328, 0x49533b67, 0xc59f22a7,
            0x9bb11140,
        ];
        let key = ref_key();
        let msg: std::vec::Vec<u8> = (0..64u8).collect();
        for (n, want) in HSIPHASH.iter().enumerate() {
            let mut h = SipHasher13::new(&key);
            h.write(&msg[..n]);
            assert_eq!(h.finish() as u32, *want, "length {n}");
        }
    }

    #[test]
    fn conn_hash_layout_and_key() {
        let key = ref_key();
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&[192, 0, 2, 7]);
        let h = conn_hash(&key, 6, &addr, 0x1234);
        let mut bytes = [0u8; 19];
        bytes[0] = 6;
        bytes[1..17].copy_from_slice(&addr);
        bytes[17..].copy_from_slice(&[0x12, 0x34]);
        let mut sip13 = SipHasher13::new(&key);
        sip13.write(&bytes);
        assert_eq!(h, sip13.finish());
        // Every field and the key matter.
        assert_ne!(h, conn_hash(&key, 17, &addr, 0x1234));
        assert_ne!(h, conn_hash(&key, 6, &addr, 0x1235));
        let mut other = addr;
        other[15] = 1;
        assert_ne!(h, conn_hash(&key, 6, &other, 0x1234));
        assert_ne!(h, conn_hash(&SipKey { k0: 1, k1: 2 }, 6, &addr, 0x1234));
        let t = conn_hash_tuple(&key, 6, &addr, 0x1234, &other, 80);
        assert_ne!(t, conn_hash_tuple(&key, 6, &addr, 0x1234, &other, 81));
        assert_ne!(t, conn_hash_tuple(&key, 6, &other, 80, &addr, 0x1234));
    }

    #[test]
    fn key_is_not_printed() {
        let k = SipKey {
            k0: 0x1122,
            k1: 0x3344,
        };
        let shown = std::format!("{k:?}");
        assert_eq!(shown, "SipKey(<secret>)");
    }

    #[test]
    fn buckets() {
        assert_eq!(bucket(0xffff_ffff_ffff_ffff, 0), 0);
        assert_eq!(bucket(0xabcd, 4), 0xd);
        assert_eq!(bucket(0xabcd, 12), 0xbcd);
        assert_eq!(bucket(u64::MAX, 64) as u64, u64::MAX);
        assert_eq!(bucket(u64::MAX, 200) as u64, u64::MAX);
        // Spread: 4096 sequential ports over 256 buckets, none overfull.
        let key = SipKey {
            k0: 0x0123,
            k1: 0x4567,
        };
        let mut count = [0u32; 256];
        for port in 0..4096u16 {
            count[bucket(conn_hash(&key, 6, &[0; 16], port), 8)] += 1;
        }
        assert!(count.iter().all(|&c| c > 0 && c < 40), "{count:?}");
    }
}
