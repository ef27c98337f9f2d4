// SPDX-License-Identifier: GPL-2.0

//! The changes of an `RVS_CMD_APPLY` request (`rvsadm -R --atomic`): one
//! `RVS_CMD_ATTR_OP` nest per change, each naming its command and
//! carrying the service and real-server nests that command would carry at
//! top level. Parsing here only sorts out which command and which nests;
//! the nests themselves are parsed by `svcattr`, as for single commands.

use super::config::{ConfigError, EINVAL, EOPNOTSUPP};
use super::nlattr::{self, AttrIter};
use super::uapi::*;

/// Most changes one request may carry: 16 times a 10,000 x 10 rule set,
/// far below what a netlink message can hold, so the staging memory a
/// request can make the kernel allocate stays bounded.
pub const APPLY_OPS_MAX: usize = 1 << 21;

/// What one change does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// `-A`: add a service.
    NewService,
    /// `-E`: edit a service.
    SetService,
    /// `-D`: delete a service.
    DelService,
    /// `-a`: add a real server.
    NewDest,
    /// `-e`: edit a real server.
    SetDest,
    /// `-d`: delete a real server.
    DelDest,
    /// `-C`: delete every service.
    Flush,
}

impl OpKind {
    /// The kind of command `cmd`; only service and real-server changes
    /// and the flush can be part of an atomic change.
    pub fn from_cmd(cmd: u32) -> Result<OpKind, ConfigError> {
        let Ok(cmd) = u8::try_from(cmd) else {
            return Err(ConfigError::new(EINVAL, c"unknown command in a change"));
        };
        Ok(match cmd {
            RVS_CMD_NEW_SERVICE => OpKind::NewService,
            RVS_CMD_SET_SERVICE => OpKind::SetService,
            RVS_CMD_DEL_SERVICE => OpKind::DelService,
            RVS_CMD_NEW_DEST => OpKind::NewDest,
            RVS_CMD_SET_DEST => OpKind::SetDest,
            RVS_CMD_DEL_DEST => OpKind::DelDest,
            RVS_CMD_FLUSH => OpKind::Flush,
            RVS_CMD_UNSPEC..=RVS_CMD_MAX => {
                return Err(ConfigError::new(
                    EOPNOTSUPP,
                    c"only service and real server changes and the flush can be applied atomically",
                ))
            }
            _ => return Err(ConfigError::new(EINVAL, c"unknown command in a change")),
        })
    }

    /// The command number (`RVS_CMD_*`).
    pub fn cmd(self) -> u8 {
        match self {
            OpKind::NewService => RVS_CMD_NEW_SERVICE,
            OpKind::SetService => RVS_CMD_SET_SERVICE,
            OpKind::DelService => RVS_CMD_DEL_SERVICE,
            OpKind::NewDest => RVS_CMD_NEW_DEST,
            OpKind::SetDest => RVS_CMD_SET_DEST,
            OpKind::DelDest => RVS_CMD_DEL_DEST,
            OpKind::Flush => RVS_CMD_FLUSH,
        }
    }

    /// Whether the change names a real server (and so needs its nest).
    pub fn has_dest(self) -> bool {
        matches!(self, OpKind::NewDest | OpKind::SetDest | OpKind::DelDest)
    }
}

/// One change: its kind and the payloads of its service and real-server
/// nests (`None` for the flush, and the service changes' `dest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op<'a> {
    /// What it does.
    pub kind: OpKind,
    /// The service nest's payload.
    pub service: Option<&'a [u8]>,
    /// The real-server nest's payload.
    pub dest: Option<&'a [u8]>,
}

/// Parses one `RVS_CMD_ATTR_OP` nest's payload.
pub fn parse_op(nest: &[u8]) -> Result<Op<'_>, ConfigError> {
    let mut t: [Option<&[u8]>; RVS_OP_ATTR_MAX as usize + 1] = [None; RVS_OP_ATTR_MAX as usize + 1];
    nlattr::parse_nested(nest, &mut t).map_err(|e| ConfigError::new(EINVAL, e.msg()))?;
    let [_, service, dest, cmd] = t;
    let Some(cmd) = cmd else {
        return Err(ConfigError::new(EINVAL, c"a change without its command"));
    };
    let cmd =
        nlattr::get_u32(RVS_OP_ATTR_CMD, cmd).map_err(|e| ConfigError::new(EINVAL, e.msg()))?;
    let kind = OpKind::from_cmd(cmd)?;
    match kind {
        OpKind::Flush if service.is_some() || dest.is_some() => Err(ConfigError::new(
            EINVAL,
            c"a flush names no service and no real server",
        )),
        OpKind::Flush => Ok(Op {
            kind,
            service: None,
            dest: None,
        }),
        _ if service.is_none() => Err(ConfigError::new(EINVAL, c"service attribute missing")),
        _ if kind.has_dest() && dest.is_none() => {
            Err(ConfigError::new(EINVAL, c"real server attribute missing"))
        }
        _ if !kind.has_dest() && dest.is_some() => Err(ConfigError::new(
            EINVAL,
            c"a service change names no real server",
        )),
        _ => Ok(Op {
            kind,
            service,
            dest,
        }),
    }
}

/// The `RVS_CMD_ATTR_OP` nests of a request's top-level attributes, in
/// order, as (payload, its offset in `attrs`); other attributes are
/// skipped. The netlink core has checked the top level's layout; a stream
/// that is cut short still ends in an error here, never a panic.
pub fn ops(attrs: &[u8]) -> impl Iterator<Item = Result<(&[u8], usize), ConfigError>> + '_ {
    let base = attrs.as_ptr() as usize;
    AttrIter::new(attrs)
        .filter(|a| !matches!(a, Ok((kind, _)) if *kind != RVS_CMD_ATTR_OP))
        .map(move |a| match a {
            Ok((_, p)) => Ok((p, (p.as_ptr() as usize).wrapping_sub(base))),
            Err(e) => Err(ConfigError::new(EINVAL, e.msg())),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
        let len = (4 + payload.len()) as u16;
        out.extend_from_slice(&len.to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(payload);
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }

    fn op(cmd: u32, svc: bool, dest: bool) -> Vec<u8> {
        let mut v = Vec::new();
        attr(&mut v, RVS_OP_ATTR_CMD, &cmd.to_ne_bytes());
        if svc {
            attr(&mut v, RVS_OP_ATTR_SERVICE, &[1, 2, 3, 4]);
        }
        if dest {
            attr(&mut v, RVS_OP_ATTR_DEST, &[5, 6, 7, 8]);
        }
        v
    }

    #[test]
    fn each_change_needs_what_its_command_needs() {
        let o = op(u32::from(RVS_CMD_NEW_DEST), true, true);
        let p = parse_op(&o).unwrap();
        assert_eq!(p.kind, OpKind::NewDest);
        assert_eq!(p.service, Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(p.dest, Some(&[5u8, 6, 7, 8][..]));
        let o = op(u32::from(RVS_CMD_NEW_SERVICE), true, false);
        assert_eq!(parse_op(&o).unwrap().kind, OpKind::NewService);
        let o = op(u32::from(RVS_CMD_FLUSH), false, false);
        assert_eq!(parse_op(&o).unwrap().kind, OpKind::Flush);
        let bad = [
            (
                op(u32::from(RVS_CMD_NEW_DEST), true, false),
                "real server attribute missing",
            ),
            (
                op(u32::from(RVS_CMD_DEL_SERVICE), false, false),
                "service attribute missing",
            ),
            (
                op(u32::from(RVS_CMD_SET_SERVICE), true, true),
                "a service change names no real server",
            ),
            (
                op(u32::from(RVS_CMD_FLUSH), true, false),
                "a flush names no service and no real server",
            ),
            (
                op(u32::from(RVS_CMD_ZERO), true, false),
                "only service and real server changes and the flush can be applied atomically",
            ),
            (
                op(u32::from(RVS_CMD_APPLY), false, false),
                "only service and real server changes and the flush can be applied atomically",
            ),
            (
                op(u32::from(RVS_CMD_MAX) + 1, true, false),
                "unknown command in a change",
            ),
            (op(1 << 20, true, false), "unknown command in a change"),
        ];
        for (o, msg) in bad {
            let e = parse_op(&o).unwrap_err();
            assert_eq!(e.msg.to_str().unwrap(), msg);
        }
        assert_eq!(
            parse_op(&op(u32::from(RVS_CMD_ZERO), true, false))
                .unwrap_err()
                .errno,
            EOPNOTSUPP
        );
    }

    #[test]
    fn malformed_changes_are_refused() {
        let mut v = Vec::new();
        attr(&mut v, RVS_OP_ATTR_SERVICE, &[0; 4]);
        assert_eq!(
            parse_op(&v).unwrap_err().msg.to_str().unwrap(),
            "a change without its command"
        );
        let mut v = Vec::new();
        attr(&mut v, RVS_OP_ATTR_CMD, &[1, 0]);
        assert_eq!(parse_op(&v).unwrap_err().errno, EINVAL);
        let mut v = Vec::new();
        attr(&mut v, RVS_OP_ATTR_MAX + 1, &[0; 4]);
        assert_eq!(
            parse_op(&v).unwrap_err().msg.to_str().unwrap(),
            "unknown nested attribute type"
        );
        // Cut in the middle of an attribute.
        let o = op(u32::from(RVS_CMD_NEW_DEST), true, true);
        for cut in 1..o.len() {
            let _ = parse_op(&o[..cut]);
        }
    }

    #[test]
    fn ops_come_in_order_with_their_offsets() {
        let mut top = Vec::new();
        attr(&mut top, RVS_CMD_ATTR_TIMEOUT_TCP, &[0; 4]);
        let a = op(u32::from(RVS_CMD_NEW_SERVICE), true, false);
        let b = op(u32::from(RVS_CMD_NEW_DEST), true, true);
        attr(&mut top, RVS_CMD_ATTR_OP, &a);
        let b_at = top.len() + 4;
        attr(&mut top, RVS_CMD_ATTR_OP, &b);
        let got: Vec<_> = ops(&top).map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (&a[..], 12));
        assert_eq!(got[1], (&b[..], b_at));
        // A stream cut short ends in an error.
        let cut = &top[..top.len() - 3];
        assert!(ops(cut).any(|r| r.is_err()));
        assert_eq!(ops(&[]).count(), 0);
    }
}
