// SPDX-License-Identifier: GPL-2.0

//! A bounded view of a packet (`struct sk_buff`) for netfilter hooks.
//!
//! C header: [`include/linux/skbuff.h`]
//!
//! Hooks see an [`Skb`] instead of a raw pointer. Reading goes through
//! [`Skb::header`], which first makes the asked-for bytes linear
//! (`pskb_may_pull`) and then hands out a slice of exactly that length, so
//! a malformed or truncated packet can at worst fail the call. Writing
//! first makes the bytes private to us (`skb_ensure_writable`).

use super::ffi;
use super::inet::{addr4, in6};
use super::netns::Net;
use super::route::Route;
use super::verdict::Verdict;
use crate::rvs_core::config::AddrFamily;
use crate::rvs_core::icmp::{
    ICMPV6_DEST_UNREACH, ICMPV6_EXC_HOPLIMIT, ICMPV6_PKT_TOOBIG, ICMPV6_PORT_UNREACH,
    ICMPV6_TIME_EXCEED, ICMP_DEST_UNREACH, ICMP_EXC_TTL, ICMP_FRAG_NEEDED, ICMP_PORT_UNREACH,
    ICMP_TIME_EXCEEDED, IPPROTO_ICMP, IPPROTO_ICMPV6,
};
use crate::rvs_core::packet::{self, IpInfo};
use crate::rvs_core::sctp;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::prelude::*;

/// A netfilter hook, for checksum checks that depend on where the packet
/// is (`NF_INET_*`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NfHook {
    /// `NF_INET_LOCAL_IN`.
    LocalIn,
    /// `NF_INET_LOCAL_OUT`.
    LocalOut,
    /// `NF_INET_FORWARD`.
    Forward,
    /// `NF_INET_PRE_ROUTING`.
    PreRouting,
}

impl NfHook {
    fn number(self) -> u32 {
        match self {
            Self::LocalIn => ffi::NF_INET_LOCAL_IN,
            Self::LocalOut => ffi::NF_INET_LOCAL_OUT,
            Self::Forward => ffi::NF_INET_FORWARD,
            Self::PreRouting => ffi::NF_INET_PRE_ROUTING,
        }
    }
}

/// A packet owned by the netfilter hook that is processing it.
///
/// # Invariants
///
/// `ptr` is a valid `sk_buff` for the lifetime `'a` of the hook call, and
/// only this `Skb` touches it during that time.
pub(crate) struct Skb<'a> {
    ptr: *mut ffi::sk_buff,
    _p: PhantomData<&'a mut ffi::sk_buff>,
}

impl<'a> Skb<'a> {
    /// # Safety
    ///
    /// `ptr` is a valid `sk_buff` owned by the caller's hook invocation for
    /// `'a`, not accessed elsewhere meanwhile.
    pub(super) unsafe fn from_raw(ptr: *mut ffi::sk_buff) -> Self {
        // INVARIANT: the caller guarantees validity and exclusivity for `'a`.
        Self {
            ptr,
            _p: PhantomData,
        }
    }

    /// Total length of the packet from the network header.
    pub(crate) fn len(&self) -> usize {
        // SAFETY: valid skb (type invariant).
        unsafe { ffi::rvs_skb_len(self.ptr) as usize }
    }

    /// The first `len` bytes from the network header, made linear. `None`
    /// if the packet is shorter or the pull failed (allocation).
    pub(crate) fn header(&mut self, len: usize) -> Option<&[u8]> {
        let len32 = u32::try_from(len).ok()?;
        // `pskb_may_pull` may reallocate the head: the slice is taken after it.
        // SAFETY: valid skb; the call checks `len` against the packet length.
        if !unsafe { ffi::rvs_pskb_may_pull(self.ptr, len32) } {
            return None;
        }
        // SAFETY: after a successful pull, `len` bytes at `data` are linear
        // (`skb_headlen >= len`) and stay put while `self` is borrowed.
        Some(unsafe { core::slice::from_raw_parts(ffi::rvs_skb_data(self.ptr), len) })
    }

    /// Makes the first `want` bytes linear and parses them with `parse`,
    /// making more linear for as long as the parser asks for more than it
    /// was given (`Err(Some(needed))`). The parsers' contract is that
    /// `needed` stays within the packet, so this ends: with a value, or
    /// `None` when the parser refuses or the bytes cannot be made linear.
    pub(crate) fn parse_linear<T>(
        &mut self,
        mut want: usize,
        mut parse: impl FnMut(&[u8]) -> Result<T, Option<usize>>,
    ) -> Option<T> {
        loop {
            match parse(self.header(want)?) {
                Ok(v) => return Some(v),
                Err(Some(more)) if more > want => want = more,
                Err(_) => return None,
            }
        }
    }

    /// The IP header of family `af` (IPv6: with its extension headers),
    /// made linear and checked (`rvs_core::packet::parse_ip`): `None` if
    /// truncated or malformed. A GSO packet above 64 KiB (IPv4 BIG TCP)
    /// carries total length 0, which its own parser accepts.
    pub(crate) fn parse_ip(&mut self, af: AddrFamily) -> Option<IpInfo> {
        let pkt_len = self.len();
        let want = match af {
            AddrFamily::Inet => 20usize,
            AddrFamily::Inet6 => 40usize,
        };
        let parse = if self.is_gso() {
            packet::parse_ip_gso
        } else {
            packet::parse_ip
        };
        self.parse_linear(want, |hdr| parse(af, hdr, pkt_len).map_err(|e| e.needed()))
    }

    /// The first `len` bytes, linear and writable (unshared), or `None`.
    pub(crate) fn header_mut(&mut self, len: usize) -> Option<&mut [u8]> {
        let len_i = core::ffi::c_uint::try_from(len).ok()?;
        // SAFETY: valid skb; `skb_ensure_writable` pulls and unclones the
        // first `len` bytes, or fails without changing the packet's data.
        if unsafe { ffi::skb_ensure_writable(self.ptr, len_i) } != 0 {
            return None;
        }
        // SAFETY: `len` bytes at `data` are now linear and private to this
        // skb; the slice borrows `self` mutably, so nothing moves them.
        Some(unsafe { core::slice::from_raw_parts_mut(ffi::rvs_skb_data(self.ptr), len) })
    }

    /// Whether the bytes from `off` to the end of the packet (an ICMP
    /// message) sum to the one's-complement zero a correct checksum gives.
    /// Reads paged data too, so the message need not be linear.
    pub(crate) fn icmp_csum_ok(&self, off: usize) -> bool {
        let len = self.len();
        let (Ok(o), Some(Ok(n))) = (i32::try_from(off), len.checked_sub(off).map(i32::try_from))
        else {
            return false;
        };
        // SAFETY: valid skb; `[off, off + n)` lies within the packet's
        // `len` bytes from `data`, which `skb_checksum` walks (head and
        // fragments) without changing anything.
        let sum = unsafe { ffi::skb_checksum(self.ptr, o, n, 0) };
        packet::csum_fold_raw(sum) == 0xffff
    }

    /// Whether the TCP or UDP checksum of the packet (its header at `l4_off`)
    /// holds, seen at netfilter hook `hook`, as conntrack checks it
    /// (`nf_checksum`): a checksum the device verified or left to be filled
    /// in (a local sender's) counts as good; an IPv4 UDP checksum of 0
    /// means "none" and counts as good too. Reads paged data as well.
    pub(crate) fn l4_csum_ok(
        &mut self,
        hook: NfHook,
        l4_off: usize,
        proto: u8,
        af: AddrFamily,
    ) -> bool {
        let Ok(off) = core::ffi::c_uint::try_from(l4_off) else {
            return false;
        };
        if af == AddrFamily::Inet && proto == packet::IPPROTO_UDP {
            match self
                .header(l4_off.saturating_add(8))
                .and_then(|h| h.get(l4_off + 6..l4_off + 8))
            {
                Some([0, 0]) => return true,
                Some(_) => {}
                None => return false,
            }
        }
        let family = match af {
            AddrFamily::Inet => ffi::NFPROTO_IPV4,
            AddrFamily::Inet6 => ffi::NFPROTO_IPV6,
        };
        // SAFETY: valid skb (type invariant) at a netfilter hook, its data
        // at the network header, which the caller parsed (`l4_off` lies
        // within the packet); `nf_checksum` reads the packet and may only
        // record the result in `ip_summed`/`csum`.
        unsafe { ffi::nf_checksum(self.ptr, hook.number(), off, proto, family as u16) == 0 }
    }

    /// Whether the SCTP checksum (CRC32c) of the packet, its header at
    /// `l4_off`, holds, as SCTP's receive path checks it
    /// (`sctp_rcv_checksum`): one the device verified or a local sender
    /// left to be filled in counts as good; otherwise the packet is made
    /// linear and its CRC computed (`rvs_core::sctp`).
    pub(crate) fn sctp_csum_ok(&mut self, l4_off: usize) -> bool {
        // SAFETY: valid skb (type invariant); the helper only reads it.
        if unsafe { ffi::rvs_skb_csum_unnecessary(self.ptr) } {
            return true;
        }
        let len = self.len();
        self.header(len)
            .and_then(|h| h.get(l4_off..))
            .is_some_and(sctp::checksum_ok)
    }

    /// Records that the transport checksum was just computed in full
    /// (CHECKSUM_NONE): the device fills nothing in, and no earlier
    /// verification of the old one is trusted downstream.
    pub(crate) fn csum_none(&mut self) {
        // SAFETY: valid skb, owned by this hook call (type invariant); only
        // `ip_summed` changes.
        unsafe { ffi::rvs_skb_csum_none(self.ptr) }
    }

    /// Drops the first `off` bytes so the IPv4 packet quoted there (header
    /// `ihl` bytes, made linear) becomes the packet, as the kernel's
    /// `icmp_send` and `ipv4_update_pmtu` expect. On `false` (too short,
    /// no memory, or a header length that is not `ihl`) the packet may be
    /// partly pulled: only freeing it is left.
    pub(crate) fn pull_to(&mut self, off: usize, ihl: usize) -> bool {
        let (Ok(off), Ok(ihl)) = (u32::try_from(off), u32::try_from(ihl)) else {
            return false;
        };
        // SAFETY: valid skb; `pskb_pull` and `pskb_may_pull` check the
        // lengths against the packet.
        unsafe { ffi::rvs_skb_pull_to(self.ptr, off, ihl) }
    }

    /// Records a path MTU of `mtu` for the route of this IPv4 packet
    /// (source and destination of its header), as an ICMP "fragmentation
    /// needed" about it asks.
    pub(crate) fn update_pmtu(&mut self, net: &Net, mtu: u32) {
        // SAFETY: valid skb whose network header is a linear IPv4 header
        // (after [`Skb::pull_to`]); `net` is alive.
        unsafe { ffi::ipv4_update_pmtu(self.ptr, net.as_ptr(), mtu, 0, 0) };
    }

    /// Rewrites one end (the source if `source`, else the destination)
    /// of a TCP or UDP (`udp`) packet of family `af`, whose transport
    /// header is at `l4`, to `addr:port` (`rvs_core::packet::write_end`,
    /// which also renews an IPv4 header's checksum), keeping the
    /// transport checksum right for every offload mode: left alone for a
    /// UDP datagram sent without one, and a computed UDP checksum of 0
    /// sent as all ones (RFC 768, RFC 8200).
    pub(crate) fn rewrite_end(
        &mut self,
        af: AddrFamily,
        l4: usize,
        udp: bool,
        source: bool,
        addr: &[u8; 16],
        port: u16,
    ) -> Result {
        let check_at = l4
            + if udp {
                packet::UDP_CHECK_OFFSET
            } else {
                packet::TCP_CHECK_OFFSET
            };
        // Made writable once: the checksum updates below write through
        // `check`, without `skb_ensure_writable` again for each.
        let h = self.header_mut(check_at + 2).ok_or(ENOMEM)?;
        let no_csum = udp && h.get(check_at..check_at + 2) == Some(&[0, 0][..]);
        let (old_addr, old_port) =
            packet::write_end(h, af, l4, source, addr, port).ok_or(EINVAL)?;
        if no_csum {
            return Ok(());
        }
        let check = h
            .get_mut(check_at..check_at + 2)
            .ok_or(EINVAL)?
            .as_mut_ptr()
            .cast::<u16>();
        let partial = self.csum_partial();
        // SAFETY: `check` points to the two bytes at `check_at`, within the
        // `check_at + 2` bytes `header_mut` made linear and private to this
        // skb; `h` is not used again, and nothing here pulls or reallocates
        // the head (the helpers only write the field and `skb->csum`, as
        // `csum_replace4` argues), so `check` stays valid. The kernel
        // writes the field unaligned-safely as a __sum16.
        unsafe {
            match af {
                AddrFamily::Inet => ffi::inet_proto_csum_replace4(
                    check,
                    self.ptr,
                    u32::from_ne_bytes(addr4(&old_addr)),
                    u32::from_ne_bytes(addr4(addr)),
                    true,
                ),
                AddrFamily::Inet6 => ffi::rvs_inet_proto_csum_replace16(
                    check,
                    self.ptr,
                    old_addr.as_ptr(),
                    addr.as_ptr(),
                ),
            }
            ffi::rvs_inet_proto_csum_replace2(
                check,
                self.ptr,
                u16::from_ne_bytes(old_port),
                port.to_be(),
                false,
            );
            // A computed UDP checksum of 0 goes out as all ones.
            if udp && !partial && check.read_unaligned() == 0 {
                check.write_unaligned(0xffff);
            }
        }
        Ok(())
    }

    /// Routes a locally sent packet again after its destination changed
    /// (at LOCAL_OUT), as netfilter's NAT does: `ip_route_me_harder` or
    /// `ip6_route_me_harder`, with the packet's socket for its bound
    /// device and mark. An error (no route) leaves the packet to be
    /// dropped.
    #[allow(dead_code)] // rvs_rs's only
    pub(crate) fn reroute(&mut self, net: &Net, af: AddrFamily) -> Result {
        let v6 = af == AddrFamily::Inet6;
        // SAFETY: valid skb whose network header is linear (the caller
        // rewrote it); `net` is alive. The helper reads `skb->sk` as the
        // hook's own state would give it.
        let ret = unsafe { ffi::rvs_route_me_harder(net.as_ptr(), self.ptr, v6) };
        if ret == 0 {
            Ok(())
        } else {
            Err(Error::from_errno(ret))
        }
    }

    /// Records a path MTU of `mtu` for the route of the IPv6 packet quoted
    /// `off` bytes in (an ICMPv6 "packet too big" about it). On `false`
    /// (quote too short, no memory) the packet may be partly pulled: only
    /// freeing it is left.
    pub(crate) fn update_pmtu6_at(&mut self, net: &Net, off: usize, mtu: u32) -> bool {
        let Ok(off) = u32::try_from(off) else {
            return false;
        };
        // SAFETY: valid skb; the helper checks `off` and the quoted header's
        // length against the packet before the kernel reads the header;
        // `net` is alive.
        unsafe { ffi::rvs_ip6_update_pmtu_at(self.ptr, net.as_ptr(), off, mtu) }
    }

    /// Frees a packet rvs is done with, as consumed rather than dropped;
    /// the hook then answers `NF_STOLEN`.
    pub(crate) fn consume(self) {
        // SAFETY: valid skb owned by this hook call; it is not used again
        // (`self` is moved in), and NF_STOLEN tells netfilter so.
        unsafe { ffi::rvs_consume_skb(self.ptr) };
    }

    /// Whether rvs itself transmitted this packet (it is re-entering
    /// netfilter after transmit and must pass untouched).
    pub(crate) fn is_rvs_xmit(&self) -> bool {
        // SAFETY: valid skb.
        unsafe { ffi::rvs_skb_is_xmit(self.ptr) }
    }

    /// Marks the packet as rvs's (what [`Self::is_rvs_xmit`] tests), so
    /// rvs's later hooks pass it.
    pub(crate) fn mark_rvs(&mut self) {
        // SAFETY: valid skb (invariant); one bit of it, which we own.
        unsafe { ffi::rvs_skb_mark_xmit(self.ptr) };
    }

    /// The packet's firewall mark (`skb->mark`, set e.g. by nftables'
    /// `meta mark set`), for firewall-mark services.
    pub(crate) fn fwmark(&self) -> u32 {
        // SAFETY: `self.ptr` is a valid skb while `self` lives (type
        // invariant); the helper only reads its `mark` field.
        unsafe { ffi::rvs_skb_fwmark(self.ptr) }
    }

    /// Whether the transport checksum is left to the device
    /// (CHECKSUM_PARTIAL): its field then holds the pseudo-header sum.
    pub(crate) fn csum_partial(&self) -> bool {
        // SAFETY: valid skb.
        unsafe { ffi::rvs_skb_csum_partial(self.ptr) }
    }

    /// For a packet whose Internet checksum (TCP, UDP) is left to the
    /// device: where the checksum starts (from the network header) and
    /// where in that its field is. `None` otherwise (SCTP's CRC32c too).
    pub(crate) fn csum_offsets(&self) -> Option<(u16, u16)> {
        let (mut start, mut offset) = (0u16, 0u16);
        // SAFETY: valid skb; the helper writes the two out-parameters.
        unsafe { ffi::rvs_skb_csum_offsets(self.ptr, &mut start, &mut offset) }
            .then_some((start, offset))
    }

    /// Leaves the transport checksum of a non-GSO packet to the real
    /// server (remote checksum offload): the stack must not fill it in.
    pub(crate) fn remcsum_handed_off(&mut self) {
        // SAFETY: valid skb; only `ip_summed` and `encapsulation` change.
        unsafe { ffi::rvs_skb_remcsum_handed_off(self.ptr) };
    }

    /// Gathers an IPv4 fragment seen at FORWARD into the whole packet
    /// (IPVS's `ip_vs_gather_frags`): `Some` with the reassembled packet
    /// once this was the last missing piece; `None` when the fragment was
    /// queued for the rest (or dropped), and so is no longer the caller's
    /// (the hook answers `NF_STOLEN`).
    pub(crate) fn gather_fragments(self, net: &Net) -> Option<Self> {
        // SAFETY: valid skb owned by this hook call (invariant); `net` is
        // alive. On success the same skb holds the whole packet; otherwise
        // the kernel owns it and `self` is not used again.
        (unsafe { ffi::rvs_ip_defrag_forward(net.as_ptr(), self.ptr) } == 0).then_some(self)
    }

    /// Whether this is a GSO super-packet (segmented later by the stack).
    pub(crate) fn is_gso(&self) -> bool {
        // SAFETY: valid skb.
        unsafe { ffi::rvs_skb_is_gso(self.ptr) }
    }

    /// Whether each segment of this GSO packet, network header included,
    /// fits in `mtu` bytes (`skb_gso_validate_network_len`).
    pub(crate) fn gso_segments_fit(&self, mtu: u32) -> bool {
        // SAFETY: valid skb (type invariant); the call only reads it.
        self.is_gso() && unsafe { ffi::skb_gso_validate_network_len(self.ptr, mtu) }
    }

    /// The largest fragment of a packet that netfilter reassembled (0 if it
    /// was never fragmented), for a network header of family `af`.
    pub(crate) fn frag_max_size(&self, af: AddrFamily) -> u32 {
        // SAFETY: valid skb; reads its control block, which the IP layer
        // (IPCB / IP6CB of the packet's family) owns at the hooks.
        u32::from(unsafe { ffi::rvs_skb_frag_max_size(self.ptr, af == AddrFamily::Inet6) })
    }

    /// Updates a transport checksum at byte offset `at` of the packet for a
    /// 4-byte field change (an address), correctly for every `ip_summed`
    /// mode (`inet_proto_csum_replace4`). `pseudo`: the field is part of the
    /// pseudo-header.
    pub(crate) fn csum_replace4(&mut self, at: usize, from: [u8; 4], to: [u8; 4], pseudo: bool) {
        let Some(check) = self.header_mut(at + 2) else {
            return;
        };
        let check = check.as_mut_ptr().wrapping_add(at).cast::<u16>();
        // SAFETY: the two bytes at `at` are linear and writable (just made so); the kernel writes
        // them unaligned-safely as a __sum16 and adjusts `skb->csum` for CHECKSUM_COMPLETE.
        unsafe {
            ffi::inet_proto_csum_replace4(
                check,
                self.ptr,
                u32::from_ne_bytes(from),
                u32::from_ne_bytes(to),
                pseudo,
            )
        };
    }

    /// As [`Skb::csum_replace4`] for a 2-byte field (a port).
    pub(crate) fn csum_replace2(&mut self, at: usize, from: [u8; 2], to: [u8; 2]) {
        let Some(check) = self.header_mut(at + 2) else {
            return;
        };
        let check = check.as_mut_ptr().wrapping_add(at).cast::<u16>();
        // SAFETY: as in `csum_replace4`.
        unsafe {
            ffi::rvs_inet_proto_csum_replace2(
                check,
                self.ptr,
                u16::from_ne_bytes(from),
                u16::from_ne_bytes(to),
                false,
            )
        };
    }
}

impl Skb<'_> {
    /// Attaches `route` as the packet's output route, replacing (and
    /// releasing) the one it had.
    pub(crate) fn set_route(&mut self, route: Route) {
        // SAFETY: valid skb (invariant); the skb takes over the route's
        // reference.
        unsafe { ffi::rvs_skb_set_dst(self.ptr, route.into_raw()) };
    }
}

/// Sends a routed packet out through netfilter's LOCAL_OUT (so later hooks
/// and policy see it), marked as rvs's so rvs's own hooks pass it, and
/// untracked by conntrack like IPVS's unless `track` (the `conntrack`
/// setting). Consumes the packet.
/// `af` is the family of its (outer) network header: it enters that
/// family's LOCAL_OUT.
///
/// `from_wire`: the packet was received (not sent by a local socket), so a
/// socket that early demux attached to it must be let go first. A received
/// packet also loses its receive checksum and timestamp, as a forwarded
/// one does (`ip_forward`).
pub(crate) fn local_out(net: &Net, skb: Skb<'_>, af: AddrFamily, from_wire: bool, track: bool) {
    // SAFETY: valid skb with a route attached by `super::route::route_to`; ownership
    // passes to the output path (the caller returns NF_STOLEN).
    unsafe {
        ffi::rvs_skb_mark_xmit(skb.ptr);
        if !track {
            ffi::rvs_skb_notrack(skb.ptr);
        }
        if from_wire {
            ffi::rvs_skb_orphan(skb.ptr);
        }
        ffi::rvs_skb_forward_prepare(skb.ptr);
        match af {
            AddrFamily::Inet => ffi::rvs_nf_local_out(net.as_ptr(), skb.ptr),
            AddrFamily::Inet6 => ffi::rvs_nf_local_out6(net.as_ptr(), skb.ptr),
        };
    }
}

impl Skb<'_> {
    /// Routes a packet at the ingress hook as the IP layer would on receive
    /// (`rvs_fast_route_input`) and returns the forwarding MTU, if the
    /// route forwards it; `None` leaves no route attached.
    pub(crate) fn route_input(&mut self, af: AddrFamily) -> Option<u32> {
        // SAFETY: valid skb being received (type invariant), its network
        // header at the start; the helper attaches a route or none.
        let mtu = unsafe { ffi::rvs_fast_route_input(self.ptr, af == AddrFamily::Inet6) };
        (mtu != 0).then_some(mtu)
    }

    /// Sets the transport header `off` bytes after the network header, as
    /// the IP layer does on receive (the ingress hook comes before it);
    /// `off` is within the linear head (the caller parsed that far).
    pub(crate) fn set_transport_offset(&mut self, off: usize) {
        let Ok(off) = core::ffi::c_int::try_from(off) else {
            return;
        };
        // SAFETY: valid skb (type invariant) whose data starts at the
        // network header; the header parsed so far is linear.
        unsafe { ffi::rvs_skb_set_transport_header(self.ptr, off) };
    }

    /// Lets go of the packet's route (one [`Self::route_input`] attached
    /// when the packet goes back to the stack after all).
    pub(crate) fn drop_route(&mut self) {
        // SAFETY: valid skb (type invariant).
        unsafe { ffi::rvs_skb_dst_drop(self.ptr) };
    }

    /// Whether the packet can leave on a path of `mtu` as it is: no larger,
    /// or a GSO packet whose segments each fit.
    pub(crate) fn fits(&self, mtu: u32) -> bool {
        self.len() <= mtu as usize || self.gso_segments_fit(mtu)
    }
}

/// Sends a packet rewritten at the ingress hook, its route attached, to
/// that route's device (`dst_output`: POSTROUTING, GSO, the neighbour), as
/// the IP layer sends a forwarded packet, past LOCAL_OUT; marked and
/// untracked as [`local_out`]'s. `af`: its (outer) network header's
/// family. Consumes the packet.
pub(crate) fn fast_output(net: &Net, skb: Skb<'_>, af: AddrFamily) {
    // SAFETY: valid skb with a route attached (`Skb::set_route` or
    // `Skb::route_input`); ownership passes to the output path (the caller
    // returns NF_STOLEN).
    unsafe {
        ffi::rvs_skb_mark_xmit(skb.ptr);
        ffi::rvs_skb_notrack(skb.ptr);
        ffi::rvs_skb_forward_prepare(skb.ptr);
        ffi::rvs_fast_output(net.as_ptr(), skb.ptr, af == AddrFamily::Inet6);
    }
}

impl Skb<'_> {
    /// Whether conntrack saw the packet travel the reply direction of its
    /// entry (a reply to a flow this host opened, or an error about one);
    /// false when it is untracked or conntrack is not in use.
    pub(crate) fn ct_is_reply(&self) -> bool {
        let mut ctinfo = 0;
        // SAFETY: valid skb (invariant); `ctinfo` is a local.
        let ct = unsafe { ffi::rvs_ct_get(self.ptr, &mut ctinfo) };
        !ct.is_null() && ctinfo >= ffi::IP_CT_IS_REPLY
    }

    /// Makes the packet's conntrack entry, if it is new and this is its
    /// original direction, expect replies from `addr:port` (a NAT real
    /// server, 16-byte address form) rather than from where the client
    /// sent it; any other packet is left alone.
    /// (IPVS's `ip_vs_update_conntrack`.)
    pub(crate) fn ct_reply_from(&mut self, addr: &[u8; 16], port: u16) {
        let mut ctinfo = 0;
        // SAFETY: valid skb (invariant); `ctinfo` is a local.
        let ct = unsafe { ffi::rvs_ct_get(self.ptr, &mut ctinfo) };
        if ct.is_null() || ctinfo >= ffi::IP_CT_IS_REPLY {
            return;
        }
        // SAFETY: the packet holds a reference on its entry, so `ct` stays
        // valid while we hold the packet. The status bits are set
        // atomically elsewhere: one whole-word load (as test_bit).
        let status = unsafe { ptr::read_volatile(ptr::addr_of!((*ct).status)) } as u64;
        let done = (1u64 << ffi::IPS_CONFIRMED_BIT) | (1u64 << ffi::IPS_DYING_BIT);
        if status & done != 0 {
            return;
        }
        // SAFETY: an unconfirmed entry is in no hash table: only the CPU
        // handling its first packet (this one) can reach it, so its
        // tuples are stable to read; the copy is ours.
        let mut reply = unsafe { (*ct).tuplehash[ffi::IP_CT_DIR_REPLY as usize].tuple };
        reply.src.u3.in6 = in6(addr);
        if reply.dst.protonum != IPPROTO_ICMP && reply.dst.protonum != IPPROTO_ICMPV6 {
            reply.src.u.all = port.to_be();
        }
        // SAFETY: `ct` is valid (above) and unconfirmed, as the call
        // requires; `reply` is read during the call.
        unsafe { ffi::rvs_ct_alter_reply(ct, &reply) };
    }

    /// After encapsulation of a tracked packet: confirms its conntrack
    /// entry (the inner connection's) and detaches it, so the outer packet
    /// is tracked on its own and NAT rules rewrite the outer headers, not
    /// bytes of the inner packet at the outer transport offset. `false`:
    /// the confirmation failed and the packet must be dropped.
    pub(crate) fn ct_confirm_detach(&mut self) -> bool {
        // SAFETY: valid skb (invariant); owned by this hook call.
        unsafe { ffi::rvs_ct_confirm_detach(self.ptr) == ffi::NF_ACCEPT as i32 }
    }
}

/// Sends ICMP "fragmentation needed" with `mtu` back to the packet's source.
pub(crate) fn icmp_frag_needed(skb: &mut Skb<'_>, mtu: u32) {
    icmp_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, mtu.to_be_bytes());
}

/// Sends an ICMP error of `icmp_type`/`code` about the packet at the
/// network header to its source; `info` is the header's last 4 bytes, in
/// wire order.
pub(crate) fn icmp_send(skb: &mut Skb<'_>, icmp_type: u8, code: u8, info: [u8; 4]) {
    // SAFETY: valid skb with its input route still attached and its IPv4
    // header at the network header (`icmp_send` checks the rest).
    unsafe { ffi::rvs_icmp_send(skb.ptr, icmp_type, code, u32::from_ne_bytes(info)) };
}

/// Tells the packet's source that it does not fit a path of `mtu`: ICMP
/// "fragmentation needed" for IPv4, ICMPv6 "packet too big" for IPv6.
pub(crate) fn icmp_too_big(net: &Net, skb: &mut Skb<'_>, af: AddrFamily, mtu: u32) {
    match af {
        AddrFamily::Inet => icmp_frag_needed(skb, mtu),
        AddrFamily::Inet6 => icmp6_send(net, skb, ICMPV6_PKT_TOOBIG, 0, mtu),
    }
}

/// Tells the packet's source that its TTL (IPv6: hop limit) ran out here:
/// ICMP "time exceeded in transit", as a router does.
pub(crate) fn icmp_time_exceeded(net: &Net, skb: &mut Skb<'_>, af: AddrFamily) {
    match af {
        AddrFamily::Inet => icmp_send(skb, ICMP_TIME_EXCEEDED, ICMP_EXC_TTL, [0; 4]),
        AddrFamily::Inet6 => icmp6_send(net, skb, ICMPV6_TIME_EXCEED, ICMPV6_EXC_HOPLIMIT, 0),
    }
}

/// Tells the packet's source that nothing serves its port: ICMP (ICMPv6)
/// "port unreachable", which a client's connect() or send() reports at once
/// as ECONNREFUSED instead of retrying into silence.
pub(crate) fn icmp_port_unreachable(net: &Net, skb: &mut Skb<'_>, af: AddrFamily) {
    match af {
        AddrFamily::Inet => icmp_send(skb, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, [0; 4]),
        AddrFamily::Inet6 => icmp6_send(net, skb, ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH, 0),
    }
}

/// Sends an ICMPv6 error of `icmp_type`/`code` with `info` (host order)
/// about the packet at the network header to its source.
fn icmp6_send(net: &Net, skb: &mut Skb<'_>, icmp_type: u8, code: u8, info: u32) {
    // SAFETY: valid skb with its IPv6 header at the network header; `net`
    // is alive (the helper uses its loopback device for locally generated
    // packets without one).
    unsafe { ffi::rvs_icmp6_send(net.as_ptr(), skb.ptr, icmp_type, code, info) };
}

/// Makes room for `headroom` more bytes in front of the packet.
pub(crate) fn cow_head(skb: &mut Skb<'_>, headroom: u32) -> Result {
    // SAFETY: valid skb.
    if unsafe { ffi::rvs_skb_cow_head(skb.ptr, headroom) } != 0 {
        return Err(ENOMEM);
    }
    Ok(())
}

/// GSO types of encapsulated packets (`SKB_GSO_*`, for [`tunnel_prepare`]).
pub(crate) mod gso {
    use super::ffi;
    /// An IPv4 outer header.
    pub(crate) const IPXIP4: u32 = ffi::SKB_GSO_IPXIP4;
    /// An IPv6 outer header.
    pub(crate) const IPXIP6: u32 = ffi::SKB_GSO_IPXIP6;
    /// A UDP tunnel header without checksum.
    pub(crate) const UDP_TUNNEL: u32 = ffi::SKB_GSO_UDP_TUNNEL;
    /// A UDP tunnel header with checksum.
    pub(crate) const UDP_TUNNEL_CSUM: u32 = ffi::SKB_GSO_UDP_TUNNEL_CSUM;
    /// Remote checksum offload.
    pub(crate) const TUNNEL_REMCSUM: u32 = ffi::SKB_GSO_TUNNEL_REMCSUM;
    /// A GRE header without checksum.
    pub(crate) const GRE: u32 = ffi::SKB_GSO_GRE;
    /// A GRE header with checksum.
    pub(crate) const GRE_CSUM: u32 = ffi::SKB_GSO_GRE_CSUM;
}

/// Readies the packet for tunnel headers in front of it: GSO packets are
/// marked for segmentation as `gso_type` (SKB_GSO_* bits), and the inner
/// headers and protocol (IPPROTO_IPIP or IPPROTO_IPV6) are recorded.
pub(crate) fn tunnel_prepare(skb: &mut Skb<'_>, gso_type: u32, inner_proto: u8) -> Result {
    let gso_type = i32::try_from(gso_type).map_err(|_| EINVAL)?;
    // SAFETY: valid skb.
    if unsafe { ffi::rvs_tunnel_prepare(skb.ptr, gso_type, inner_proto) } != 0 {
        return Err(ENOMEM);
    }
    Ok(())
}

/// Prepends `hdr` (after [`cow_head`] reserved room for it).
fn push(skb: &mut Skb<'_>, hdr: &[u8]) -> Result {
    let len = u32::try_from(hdr.len()).map_err(|_| EINVAL)?;
    // SAFETY: valid skb. `skb_push` only panics when the headroom is short;
    // check it first.
    if unsafe { ffi::rvs_skb_headroom(skb.ptr) } < len {
        return Err(ENOMEM);
    }
    // SAFETY: there are `len` bytes of private headroom (`cow_head`), so
    // `skb_push` returns a pointer to `len` writable bytes.
    unsafe {
        let p = ffi::skb_push(skb.ptr, len).cast::<u8>();
        core::ptr::copy_nonoverlapping(hdr.as_ptr(), p, hdr.len());
    }
    Ok(())
}

/// Inserts `bytes` (at most 20) into the packet's headers at offset `at`
/// from the network header: the first `at` bytes move `bytes.len()`
/// towards the head, so what follows them stays in place (a TCP option
/// after the options a header has). The network header starts at the
/// new front, the transport header at `l4_off`, and a CHECKSUM_PARTIAL
/// packet's checksum start (the transport header) moves with it. Lengths
/// and checksum values are the caller's to fix. Not for GSO packets.
pub(crate) fn insert_header_bytes(
    skb: &mut Skb<'_>,
    at: usize,
    l4_off: usize,
    bytes: &[u8],
) -> Result {
    let n = bytes.len();
    let zeros = [0u8; 20];
    let gap = zeros.get(..n).ok_or(EINVAL)?;
    if skb.is_gso() || l4_off > at {
        return Err(EINVAL);
    }
    let off = i32::try_from(l4_off).map_err(|_| EINVAL)?;
    let delta = -i32::try_from(n).map_err(|_| EINVAL)?;
    cow_head(skb, u32::try_from(n).map_err(|_| EINVAL)?)?;
    skb.header_mut(at).ok_or(ENOMEM)?;
    push(skb, gap)?;
    let h = skb.header_mut(at + n).ok_or(ENOMEM)?;
    h.copy_within(n..n + at, 0);
    h.get_mut(at..at + n).ok_or(EINVAL)?.copy_from_slice(bytes);
    // SAFETY: valid skb whose data starts at the moved network header,
    // with its transport header `l4_off` bytes in, inside the linear head;
    // a partial checksum starts at that header, which moved by `delta`.
    unsafe {
        ffi::rvs_skb_reset_network_header(skb.ptr);
        ffi::rvs_skb_set_transport_header(skb.ptr, off);
        ffi::rvs_skb_move_csum_start(skb.ptr, delta);
    }
    Ok(())
}

/// Prepends a tunnel header (UDP+GUE or GRE) as the transport header.
pub(crate) fn push_tunnel_header(skb: &mut Skb<'_>, hdr: &[u8]) -> Result {
    push(skb, hdr)?;
    // SAFETY: valid skb whose data now starts at the tunnel header.
    unsafe { ffi::rvs_skb_reset_transport_header(skb.ptr) };
    Ok(())
}

/// Prepends the outer IP header `hdr` (20 bytes for IPv4, 40 for IPv6,
/// family `outer`) as the new network header, clears the inner packet's
/// control block and finishes the outer header (IPv4: ID and checksum).
pub(crate) fn push_outer_ip_header(
    net: &Net,
    skb: &mut Skb<'_>,
    outer: AddrFamily,
    hdr: &[u8],
) -> Result {
    push(skb, hdr)?;
    // SAFETY: valid skb whose data now starts at the outer IP header; its
    // control block belongs to us until the output path reads it.
    unsafe {
        ffi::rvs_skb_reset_network_header(skb.ptr);
        ffi::rvs_skb_cb_clear(skb.ptr);
        ffi::rvs_tunnel_finish(net.as_ptr(), skb.ptr, outer == AddrFamily::Inet6);
    }
    Ok(())
}

/// The UDP source port for a tunnel of this packet's flow.
pub(crate) fn udp_flow_src_port(net: &Net, skb: &mut Skb<'_>) -> u16 {
    // SAFETY: valid skb and namespace.
    unsafe { ffi::rvs_udp_flow_src_port(net.as_ptr(), skb.ptr) }
}

/// Fills the UDP checksum of the tunnel header just pushed (0 = none when
/// `!csum`), for every offload mode (`udp_set_csum`, `udp6_set_csum`),
/// with the pseudo-header of the outer family `outer`. A zero checksum
/// over IPv6 is what IPVS sends too; the receiving fou socket accepts it
/// (RFC 6935 tunnels).
pub(crate) fn udp_tunnel_csum(
    skb: &mut Skb<'_>,
    csum: bool,
    outer: AddrFamily,
    saddr: &[u8; 16],
    daddr: &[u8; 16],
) {
    let len = i32::try_from(skb.len()).unwrap_or(i32::MAX);
    match outer {
        AddrFamily::Inet => {
            let (s, d) = (addr4(saddr), addr4(daddr));
            // SAFETY: valid skb whose transport header is the UDP header
            // at `data`.
            unsafe {
                ffi::udp_set_csum(
                    !csum,
                    skb.ptr,
                    u32::from_ne_bytes(s),
                    u32::from_ne_bytes(d),
                    len,
                )
            };
        }
        AddrFamily::Inet6 => {
            let (s, d) = (in6(saddr), in6(daddr));
            // SAFETY: valid skb whose transport header is the UDP header
            // at `data`; the addresses are live locals, read only during
            // the call.
            unsafe { ffi::udp6_set_csum(!csum, skb.ptr, &s, &d, len) };
        }
    }
}

/// Pushes a GRE header (checksummed if `csum`, protocol IPv6 or IPv4 after
/// `inner_v6`) as the transport header, with the kernel's own
/// `gre_build_header` (after [`cow_head`]). GRE's checksum covers only
/// itself and its payload, so the outer family does not matter.
pub(crate) fn push_gre_header(skb: &mut Skb<'_>, csum: bool, inner_v6: bool, len: usize) -> Result {
    let len = u32::try_from(len).map_err(|_| EINVAL)?;
    // SAFETY: valid skb. The header is pushed into the headroom, checked
    // first so `skb_push` cannot run out of it.
    if unsafe { ffi::rvs_skb_headroom(skb.ptr) } < len {
        return Err(ENOMEM);
    }
    // SAFETY: valid skb with at least `len` (the GRE header length) bytes
    // of private headroom.
    unsafe { ffi::rvs_gre_push(skb.ptr, csum, inner_v6) };
    Ok(())
}

/// A packet rvs built itself (a TCP reset it sends), owned by this value
/// until it is sent; freed if it never is.
///
/// # Invariants
///
/// `ptr` is a valid `sk_buff` that only this value references.
pub(crate) struct OwnedSkb {
    ptr: NonNull<ffi::sk_buff>,
}

impl OwnedSkb {
    /// A packet of family `af` holding the IP packet `data`, whose
    /// transport header starts at `l4_offset`; `None` without memory.
    pub(crate) fn build(af: AddrFamily, data: &[u8], l4_offset: usize) -> Option<Self> {
        let len = u32::try_from(data.len()).ok()?;
        let l4 = u32::try_from(l4_offset).ok().filter(|&o| o <= len)?;
        let v6 = af == AddrFamily::Inet6;
        // SAFETY: `data` is valid for `len` bytes, which are copied; the
        // new packet (or null) is ours.
        let skb = unsafe { ffi::rvs_skb_build(data.as_ptr().cast(), len, v6, l4) };
        // INVARIANT: a fresh packet nobody else references.
        NonNull::new(skb).map(|ptr| Self { ptr })
    }

    /// Lends the packet to `f` as a hook would lend it (`f` may rewrite
    /// and send it, saying so with [`Verdict::Stolen`]); freed unless
    /// `f` took it.
    pub(crate) fn send_with(self, f: impl FnOnce(Skb<'_>) -> Verdict) {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        // SAFETY: the packet is valid and ours alone (invariant), and
        // stays so for the call: `self` is gone, only the view touches it.
        let verdict = f(unsafe { Skb::from_raw(ptr) });
        if verdict != Verdict::Stolen {
            // SAFETY: not taken by `f`, so still ours, and not used again.
            unsafe { ffi::rvs_consume_skb(ptr) };
        }
    }
}

impl Drop for OwnedSkb {
    fn drop(&mut self) {
        // SAFETY: ours alone (invariant), freed once, here.
        unsafe { ffi::rvs_consume_skb(self.ptr.as_ptr()) };
    }
}
