// SPDX-License-Identifier: GPL-2.0

//! Builders shared by the scheduler tests of this module's files.

use super::{dest_hash_key, DestView, Flow, MhTable, SchedFlags, SchedKind, SchedState};
use std::boxed::Box;
use std::vec::Vec;

pub(super) fn w(weight: u32) -> DestView {
    DestView {
        weight,
        ..DestView::default()
    }
}

pub(super) fn conns(weight: u32, active: u32, inactive: u32) -> DestView {
    DestView {
        weight,
        active_conns: active,
        inactive_conns: inactive,
        ..DestView::default()
    }
}

pub(super) fn picks(s: &mut SchedState, dests: &[DestView], n: usize) -> Vec<Option<usize>> {
    (0..n).map(|_| s.schedule(dests)).collect()
}

pub(super) fn v4(a: u8, b: u8, c: u8, d: u8) -> [u8; 16] {
    let mut x = [0u8; 16];
    x[..4].copy_from_slice(&[a, b, c, d]);
    x
}

/// Client `n` (10.x.y.z) on port `port`.
pub(super) fn client(n: u32, port: u16) -> Flow {
    let [_, b, c, d] = n.to_be_bytes();
    Flow {
        caddr: v4(10, b, c, d),
        cport: port,
        vaddr: v4(192, 0, 2, 1),
        vport: 80,
        random: 0,
    }
}

/// Real server `i` (172.16.0.i:80) with `weight`, keyed for mh.
pub(super) fn server(i: u8, weight: u32) -> DestView {
    DestView {
        weight,
        hash_key: dest_hash_key(&v4(172, 16, 0, i), 80),
        last_weight: weight,
        ..DestView::default()
    }
}

pub(super) fn state(kind: SchedKind, fallback: bool, port: bool) -> SchedState {
    let mut s = SchedState::new(kind);
    s.set_flags(SchedFlags { fallback, port });
    s
}

pub(super) fn mh_setup(
    dests: &[DestView],
    fallback: bool,
    port: bool,
) -> (SchedState, Box<MhTable>) {
    let mut s = state(SchedKind::Mh, fallback, port);
    let mut t = Box::new(MhTable::EMPTY);
    assert!(s.dests_changed_with(dests, Some(&mut t)));
    (s, t)
}

/// Real server `i` with its own identity ([`DestView::id`] = `i`).
pub(super) fn named(i: u8, weight: u32) -> DestView {
    DestView {
        id: u32::from(i),
        ..server(i, weight)
    }
}
