// SPDX-License-Identifier: GPL-2.0

//! How many buckets a resizable hash table (the connection table) should
//! have for the entries it holds.
//!
//! C counterpart: the `conn_lfactor` sizing of upstream IPVS's resizable
//! tables (net/netfilter/ipvs/ip_vs_conn.c, 2026).
//!
//! A table grows when it holds more than [`GROW_LOAD`] entry per bucket,
//! to at least one bucket per entry, and shrinks when it holds fewer than
//! one entry per [`SHRINK_SPARSENESS`] buckets, to at least two buckets
//! per entry: after any resize the load is well inside the band, so a
//! table whose count hovers near a threshold does not resize back and
//! forth. Sizes stay between `2^MIN_BITS` buckets and the ceiling
//! (`conn_tab_bits`).
//!
//! Why one per bucket and not more: a lookup walks the entries in front
//! of its own, and the benchmark's 1,000 flows behind 4 million newer
//! entries cost 7-10% more instructions per packet at two per bucket
//! (9,642-9,828 against 8,955), 0.3% at one (8,995 against 8,969). The
//! buckets then cost 8-16 bytes per entry beside its 128-byte object
//! (upstream IPVS's default is 16 buckets per entry).

/// log2 of the fewest buckets a table has (IPVS's lower bound too).
pub const MIN_BITS: u32 = 8;

/// Entries per bucket above which a table grows.
pub const GROW_LOAD: u64 = 1;

/// A table shrinks when it has more than this many buckets per entry.
pub const SHRINK_SPARSENESS: u64 = 8;

/// The smallest `b >= MIN_BITS` with `2^b >= n`.
fn bits_for(n: u64) -> u32 {
    let b = u64::BITS.saturating_sub(n.saturating_sub(1).leading_zeros());
    b.max(MIN_BITS)
}

/// log2 of the buckets a table of `2^bits` buckets holding `count` entries
/// should have, at most `2^max_bits` (`bits` itself when no resize is due).
pub fn target_bits(count: u32, bits: u32, max_bits: u32) -> u32 {
    let max_bits = max_bits.max(MIN_BITS);
    if bits > max_bits || bits < MIN_BITS {
        return bits_for(u64::from(count)).clamp(MIN_BITS, max_bits);
    }
    let count = u64::from(count);
    let buckets = 1u64.checked_shl(bits).unwrap_or(u64::MAX);
    if count > GROW_LOAD.saturating_mul(buckets) && bits < max_bits {
        return bits_for(count).min(max_bits);
    }
    if bits > MIN_BITS && count.saturating_mul(SHRINK_SPARSENESS) < buckets {
        return bits_for(count.saturating_mul(2)).min(bits);
    }
    bits
}

/// The entry count above which a table of `2^bits` buckets (ceiling
/// `2^max_bits`) is due to grow; `u32::MAX` at the ceiling.
pub fn grow_at(bits: u32, max_bits: u32) -> u32 {
    if bits >= max_bits {
        return u32::MAX;
    }
    1u64.checked_shl(bits).map_or(u32::MAX, |b| {
        u32::try_from(GROW_LOAD.saturating_mul(b)).unwrap_or(u32::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_table_stays_small() {
        assert_eq!(target_bits(0, 8, 18), 8);
        assert_eq!(target_bits(256, 8, 18), 8, "load 1 is still inside");
        assert_eq!(grow_at(8, 18), 256);
    }

    #[test]
    fn grows_to_one_bucket_per_entry() {
        assert_eq!(target_bits(257, 8, 18), 9, "past load 1: 512 buckets");
        assert_eq!(target_bits(513, 8, 18), 10);
        assert_eq!(target_bits(1_000_000, 8, 20), 20, "in one step");
        assert_eq!(target_bits(2_097_153, 21, 22), 22);
        assert_eq!(target_bits(4_194_304, 22, 24), 22, "load 1 at 2^22");
        assert_eq!(target_bits(4_194_305, 22, 24), 23);
    }

    #[test]
    fn the_ceiling_holds() {
        assert_eq!(target_bits(1_000_000, 8, 12), 12);
        assert_eq!(target_bits(u32::MAX, 12, 12), 12);
        assert_eq!(grow_at(12, 12), u32::MAX);
        assert_eq!(target_bits(u32::MAX, 8, 24), 24);
    }

    #[test]
    fn shrinks_to_half_load_with_hysteresis() {
        // 2^20 buckets: shrink below 131,072 entries.
        assert_eq!(target_bits(131_072, 20, 20), 20);
        assert_eq!(target_bits(131_071, 20, 20), 18, "2 x 131,071 fits 2^18");
        assert_eq!(target_bits(0, 20, 20), 8, "empty: back to the floor");
        assert_eq!(target_bits(10, 8, 20), 8, "never below the floor");
        // After any resize, the new size is a fixed point.
        for count in [0u32, 1, 300, 513, 5_000, 131_071, 1 << 20, 3_000_000] {
            for bits in 8..=22 {
                let t = target_bits(count, bits, 22);
                assert_eq!(target_bits(count, t, 22), t, "count {count} bits {bits}");
            }
        }
    }

    #[test]
    fn out_of_range_sizes_are_brought_back() {
        assert_eq!(target_bits(100, 4, 20), 8);
        assert_eq!(target_bits(100, 24, 20), 8);
        assert_eq!(target_bits(5_000_000, 24, 20), 20);
        assert_eq!(target_bits(5, 8, 4), 8, "a ceiling below the floor");
    }
}
