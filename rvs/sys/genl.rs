// SPDX-License-Identifier: GPL-2.0

//! Generic netlink: a family registration and safe views of requests,
//! replies and dumps.
//!
//! C headers: [`include/net/genetlink.h`], [`include/net/netlink.h`]
//!
//! A [`Family`] registers a `struct genl_family` whose operations all route
//! to one [`Handler`]; handlers see a [`Request`] (doit) or a [`Dump`]
//! (dumpit) and never touch raw pointers. The family is namespace-aware
//! (`netnsok`): a request acts on the namespace of the socket it came
//! from. Every operation, reads included, requires CAP_NET_ADMIN over that
//! namespace, i.e. in the user namespace that owns it
//! (`GENL_UNS_ADMIN_PERM`, as rtnetlink and nftables): root of an
//! unprivileged user namespace manages the network namespaces it owns and
//! nothing else. (IPVS uses `GENL_ADMIN_PERM`, CAP_NET_ADMIN in the
//! initial user namespace, so containers cannot configure it at all; see
//! Documentation/privileges.md.)

use super::error::emsgsize;
use super::ffi;
use super::netns::Net;
use core::ffi::{c_int, CStr};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// One attribute of a request: its type and its payload bytes.
#[derive(Clone, Copy)]
pub(crate) struct Attr<'a> {
    /// The payload, without the 4-byte attribute header.
    pub(crate) payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// # Safety
    ///
    /// `nla` is null or points to an attribute that the netlink core has
    /// checked to lie within a message that stays alive for `'a`.
    unsafe fn from_raw(nla: *const ffi::nlattr) -> Option<Attr<'a>> {
        if nla.is_null() {
            return None;
        }
        // SAFETY: non-null and valid per the function's contract.
        let len = usize::from(unsafe { (*nla).nla_len });
        let payload_len = len.checked_sub(4)?;
        // SAFETY: the netlink core validated that `nla_len` bytes starting at
        // `nla` lie within the message (nla_ok), and the header is 4 bytes.
        let payload = unsafe { core::slice::from_raw_parts(nla.cast::<u8>().add(4), payload_len) };
        Some(Attr { payload })
    }
}

/// What the family's handler implements.
pub(crate) trait Handler {
    /// Handles a `doit` request (non-dump command).
    fn doit(cmd: u8, req: &Request<'_>) -> Result;
    /// Fills one round of a dump; returns `Ok(())` when the dump is complete
    /// or the message is full (the cursor says which).
    fn dumpit(cmd: u8, dump: &mut Dump<'_>) -> Result;
}

/// Static description of one command.
pub(crate) struct OpSpec {
    /// Command number.
    pub(crate) cmd: u8,
    /// Whether it has a doit handler.
    pub(crate) doit: bool,
    /// Whether it has a dumpit handler.
    pub(crate) dumpit: bool,
}

/// Static description of the family.
pub(crate) struct FamilySpec {
    /// Family name, shorter than `GENL_NAMSIZ` bytes (the NUL is added).
    pub(crate) name: &'static str,
    /// Family version.
    pub(crate) version: u32,
    /// Top-level attribute types (index = attribute number), as `NLA_*`
    /// ([`NLA_UNSPEC`], [`NLA_U32`], [`NLA_NESTED`]).
    pub(crate) policy: &'static [u8],
    /// The commands.
    pub(crate) ops: &'static [OpSpec],
    /// Commands numbered below this are parsed liberally, as the kernel's
    /// older families are (IPVS's): attributes past the policy ignored,
    /// nested attributes accepted without `NLA_F_NESTED`, trailing bytes
    /// allowed. 0: every command is validated strictly.
    pub(crate) liberal_below: u8,
    /// The family's multicast group (its name, and the slot through which
    /// handlers of any family reach it), if it has one. Subscribing needs
    /// CAP_NET_ADMIN in the namespace's user namespace.
    pub(crate) events: Option<(&'static CStr, &'static EventGroup)>,
}

/// A family's multicast group, reachable from the handlers of any family
/// (a change made through "IPVS" is announced on "RVS"'s group).
///
/// # Invariants
///
/// `family` is null or points to a registered family whose group 0 this
/// is; it is cleared before that family is unregistered, and
/// unregistering waits for every running genl handler (`cb_lock`), so a
/// handler that loaded the pointer is done with it before the family's
/// storage is freed.
pub(crate) struct EventGroup {
    family: AtomicPtr<ffi::genl_family>,
}

impl EventGroup {
    /// A group not registered yet.
    pub(crate) const fn new() -> Self {
        // INVARIANT: null.
        Self {
            family: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Announces `req` on the group: a message with its command and an
    /// exact copy of its attributes, to the listeners of its namespace.
    /// Costs one check when nobody listens. A listener that cannot keep
    /// up loses messages (netlink's ENOBUFS on its socket); so does every
    /// listener when the request is too big to copy (over
    /// `RVS_GENL_ECHO_MAX`, 1 MiB: a large APPLY) or memory is short.
    pub(crate) fn echo(&self, req: &Request<'_>) {
        let fam = self.family.load(Ordering::Acquire);
        if fam.is_null() {
            return;
        }
        // SAFETY: `fam` is registered and stays so while this genl handler
        // runs (invariant); `info` is the handler's request (Request's
        // invariant). The helper only reads them.
        let _ = unsafe { ffi::rvs_genl_echo(fam, req.info) };
    }
}

/// Policy type: any payload (`NLA_UNSPEC`).
pub(crate) const NLA_UNSPEC: u8 = ffi::NLA_UNSPEC as u8;
/// Policy type: a `u32` (`NLA_U32`).
pub(crate) const NLA_U32: u8 = ffi::NLA_U32 as u8;
/// Policy type: nested attributes (`NLA_NESTED`).
pub(crate) const NLA_NESTED: u8 = ffi::NLA_NESTED as u8;

const MAX_OPS: usize = 32;
/// Size of the generic netlink header (`struct genlmsghdr`).
const GENL_HDRLEN: usize = 4;
/// Size of a doit reply buffer: one service or destination fits easily.
const REPLY_SIZE: usize = 3072;
const MAX_ATTRS: usize = 32;

/// The C structures of a registered family, at a stable address.
struct FamilyStorage {
    family: ffi::genl_family,
    ops: [ffi::genl_small_ops; MAX_OPS],
    policy: [ffi::nla_policy; MAX_ATTRS],
    mcgrps: [ffi::genl_multicast_group; 1],
}

/// A registered generic netlink family; unregistered on drop.
///
/// # Invariants
///
/// `storage.family` (with the ops and policy it points to, in the same
/// pinned allocation) is registered with `genl_register_family` until
/// `Drop`; its ops call `H`'s trampolines.
pub(crate) struct Family<H: Handler> {
    storage: Pin<KBox<FamilyStorage>>,
    /// The slot this family's group is published in, cleared first on drop.
    events: Option<&'static EventGroup>,
    _handler: PhantomData<H>,
}

// SAFETY: after registration the storage is only read (by the netlink core);
// the family is unregistered in `drop` before the storage is freed.
unsafe impl<H: Handler> Send for Family<H> {}
// SAFETY: see `Send`; `&Family` exposes nothing mutable.
unsafe impl<H: Handler> Sync for Family<H> {}

impl<H: Handler> Family<H> {
    /// Registers the family described by `spec`, owned by `module`.
    pub(crate) fn register(spec: &FamilySpec, module: &'static ThisModule) -> Result<Self> {
        if spec.ops.len() > MAX_OPS
            || spec.policy.len() > MAX_ATTRS
            || spec.policy.is_empty()
            || spec.name.len() >= ffi::GENL_NAMSIZ as usize
        {
            return Err(EINVAL);
        }
        let mut storage = KBox::new(
            FamilyStorage {
                family: ffi::genl_family::default(),
                ops: [ffi::genl_small_ops::default(); MAX_OPS],
                policy: [ffi::nla_policy::default(); MAX_ATTRS],
                mcgrps: [ffi::genl_multicast_group::default(); 1],
            },
            GFP_KERNEL,
        )?;
        for (slot, kind) in storage.policy.iter_mut().zip(spec.policy) {
            slot.type_ = *kind;
        }
        for (slot, op) in storage.ops.iter_mut().zip(spec.ops) {
            slot.cmd = op.cmd;
            slot.flags = ffi::GENL_UNS_ADMIN_PERM as u8;
            if op.cmd < spec.liberal_below {
                slot.validate =
                    (ffi::GENL_DONT_VALIDATE_STRICT | ffi::GENL_DONT_VALIDATE_DUMP_STRICT) as u8;
            }
            if op.doit {
                slot.doit = Some(doit_trampoline::<H>);
            }
            if op.dumpit {
                slot.dumpit = Some(dumpit_trampoline::<H>);
            }
        }
        let f = &mut storage.family;
        // The array is zeroed: the name stays NUL-terminated.
        for (dst, src) in f.name.iter_mut().zip(spec.name.bytes()) {
            *dst = src as core::ffi::c_char;
        }
        f.version = spec.version;
        f.maxattr = (spec.policy.len() - 1) as u32;
        f.set_netnsok(1);
        f.n_small_ops = spec.ops.len() as u8;
        // Strict validation from `liberal_below` on: unknown attributes and
        // trailing bytes are rejected by the netlink core.
        f.resv_start_op = spec.liberal_below;
        f.module = module.as_ptr().cast();
        if let Some((name, _)) = spec.events {
            let [g] = &mut storage.mcgrps;
            let bytes = name.to_bytes();
            if bytes.len() >= g.name.len() {
                return Err(EINVAL);
            }
            for (dst, src) in g.name.iter_mut().zip(bytes) {
                *dst = *src as core::ffi::c_char;
            }
            g.flags = ffi::RVS_GENL_MCAST_CAP_NET_ADMIN as u8;
            let mcgrps = storage.mcgrps.as_ptr();
            storage.family.mcgrps = mcgrps;
            storage.family.n_mcgrps = 1;
        }
        let policy = storage.policy.as_ptr();
        let ops = storage.ops.as_ptr();
        storage.family.policy = policy;
        storage.family.small_ops = ops;
        let storage: Pin<KBox<FamilyStorage>> = storage.into();
        // SAFETY: the family, its ops and policy live in a pinned allocation
        // that outlives the registration (unregistered in `drop` first).
        let ret = unsafe { ffi::genl_register_family(&storage.family as *const _ as *mut _) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        if let Some((_, group)) = spec.events {
            // INVARIANT (EventGroup): registered, with the group as its 0.
            group.family.store(
                (&storage.family as *const ffi::genl_family).cast_mut(),
                Ordering::Release,
            );
        }
        // INVARIANT: registered just above, with `H`'s trampolines.
        Ok(Self {
            storage,
            events: spec.events.map(|(_, g)| g),
            _handler: PhantomData,
        })
    }
}

impl<H: Handler> Drop for Family<H> {
    fn drop(&mut self) {
        if let Some(g) = self.events {
            // INVARIANT (EventGroup): cleared before unregistering, which
            // waits for the handlers that may have loaded it.
            g.family.store(core::ptr::null_mut(), Ordering::Release);
        }
        // SAFETY: registered in `register` (invariant); this waits for
        // running handlers and dumps (the netlink core holds the family's
        // locks), so the storage is unused once it returns.
        unsafe { ffi::genl_unregister_family(&self.storage.family as *const _ as *mut _) };
    }
}

/// Records an extended-ack message (and optionally the offending attribute)
/// and returns `err`, so handlers can write `return Err(req.fail(...))`.
///
/// # Safety
///
/// `extack` is null or valid for writes for the duration of the call.
unsafe fn set_extack(extack: *mut ffi::netlink_ext_ack, msg: &'static CStr) {
    if !extack.is_null() {
        // SAFETY: non-null and valid per the contract; `msg` is 'static, as
        // the netlink core reads it after the handler returns.
        unsafe { (*extack)._msg = msg.as_ptr() };
    }
}

/// A doit request.
///
/// # Invariants
///
/// `info` is the valid `genl_info` of a request whose doit handler is
/// running for `'a` (made only by `doit_trampoline`); its attributes were
/// parsed and validated by the netlink core against the family's policy.
pub(crate) struct Request<'a> {
    info: *mut ffi::genl_info,
    _p: PhantomData<&'a ffi::genl_info>,
}

impl<'a> Request<'a> {
    /// The namespace the request came from.
    pub(crate) fn net(&self) -> &'a Net {
        // SAFETY: `info` is valid during the handler (type invariant), and its
        // namespace is held by the requesting socket.
        unsafe { Net::from_raw(ffi::rvs_genl_info_net(self.info)) }
    }

    /// Top-level attribute `kind`, already checked against the policy.
    pub(crate) fn attr(&self, kind: u16) -> Option<Attr<'a>> {
        let kind = u32::from(kind);
        // SAFETY: `info` and its family are valid during the handler
        // (invariant).
        let (attrs, maxattr) = unsafe { ((*self.info).attrs, (*(*self.info).family).maxattr) };
        if attrs.is_null() || kind > maxattr {
            return None;
        }
        // SAFETY: the genl core sized `attrs` for `maxattr + 1` entries, and `kind <= maxattr`; the
        // attributes were validated by the netlink core and live as long as the request.
        unsafe { Attr::from_raw(*attrs.add(kind as usize)) }
    }

    /// Every top-level attribute of the request, as the bytes of its
    /// attribute stream (a command that repeats an attribute reads them
    /// all here; [`Self::attr`] gives only the last).
    pub(crate) fn attr_stream(&self) -> &'a [u8] {
        // SAFETY: `info` is valid during the handler (invariant); its
        // headers point into the request's linear data.
        let (nlh, genlh) = unsafe { ((*self.info).nlhdr, (*self.info).genlhdr) };
        if nlh.is_null() || genlh.is_null() {
            return &[];
        }
        // SAFETY: `nlh` is the request's header, valid for the handler.
        let total = unsafe { (*nlh).nlmsg_len } as usize;
        let start = genlh.cast::<u8>().wrapping_add(GENL_HDRLEN);
        let before = (start as usize).wrapping_sub(nlh as usize);
        let Some(len) = total.checked_sub(before) else {
            return &[];
        };
        // SAFETY: the netlink core checked that `nlmsg_len` bytes from
        // `nlh` lie in the request, and the genl core that the attributes
        // start `GENL_HDRLEN` bytes past the genl header (the family has
        // no header of its own) and parsed them up to the end; the bytes
        // live as long as the request ('a).
        unsafe { core::slice::from_raw_parts(start, len) }
    }

    /// Like [`Self::fail`], pointing the error's offset
    /// (`NLMSGERR_ATTR_OFFS`) at the attribute whose payload is `payload`,
    /// so the client can tell which one failed. `payload` must be an
    /// attribute's payload from [`Self::attr_stream`] (or nested in one);
    /// anything else sets the message only.
    pub(crate) fn fail_at(&self, err: Error, msg: &'static CStr, payload: &[u8]) -> Error {
        let stream = self.attr_stream();
        let (lo, hi) = (
            stream.as_ptr() as usize,
            stream.as_ptr() as usize + stream.len(),
        );
        let at = payload.as_ptr() as usize;
        // The attribute's header is the 4 bytes before its payload.
        if at >= lo + 4 && at <= hi {
            let nla = payload.as_ptr().wrapping_sub(4).cast::<ffi::nlattr>();
            // SAFETY: `info` is valid (invariant); `extack` is null or valid
            // for the call. `nla` lies within the request, which is all
            // netlink_ack checks before turning it into an offset.
            unsafe {
                let extack = (*self.info).extack;
                if !extack.is_null() {
                    (*extack).bad_attr = nla;
                }
            }
        }
        self.fail(err, msg)
    }

    /// Sets the extended-ack message and returns `err` for the caller to
    /// propagate.
    pub(crate) fn fail(&self, err: Error, msg: &'static CStr) -> Error {
        // SAFETY: `info` is valid (invariant); `extack` is null or valid for
        // the call.
        unsafe { set_extack((*self.info).extack, msg) };
        err
    }

    /// Starts a reply message of command `cmd`.
    pub(crate) fn reply(&self, cmd: u8) -> Result<Reply<'a>> {
        // SAFETY: plain allocation; a null result is handled.
        let skb = unsafe { ffi::rvs_genlmsg_new(REPLY_SIZE) };
        if skb.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: `skb` is a fresh message; `info` and its family are valid
        // (invariant).
        let hdr = unsafe { ffi::rvs_genlmsg_put_reply(skb, self.info, (*self.info).family, cmd) };
        if hdr.is_null() {
            // SAFETY: `skb` is ours and not sent.
            unsafe { ffi::rvs_nlmsg_free(skb) };
            return Err(emsgsize());
        }
        // INVARIANT: a fresh message with its header, owned by the reply;
        // `info` is valid for `'a`.
        Ok(Reply {
            skb,
            hdr,
            info: self.info,
            _p: PhantomData,
        })
    }
}

/// Attribute writer over a message being built (reply or dump entry):
/// the message's `sk_buff` itself, only ever handed out as `&Msg` (so it
/// cannot be moved or swapped), for as long as its owner keeps it.
///
/// # Invariants
///
/// A `&Msg` points to a netlink message under construction that stays
/// alive, and that only `Msg` methods write, for the reference's lifetime
/// (a reply's own skb, or a dump round's buffer).
#[repr(transparent)]
pub(crate) struct Msg(Opaque<ffi::sk_buff>);

impl Msg {
    /// # Safety
    ///
    /// `skb` is a message under construction that stays alive and is
    /// written only through the returned reference for `'m`.
    unsafe fn from_raw<'m>(skb: *mut ffi::sk_buff) -> &'m Msg {
        // SAFETY: `Msg` is a transparent wrapper of `sk_buff`; the caller
        // guarantees that the message lives for `'m`.
        unsafe { &*skb.cast::<Msg>() }
    }

    fn skb(&self) -> *mut ffi::sk_buff {
        self.0.get()
    }

    /// Appends attribute `kind` with raw payload `data`.
    pub(crate) fn put(&self, kind: u16, data: &[u8]) -> Result {
        let len = c_int::try_from(data.len()).map_err(|_| emsgsize())?;
        // SAFETY: the message is alive and written only through `self`
        // (invariant); `data` is valid for `len` bytes.
        let ret = unsafe { ffi::nla_put(self.skb(), kind as c_int, len, data.as_ptr().cast()) };
        if ret != 0 {
            return Err(emsgsize());
        }
        Ok(())
    }

    /// Appends a `u16` attribute in host order.
    pub(crate) fn put_u16(&self, kind: u16, v: u16) -> Result {
        self.put(kind, &v.to_ne_bytes())
    }

    /// Appends a `u16` attribute in network order.
    pub(crate) fn put_be16(&self, kind: u16, v: u16) -> Result {
        self.put(kind, &v.to_be_bytes())
    }

    /// Appends a `u32` attribute in host order.
    pub(crate) fn put_u32(&self, kind: u16, v: u32) -> Result {
        self.put(kind, &v.to_ne_bytes())
    }

    /// Appends a 64-bit attribute, aligned with pad attribute `pad`.
    pub(crate) fn put_u64(&self, kind: u16, v: u64, pad: u16) -> Result {
        let data = v.to_ne_bytes();
        // SAFETY: the message is alive and written only through `self`
        // (invariant); `data` is 8 valid bytes.
        let ret = unsafe {
            ffi::nla_put_64bit(
                self.skb(),
                kind as c_int,
                8,
                data.as_ptr().cast(),
                pad as c_int,
            )
        };
        if ret != 0 {
            return Err(emsgsize());
        }
        Ok(())
    }

    /// Appends a NUL-terminated string attribute.
    pub(crate) fn put_str(&self, kind: u16, s: &str) -> Result {
        let mut buf = [0u8; 64];
        let bytes = s.as_bytes();
        let dst = buf.get_mut(..bytes.len()).ok_or(emsgsize())?;
        dst.copy_from_slice(bytes);
        self.put(kind, buf.get(..bytes.len() + 1).ok_or(emsgsize())?)
    }

    /// Appends nested attribute `kind`, whose contents `fill` writes. If
    /// `fill` fails the nest is left open and the error returned: the
    /// caller then drops the whole message (a reply is freed, a dump entry
    /// cancelled).
    pub(crate) fn nested(&self, kind: u16, fill: impl FnOnce(&Msg) -> Result) -> Result {
        // SAFETY: the message is alive and written only through `self`
        // (invariant).
        let nla = unsafe { ffi::rvs_nla_nest_start(self.skb(), kind as c_int) };
        if nla.is_null() {
            return Err(emsgsize());
        }
        fill(self)?;
        // SAFETY: `nla` was opened on this same message just above, which
        // is still alive (`&self`).
        unsafe { ffi::rvs_nla_nest_end(self.skb(), nla) };
        Ok(())
    }
}

/// A reply to a doit request; freed unless sent.
///
/// # Invariants
///
/// `skb` is a message under construction owned by the reply until `send`
/// hands it to the netlink core, with its genetlink header `hdr`; `info`
/// is the request's, valid for `'a`.
pub(crate) struct Reply<'a> {
    skb: *mut ffi::sk_buff,
    hdr: *mut core::ffi::c_void,
    info: *mut ffi::genl_info,
    _p: PhantomData<&'a ffi::genl_info>,
}

impl Reply<'_> {
    /// The attribute writer.
    pub(crate) fn msg(&mut self) -> &Msg {
        // SAFETY: the reply owns the message (invariant), which it keeps
        // while borrowed, and writes it only through this reference.
        unsafe { Msg::from_raw(self.skb) }
    }

    /// Finishes and sends the reply.
    pub(crate) fn send(self) -> Result {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: the message is ours and complete; `info` is valid
        // (invariant). The reply call consumes the skb whatever it returns,
        // and `ManuallyDrop` keeps `Drop` from freeing it again.
        let ret = unsafe {
            ffi::rvs_genlmsg_end(this.skb, this.hdr);
            ffi::rvs_genlmsg_reply(this.skb, this.info)
        };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(())
    }
}

impl Drop for Reply<'_> {
    fn drop(&mut self) {
        // SAFETY: not sent (`send` skips this drop), so the skb is still
        // ours (invariant).
        unsafe { ffi::rvs_nlmsg_free(self.skb) };
    }
}

/// One round of a dump: a message buffer to fill and a resumable cursor.
///
/// # Invariants
///
/// `skb` and `cb` are the buffer and the valid callback of a dump round
/// that runs for `'a` (made only by `dumpit_trampoline`); the round's
/// buffer is written only through this value.
pub(crate) struct Dump<'a> {
    skb: *mut ffi::sk_buff,
    cb: *mut ffi::netlink_callback,
    _p: PhantomData<&'a ffi::netlink_callback>,
}

impl<'a> Dump<'a> {
    /// The namespace the dump runs in.
    pub(crate) fn net(&self) -> &'a Net {
        // SAFETY: `cb` and its request skb are valid for the round
        // (invariant); the requesting socket holds its namespace.
        unsafe { Net::from_raw(ffi::rvs_genl_dump_net(self.cb)) }
    }

    /// Cursor slot `i` (zero at the start of a dump).
    pub(crate) fn cursor(&self, i: usize) -> i64 {
        // SAFETY: `cb` is valid (invariant); `args` is the union's `long[6]`
        // view, which genl leaves to the dump's own use.
        let args = unsafe { &(*self.cb).__bindgen_anon_1.args };
        args.get(i).copied().unwrap_or(0)
    }

    /// Sets cursor slot `i`.
    pub(crate) fn set_cursor(&mut self, i: usize, v: i64) {
        // SAFETY: `cb` is valid and owned by this dump round (invariant).
        let args = unsafe { &mut (*self.cb).__bindgen_anon_1.args };
        if let Some(slot) = args.get_mut(i) {
            *slot = v as core::ffi::c_long;
        }
    }

    /// Top-level attribute `kind` of the dump request.
    pub(crate) fn attr(&self, kind: u16, maxattr: u16) -> Option<Attr<'a>> {
        if kind > maxattr {
            return None;
        }
        // SAFETY: `cb` is valid (invariant); the genl core parsed the request into an
        // array of `maxattr + 1` entries (or null without attributes).
        let attrs = unsafe { ffi::rvs_genl_dump_attrs(self.cb) };
        if attrs.is_null() {
            return None;
        }
        // SAFETY: `kind <= maxattr`, within the array; attributes were
        // validated by the netlink core and live as long as the request.
        unsafe { Attr::from_raw(*attrs.add(kind as usize)) }
    }

    /// Sets the extended-ack message of the dump and returns `err`.
    pub(crate) fn fail(&self, err: Error, msg: &'static CStr) -> Error {
        // SAFETY: `cb` is valid (invariant); `extack` is null or valid for the
        // round.
        unsafe { set_extack((*self.cb).extack, msg) };
        err
    }

    /// Adds one message of command `cmd` and lets `fill` write its
    /// attributes. Returns `Ok(false)` (and adds nothing) if the buffer is
    /// full, so the caller stops and resumes from its cursor next round.
    pub(crate) fn entry(&mut self, cmd: u8, fill: impl FnOnce(&Msg) -> Result) -> Result<bool> {
        // SAFETY: `cb` is valid (invariant); its family is the registered one.
        let family = unsafe { ffi::rvs_genl_dump_family(self.cb) };
        // SAFETY: `skb` is this round's buffer and `cb` is valid (invariant).
        let hdr = unsafe { ffi::rvs_genlmsg_put_dump(self.skb, self.cb, family, cmd) };
        if hdr.is_null() {
            return Ok(false);
        }
        // SAFETY: this round's buffer, alive for the round and written only
        // through this reference while it lives (`&mut self`).
        let msg = unsafe { Msg::from_raw(self.skb) };
        match fill(msg) {
            Ok(()) => {
                // SAFETY: `hdr` was put on `skb` above.
                unsafe { ffi::rvs_genlmsg_end(self.skb, hdr) };
                Ok(true)
            }
            Err(e) if e == emsgsize() => {
                // SAFETY: `hdr` was put on `skb` above; drop the partial entry.
                unsafe { ffi::rvs_genlmsg_cancel(self.skb, hdr) };
                Ok(false)
            }
            Err(e) => {
                // SAFETY: as above.
                unsafe { ffi::rvs_genlmsg_cancel(self.skb, hdr) };
                Err(e)
            }
        }
    }

    /// Bytes written this round (0 ends the dump).
    fn written(&self) -> u32 {
        // SAFETY: `skb` is this round's valid buffer (invariant).
        unsafe { ffi::rvs_skb_len(self.skb) }
    }
}

/// # Safety
///
/// Called by the genl core only, with a valid request skb and `info`.
unsafe extern "C" fn doit_trampoline<H: Handler>(
    _skb: *mut ffi::sk_buff,
    info: *mut ffi::genl_info,
) -> c_int {
    // SAFETY: the genl core passes a valid `info` whose header was parsed.
    let cmd = unsafe { (*(*info).genlhdr).cmd };
    // INVARIANT: `info` is valid while the handler runs.
    let req = Request {
        info,
        _p: PhantomData,
    };
    match H::doit(cmd, &req) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the netlink core only, with a valid buffer and callback.
unsafe extern "C" fn dumpit_trampoline<H: Handler>(
    skb: *mut ffi::sk_buff,
    cb: *mut ffi::netlink_callback,
) -> c_int {
    // SAFETY: the netlink core passes a valid callback with the request.
    let cmd = unsafe { ffi::rvs_genl_dump_cmd(cb) };
    // INVARIANT: the round's buffer and callback, valid while it runs.
    let mut dump = Dump {
        skb,
        cb,
        _p: PhantomData,
    };
    match H::dumpit(cmd, &mut dump) {
        Ok(()) => dump.written() as c_int,
        Err(e) => e.to_errno(),
    }
}
