//! A small generic netlink client for the "RVS" family.
//!
//! neli provides the socket (`NlSocket`: socket, bind, send, recv and the
//! NETLINK_EXT_ACK option); the message framing is done here, byte by byte,
//! so that requests are exactly what `msg` builds and extended-ack error
//! messages are read whatever flags the kernel sets (NLM_F_CAPPED or not).
//!
//! [`Client::monitor`] turns a connection into a listener of one of the
//! family's multicast groups (`--monitor`, the "events" group).

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use neli::consts::socket::{Msg, NlFamily};
use neli::socket::NlSocket;
use neli::utils::Groups;

use crate::error::NlError;
use crate::msg::{self, AttrWriter};
use crate::uapi;

pub const NLM_F_REQUEST: u16 = 0x1;
pub const NLM_F_MULTI: u16 = 0x2;
pub const NLM_F_ACK: u16 = 0x4;
pub const NLM_F_DUMP: u16 = 0x300;
/// In NLMSG_ERROR: the request's payload was left out.
pub const NLM_F_CAPPED: u16 = 0x100;
/// In NLMSG_ERROR / NLMSG_DONE: extended-ack TLVs follow.
pub const NLM_F_ACK_TLVS: u16 = 0x200;

pub const NLMSG_NOOP: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;

pub const NLMSGERR_ATTR_MSG: u16 = 1;
/// `NLMSGERR_ATTR_OFFS`: u32 offset of the attribute at fault.
pub const NLMSGERR_ATTR_OFFS: u16 = 2;

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_DELFAMILY: u8 = 2;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;
const CTRL_VERSION: u8 = 1;
/// nlctrl's own family name, and its group announcing families
/// registered and unregistered.
const CTRL_NAME: &str = "nlctrl";
const CTRL_MCGRP_NOTIFY: &str = "notify";

const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;
const RECV_BUF: usize = 64 * 1024;
const RECV_TIMEOUT_SECS: libc::time_t = 10;
/// The receive buffer a monitor asks for (the kernel caps it at
/// net.core.rmem_max): room for bursts of events, such as `-R` of a
/// large table, before any is lost.
const MONITOR_RCVBUF: usize = 4 << 20;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Encodes a generic netlink request: nlmsghdr, genlmsghdr, attributes.
pub fn encode_request(
    family: u16,
    flags: u16,
    seq: u32,
    cmd: u8,
    version: u8,
    attrs: &[u8],
) -> Vec<u8> {
    let len = NLMSG_HDRLEN + GENL_HDRLEN + attrs.len();
    let mut v = Vec::with_capacity(align4(len));
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v.extend_from_slice(&family.to_ne_bytes());
    v.extend_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
    v.extend_from_slice(&seq.to_ne_bytes());
    v.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills it in
    v.extend_from_slice(&[cmd, version, 0, 0]);
    v.extend_from_slice(attrs);
    v.resize(align4(len), 0);
    v
}

/// One message received from the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A generic netlink message: its family (the netlink message type),
    /// command and attribute bytes.
    Data {
        seq: u32,
        family: u16,
        cmd: u8,
        attrs: Vec<u8>,
    },
    /// NLMSG_ERROR with error 0.
    Ack {
        seq: u32,
    },
    /// NLMSG_ERROR with an error (positive errno), extended-ack message
    /// and offset (`NLMSGERR_ATTR_OFFS`: of the attribute at fault, from
    /// the start of the request).
    Error {
        seq: u32,
        errno: i32,
        message: Option<String>,
        offset: Option<u32>,
    },
    /// NLMSG_DONE ending a dump; a non-zero errno means the dump failed.
    Done {
        seq: u32,
        errno: i32,
        message: Option<String>,
    },
    /// NLMSG_NOOP and anything else to skip.
    Skip {
        seq: u32,
    },
    Overrun {
        seq: u32,
    },
}

fn ne_u16(b: &[u8]) -> u16 {
    u16::from_ne_bytes([b[0], b[1]])
}

fn ne_u32(b: &[u8]) -> u32 {
    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

fn ext_ack_message(tlvs: &[u8]) -> Result<Option<String>, NlError> {
    match msg::find_attr(tlvs, NLMSGERR_ATTR_MSG)? {
        Some(p) => {
            let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
            let s = String::from_utf8_lossy(&p[..end]).trim().to_string();
            Ok(if s.is_empty() { None } else { Some(s) })
        }
        None => Ok(None),
    }
}

/// The multicast groups named in a CTRL_CMD_GETFAMILY reply, as (name,
/// id): the nests of `CTRL_ATTR_MCAST_GROUPS`, each with a
/// `CTRL_ATTR_MCAST_GRP_NAME` and a `CTRL_ATTR_MCAST_GRP_ID`. Entries
/// without either are skipped.
pub fn mcast_groups(attrs: &[u8]) -> Result<Vec<(String, u32)>, msg::ParseError> {
    let mut out = Vec::new();
    let Some(groups) = msg::find_attr(attrs, CTRL_ATTR_MCAST_GROUPS)? else {
        return Ok(out);
    };
    for g in msg::Attrs::new(groups) {
        let (_, g) = g?;
        let name = msg::find_attr(g, CTRL_ATTR_MCAST_GRP_NAME)?;
        let id = msg::find_attr(g, CTRL_ATTR_MCAST_GRP_ID)?;
        if let (Some(name), Some(&[a, b, c, d])) = (name, id) {
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            out.push((
                String::from_utf8_lossy(&name[..end]).into_owned(),
                u32::from_ne_bytes([a, b, c, d]),
            ));
        }
    }
    Ok(out)
}

/// Decodes all netlink messages in one received datagram.
pub fn decode(mut buf: &[u8]) -> Result<Vec<Incoming>, NlError> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        let len = ne_u32(&buf[0..4]) as usize;
        let ty = ne_u16(&buf[4..6]);
        let flags = ne_u16(&buf[6..8]);
        let seq = ne_u32(&buf[8..12]);
        if len < NLMSG_HDRLEN || len > buf.len() {
            return Err(NlError::Protocol(format!(
                "netlink message length {len} outside the {} bytes received",
                buf.len()
            )));
        }
        let payload = &buf[NLMSG_HDRLEN..len];
        out.push(match ty {
            NLMSG_ERROR => decode_error(seq, flags, payload)?,
            NLMSG_DONE => {
                let errno = if payload.len() >= 4 {
                    -(ne_u32(payload) as i32)
                } else {
                    0
                };
                let message = if flags & NLM_F_ACK_TLVS != 0 && payload.len() > 4 {
                    ext_ack_message(&payload[4..])?
                } else {
                    None
                };
                Incoming::Done {
                    seq,
                    errno,
                    message,
                }
            }
            NLMSG_OVERRUN => Incoming::Overrun { seq },
            NLMSG_NOOP => Incoming::Skip { seq },
            _ if payload.len() >= GENL_HDRLEN => Incoming::Data {
                seq,
                family: ty,
                cmd: payload[0],
                attrs: payload[GENL_HDRLEN..].to_vec(),
            },
            _ => Incoming::Skip { seq },
        });
        buf = &buf[align4(len).min(buf.len())..];
    }
    Ok(out)
}

fn decode_error(seq: u32, flags: u16, payload: &[u8]) -> Result<Incoming, NlError> {
    if payload.len() < 4 {
        return Err(NlError::Protocol("truncated NLMSG_ERROR".into()));
    }
    let error = ne_u32(payload) as i32;
    if error == 0 {
        return Ok(Incoming::Ack { seq });
    }
    let mut message = None;
    let mut offset = None;
    if flags & NLM_F_ACK_TLVS != 0 {
        // The request's header, and its payload unless capped, come first.
        let mut off = 4;
        if payload.len() >= off + NLMSG_HDRLEN {
            let orig_len = ne_u32(&payload[off..off + 4]) as usize;
            off += if flags & NLM_F_CAPPED != 0 {
                NLMSG_HDRLEN
            } else {
                align4(orig_len.max(NLMSG_HDRLEN))
            };
            if off < payload.len() {
                message = ext_ack_message(&payload[off..])?;
                if let Some(&[a, b, c, d]) = msg::find_attr(&payload[off..], NLMSGERR_ATTR_OFFS)? {
                    offset = Some(u32::from_ne_bytes([a, b, c, d]));
                }
            }
        }
    }
    Ok(Incoming::Error {
        seq,
        errno: -error,
        message,
        offset,
    })
}

/// A generic netlink reply: command and attribute bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub cmd: u8,
    pub attrs: Vec<u8>,
}

/// Result of resolving the family.
#[derive(Debug)]
pub enum ConnectError {
    NotLoaded,
    Nl(NlError),
}

impl From<NlError> for ConnectError {
    fn from(e: NlError) -> ConnectError {
        ConnectError::Nl(e)
    }
}

impl From<io::Error> for ConnectError {
    fn from(e: io::Error) -> ConnectError {
        ConnectError::Nl(NlError::Io(e))
    }
}

/// A connection to the rvs module.
pub struct Client {
    sock: NlSocket,
    family: u16,
    version: u8,
    seq: u32,
    buf: Vec<u8>,
    /// The family's multicast groups, as (name, id).
    groups: Vec<(String, u32)>,
    /// The offset the kernel gave with its last error, if any.
    error_offset: Option<u32>,
}

/// Why [`Client::monitor`] failed.
#[derive(Debug)]
pub enum MonitorError {
    /// The family has no group of that name (a module older than the
    /// group).
    NoGroup,
    /// Joining failed: the kernel's errno (EPERM without CAP_NET_ADMIN)
    /// or the socket's error.
    Nl(NlError),
}

/// A socket that listens to a family's multicast group.
pub struct Monitor {
    sock: NlSocket,
    family: u16,
    buf: Vec<u8>,
}

/// What a [`Monitor`] received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A message of the family: its command and attribute bytes.
    Event { cmd: u8, attrs: Vec<u8> },
    /// Messages were dropped because the socket's receive buffer was
    /// full (ENOBUFS): changes happened that are not reported.
    Lost,
    /// The family was unregistered (its module unloaded): nothing more
    /// will come, even if the module is loaded again.
    Gone,
    /// A datagram that could not be decoded, and why.
    Malformed(String),
}

impl Client {
    /// Opens a generic netlink socket, enables extended acks and resolves
    /// the "RVS" family.
    pub fn connect() -> Result<Client, ConnectError> {
        Client::connect_family(uapi::RVS_GENL_NAME, uapi::RVS_GENL_VERSION)
    }

    /// Like [`Client::connect`] for any generic netlink family (tests use
    /// the always-present "nlctrl").
    pub fn connect_family(name: &str, version: u8) -> Result<Client, ConnectError> {
        let sock = NlSocket::connect(NlFamily::Generic, None, Groups::empty())?;
        // Older kernels lack extended acks; errors then come without text.
        let _ = sock.enable_ext_ack(true);
        set_recv_timeout(&sock, RECV_TIMEOUT_SECS)?;
        let mut client = Client {
            sock,
            family: GENL_ID_CTRL,
            version,
            seq: std::process::id().wrapping_mul(65536),
            buf: vec![0; RECV_BUF],
            groups: Vec::new(),
            error_offset: None,
        };
        let mut w = AttrWriter::new();
        w.put_str(CTRL_ATTR_FAMILY_NAME, name);
        let replies = match client.transact(
            GENL_ID_CTRL,
            CTRL_CMD_GETFAMILY,
            CTRL_VERSION,
            NLM_F_ACK,
            &w.finish(),
        ) {
            Ok(r) => r,
            Err(NlError::Kernel { errno: 2, .. }) => return Err(ConnectError::NotLoaded),
            Err(e) => return Err(e.into()),
        };
        for r in &replies {
            if let Some(id) =
                msg::find_attr(&r.attrs, CTRL_ATTR_FAMILY_ID).map_err(NlError::from)?
            {
                if id.len() == 2 {
                    client.family = ne_u16(id);
                    client.groups = mcast_groups(&r.attrs).map_err(NlError::from)?;
                    return Ok(client);
                }
            }
        }
        Err(ConnectError::NotLoaded)
    }

    /// Turns this connection into a listener of the family's multicast
    /// group `group`. It also joins nlctrl's "notify" group, when it can,
    /// to learn that the family went away ([`Notice::Gone`]). Receiving
    /// then blocks without a timeout, with a larger receive buffer.
    pub fn monitor(mut self, group: &str) -> Result<Monitor, MonitorError> {
        let Some(&(_, id)) = self.groups.iter().find(|(name, _)| name == group) else {
            return Err(MonitorError::NoGroup);
        };
        // nlctrl's group is resolved first: once the family's group is
        // joined, a request's replies would be read past its events.
        let mut w = AttrWriter::new();
        w.put_str(CTRL_ATTR_FAMILY_NAME, CTRL_NAME);
        let notify = self
            .transact(
                GENL_ID_CTRL,
                CTRL_CMD_GETFAMILY,
                CTRL_VERSION,
                NLM_F_ACK,
                &w.finish(),
            )
            .ok()
            .and_then(|replies| {
                replies
                    .iter()
                    .filter_map(|r| mcast_groups(&r.attrs).ok())
                    .flatten()
                    .find(|(name, _)| name == CTRL_MCGRP_NOTIFY)
            });
        join(&self.sock, id).map_err(MonitorError::Nl)?;
        // Best effort: without it, an unloaded module goes unnoticed.
        if let Some((_, notify)) = notify {
            let _ = join(&self.sock, notify);
        }
        set_recv_timeout(&self.sock, 0).map_err(|e| MonitorError::Nl(e.into()))?;
        let _ = self.sock.set_recv_buffer_size(MONITOR_RCVBUF);
        Ok(Monitor {
            sock: self.sock,
            family: self.family,
            buf: self.buf,
        })
    }

    /// An APPLY request (`-R --atomic`): `attrs` may be megabytes, so the
    /// socket's send buffer grows to hold it (root may exceed
    /// `net.core.wmem_max`), the kernel is asked not to copy it back into
    /// an error (`NETLINK_CAP_ACK`), and the answer may take minutes.
    /// A refusal comes with the offset of the change at fault, from the
    /// start of the request, when the kernel gave one.
    pub fn apply(&mut self, attrs: &[u8]) -> Result<(), (NlError, Option<u32>)> {
        let fd = self.sock.as_raw_fd();
        let want = attrs.len() + NLMSG_HDRLEN + GENL_HDRLEN + 4096;
        let want = libc::c_int::try_from(want).unwrap_or(libc::c_int::MAX);
        // Best effort each: without them the kernel's own error (EMSGSIZE,
        // or a truncated error) says what went wrong.
        if set_int_opt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, want).is_err() {
            let _ = set_int_opt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, want);
        }
        let _ = set_int_opt(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1);
        set_recv_timeout(&self.sock, APPLY_TIMEOUT_SECS).map_err(|e| (e.into(), None))?;
        self.error_offset = None;
        let res = self.execute(uapi::RVS_CMD_APPLY, attrs);
        let _ = set_recv_timeout(&self.sock, RECV_TIMEOUT_SECS);
        res.map_err(|e| (e, self.error_offset.take()))
    }

    /// A request that only needs the kernel's ACK (NEW/SET/DEL/FLUSH).
    pub fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError> {
        self.transact(self.family, cmd, self.version, NLM_F_ACK, attrs)
            .map(drop)
    }

    /// A request answered by one message (GET_INFO, GET_SERVICE for one).
    pub fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError> {
        let mut r = self.transact(self.family, cmd, self.version, NLM_F_ACK, attrs)?;
        if r.is_empty() {
            return Err(NlError::Protocol(format!("no reply to command {cmd}")));
        }
        Ok(r.swap_remove(0))
    }

    /// A dump request (NLM_F_DUMP): all messages up to NLMSG_DONE.
    pub fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError> {
        self.transact(self.family, cmd, self.version, NLM_F_DUMP, attrs)
    }

    /// A dump request whose messages are handed to `f` one by one as they
    /// arrive, without collecting them (connection tables can be large).
    /// The outer error is the netlink exchange's; the inner one is `f`'s,
    /// which stops the dump early.
    pub fn dump_each<E>(
        &mut self,
        cmd: u8,
        attrs: &[u8],
        f: impl FnMut(Reply) -> Result<(), E>,
    ) -> Result<Result<(), E>, NlError> {
        self.transact_each(self.family, cmd, self.version, NLM_F_DUMP, attrs, f)
    }

    fn transact(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        flags: u16,
        attrs: &[u8],
    ) -> Result<Vec<Reply>, NlError> {
        let mut replies = Vec::new();
        let collected =
            self.transact_each(family, cmd, version, flags, attrs, |r| -> Result<(), ()> {
                replies.push(r);
                Ok(())
            })?;
        debug_assert!(collected.is_ok());
        Ok(replies)
    }

    fn transact_each<E>(
        &mut self,
        family: u16,
        cmd: u8,
        version: u8,
        flags: u16,
        attrs: &[u8],
        mut f: impl FnMut(Reply) -> Result<(), E>,
    ) -> Result<Result<(), E>, NlError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let req = encode_request(family, flags, seq, cmd, version, attrs);
        self.sock.send(&req, Msg::empty())?;
        let dump = flags & NLM_F_DUMP == NLM_F_DUMP;
        loop {
            let n = match self.sock.recv(&mut self.buf[..], Msg::TRUNC) {
                Ok((n, _)) => n,
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::TimedOut =>
                {
                    return Err(NlError::Timeout)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n > self.buf.len() {
                return Err(NlError::Protocol(format!(
                    "reply of {n} bytes exceeds the {} byte buffer",
                    self.buf.len()
                )));
            }
            for m in decode(&self.buf[..n])? {
                match m {
                    Incoming::Data {
                        seq: s, cmd, attrs, ..
                    } if s == seq => {
                        if let Err(e) = f(Reply { cmd, attrs }) {
                            return Ok(Err(e));
                        }
                        if !dump && flags & NLM_F_ACK == 0 {
                            return Ok(Ok(()));
                        }
                    }
                    Incoming::Ack { seq: s } if s == seq => return Ok(Ok(())),
                    Incoming::Error {
                        seq: s,
                        errno,
                        message,
                        offset,
                    } if s == seq => {
                        self.error_offset = offset;
                        return Err(NlError::Kernel { errno, message });
                    }
                    Incoming::Done {
                        seq: s,
                        errno,
                        message,
                    } if s == seq => {
                        return if errno != 0 {
                            Err(NlError::Kernel { errno, message })
                        } else {
                            Ok(Ok(()))
                        };
                    }
                    Incoming::Overrun { seq: s } if s == seq => {
                        return Err(NlError::Protocol("netlink overrun".into()))
                    }
                    _ => {} // other sequence numbers, NOOPs
                }
            }
        }
    }
}

/// Joins multicast group `id`; a refusal is the kernel's errno (EPERM:
/// the group needs CAP_NET_ADMIN).
fn join(sock: &NlSocket, id: u32) -> Result<(), NlError> {
    sock.add_mcast_membership(Groups::new_groups(&[id]))
        .map_err(|e| match e.raw_os_error() {
            Some(errno) => NlError::Kernel {
                errno,
                message: None,
            },
            None => NlError::Io(e),
        })
}

impl Monitor {
    /// Waits for what comes next: the notices of one datagram (never an
    /// empty list: datagrams with nothing for the monitor, such as other
    /// families' nlctrl notifications, are passed over).
    pub fn receive(&mut self) -> Result<Vec<Notice>, NlError> {
        loop {
            let n = match self.sock.recv(&mut self.buf[..], Msg::TRUNC) {
                Ok((n, _)) => n,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(vec![Notice::Lost]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            let notices = if n > self.buf.len() {
                vec![Notice::Malformed(format!(
                    "a datagram of {n} bytes, larger than the {} byte buffer",
                    self.buf.len()
                ))]
            } else {
                notices(&self.buf[..n], self.family)
            };
            if !notices.is_empty() {
                return Ok(notices);
            }
        }
    }
}

/// What one datagram `buf` holds for a monitor of the family numbered
/// `family`: its messages as events, and nlctrl's announcement that the
/// family was unregistered as [`Notice::Gone`]; the rest is skipped.
pub fn notices(buf: &[u8], family: u16) -> Vec<Notice> {
    let messages = match decode(buf) {
        Ok(m) => m,
        Err(NlError::Protocol(why)) => return vec![Notice::Malformed(why)],
        Err(e) => return vec![Notice::Malformed(e.to_string())],
    };
    let mut out = Vec::new();
    for m in messages {
        let Incoming::Data {
            family: f,
            cmd,
            attrs,
            ..
        } = m
        else {
            continue;
        };
        if f == family {
            out.push(Notice::Event { cmd, attrs });
        } else if f == GENL_ID_CTRL && cmd == CTRL_CMD_DELFAMILY {
            match msg::find_attr(&attrs, CTRL_ATTR_FAMILY_ID) {
                Ok(Some(&[a, b])) if u16::from_ne_bytes([a, b]) == family => out.push(Notice::Gone),
                _ => {}
            }
        }
    }
    out
}

/// `SOL_NETLINK`, and its option that keeps a request out of its error.
const SOL_NETLINK: libc::c_int = 270;
const NETLINK_CAP_ACK: libc::c_int = 10;
/// How long an APPLY may take: a rule set of 100,000 changes takes tens
/// of seconds on an emulated machine.
const APPLY_TIMEOUT_SECS: libc::time_t = 900;

/// Sets an integer socket option.
fn set_int_opt(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: valid fd; the value points to a live c_int of the given size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets the socket's receive timeout; 0: none (block until something comes).
fn set_recv_timeout(sock: &NlSocket, secs: libc::time_t) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: secs,
        tv_usec: 0,
    };
    // SAFETY: valid fd, option value points to a live timeval of the given size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nlmsg(ty: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let len = 16 + payload.len();
        let mut v = Vec::new();
        v.extend_from_slice(&(len as u32).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(&flags.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&1234u32.to_ne_bytes());
        v.extend_from_slice(payload);
        v.resize(align4(len), 0);
        v
    }

    fn ext_msg(text: &str) -> Vec<u8> {
        let mut w = AttrWriter::new();
        w.put_str(NLMSGERR_ATTR_MSG, text);
        w.put_u32(2, 24); // NLMSGERR_ATTR_OFFS
        w.finish()
    }

    #[test]
    fn encode_header() {
        let attrs = [8, 0, 1, 0, 1, 2, 3, 4];
        let v = encode_request(0x25, NLM_F_ACK, 7, 1, 1, &attrs);
        assert_eq!(v.len(), 28);
        assert_eq!(&v[0..4], &28u32.to_ne_bytes());
        assert_eq!(&v[4..6], &0x25u16.to_ne_bytes());
        assert_eq!(&v[6..8], &(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        assert_eq!(&v[8..12], &7u32.to_ne_bytes());
        assert_eq!(&v[16..20], &[1, 1, 0, 0]);
        assert_eq!(&v[20..], &attrs);
    }

    #[test]
    fn decode_error_with_ext_ack_uncapped() {
        let req = encode_request(0x25, NLM_F_ACK, 9, 1, 1, &[8, 0, 1, 0, 0, 0, 0, 0]);
        let mut p = (-2i32).to_ne_bytes().to_vec();
        p.extend_from_slice(&req);
        p.extend_from_slice(&ext_msg("Service not found"));
        let buf = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS, 9, &p);
        assert_eq!(
            decode(&buf).unwrap(),
            vec![Incoming::Error {
                seq: 9,
                errno: 2,
                message: Some("Service not found".into()),
                offset: Some(24),
            }]
        );
    }

    #[test]
    fn decode_error_capped_and_plain() {
        let req = encode_request(0x25, NLM_F_ACK, 9, 1, 1, &[0; 40]);
        let mut p = (-17i32).to_ne_bytes().to_vec();
        p.extend_from_slice(&req[..16]);
        p.extend_from_slice(&ext_msg("exists"));
        let capped = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS | NLM_F_CAPPED, 9, &p);
        let mut p2 = (-1i32).to_ne_bytes().to_vec();
        p2.extend_from_slice(&req);
        let plain = nlmsg(NLMSG_ERROR, 0, 10, &p2);
        let mut ack = 0i32.to_ne_bytes().to_vec();
        ack.extend_from_slice(&req[..16]);
        let ack = nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 11, &ack);
        let all = [capped, plain, ack].concat();
        assert_eq!(
            decode(&all).unwrap(),
            vec![
                Incoming::Error {
                    seq: 9,
                    errno: 17,
                    message: Some("exists".into()),
                    offset: Some(24),
                },
                Incoming::Error {
                    seq: 10,
                    errno: 1,
                    message: None,
                    offset: None,
                },
                Incoming::Ack { seq: 11 },
            ]
        );
    }

    #[test]
    fn decode_dump_stream() {
        let mut w = AttrWriter::new();
        w.put_u32(1, 0x010201);
        let attrs = w.finish();
        let mut genl = vec![uapi::RVS_CMD_NEW_SERVICE, 1, 0, 0];
        genl.extend_from_slice(&attrs);
        let mut done_err = (-3i32).to_ne_bytes().to_vec();
        done_err.extend_from_slice(&ext_msg("dump failed"));
        let buf = [
            nlmsg(0x25, NLM_F_MULTI, 5, &genl),
            nlmsg(NLMSG_DONE, NLM_F_MULTI, 5, &0i32.to_ne_bytes()),
            nlmsg(NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, 6, &done_err),
            nlmsg(NLMSG_NOOP, 0, 7, &[]),
        ]
        .concat();
        assert_eq!(
            decode(&buf).unwrap(),
            vec![
                Incoming::Data {
                    seq: 5,
                    family: 0x25,
                    cmd: 1,
                    attrs
                },
                Incoming::Done {
                    seq: 5,
                    errno: 0,
                    message: None
                },
                Incoming::Done {
                    seq: 6,
                    errno: 3,
                    message: Some("dump failed".into())
                },
                Incoming::Skip { seq: 7 },
            ]
        );
    }

    /// Talks to the kernel's own "nlctrl" family: resolution, a dump ended
    /// by NLMSG_DONE, a request answered by one message and an ACK, and an
    /// error reply. Skipped where netlink sockets are unavailable.
    #[test]
    fn real_kernel_round_trip_with_nlctrl() {
        let mut c = match Client::connect_family("nlctrl", 2) {
            Ok(c) => c,
            Err(ConnectError::Nl(NlError::Io(e))) => {
                eprintln!("skipped: no generic netlink socket: {e}");
                return;
            }
            Err(e) => panic!("resolving nlctrl: {e:?}"),
        };
        assert_eq!(c.family, GENL_ID_CTRL);
        let families = c.dump(CTRL_CMD_GETFAMILY, &[]).unwrap();
        // The same dump streamed, and one stopped by its callback.
        let mut streamed = 0;
        let r: Result<(), ()> = c
            .dump_each(CTRL_CMD_GETFAMILY, &[], |_| {
                streamed += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!((r, streamed), (Ok(()), families.len()));
        let stopped = c
            .dump_each(CTRL_CMD_GETFAMILY, &[], |_| Err("stop"))
            .unwrap();
        assert_eq!(stopped, Err("stop"));
        assert!(families.iter().any(|r| {
            msg::find_attr(&r.attrs, CTRL_ATTR_FAMILY_NAME).unwrap() == Some(&b"nlctrl\0"[..])
        }));
        let mut w = AttrWriter::new();
        w.put_str(CTRL_ATTR_FAMILY_NAME, "nlctrl");
        let one = c.get(CTRL_CMD_GETFAMILY, &w.finish()).unwrap();
        assert!(msg::find_attr(&one.attrs, CTRL_ATTR_FAMILY_ID)
            .unwrap()
            .is_some());
        // An unknown command is refused (EOPNOTSUPP), not hung on.
        match c.execute(200, &[]) {
            Err(NlError::Kernel { errno, .. }) => assert!(errno > 0),
            other => panic!("unexpected {other:?}"),
        }
        // A malformed attribute: the kernel's extended-ack text comes back.
        let mut bad = AttrWriter::new();
        bad.put(CTRL_ATTR_FAMILY_ID, &[1]);
        match c.get(CTRL_CMD_GETFAMILY, &bad.finish()) {
            Err(NlError::Kernel { errno, message }) => {
                assert!(errno > 0);
                eprintln!("extended ack: {message:?}");
                assert!(message.is_some(), "no extended-ack message");
            }
            other => panic!("unexpected {other:?}"),
        }
        // The family of this tool is absent here: a clear NotLoaded.
        assert!(matches!(
            Client::connect_family("RVS-test-absent", 1),
            Err(ConnectError::NotLoaded)
        ));
    }

    /// A CTRL_CMD_GETFAMILY reply's groups as the kernel nests them: an
    /// array of nests indexed 1, 2, ... (flagged NLA_F_NESTED or not).
    fn family_reply(groups: &[(&str, u32)], flagged: bool) -> Vec<u8> {
        let mut all = AttrWriter::new();
        for (i, (name, id)) in groups.iter().enumerate() {
            let mut g = AttrWriter::new();
            g.put_u32(CTRL_ATTR_MCAST_GRP_ID, *id)
                .put_str(CTRL_ATTR_MCAST_GRP_NAME, name)
                .put_u32(9, 7); // an attribute from a newer kernel
            let ty = i as u16 + 1;
            all.put(
                if flagged { ty | msg::NLA_F_NESTED } else { ty },
                &g.finish(),
            );
        }
        let mut w = AttrWriter::new();
        w.put_u16(CTRL_ATTR_FAMILY_ID, 0x25)
            .put_str(CTRL_ATTR_FAMILY_NAME, "RVS")
            .put(CTRL_ATTR_MCAST_GROUPS | msg::NLA_F_NESTED, &all.finish());
        w.finish()
    }

    #[test]
    fn multicast_groups_of_a_family() {
        for flagged in [true, false] {
            let reply = family_reply(&[("events", 12), ("other", 13)], flagged);
            assert_eq!(
                mcast_groups(&reply).unwrap(),
                vec![("events".to_string(), 12), ("other".to_string(), 13)]
            );
        }
        // A family without groups; an entry without an id is skipped.
        let mut w = AttrWriter::new();
        w.put_u16(CTRL_ATTR_FAMILY_ID, 0x25);
        assert_eq!(mcast_groups(&w.finish()).unwrap(), vec![]);
        let mut g = AttrWriter::new();
        g.nest(1, |e| {
            e.put_str(CTRL_ATTR_MCAST_GRP_NAME, "noid");
        });
        let mut w = AttrWriter::new();
        w.put(CTRL_ATTR_MCAST_GROUPS, &g.finish());
        assert_eq!(mcast_groups(&w.finish()).unwrap(), vec![]);
        // A group nest longer than the groups' is an error.
        let mut w = AttrWriter::new();
        w.put(CTRL_ATTR_MCAST_GROUPS, &[200, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(
            mcast_groups(&w.finish()).unwrap_err().0,
            "attribute 1 has length 200, outside its buffer"
        );
    }

    #[test]
    fn monitor_notices() {
        let genl = |cmd: u8, attrs: &[u8]| [&[cmd, 1, 0, 0][..], attrs].concat();
        let mut w = AttrWriter::new();
        w.put_u32(4, 900);
        let attrs = w.finish();
        // An event (seq 0, as multicasts are), and another in the same
        // datagram.
        let buf = [
            nlmsg(0x25, 0, 0, &genl(12, &attrs)),
            nlmsg(0x25, 0, 0, &genl(17, &[])),
        ]
        .concat();
        assert_eq!(
            notices(&buf, 0x25),
            vec![
                Notice::Event {
                    cmd: 12,
                    attrs: attrs.clone()
                },
                Notice::Event {
                    cmd: 17,
                    attrs: vec![]
                },
            ]
        );
        // nlctrl: the family unregistered, another one, and a new family.
        let ctrl = |cmd: u8, id: u16| {
            let mut w = AttrWriter::new();
            w.put_str(CTRL_ATTR_FAMILY_NAME, "X")
                .put_u16(CTRL_ATTR_FAMILY_ID, id);
            nlmsg(GENL_ID_CTRL, 0, 0, &genl(cmd, &w.finish()))
        };
        assert_eq!(
            notices(&ctrl(CTRL_CMD_DELFAMILY, 0x25), 0x25),
            vec![Notice::Gone]
        );
        assert_eq!(notices(&ctrl(CTRL_CMD_DELFAMILY, 0x26), 0x25), vec![]);
        assert_eq!(notices(&ctrl(1, 0x25), 0x25), vec![]);
        // Other messages are skipped; a message longer than its datagram
        // is told, not fatal.
        assert_eq!(notices(&nlmsg(NLMSG_NOOP, 0, 0, &[]), 0x25), vec![]);
        assert_eq!(notices(&nlmsg(0x25, 0, 0, &[1]), 0x25), vec![]);
        let mut bad = nlmsg(0x25, 0, 0, &genl(12, &attrs));
        bad[0] = 200;
        assert_eq!(
            notices(&bad, 0x25),
            vec![Notice::Malformed(
                "netlink message length 200 outside the 28 bytes received".into()
            )]
        );
    }

    /// Joins nlctrl's own "notify" group (open to every user), and is told
    /// of a group the family lacks. Skipped where netlink sockets are
    /// unavailable.
    #[test]
    fn real_kernel_monitor_joins_a_group() {
        let connect = || match Client::connect_family("nlctrl", 2) {
            Ok(c) => Some(c),
            Err(ConnectError::Nl(NlError::Io(e))) => {
                eprintln!("skipped: no generic netlink socket: {e}");
                None
            }
            Err(e) => panic!("resolving nlctrl: {e:?}"),
        };
        let Some(c) = connect() else { return };
        assert!(
            c.groups.iter().any(|(name, _)| name == CTRL_MCGRP_NOTIFY),
            "{:?}",
            c.groups
        );
        let m = c.monitor(CTRL_MCGRP_NOTIFY).unwrap();
        assert_eq!(m.family, GENL_ID_CTRL);
        let c = connect().unwrap();
        assert!(matches!(c.monitor("events"), Err(MonitorError::NoGroup)));
    }

    #[test]
    fn decode_rejects_bad_length() {
        let mut buf = nlmsg(0x25, 0, 1, &[1, 1, 0, 0]);
        buf[0] = 200;
        assert!(decode(&buf).is_err());
    }
}
