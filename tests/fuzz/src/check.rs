//! Strict checks of what the kernel answers: every datagram must be a
//! sequence of well-formed netlink messages addressed to us: NLMSG_ERROR
//! (errno 0 or a sane negative errno, the request's header echoed, valid
//! extended-ACK TLVs), NLMSG_DONE, or a family reply with well-formed
//! attributes.

use crate::msg::*;

/// Largest errno a reply may carry (EHWPOISON); kernel-internal codes
/// (ENOTSUPP 524 and friends) must never reach userspace.
pub const MAX_ERRNO: i32 = 133;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// NLMSG_ERROR: errno (positive, 0 = ACK) for request `seq`.
    Ack { seq: u32, errno: i32 },
    /// NLMSG_DONE ending a dump.
    Done { seq: u32, errno: i32 },
    /// A family message (doit reply or dump entry).
    Reply { seq: u32, cmd: u8 },
}

impl Answer {
    pub fn seq(&self) -> u32 {
        match self {
            Answer::Ack { seq, .. } | Answer::Done { seq, .. } | Answer::Reply { seq, .. } => *seq,
        }
    }
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_ne_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// Walks an attribute stream strictly: every header complete, every
/// length >= 4 and within the stream. Calls `each(type, payload)`.
pub fn walk_attrs<'a>(
    buf: &'a [u8],
    mut each: impl FnMut(u16, &'a [u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut off = 0;
    while off < buf.len() {
        if off + NLA_HDRLEN > buf.len() {
            return Err(format!(
                "attribute header cut at offset {off} of {}",
                buf.len()
            ));
        }
        let len = u16_at(buf, off) as usize;
        let kind = u16_at(buf, off + 2);
        if len < NLA_HDRLEN || off + len > buf.len() {
            return Err(format!(
                "attribute type {kind:#x} at {off}: length {len} of {} bytes",
                buf.len()
            ));
        }
        each(kind, &buf[off + 4..off + len])?;
        off += (len + 3) & !3;
    }
    Ok(())
}

fn check_errno(e: i32) -> Result<i32, String> {
    if !(-MAX_ERRNO..=0).contains(&e) {
        return Err(format!("errno {e} outside 0..=-{MAX_ERRNO}"));
    }
    Ok(-e)
}

fn check_ext_ack(tlvs: &[u8], orig_len: usize) -> Result<(), String> {
    walk_attrs(tlvs, |kind, p| {
        match kind {
            1 => {
                // NLMSGERR_ATTR_MSG: a NUL-terminated printable string.
                let Some((&0, s)) = p.split_last() else {
                    return Err("extack message not NUL-terminated".into());
                };
                if s.iter().any(|&c| !(0x20..0x7f).contains(&c)) {
                    return Err(format!("extack message not printable: {s:?}"));
                }
            }
            2 => {
                // NLMSGERR_ATTR_OFFS: offset into the request.
                if p.len() != 4 {
                    return Err("extack offset not a u32".into());
                }
                let o = u32_at(p, 0) as usize;
                if orig_len > 0 && o >= orig_len {
                    return Err(format!(
                        "extack offset {o} beyond the {orig_len}-byte request"
                    ));
                }
            }
            5 | 6 if p.len() != 4 => {
                return Err(format!("extack attribute {kind} not a u32"));
            }
            4 => walk_attrs(p, |_, _| Ok(()))?,
            _ => {}
        }
        Ok(())
    })
}

/// A service nest of a NEW_SERVICE reply: its attributes well formed,
/// and FullNAT's LADDRS (13) a nest of at most `RVS_LADDRS_MAX`
/// `RVS_LADDR_ATTR_ADDR`s of 4 or 16 bytes, 16 in an IPv6 service.
fn check_service(svc: &[u8]) -> Result<(), String> {
    let mut af = None;
    let mut lens = Vec::new();
    walk_attrs(svc, |kind, v| {
        match kind & NLA_TYPE_MASK {
            RVS_SVC_ATTR_AF if v.len() == 2 => af = Some(u16_at(v, 0)),
            RVS_SVC_ATTR_LADDRS => {
                if kind & NLA_F_NESTED == 0 {
                    return Err("service LADDRS without NLA_F_NESTED".into());
                }
                walk_attrs(v, |k, a| {
                    if k != RVS_LADDR_ATTR_ADDR {
                        return Err(format!("attribute {k:#x} in a service's LADDRS"));
                    }
                    lens.push(a.len());
                    Ok(())
                })?;
            }
            _ => {}
        }
        Ok(())
    })?;
    if lens.len() > RVS_LADDRS_MAX {
        return Err(format!("{} local addresses in a service", lens.len()));
    }
    let ok = |n: &usize| *n == 16 || (*n == 4 && af != Some(10));
    match lens.iter().find(|n| !ok(n)) {
        Some(n) => Err(format!(
            "a local address of {n} bytes in a service of family {af:?}"
        )),
        None => Ok(()),
    }
}

/// A connection nest of a GET_CONN reply: the local end's LADDR (16
/// bytes) and LPORT (2) come together, in FullNAT and ENAT connections
/// only.
fn check_conn(conn: &[u8]) -> Result<(), String> {
    let (mut laddr, mut lport, mut fwd) = (false, false, None);
    walk_attrs(conn, |kind, v| {
        let want = match kind & NLA_TYPE_MASK {
            RVS_CONN_ATTR_LADDR => {
                laddr = true;
                16
            }
            RVS_CONN_ATTR_LPORT => {
                lport = true;
                2
            }
            RVS_CONN_ATTR_FWD_METHOD if v.len() == 4 => {
                fwd = Some(u32_at(v, 0) & RVS_CONN_F_FWD_MASK);
                return Ok(());
            }
            _ => return Ok(()),
        };
        if v.len() != want {
            return Err(format!("connection attribute {kind} is {} bytes", v.len()));
        }
        Ok(())
    })?;
    if laddr != lport {
        return Err("a connection with only one of LADDR and LPORT".into());
    }
    if laddr && fwd != Some(RVS_CONN_F_FULLNAT) && fwd != Some(RVS_CONN_F_ENAT) {
        return Err(format!(
            "LADDR and LPORT in a connection of forwarding method {fwd:?}"
        ));
    }
    Ok(())
}

fn check_reply(p: &[u8]) -> Result<u8, String> {
    if p.len() < GENL_HDRLEN {
        return Err("family message without a genl header".into());
    }
    let cmd = p[0];
    let attrs = &p[GENL_HDRLEN..];
    match cmd {
        RVS_CMD_NEW_SERVICE | RVS_CMD_NEW_DEST => walk_attrs(attrs, |kind, inner| {
            let t = kind & NLA_TYPE_MASK;
            if t == RVS_CMD_ATTR_DEST && kind & NLA_F_NESTED != 0 {
                // DRAIN, the seconds left of a draining server, is a u32.
                walk_attrs(inner, |k, v| match k & NLA_TYPE_MASK {
                    RVS_DEST_ATTR_DRAIN if v.len() != 4 => {
                        Err(format!("dest DRAIN is {} bytes", v.len()))
                    }
                    _ => Ok(()),
                })
            } else if t == RVS_CMD_ATTR_SERVICE && kind & NLA_F_NESTED != 0 {
                check_service(inner)
            } else {
                Err(format!("unexpected attribute {kind:#x} in a {cmd} reply"))
            }
        })?,
        // GET_CONFIG answers with SET_CONFIG, as IPVS does: three u32
        // timeouts, then rvs's settings (u32 each, the settings table's
        // attributes: from 8 on, but RVS_CMD_ATTR_OP).
        RVS_CMD_SET_CONFIG => walk_attrs(attrs, |kind, v| {
            let t = kind & NLA_TYPE_MASK;
            let known = (RVS_CMD_ATTR_TIMEOUT_TCP..=RVS_CMD_ATTR_TIMEOUT_UDP).contains(&t)
                || rvs_core::settings::by_attr(t).is_some();
            if !known || v.len() != 4 {
                return Err(format!(
                    "bad attribute {kind:#x} ({} bytes) in a config reply",
                    v.len()
                ));
            }
            Ok(())
        })?,
        RVS_CMD_GET_CONN => walk_attrs(attrs, |kind, inner| {
            if kind & NLA_TYPE_MASK == RVS_CMD_ATTR_CONN && kind & NLA_F_NESTED != 0 {
                check_conn(inner)
            } else {
                Err(format!(
                    "unexpected attribute {kind:#x} in a connection reply"
                ))
            }
        })?,
        // Version and table size (u32), entry count (u32), then the table's
        // memory, refused and evicted counters (u64), their pad, the VIP
        // port guard's count, the connections flushed, the FullNAT
        // connections dropped for want of a local port and the ENAT SYNs
        // dropped for want of room for the option (u64), the table's
        // ceiling (u32).
        RVS_CMD_GET_INFO => walk_attrs(attrs, |kind, v| {
            let want = match kind & NLA_TYPE_MASK {
                1..=3 | 12 => 4,
                4..=6 | 8..=11 => 8,
                7 => 0,
                _ => return Err(format!("unknown GET_INFO attribute {kind}")),
            };
            if v.len() != want {
                return Err(format!("GET_INFO attribute {kind} is {} bytes", v.len()));
            }
            Ok(())
        })?,
        // FLUSH_CONNS answers with its own command: the connections it
        // ended (u64, numbered as in GET_INFO) and the pad before it.
        RVS_CMD_FLUSH_CONNS => {
            let mut counted = false;
            walk_attrs(attrs, |kind, v| {
                let want = match kind & NLA_TYPE_MASK {
                    RVS_INFO_ATTR_CONN_FLUSHED => 8,
                    RVS_INFO_ATTR_PAD => 0,
                    _ => return Err(format!("unexpected attribute {kind:#x} in a flush reply")),
                };
                if v.len() != want {
                    return Err(format!("flush reply attribute {kind} is {} bytes", v.len()));
                }
                counted |= kind & NLA_TYPE_MASK == RVS_INFO_ATTR_CONN_FLUSHED;
                Ok(())
            })?;
            if !counted {
                return Err("flush reply without CONN_FLUSHED".into());
            }
        }
        _ => return Err(format!("reply with unexpected command {cmd}")),
    }
    Ok(cmd)
}

/// Parses one received datagram. `family` is the RVS family id; replies
/// of the controller (GENL_ID_CTRL) are always accepted, only checked for
/// a genl header.
pub fn parse_datagram(buf: &[u8], portid: u32, family: u16) -> Result<Vec<Answer>, String> {
    let mut out = Vec::new();
    let mut off = 0;
    if buf.is_empty() {
        return Err("empty datagram".into());
    }
    while off < buf.len() {
        if off + NLMSG_HDRLEN > buf.len() {
            return Err(format!("netlink header cut at {off} of {}", buf.len()));
        }
        let len = u32_at(buf, off) as usize;
        let ty = u16_at(buf, off + 4);
        let flags = u16_at(buf, off + 6);
        let seq = u32_at(buf, off + 8);
        let pid = u32_at(buf, off + 12);
        if len < NLMSG_HDRLEN || off + len > buf.len() {
            return Err(format!(
                "nlmsg_len {len} at {off} of a {}-byte datagram",
                buf.len()
            ));
        }
        if pid != portid {
            return Err(format!("message for port {pid}, we are {portid}"));
        }
        let p = &buf[off + NLMSG_HDRLEN..off + len];
        match ty {
            NLMSG_ERROR => {
                if p.len() < 4 + NLMSG_HDRLEN {
                    return Err(format!("NLMSG_ERROR of {len} bytes"));
                }
                let errno = check_errno(u32_at(p, 0) as i32)?;
                let orig_len = u32_at(p, 4) as usize;
                let orig_seq = u32_at(p, 12);
                if orig_seq != seq {
                    return Err(format!("NLMSG_ERROR seq {seq} echoes seq {orig_seq}"));
                }
                let capped = flags & NLM_F_CAPPED != 0 || errno == 0;
                let echoed = if capped {
                    NLMSG_HDRLEN
                } else {
                    if orig_len < NLMSG_HDRLEN {
                        return Err(format!("echoed request length {orig_len}"));
                    }
                    (orig_len + 3) & !3
                };
                if 4 + echoed > p.len() {
                    return Err(format!(
                        "echoed request ({echoed} bytes) past the error message ({})",
                        p.len()
                    ));
                }
                let tlvs = &p[4 + echoed..];
                if flags & NLM_F_ACK_TLVS != 0 {
                    check_ext_ack(tlvs, orig_len)?;
                } else if !tlvs.is_empty() && !capped {
                    return Err(format!(
                        "{} trailing bytes without NLM_F_ACK_TLVS",
                        tlvs.len()
                    ));
                }
                out.push(Answer::Ack { seq, errno });
            }
            NLMSG_DONE => {
                if p.len() < 4 {
                    return Err(format!("NLMSG_DONE of {len} bytes"));
                }
                let errno = check_errno(u32_at(p, 0) as i32)?;
                if flags & NLM_F_ACK_TLVS != 0 {
                    check_ext_ack(&p[4..], 0)?;
                }
                out.push(Answer::Done { seq, errno });
            }
            // The controller's own replies: the "ctrl-type" header lie
            // re-addresses a request to it, and it may answer a
            // GETFAMILY-shaped payload with a real family description.
            GENL_ID_CTRL => {
                if p.len() < 4 {
                    return Err(format!("controller reply of {len} bytes"));
                }
                out.push(Answer::Reply { seq, cmd: p[0] })
            }
            t if t == family => out.push(Answer::Reply {
                seq,
                cmd: check_reply(p)?,
            }),
            _ => return Err(format!("unexpected message type {ty} (flags {flags:#x})")),
        }
        off += (len + 3) & !3;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u32, errno: i32, flags: u16, extra: &[u8]) -> Vec<u8> {
        let mut p = errno.to_ne_bytes().to_vec();
        p.extend_from_slice(&nlmsg(0x20, 5, seq, &[])[..16]);
        p.extend_from_slice(extra);
        let mut m = nlmsg(NLMSG_ERROR, flags, seq, &p);
        m[12..16].copy_from_slice(&77u32.to_ne_bytes());
        m
    }

    #[test]
    fn accepts_ack_and_error_with_extack() {
        assert_eq!(
            parse_datagram(&ack(3, 0, NLM_F_CAPPED, &[]), 77, 0x20),
            Ok(vec![Answer::Ack { seq: 3, errno: 0 }])
        );
        let mut tlv = Vec::new();
        Attr::raw(1, b"bad thing\0").encode(&mut tlv);
        let m = ack(4, -22, NLM_F_CAPPED | NLM_F_ACK_TLVS, &tlv);
        assert_eq!(
            parse_datagram(&m, 77, 0x20),
            Ok(vec![Answer::Ack { seq: 4, errno: 22 }])
        );
    }

    #[test]
    fn rejects_insane_errno_wrong_port_and_bad_tlvs() {
        assert!(parse_datagram(&ack(3, -524, NLM_F_CAPPED, &[]), 77, 0x20).is_err());
        assert!(parse_datagram(&ack(3, 5, NLM_F_CAPPED, &[]), 77, 0x20).is_err());
        assert!(parse_datagram(&ack(3, 0, NLM_F_CAPPED, &[]), 78, 0x20).is_err());
        let m = ack(
            4,
            -22,
            NLM_F_CAPPED | NLM_F_ACK_TLVS,
            &[9, 0, 1, 0, 0, 0, 0, 0],
        );
        assert!(parse_datagram(&m, 77, 0x20).is_err());
        let mut tlv = Vec::new();
        Attr::raw(1, b"no nul").encode(&mut tlv);
        let m = ack(4, -22, NLM_F_CAPPED | NLM_F_ACK_TLVS, &tlv);
        assert!(parse_datagram(&m, 77, 0x20).is_err());
    }

    #[test]
    fn rejects_truncation() {
        let m = ack(3, 0, NLM_F_CAPPED, &[]);
        for cut in 1..m.len() {
            assert!(parse_datagram(&m[..cut], 77, 0x20).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn config_reply_takes_every_setting_and_nothing_else() {
        let config = |attrs: &[Attr]| {
            let mut p = vec![RVS_CMD_SET_CONFIG, 1, 0, 0];
            for a in attrs {
                a.encode(&mut p);
            }
            let mut m = nlmsg(0x20, 0, 12, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        let mut all = vec![Attr::u32(RVS_CMD_ATTR_TIMEOUT_TCP, 900)];
        for s in rvs_core::settings::SETTINGS.iter() {
            all.push(Attr::u32(s.attr, s.default));
        }
        assert!(config(&all).is_ok(), "{:?}", config(&all));
        assert!(config(&[Attr::u32(RVS_CMD_ATTR_OP, 1)]).is_err());
        assert!(config(&[Attr::u16(rvs_core::settings::SETTINGS[0].attr, 1)]).is_err());
    }

    #[test]
    fn parses_replies_and_done() {
        let mut p = vec![RVS_CMD_NEW_SERVICE, 1, 0, 0];
        Attr::nest(RVS_CMD_ATTR_SERVICE, vec![Attr::u16(RVS_SVC_ATTR_AF, 2)]).encode(&mut p);
        let mut d = nlmsg(0x20, NLM_F_MULTI, 9, &p);
        d.extend(nlmsg(NLMSG_DONE, NLM_F_MULTI, 9, &0i32.to_ne_bytes()));
        for o in [12, 16 + p.len() + 12] {
            d[o..o + 4].copy_from_slice(&77u32.to_ne_bytes());
        }
        assert_eq!(
            parse_datagram(&d, 77, 0x20),
            Ok(vec![
                Answer::Reply { seq: 9, cmd: 1 },
                Answer::Done { seq: 9, errno: 0 }
            ])
        );
        // The controller answering a request re-addressed to it.
        let mut c = nlmsg(GENL_ID_CTRL, 0, 10, &[1, 2, 0, 0]);
        c[12..16].copy_from_slice(&77u32.to_ne_bytes());
        assert_eq!(
            parse_datagram(&c, 77, 0x20),
            Ok(vec![Answer::Reply { seq: 10, cmd: 1 }])
        );
        assert!(parse_datagram(&c[..18], 77, 0x20).is_err());
        // A flush reply: the count after its pad; nothing else, nothing less.
        let flush = |attrs: &[Attr]| {
            let mut p = vec![RVS_CMD_FLUSH_CONNS, 1, 0, 0];
            for a in attrs {
                a.encode(&mut p);
            }
            let mut m = nlmsg(0x20, 0, 11, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        let count = Attr::raw(RVS_INFO_ATTR_CONN_FLUSHED, &3u64.to_ne_bytes());
        let pad = Attr::raw(RVS_INFO_ATTR_PAD, &[]);
        assert_eq!(
            flush(&[pad.clone(), count.clone()]),
            Ok(vec![Answer::Reply {
                seq: 11,
                cmd: RVS_CMD_FLUSH_CONNS
            }])
        );
        assert!(flush(std::slice::from_ref(&pad)).is_err());
        assert!(flush(&[Attr::u32(RVS_INFO_ATTR_CONN_FLUSHED, 3)]).is_err());
        assert!(flush(&[count, Attr::u32(RVS_INFO_ATTR_VERSION, 1)]).is_err());
        // A dest entry's DRAIN: the seconds left, a u32.
        let dest = |drain: Attr| {
            let mut p = vec![RVS_CMD_NEW_DEST, 1, 0, 0];
            Attr::nest(
                RVS_CMD_ATTR_DEST,
                vec![Attr::be16(RVS_DEST_ATTR_PORT, 80), drain],
            )
            .encode(&mut p);
            let mut m = nlmsg(0x20, NLM_F_MULTI, 12, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        assert_eq!(
            dest(Attr::u32(RVS_DEST_ATTR_DRAIN, 25)),
            Ok(vec![Answer::Reply {
                seq: 12,
                cmd: RVS_CMD_NEW_DEST
            }])
        );
        assert!(dest(Attr::u16(RVS_DEST_ATTR_DRAIN, 25)).is_err());
        // A service's local addresses: a nest of at most 64 ADDRs of 4 or
        // 16 bytes (16 in an IPv6 service).
        let service = |attrs: Vec<Attr>| {
            let mut p = vec![RVS_CMD_NEW_SERVICE, 1, 0, 0];
            Attr::nest(RVS_CMD_ATTR_SERVICE, attrs).encode(&mut p);
            let mut m = nlmsg(0x20, NLM_F_MULTI, 13, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        let addr = |n: usize| Attr::raw(RVS_LADDR_ATTR_ADDR, &vec![10; n]);
        let af = |a: u16| Attr::u16(RVS_SVC_ATTR_AF, a);
        let laddrs = |v: Vec<Attr>| Attr::nest(RVS_SVC_ATTR_LADDRS, v);
        for ok in [
            vec![af(2), laddrs(vec![addr(16), addr(16)])],
            vec![laddrs(vec![addr(4)]), af(2)],
            vec![af(10), laddrs(vec![addr(16); 64])],
            vec![af(2), laddrs(vec![])],
            vec![af(2)],
        ] {
            assert_eq!(
                service(ok.clone()),
                Ok(vec![Answer::Reply {
                    seq: 13,
                    cmd: RVS_CMD_NEW_SERVICE
                }]),
                "{ok:?}"
            );
        }
        for bad in [
            vec![af(2), laddrs(vec![addr(16); 65])],
            vec![af(10), laddrs(vec![addr(4)])],
            vec![af(2), laddrs(vec![addr(5)])],
            vec![af(2), laddrs(vec![Attr::raw(2, &[10; 16])])],
            vec![
                af(2),
                laddrs(vec![Attr::nest(RVS_LADDR_ATTR_ADDR, vec![addr(16)])]),
            ],
            vec![
                af(2),
                Attr::raw(RVS_SVC_ATTR_LADDRS, &encode_attrs(&[addr(16)])),
            ],
        ] {
            assert!(service(bad.clone()).is_err(), "{bad:?}");
        }
        // A FullNAT or ENAT connection's local end: LADDR (16 bytes) and
        // LPORT (2) together, and only with forwarding methods 5 and 6.
        let conn = |attrs: Vec<Attr>| {
            let mut p = vec![RVS_CMD_GET_CONN, 1, 0, 0];
            Attr::nest(RVS_CMD_ATTR_CONN, attrs).encode(&mut p);
            let mut m = nlmsg(0x20, NLM_F_MULTI, 14, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        let fwd = |f: u32| Attr::u32(RVS_CONN_ATTR_FWD_METHOD, f);
        let la = |n: usize| Attr::raw(RVS_CONN_ATTR_LADDR, &vec![10; n]);
        let lp = Attr::be16(RVS_CONN_ATTR_LPORT, 1025);
        for ok in [
            vec![fwd(5), la(16), lp.clone()],
            vec![fwd(6), la(16), lp.clone()],
            vec![lp.clone(), la(16), fwd(0x100 | 5)],
            vec![fwd(0)],
            vec![fwd(5)],
        ] {
            assert_eq!(
                conn(ok.clone()),
                Ok(vec![Answer::Reply {
                    seq: 14,
                    cmd: RVS_CMD_GET_CONN
                }]),
                "{ok:?}"
            );
        }
        for bad in [
            vec![fwd(5), la(4), lp.clone()],
            vec![fwd(5), la(16), Attr::u32(RVS_CONN_ATTR_LPORT, 1025)],
            vec![fwd(5), la(16)],
            vec![fwd(5), lp.clone()],
            vec![fwd(0), la(16), lp.clone()],
            vec![la(16), lp.clone()],
        ] {
            assert!(conn(bad.clone()).is_err(), "{bad:?}");
        }
        // GET_INFO: the no-port (10) and no-room (11) counts are u64s, and
        // 12 is unknown.
        let info = |attrs: &[Attr]| {
            let mut p = vec![RVS_CMD_GET_INFO, 1, 0, 0];
            for a in attrs {
                a.encode(&mut p);
            }
            let mut m = nlmsg(0x20, 0, 15, &p);
            m[12..16].copy_from_slice(&77u32.to_ne_bytes());
            parse_datagram(&m, 77, 0x20)
        };
        let no_port = Attr::raw(RVS_INFO_ATTR_FULLNAT_NO_PORT, &7u64.to_ne_bytes());
        assert_eq!(
            info(&[Attr::u32(RVS_INFO_ATTR_VERSION, 1), pad.clone(), no_port]),
            Ok(vec![Answer::Reply {
                seq: 15,
                cmd: RVS_CMD_GET_INFO
            }])
        );
        assert!(info(&[Attr::u32(RVS_INFO_ATTR_FULLNAT_NO_PORT, 7)]).is_err());
        let no_room = Attr::raw(RVS_INFO_ATTR_ENAT_NO_ROOM, &7u64.to_ne_bytes());
        assert!(info(&[Attr::u32(RVS_INFO_ATTR_VERSION, 1), no_room]).is_ok());
        assert!(info(&[Attr::u32(RVS_INFO_ATTR_ENAT_NO_ROOM, 7)]).is_err());
        assert!(info(&[Attr::raw(12, &7u64.to_ne_bytes())]).is_err());
        // A reply whose nest overruns.
        let mut bad = d.clone();
        bad[16 + 4] = 0xff;
        assert!(parse_datagram(&bad, 77, 0x20).is_err());
    }
}
