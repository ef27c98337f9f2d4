// SPDX-License-Identifier: GPL-2.0

//! Schedulers: choose the real server for a new connection.
//!
//! One file per scheduler family, as IPVS has one C file per scheduler
//! (all in net/netfilter/ipvs/): `round_robin.rs` (ip_vs_rr.c,
//! ip_vs_wrr.c), `least_conn.rs` (ip_vs_lc.c, ip_vs_wlc.c, ip_vs_sed.c,
//! ip_vs_nq.c), `hashing.rs` (ip_vs_sh.c, ip_vs_dh.c), `mh.rs`
//! (ip_vs_mh.c), `failover.rs` (ip_vs_fo.c, ip_vs_ovf.c), `twos.rs`
//! (ip_vs_twos.c), `lblc.rs` (ip_vs_lblc.c, ip_vs_lblcr.c) and
//! `overload.rs` (the `-x`/`-y` connection thresholds). This file holds
//! what they share: the destination model, the flow, the options, the
//! state and the dispatch to the scheduler of a [`SchedKind`].
//!
//! The kernel side keeps one [`SchedState`] per service under the service's
//! scheduler lock, together with the list of destinations the state (and
//! the mh table) was last told about, and passes that list as [`Dests`]:
//! anything that gives the [`DestView`] of destination `i`, in the
//! service's list order. The kernel computes each view on demand from its
//! real server, so a decision allocates and copies nothing at any number of
//! servers; host code and tests pass a slice of views. A scheduler answers
//! with the index of the chosen destination. rr/wrr cursors are indices, so
//! the caller must tell the state when the list changes
//! ([`SchedState::dests_changed`], and for exact round-robin continuity
//! [`SchedState::dest_removed`] / [`SchedState::dest_inserted`]). A stale
//! state never panics: an out-of-range cursor is treated as "start of list".
//!
//! New schedulers slot in as a [`SchedKind`] variant, an arm in
//! [`SchedKind::from_name`] / [`SchedKind::name`] and an arm in
//! [`SchedState::schedule_flow_with`]; per-scheduler data lives in
//! [`SchedState`], except mh's 32 KiB table ([`MhTable`]), which the kernel
//! allocates separately and passes in.
//!
//! Flow-aware entry point: [`SchedState::schedule_flow`] (and
//! [`SchedState::schedule_flow_with`] for mh) takes a [`Flow`], the
//! addresses and ports of the new connection plus a random number. sh, dh
//! and mh hash it, twos draws its two choices from it, the others ignore it.
//! [`SchedState::schedule`] is `schedule_flow` with an all-zero flow (and an
//! internal pseudo-random sequence for twos).
//!
//! Hashing (sh, dh): IPVS's own, so that rvs maps clients exactly like IPVS
//! does for the same destination list: the address folded to 32 bits
//! ([`addr_fold`]: XOR of its four big-endian words, i.e. the IPv4 address
//! itself), plus the port for sh-port, multiplied by the 32-bit golden ratio
//! `0x61C88647` (the kernel's `hash_32`) and reduced to its top 8 bits, the
//! index into a virtual 256-bucket table. These tables are not stored: the
//! bucket's destination is computed from the weights in O(destinations).
//! The hash is unkeyed, like IPVS's: it only spreads well-behaved clients;
//! a client choosing its address can pick its server, which sh/dh users
//! accept by design.

#![forbid(unsafe_code)]

mod failover;
mod hashing;
pub mod lblc;
mod least_conn;
pub mod mh;
mod overload;
mod round_robin;
#[cfg(test)]
mod test_util;
mod twos;

use failover::{fo, ovf};
use hashing::{dh, sh};
use least_conn::{lc, nq, weighted_least};
use twos::twos;

pub use hashing::{addr_fold, dest_hash_key};
pub use lblc::LblcTable;
pub use least_conn::weighted_least_conn;
pub use mh::{MhTable, MH_TABLE_SIZE};
pub use overload::{lower_threshold, overload_next};

/// What a scheduler may know about one destination (real server).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DestView {
    /// Configured weight; 0 means quiesced (keeps its connections, gets no
    /// new ones).
    pub weight: u32,
    /// Connections counted as active (see `proto::is_active`).
    pub active_conns: u32,
    /// Connections counted as inactive.
    pub inactive_conns: u32,
    /// Upper connection threshold reached (`-x`); excluded until it falls
    /// below the lower threshold.
    pub overloaded: bool,
    /// Identity of the destination for consistent hashing (mh):
    /// [`dest_hash_key`] of its address and port. Only mh's table rebuild
    /// reads it; other schedulers ignore it.
    pub hash_key: u32,
    /// The latest non-zero weight the destination was configured with (0 if
    /// it was added with weight 0), IPVS's `last_weight`. mh builds its table
    /// from it so that quiescing a server (weight 0) keeps the table stable.
    /// If the caller leaves it 0, mh uses [`DestView::weight`] (a quiesced
    /// server then leaves the table instead).
    pub last_weight: u32,
    /// A number naming the destination for as long as it exists, never 0
    /// for a real one (lblc/lblcr remember servers by it across list
    /// changes). 0 means "no identity": such a server is never remembered.
    pub id: u32,
}

impl DestView {
    /// Whether this destination may receive new connections: weight > 0 and
    /// not overloaded, as every IPVS scheduler checks.
    pub fn available(&self) -> bool {
        self.weight > 0 && !self.overloaded
    }

    /// IPVS's connection overhead used by lc and wlc
    /// (`ip_vs_dest_conn_overhead`): `active * 256 + total`, where total is
    /// active + inactive. Computed in u64 so it cannot overflow.
    pub fn conn_overhead(&self) -> u64 {
        // At most 257 * 2^32 + 2^32 < 2^41: saturation never happens.
        u64::from(self.active_conns)
            .saturating_mul(257)
            .saturating_add(u64::from(self.inactive_conns))
    }

    /// Expected overhead used by sed and nq: active connections + 1.
    pub fn sed_overhead(&self) -> u64 {
        u64::from(self.active_conns).saturating_add(1)
    }
}

/// The destinations a scheduler chooses from, in the service's list order.
///
/// A slice of [`DestView`]s is one (host code, tests). The kernel
/// implements it over its list of real servers, computing each view when a
/// scheduler asks for it: nothing is materialized or allocated per
/// decision, and a scheduler that needs few servers (mh: one slot; rr: up
/// to the next available server) looks at few.
///
/// [`Dests::view`] must answer for every index below [`Dests::len`]; a
/// missing view counts as an unavailable destination without weight.
pub trait Dests {
    /// Number of destinations.
    fn len(&self) -> usize;

    /// What the scheduler sees of destination `i` now, `None` past the end.
    fn view(&self, i: usize) -> Option<DestView>;

    /// Whether there are no destinations.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The views of all destinations, in order (one per index).
    fn views(&self) -> Views<'_, Self> {
        Views {
            dests: self,
            next: 0,
        }
    }
}

/// Iterator over the views of [`Dests`], see [`Dests::views`].
pub struct Views<'a, D: ?Sized> {
    dests: &'a D,
    next: usize,
}

impl<D: Dests + ?Sized> Iterator for Views<'_, D> {
    type Item = DestView;

    fn next(&mut self) -> Option<DestView> {
        let i = self.next;
        if i >= self.dests.len() {
            return None;
        }
        self.next = i.saturating_add(1);
        Some(self.dests.view(i).unwrap_or_default())
    }
}

impl Dests for [DestView] {
    fn len(&self) -> usize {
        <[DestView]>::len(self)
    }

    fn view(&self, i: usize) -> Option<DestView> {
        self.get(i).copied()
    }
}

impl<const N: usize> Dests for [DestView; N] {
    fn len(&self) -> usize {
        N
    }

    fn view(&self, i: usize) -> Option<DestView> {
        self.get(i).copied()
    }
}

#[cfg(test)]
impl Dests for std::vec::Vec<DestView> {
    fn len(&self) -> usize {
        <[DestView]>::len(self)
    }

    fn view(&self, i: usize) -> Option<DestView> {
        self.get(i).copied()
    }
}

/// The new connection a scheduler is asked about. Addresses use the
/// [`addr_fold`] layout (IPv4 in the first 4 bytes, rest zero); ports are
/// host order, and 0 for protocols without ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    /// Client (source) address; hashed by sh and mh.
    pub caddr: [u8; 16],
    /// Client (source) port; hashed by sh and mh with the port flag.
    pub cport: u16,
    /// Destination address of the packet (the virtual address; for a
    /// firewall-mark service the address actually dialled); hashed by dh.
    pub vaddr: [u8; 16],
    /// Destination port of the packet (unused by the current schedulers).
    pub vport: u16,
    /// A fresh random number for this connection (twos).
    pub random: u32,
}

/// IPVS service flag `IP_VS_SVC_F_SCHED1`: sh-fallback / mh-fallback.
pub const SVC_F_SCHED1: u32 = 0x0008;
/// IPVS service flag `IP_VS_SVC_F_SCHED2`: sh-port / mh-port.
pub const SVC_F_SCHED2: u32 = 0x0010;
/// IPVS service flag `IP_VS_SVC_F_SCHED3`: defined by ipvsadm
/// (`sh-flag-3`/`mh-flag-3`) but used by no IPVS scheduler; ignored.
pub const SVC_F_SCHED3: u32 = 0x0020;

/// Scheduler options (ipvsadm `-b sh-fallback,sh-port` or
/// `mh-fallback,mh-port`), used by sh and mh, ignored by the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedFlags {
    /// When the hashed destination is unavailable, pick another available
    /// one instead of failing.
    pub fallback: bool,
    /// Hash the client port too, so one client's connections spread.
    pub port: bool,
}

impl SchedFlags {
    /// From IPVS service flags: [`SVC_F_SCHED1`] is fallback,
    /// [`SVC_F_SCHED2`] is port; all other bits are ignored.
    pub fn from_svc_flags(flags: u32) -> SchedFlags {
        SchedFlags {
            fallback: flags & SVC_F_SCHED1 != 0,
            port: flags & SVC_F_SCHED2 != 0,
        }
    }

    /// Back to IPVS service flag bits.
    pub fn to_svc_flags(self) -> u32 {
        let mut f = 0;
        if self.fallback {
            f |= SVC_F_SCHED1;
        }
        if self.port {
            f |= SVC_F_SCHED2;
        }
        f
    }
}

/// The scheduling algorithm of a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedKind {
    /// Round robin (`rr`).
    Rr,
    /// Weighted round robin (`wrr`), IPVS's interleaved variant.
    Wrr,
    /// Least connection (`lc`).
    Lc,
    /// Weighted least connection (`wlc`), the IPVS default.
    Wlc,
    /// Shortest expected delay (`sed`).
    Sed,
    /// Never queue (`nq`).
    Nq,
    /// Source hashing (`sh`): by client address (and port with sh-port).
    Sh,
    /// Destination hashing (`dh`): by the packet's destination address.
    Dh,
    /// Maglev hashing (`mh`): consistent hashing by client address (and
    /// port with mh-port); needs an [`MhTable`].
    Mh,
    /// Weighted failover (`fo`): the available destination with the
    /// highest weight.
    Fo,
    /// Overflow (`ovf`): the highest weight among destinations whose active
    /// connections do not exceed their weight.
    Ovf,
    /// Power of two choices (`twos`): two weighted random picks, the less
    /// loaded one wins.
    Twos,
    /// Locality-based least connection (`lblc`): one server per
    /// destination address; needs an [`LblcTable`].
    Lblc,
    /// Locality-based least connection with replication (`lblcr`): a set
    /// of servers per destination address; needs an [`LblcTable`].
    Lblcr,
}

impl SchedKind {
    /// Every scheduler rvs implements, for listing and for tests.
    pub const ALL: [SchedKind; 14] = [
        SchedKind::Rr,
        SchedKind::Wrr,
        SchedKind::Lc,
        SchedKind::Wlc,
        SchedKind::Sed,
        SchedKind::Nq,
        SchedKind::Sh,
        SchedKind::Dh,
        SchedKind::Mh,
        SchedKind::Fo,
        SchedKind::Ovf,
        SchedKind::Twos,
        SchedKind::Lblc,
        SchedKind::Lblcr,
    ];

    /// The scheduler IPVS and ipvsadm use when none is given.
    pub const DEFAULT: SchedKind = SchedKind::Wlc;

    /// Looks a scheduler up by its ipvsadm name (`-s rr`). Exact, case
    /// sensitive match like IPVS; the caller strips any trailing NUL.
    pub fn from_name(name: &[u8]) -> Option<SchedKind> {
        SchedKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().as_bytes() == name)
    }

    /// The ipvsadm name of the scheduler, as shown by `ipvsadm -L`.
    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Rr => "rr",
            SchedKind::Wrr => "wrr",
            SchedKind::Lc => "lc",
            SchedKind::Wlc => "wlc",
            SchedKind::Sed => "sed",
            SchedKind::Nq => "nq",
            SchedKind::Sh => "sh",
            SchedKind::Dh => "dh",
            SchedKind::Mh => "mh",
            SchedKind::Fo => "fo",
            SchedKind::Ovf => "ovf",
            SchedKind::Twos => "twos",
            SchedKind::Lblc => "lblc",
            SchedKind::Lblcr => "lblcr",
        }
    }

    /// Whether the scheduler needs an [`MhTable`] (allocated by the caller,
    /// rebuilt through [`SchedState::dests_changed_with`] and passed to
    /// [`SchedState::schedule_flow_with`]). Only mh.
    pub fn needs_mh_table(self) -> bool {
        self == SchedKind::Mh
    }

    /// Whether the scheduler needs an [`LblcTable`] (allocated by the
    /// caller, passed to [`LblcTable::schedule`]): lblc and lblcr.
    pub fn needs_lblc_table(self) -> bool {
        matches!(self, SchedKind::Lblc | SchedKind::Lblcr)
    }

    /// Whether the choice depends on the [`Flow`] (sh, dh, mh, twos, lblc,
    /// lblcr).
    pub fn uses_flow(self) -> bool {
        matches!(
            self,
            SchedKind::Sh
                | SchedKind::Dh
                | SchedKind::Mh
                | SchedKind::Twos
                | SchedKind::Lblc
                | SchedKind::Lblcr
        )
    }
}

/// Per-service scheduler state; plain data, guarded by the caller's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedState {
    kind: SchedKind,
    /// Index of the last destination chosen (rr, wrr); `None` is the list
    /// head, i.e. the next search starts at index 0.
    cursor: Option<usize>,
    /// wrr: current weight threshold.
    cw: u32,
    /// wrr: maximum weight, lowered by `gcd - 1` as in IPVS.
    mw: u32,
    /// wrr: decreasing interval, the gcd of the positive weights.
    di: u32,
    /// sh/mh options.
    flags: SchedFlags,
    /// twos via [`SchedState::schedule`]: xorshift32 state standing in for
    /// [`Flow::random`]; never 0.
    rng: u32,
}

/// Seed of [`SchedState::schedule`]'s pseudo-random sequence (any non-zero).
const RNG_SEED: u32 = 0x9e37_79b9;

impl SchedState {
    /// A fresh state for `kind`. For wrr, call [`SchedState::dests_changed`]
    /// once the destinations are known (or use [`SchedState::with_dests`]);
    /// until then wrr finds nothing, like an IPVS service without dests.
    pub fn new(kind: SchedKind) -> SchedState {
        SchedState {
            kind,
            cursor: None,
            cw: 0,
            mw: 0,
            di: 1,
            flags: SchedFlags {
                fallback: false,
                port: false,
            },
            rng: RNG_SEED,
        }
    }

    /// Sets the sh/mh options (from the service flags, see
    /// [`SchedFlags::from_svc_flags`]). Takes effect with the next choice;
    /// nothing needs rebuilding.
    pub fn set_flags(&mut self, flags: SchedFlags) {
        self.flags = flags;
    }

    /// The sh/mh options in effect.
    pub fn flags(&self) -> SchedFlags {
        self.flags
    }

    /// A fresh state for `kind` already primed with `dests`.
    pub fn with_dests(kind: SchedKind, dests: &(impl Dests + ?Sized)) -> SchedState {
        let mut s = SchedState::new(kind);
        s.dests_changed(dests);
        s
    }

    /// The algorithm this state belongs to.
    pub fn kind(&self) -> SchedKind {
        self.kind
    }

    /// Chooses a destination for a new connection: the index into `dests`,
    /// or `None` when no destination is available (all weight 0, all
    /// overloaded, or an empty list).
    ///
    /// For the flow-independent schedulers. It is [`SchedState::schedule_flow`]
    /// with an all-zero [`Flow`] whose `random` comes from an internal
    /// pseudo-random sequence (so twos still spreads); sh, dh and mh then
    /// send everything to one bucket's destination (mh: none, no table).
    pub fn schedule(&mut self, dests: &(impl Dests + ?Sized)) -> Option<usize> {
        // xorshift32: full period over the non-zero u32s.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rng = if x == 0 { RNG_SEED } else { x };
        let flow = Flow {
            random: self.rng,
            ..Flow::default()
        };
        self.schedule_flow(dests, &flow)
    }

    /// Chooses a destination for the new connection `flow`, like
    /// [`SchedState::schedule`] but with the flow that sh, dh and twos
    /// need. For mh this finds nothing: mh needs its table, use
    /// [`SchedState::schedule_flow_with`].
    pub fn schedule_flow(&mut self, dests: &(impl Dests + ?Sized), flow: &Flow) -> Option<usize> {
        self.schedule_flow_with(dests, flow, None)
    }

    /// The general entry point: [`SchedState::schedule_flow`] plus, for mh,
    /// the service's [`MhTable`] (ignored by every other scheduler; mh
    /// without a table finds nothing).
    pub fn schedule_flow_with(
        &mut self,
        dests: &(impl Dests + ?Sized),
        flow: &Flow,
        mh: Option<&MhTable>,
    ) -> Option<usize> {
        match self.kind {
            SchedKind::Rr => self.rr(dests),
            SchedKind::Wrr => self.wrr(dests),
            SchedKind::Lc => lc(dests),
            SchedKind::Wlc => weighted_least(dests, DestView::conn_overhead),
            SchedKind::Sed => weighted_least(dests, DestView::sed_overhead),
            SchedKind::Nq => nq(dests),
            SchedKind::Sh => sh(dests, flow, self.flags),
            SchedKind::Dh => dh(dests, flow),
            SchedKind::Mh => mh?.lookup(dests, flow, self.flags),
            SchedKind::Fo => fo(dests),
            SchedKind::Ovf => ovf(dests),
            SchedKind::Twos => twos(dests, flow.random),
            // They need their table: see `LblcTable::schedule`.
            SchedKind::Lblc | SchedKind::Lblcr => None,
        }
    }

    /// [`SchedState::dests_changed`] plus, for mh, the rebuild of its table
    /// (`mh` is ignored for the other schedulers). Returns `false` only when
    /// mh could not place every destination (more than [`MH_TABLE_SIZE`]).
    pub fn dests_changed_with(
        &mut self,
        dests: &(impl Dests + ?Sized),
        mh: Option<&mut MhTable>,
    ) -> bool {
        self.dests_changed(dests);
        match mh {
            Some(t) if self.kind == SchedKind::Mh => t.rebuild(dests),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::{client, server, w};
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    #[test]
    fn names_round_trip() {
        for k in SchedKind::ALL {
            assert_eq!(SchedKind::from_name(k.name().as_bytes()), Some(k));
        }
        assert_eq!(SchedKind::from_name(b"RR"), None);
        assert_eq!(SchedKind::from_name(b""), None);
        assert_eq!(SchedKind::from_name(b"wlcx"), None);
        assert_eq!(SchedKind::DEFAULT.name(), "wlc");
    }

    #[test]
    fn all_unavailable_is_none() {
        let zero = [w(0), w(0), w(0)];
        let mut over = [w(1), w(2)];
        for d in over.iter_mut() {
            d.overloaded = true;
        }
        for k in SchedKind::ALL {
            let mut s = SchedState::with_dests(k, &zero);
            assert_eq!(s.schedule(&zero), None, "{}", k.name());
            assert_eq!(s.schedule(&[]), None, "{}", k.name());
            let mut s = SchedState::with_dests(k, &over);
            assert_eq!(s.schedule(&over), None, "{}", k.name());
        }
    }

    #[test]
    fn shrinking_and_growing_lists_never_panic() {
        let big: Vec<DestView> = (1..=8).map(w).collect();
        let mut t = Box::new(MhTable::EMPTY);
        let zero = Flow::default();
        for k in SchedKind::ALL {
            if k.needs_lblc_table() {
                // Without their table they find nothing (lblc.rs tests them).
                assert_eq!(SchedState::new(k).schedule(&big), None);
                continue;
            }
            let mut s = SchedState::with_dests(k, &big);
            s.dests_changed_with(&big, Some(&mut t));
            let pick = |s: &mut SchedState, t: &MhTable, d: &[DestView]| {
                assert_eq!(
                    s.schedule(d).is_some(),
                    !k.needs_mh_table() && !d.is_empty()
                );
                s.schedule_flow_with(d, &zero, Some(t))
            };
            for _ in 0..7 {
                pick(&mut s, &t, &big);
            }
            // The list shrank without telling the state (or the mh table).
            let small = [w(1), w(2)];
            for _ in 0..10 {
                let got = pick(&mut s, &t, &small);
                // sh/dh/mh may hash to a slot that no longer exists.
                let ok = matches!(got, Some(0) | Some(1)) || (k.uses_flow() && got.is_none());
                assert!(ok, "{} {got:?}", k.name());
            }
            // Empty, then told.
            assert_eq!(pick(&mut s, &t, &[]), None);
            s.dests_changed_with(&[], Some(&mut t));
            assert_eq!(pick(&mut s, &t, &[]), None);
            // Grows again.
            s.dests_changed_with(&big, Some(&mut t));
            for _ in 0..50 {
                assert!(pick(&mut s, &t, &big).is_some_and(|i| i < big.len()));
            }
            s.dest_removed(100);
            s.dest_inserted(usize::MAX);
            s.dests_changed_with(&small, Some(&mut t));
            assert!(pick(&mut s, &t, &small).is_some());
        }
    }

    #[test]
    fn flow_kinds_none_when_nothing_available() {
        let zero = [server(1, 0), server(2, 0)];
        let mut over = [server(1, 1), server(2, 2)];
        for d in over.iter_mut() {
            d.overloaded = true;
        }
        let mut t = Box::new(MhTable::EMPTY);
        for k in SchedKind::ALL {
            for flags in [0, 0x18] {
                let mut s = SchedState::new(k);
                s.set_flags(SchedFlags::from_svc_flags(flags));
                for d in [&zero[..], &over[..], &[][..]] {
                    s.dests_changed_with(d, Some(&mut t));
                    for n in 0..50 {
                        let f = client(n, n as u16);
                        assert_eq!(s.schedule_flow_with(d, &f, Some(&t)), None, "{}", k.name());
                        assert_eq!(s.schedule_flow(d, &f), None, "{}", k.name());
                    }
                }
            }
        }
    }

    /// A list that computes views on demand, like the kernel's, counting
    /// how many a decision reads.
    struct Lazy {
        views: Vec<DestView>,
        reads: core::cell::Cell<usize>,
    }

    impl Dests for Lazy {
        fn len(&self) -> usize {
            self.views.len()
        }

        fn view(&self, i: usize) -> Option<DestView> {
            self.reads.set(self.reads.get() + 1);
            self.views.get(i).copied()
        }
    }

    /// Every scheduler decides from views computed on demand exactly as
    /// from a slice of them, at 1000 servers; mh reads one server per
    /// decision and rr one while all are available.
    #[test]
    fn lazy_views_many_servers() {
        let views: Vec<DestView> = (0..1000u32)
            .map(|i| DestView {
                weight: 1 + i % 3,
                last_weight: 1 + i % 3,
                active_conns: i % 7,
                hash_key: 0x0a00_0000 + i,
                id: i + 1,
                ..DestView::default()
            })
            .collect();
        let lazy = Lazy {
            views: views.clone(),
            reads: core::cell::Cell::new(0),
        };
        let mut t = Box::new(MhTable::EMPTY);
        let mut t2 = Box::new(MhTable::EMPTY);
        for k in SchedKind::ALL {
            let mut a = SchedState::with_dests(k, &views);
            let mut b = SchedState::with_dests(k, &lazy);
            a.dests_changed_with(&views, Some(&mut t));
            b.dests_changed_with(&lazy, Some(&mut t2));
            assert_eq!(t.lookup, t2.lookup);
            for n in 0..200 {
                let f = client(n, 0);
                lazy.reads.set(0);
                let want = a.schedule_flow_with(&views, &f, Some(&t));
                let got = b.schedule_flow_with(&lazy, &f, Some(&t2));
                assert_eq!(got, want, "{} client {n}", k.name());
                match k {
                    SchedKind::Mh | SchedKind::Rr => {
                        assert_eq!(lazy.reads.get(), 1, "{} client {n}", k.name())
                    }
                    _ => {}
                }
            }
        }
    }
}
