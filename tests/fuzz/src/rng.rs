//! A small seeded PRNG (xorshift64*), so every run replays from its seed.

/// xorshift64* generator; the state is never zero.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included: the seed is
    /// scrambled with splitmix64 first so nearby seeds diverge at once).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// A `usize` in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            lo
        } else {
            lo + self.below((hi - lo + 1) as u64) as usize
        }
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, s: &[T]) -> T {
        s[self.below(s.len() as u64) as usize]
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let r = self.next_u64().to_ne_bytes();
            let take = (n - v.len()).min(8);
            v.extend_from_slice(&r[..take]);
        }
        v
    }

    /// A "boundary-ish" u32: small, huge, powers of two or random.
    pub fn interesting_u32(&mut self) -> u32 {
        match self.below(6) {
            0 => self.pick(&[0, 1, 2, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 65535, 65536]),
            1 => 1u32 << self.below(32),
            2 => self.below(16) as u32,
            _ => self.next_u64() as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn different_seeds_differ_and_zero_works() {
        let mut a = Rng::new(0);
        let mut b = Rng::new(1);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_ne!(va, vb);
        assert!(va.iter().any(|&x| x != 0));
    }

    #[test]
    fn bounded_helpers_stay_in_bounds() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            let x = r.range(3, 9);
            assert!((3..=9).contains(&x));
            assert_eq!(r.bytes(13).len(), 13);
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.range(5, 5), 5);
    }
}
