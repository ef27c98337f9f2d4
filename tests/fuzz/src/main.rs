//! rvs-nlfuzz: a seeded fuzzer for the "RVS" generic netlink family.
//!
//! Sends valid requests for every command (0..=20 and random ones), then
//! mutated ones (structure, bytes, framing), and dumps it abandons midway,
//! and checks that every answer is well formed. See Documentation/hardening.md.
//!
//!   rvs-nlfuzz [--seed N] [--count N] [--seconds S] [--timeout-ms MS]
//!              [--flush-every N] [--family NAME] [--verbose]
//!
//! Exit status: 0 all answers well formed; 1 malformed answer, receive
//! timeout or socket error (other than ENOBUFS); 2 usage or setup error.

mod check;
mod msg;
mod mutate;
mod rng;
mod sock;

use check::{parse_datagram, Answer};
use msg::*;
use rng::Rng;
use sock::NlSock;
use std::collections::BTreeMap;
use std::io;
use std::process::exit;
use std::time::{Duration, Instant};

struct Opts {
    seed: u64,
    count: u64,
    seconds: u64,
    timeout: Duration,
    flush_every: u64,
    family: String,
    verbose: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: rvs-nlfuzz [--seed N] [--count N] [--seconds S] [--timeout-ms MS] [--flush-every N] [--family NAME] [--verbose]"
    );
    exit(2)
}

fn parse_num(s: Option<String>) -> u64 {
    let s = s.unwrap_or_else(|| usage());
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| usage())
}

fn parse_opts() -> Opts {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut o = Opts {
        seed: now ^ u64::from(std::process::id()),
        count: 100_000,
        seconds: 120,
        timeout: Duration::from_millis(5000),
        flush_every: 2000,
        family: "RVS".into(),
        verbose: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => o.seed = parse_num(args.next()),
            "--count" | "-n" => o.count = parse_num(args.next()),
            "--seconds" => o.seconds = parse_num(args.next()),
            "--timeout-ms" => o.timeout = Duration::from_millis(parse_num(args.next()).max(1)),
            "--flush-every" => o.flush_every = parse_num(args.next()).max(1),
            "--family" => o.family = args.next().unwrap_or_else(|| usage()),
            "--verbose" | "-v" => o.verbose = true,
            _ => usage(),
        }
    }
    o
}

enum Fail {
    Malformed(String),
    Timeout(String),
    Sock(io::Error),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Malformed(s) => write!(f, "malformed answer: {s}"),
            Fail::Timeout(s) => write!(f, "receive timeout: {s}"),
            Fail::Sock(e) => write!(f, "socket error: {e}"),
        }
    }
}

/// How strictly answers are matched to the request.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// Every answer carries the request's sequence number.
    Exact,
    /// Earlier (abandoned, lying) requests may still answer first, with
    /// any sequence number (still checked for form).
    AnyBefore,
}

#[derive(Default)]
struct Stats {
    sent: u64,
    control: u64,
    by_kind: BTreeMap<&'static str, u64>,
    by_errno: BTreeMap<i32, u64>,
    replies: u64,
    dump_entries: u64,
    enobufs: u64,
    silent_lies: u64,
    late_lie_answers: u64,
}

/// The answer a read waits for, and which others may come before it.
#[derive(Clone, Copy)]
struct Waiting<'a> {
    /// The request whose terminator ends the read.
    seq: u32,
    expect: Expect,
    /// Lying requests whose answers may still come (see `Fuzzer::lies`).
    lies: &'a [u32],
}

/// How many recent lying requests may still answer late.
const LIES_KEPT: usize = 16;

struct Fuzzer {
    o: Opts,
    rng: Rng,
    sock: NlSock,
    family: u16,
    seq: u32,
    buf: Vec<u8>,
    st: Stats,
    /// Sequence numbers of the latest lying requests. A lie can turn a
    /// request into a dump (random flags with NLM_F_DUMP, a message sent
    /// twice), and a dump larger than one datagram goes on as the socket
    /// is read: its later parts and DONE arrive during later exchanges.
    lies: Vec<u32>,
}

fn errno_name(e: i32) -> &'static str {
    match e {
        0 => "OK",
        1 => "EPERM",
        2 => "ENOENT",
        3 => "ESRCH",
        7 => "E2BIG",
        12 => "ENOMEM",
        13 => "EACCES",
        14 => "EFAULT",
        16 => "EBUSY",
        17 => "EEXIST",
        19 => "ENODEV",
        22 => "EINVAL",
        34 => "ERANGE",
        36 => "ENAMETOOLONG",
        61 => "ENODATA",
        71 => "EPROTO",
        75 => "EOVERFLOW",
        90 => "EMSGSIZE",
        93 => "EPROTONOSUPPORT",
        95 => "EOPNOTSUPP",
        97 => "EAFNOSUPPORT",
        105 => "ENOBUFS",
        _ => "?",
    }
}

fn hex(b: &[u8]) -> String {
    let mut s: String = b.iter().take(512).map(|x| format!("{x:02x}")).collect();
    if b.len() > 512 {
        s.push_str(&format!("... ({} bytes)", b.len()));
    }
    s
}

const RECV_BUF: usize = 256 * 1024;

impl Fuzzer {
    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    /// Reads answers on `sock` until the terminator (ACK/error or DONE) of
    /// `seq`; returns its errno. Every datagram is checked.
    fn read_until(
        sock: &NlSock,
        buf: &mut [u8],
        family: u16,
        w: Waiting<'_>,
        st: &mut Stats,
        count: bool,
    ) -> Result<Option<i32>, Fail> {
        let Waiting { seq, expect, lies } = w;
        loop {
            let n = match sock.recv(buf) {
                Ok(n) => n,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    return Err(Fail::Timeout(format!("no answer to seq {seq}")))
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    st.enobufs += 1;
                    return Ok(None);
                }
                Err(e) => return Err(Fail::Sock(e)),
            };
            if n > buf.len() {
                return Err(Fail::Malformed(format!(
                    "datagram of {n} bytes truncated to {}",
                    buf.len()
                )));
            }
            let answers = parse_datagram(&buf[..n], sock.portid, family)
                .map_err(|e| Fail::Malformed(format!("{e}; datagram: {}", hex(&buf[..n]))))?;
            for a in answers {
                if a.seq() != seq {
                    // After a lying header, trailing bytes parsed as
                    // further messages may carry any sequence number; a
                    // dump a lie started may answer exchanges later.
                    let late = lies.contains(&a.seq());
                    if expect == Expect::Exact {
                        if !late {
                            return Err(Fail::Malformed(format!(
                                "answer {a:?} while waiting for seq {seq}"
                            )));
                        }
                        st.late_lie_answers += 1;
                    }
                    if let (true, Answer::Ack { errno, .. }) = (count, &a) {
                        *st.by_errno.entry(*errno).or_default() += 1;
                    }
                    continue;
                }
                match a {
                    Answer::Reply { .. } => {
                        st.replies += 1;
                    }
                    Answer::Ack { errno, .. } | Answer::Done { errno, .. } => {
                        if count {
                            *st.by_errno.entry(errno).or_default() += 1;
                        }
                        return Ok(Some(errno));
                    }
                }
            }
        }
    }

    /// Sends `m` on the main socket and reads its answers.
    fn exchange(
        &mut self,
        m: &[u8],
        seq: u32,
        expect: Expect,
        count: bool,
    ) -> Result<Option<i32>, Fail> {
        if let Err(e) = self.sock.send(m) {
            if e.raw_os_error() == Some(libc::ENOBUFS) {
                self.st.enobufs += 1;
                return Ok(None);
            }
            return Err(Fail::Sock(e));
        }
        let r = Self::read_until(
            &self.sock,
            &mut self.buf,
            self.family,
            Waiting {
                seq,
                expect,
                lies: &self.lies,
            },
            &mut self.st,
            count,
        )?;
        if r.is_none() {
            // ENOBUFS: answers were lost; resynchronise.
            self.ping()?;
        }
        Ok(r)
    }

    /// A GET_INFO with ACK whose answer proves everything before it was
    /// read (answers to earlier requests are checked and skipped).
    fn ping(&mut self) -> Result<(), Fail> {
        for _ in 0..3 {
            let seq = self.next_seq();
            let m = nlmsg(
                self.family,
                NLM_F_REQUEST | NLM_F_ACK,
                seq,
                &GenlMsg::new(RVS_CMD_GET_INFO, vec![]).payload(),
            );
            self.st.control += 1;
            self.sock.send(&m).map_err(Fail::Sock)?;
            if Self::read_until(
                &self.sock,
                &mut self.buf,
                self.family,
                Waiting {
                    seq,
                    expect: Expect::AnyBefore,
                    lies: &self.lies,
                },
                &mut self.st,
                true,
            )?
            .is_some()
            {
                return Ok(());
            }
        }
        Err(Fail::Malformed("ping lost to ENOBUFS three times".into()))
    }

    fn control(&mut self, g: GenlMsg) -> Result<Option<i32>, Fail> {
        let seq = self.next_seq();
        let m = nlmsg(self.family, NLM_F_REQUEST | NLM_F_ACK, seq, &g.payload());
        self.st.control += 1;
        self.exchange(&m, seq, Expect::Exact, false)
    }

    /// Flush, then a known set of services (enough for multi-part dumps).
    fn flush_and_populate(&mut self) -> Result<(), Fail> {
        if let Some(e) = self.control(GenlMsg::new(RVS_CMD_FLUSH, vec![]))? {
            if e != 0 {
                return Err(Fail::Malformed(format!("FLUSH failed with errno {e}")));
            }
        }
        for h in 1..=40u8 {
            let key = |full: bool| {
                let mut v = vec![
                    Attr::u16(RVS_SVC_ATTR_AF, 2),
                    Attr::u16(RVS_SVC_ATTR_PROTOCOL, 6),
                    Attr::raw(
                        RVS_SVC_ATTR_ADDR,
                        &[10, 0, 202, h, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    ),
                    Attr::be16(RVS_SVC_ATTR_PORT, 80),
                ];
                if full {
                    v.push(Attr::raw(RVS_SVC_ATTR_SCHED_NAME, b"rr\0"));
                    v.push(Attr::raw(RVS_SVC_ATTR_FLAGS, &[0; 8]));
                    v.push(Attr::u32(RVS_SVC_ATTR_TIMEOUT, 0));
                    v.push(Attr::u32(RVS_SVC_ATTR_NETMASK, 0xffff_ffff));
                }
                Attr::nest(RVS_CMD_ATTR_SERVICE, v)
            };
            self.control(GenlMsg::new(RVS_CMD_NEW_SERVICE, vec![key(true)]))?;
            // FullNAT: the first five get local addresses (a separate
            // edit, so a refused one leaves the service) and a FullNAT
            // second real server, so dumps carry LADDRS and method 5.
            let fullnat = h <= 5;
            // ENAT: the next three get an ENAT second real server (TCP, the
            // service's port), so dumps carry method 6.
            let enat = (6..=8).contains(&h);
            if fullnat {
                let mut svc = key(true);
                if let Body::Nest(v) = &mut svc.body {
                    v.push(laddrs_of_kind(&mut self.rng, 2, 0));
                }
                self.control(GenlMsg::new(RVS_CMD_SET_SERVICE, vec![svc]))?;
            }
            if h <= 10 {
                for d in 1..=2u8 {
                    let dest = Attr::nest(
                        RVS_CMD_ATTR_DEST,
                        vec![
                            Attr::raw(
                                RVS_DEST_ATTR_ADDR,
                                &[10, 0, 203, d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            ),
                            Attr::be16(RVS_DEST_ATTR_PORT, 80),
                            Attr::u32(
                                RVS_DEST_ATTR_FWD_METHOD,
                                if fullnat && d == 2 {
                                    RVS_CONN_F_FULLNAT
                                } else if enat && d == 2 {
                                    RVS_CONN_F_ENAT
                                } else {
                                    0
                                },
                            ),
                            Attr::u32(RVS_DEST_ATTR_WEIGHT, 1),
                            Attr::u32(RVS_DEST_ATTR_U_THRESH, 0),
                            Attr::u32(RVS_DEST_ATTR_L_THRESH, 0),
                            Attr::u16(RVS_DEST_ATTR_ADDR_FAMILY, 2),
                        ],
                    );
                    self.control(GenlMsg::new(RVS_CMD_NEW_DEST, vec![key(false), dest]))?;
                }
            }
        }
        Ok(())
    }

    fn pick_cmd(&mut self) -> u8 {
        // Mostly the commands rvs implements, all of 0..=20 often, and
        // any u8 now and then.
        match self.rng.below(10) {
            0 => self.rng.next_u64() as u8,
            1..=3 => self.rng.range(0, 20) as u8,
            _ => self.rng.pick(&[1, 2, 3, 4, 5, 6, 7, 8, 15, 17, 19, 20]),
        }
    }

    fn flags_for(&mut self, g: &GenlMsg) -> u16 {
        let mut f = NLM_F_REQUEST | NLM_F_ACK;
        if g.dump {
            f |= NLM_F_DUMP;
        }
        if self.rng.chance(1, 10) {
            f |= self.rng.pick(&[
                NLM_F_ECHO,
                0x10,
                0x20,
                NLM_F_ROOT,
                NLM_F_MATCH,
                0x400,
                0x800,
                NLM_F_DUMP,
            ]);
        }
        f
    }

    fn mutated(&mut self, c: u8) -> Vec<u8> {
        let mut g = valid(&mut self.rng, c);
        for _ in 0..self.rng.range(1, 3) {
            let op = self.rng.below(mutate::TREE_OPS.len() as u64) as usize;
            mutate::mutate_tree(&mut self.rng, &mut g.attrs, op);
        }
        if self.rng.chance(1, 12) {
            g.version = self.rng.next_u64() as u8;
        }
        if self.rng.chance(1, 12) {
            g.reserved = self.rng.next_u64() as u16;
        }
        let mut p = g.payload();
        if self.rng.chance(1, 2) {
            for _ in 0..self.rng.range(1, 2) {
                let op = self.rng.below(mutate::BYTE_OPS.len() as u64) as usize;
                mutate::mutate_bytes(&mut self.rng, &mut p, op);
            }
        }
        p.truncate(MAX_MSG - NLMSG_HDRLEN);
        p
    }

    fn one(&mut self) -> Result<(), Fail> {
        let roll = self.rng.below(100);
        let c = self.pick_cmd();
        let seq = self.next_seq();
        self.st.sent += 1;
        let kind: &'static str;
        match roll {
            0..=24 => {
                kind = "valid";
                let g = valid(&mut self.rng, c);
                let f = self.flags_for(&g);
                let m = nlmsg(self.family, f, seq, &g.payload());
                self.exchange(&m, seq, Expect::Exact, true)?;
            }
            25..=74 => {
                kind = "mutated";
                let dump = self.rng.chance(1, 10);
                let p = self.mutated(c);
                let f = NLM_F_REQUEST | NLM_F_ACK | if dump { NLM_F_DUMP } else { 0 };
                let m = nlmsg(self.family, f, seq, &p);
                self.exchange(&m, seq, Expect::Exact, true)?;
            }
            75..=79 => {
                kind = "random";
                let n = self.rng.range(0, 64);
                let mut p = vec![c, self.rng.next_u64() as u8, 0, 0];
                p.extend(self.rng.bytes(n));
                let m = nlmsg(self.family, NLM_F_REQUEST | NLM_F_ACK, seq, &p);
                self.exchange(&m, seq, Expect::Exact, true)?;
            }
            80..=89 => {
                kind = "dump";
                let dc = if self.rng.chance(3, 4) {
                    self.rng.pick(&[RVS_CMD_GET_SERVICE, RVS_CMD_GET_DEST])
                } else {
                    c
                };
                let mut g = valid(&mut self.rng, dc);
                if dc == RVS_CMD_GET_DEST && self.rng.chance(1, 2) {
                    // A populated service with real servers.
                    g.attrs = vec![Attr::nest(
                        RVS_CMD_ATTR_SERVICE,
                        vec![
                            Attr::u16(RVS_SVC_ATTR_AF, 2),
                            Attr::u16(RVS_SVC_ATTR_PROTOCOL, 6),
                            Attr::raw(
                                RVS_SVC_ATTR_ADDR,
                                &[
                                    10,
                                    0,
                                    202,
                                    1 + self.rng.below(12) as u8,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                ],
                            ),
                            Attr::be16(RVS_SVC_ATTR_PORT, 80),
                        ],
                    )];
                }
                if self.rng.chance(1, 3) {
                    let op = self.rng.below(mutate::TREE_OPS.len() as u64) as usize;
                    mutate::mutate_tree(&mut self.rng, &mut g.attrs, op);
                }
                let m = nlmsg(
                    self.family,
                    NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
                    seq,
                    &g.payload(),
                );
                let before = self.st.replies;
                self.exchange(&m, seq, Expect::Exact, true)?;
                self.st.dump_entries += self.st.replies - before;
            }
            90..=94 => {
                kind = "dump-abandoned";
                self.abandoned_dump(seq)?;
            }
            _ => {
                kind = "header-lie";
                let g = valid(&mut self.rng, c);
                let mut m = nlmsg(self.family, NLM_F_REQUEST | NLM_F_ACK, seq, &g.payload());
                let op = self.rng.below(mutate::HDR_OPS.len() as u64) as usize;
                mutate::mutate_header(&mut self.rng, &mut m, op);
                if self.lies.len() == LIES_KEPT {
                    self.lies.remove(0);
                }
                self.lies.push(seq);
                match self.sock.send(&m) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => self.st.enobufs += 1,
                    // The socket layer may refuse a lie outright (e.g. a
                    // length below the header): that is an answer too.
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                    Err(e) => return Err(Fail::Sock(e)),
                }
                let before: u64 = self.st.by_errno.values().sum();
                self.ping()?;
                let after: u64 = self.st.by_errno.values().sum();
                // The ping's own ACK is counted too.
                if after - before <= 1 {
                    self.st.silent_lies += 1;
                }
            }
        }
        *self.st.by_kind.entry(kind).or_default() += 1;
        Ok(())
    }

    /// A dump on a fresh socket that is closed before the dump ends: not
    /// read at all, read through a tiny buffer, read one part, or
    /// interrupted by a second dump request.
    fn abandoned_dump(&mut self, seq: u32) -> Result<(), Fail> {
        let s = NlSock::open(self.o.timeout, self.rng.chance(1, 2)).map_err(Fail::Sock)?;
        let dc = self
            .rng
            .pick(&[RVS_CMD_GET_SERVICE, RVS_CMD_GET_SERVICE, RVS_CMD_GET_DEST]);
        let g = valid(&mut self.rng, dc);
        let m = nlmsg(
            self.family,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
            seq,
            &g.payload(),
        );
        s.send(&m).map_err(Fail::Sock)?;
        match self.rng.below(4) {
            0 => {}
            1 => {
                let n = self.rng.range(1, 256);
                let mut small = vec![0u8; n];
                match s.recv(&mut small) {
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                        return Err(Fail::Timeout(format!("no answer to dump seq {seq}")))
                    }
                    Err(e) => return Err(Fail::Sock(e)),
                }
            }
            2 => {
                let n = s.recv(&mut self.buf).map_err(|e| match e.raw_os_error() {
                    Some(libc::EAGAIN) => Fail::Timeout(format!("no answer to dump seq {seq}")),
                    _ => Fail::Sock(e),
                })?;
                parse_datagram(&self.buf[..n.min(self.buf.len())], s.portid, self.family)
                    .map_err(|e| Fail::Malformed(format!("dump part: {e}")))?;
            }
            _ => {
                let seq2 = self.next_seq();
                let g2 = valid(&mut self.rng, RVS_CMD_GET_SERVICE);
                let m2 = nlmsg(
                    self.family,
                    NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
                    seq2,
                    &g2.payload(),
                );
                s.send(&m2).map_err(Fail::Sock)?;
                self.st.sent += 1;
                Self::read_until(
                    &s,
                    &mut self.buf,
                    self.family,
                    Waiting {
                        seq: seq2,
                        expect: Expect::AnyBefore,
                        lies: &[],
                    },
                    &mut self.st,
                    true,
                )?;
            }
        }
        drop(s);
        Ok(())
    }

    fn summary(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        println!(
            "rvs-nlfuzz: seed={:#x} sent={} messages (+{} control: flush/populate/ping) in {:.1}s, {:.0} msgs/s",
            self.o.seed,
            self.st.sent,
            self.st.control,
            secs,
            self.st.sent as f64 / secs.max(1e-6)
        );
        let kinds: Vec<String> = self
            .st
            .by_kind
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!("rvs-nlfuzz: kinds: {}", kinds.join(" "));
        let errs: Vec<String> = self
            .st
            .by_errno
            .iter()
            .map(|(e, v)| format!("{}({e})={v}", errno_name(*e)))
            .collect();
        println!("rvs-nlfuzz: answers by errno: {}", errs.join(" "));
        println!(
            "rvs-nlfuzz: replies={} (dump entries {}), header lies answered by silence={}, late answers to lies={}, ENOBUFS={}",
            self.st.replies,
            self.st.dump_entries,
            self.st.silent_lies,
            self.st.late_lie_answers,
            self.st.enobufs
        );
    }
}

fn resolve_family(sock: &NlSock, name: &str, timeout: Duration) -> Result<u16, String> {
    let _ = timeout;
    sock.send(&getfamily(name, 1))
        .map_err(|e| format!("send: {e}"))?;
    let mut buf = vec![0u8; 65536];
    let mut found = None;
    loop {
        let n = sock.recv(&mut buf).map_err(|e| format!("recv: {e}"))?;
        let b = &buf[..n.min(buf.len())];
        let answers = parse_datagram(b, sock.portid, GENL_ID_CTRL)?;
        let mut id = None;
        let mut off = 0;
        while off + 20 <= b.len() {
            let len = u32::from_ne_bytes(b[off..off + 4].try_into().unwrap()) as usize;
            let ty = u16::from_ne_bytes([b[off + 4], b[off + 5]]);
            if ty == GENL_ID_CTRL && len >= 20 && off + len <= b.len() {
                check::walk_attrs(&b[off + 20..off + len], |k, p| {
                    if k == CTRL_ATTR_FAMILY_ID && p.len() >= 2 {
                        id = Some(u16::from_ne_bytes([p[0], p[1]]));
                    }
                    Ok(())
                })?;
            }
            off += (len.max(16) + 3) & !3;
        }
        found = found.or(id);
        for a in answers {
            if let Answer::Ack { errno, .. } = a {
                // The ACK ends the exchange (after the reply, if any).
                return match found {
                    Some(id) if errno == 0 => Ok(id),
                    _ => Err(format!(
                        "family {name:?} not found (errno {errno}: is rvs.ko loaded?)"
                    )),
                };
            }
        }
    }
}

fn main() {
    let o = parse_opts();
    println!(
        "rvs-nlfuzz: seed={:#x} count={} seconds={} (replay: rvs-nlfuzz --seed {:#x} --count {})",
        o.seed, o.count, o.seconds, o.seed, o.count
    );
    let sock = NlSock::open(o.timeout, false).unwrap_or_else(|e| {
        eprintln!("rvs-nlfuzz: netlink socket: {e}");
        exit(2)
    });
    let family = resolve_family(&sock, &o.family, o.timeout).unwrap_or_else(|e| {
        eprintln!("rvs-nlfuzz: {e}");
        exit(2)
    });
    println!("rvs-nlfuzz: family {} has id {family}", o.family);
    let host = sock::host_addrs();
    println!(
        "rvs-nlfuzz: {} IPv4 and {} IPv6 addresses of this namespace for FullNAT local addresses",
        host.0.len(),
        host.1.len()
    );
    let _ = HOST_ADDRS.set(host);
    let mut f = Fuzzer {
        rng: Rng::new(o.seed),
        sock,
        family,
        seq: 1,
        buf: vec![0u8; RECV_BUF],
        st: Stats::default(),
        lies: Vec::new(),
        o,
    };
    let start = Instant::now();
    let deadline = start + Duration::from_secs(f.o.seconds);
    let mut i = 0u64;
    let mut result = Ok(());
    while f.st.sent < f.o.count && Instant::now() < deadline {
        if i % f.o.flush_every == 0 {
            if let Err(e) = f.flush_and_populate() {
                result = Err(e);
                break;
            }
        }
        if let Err(e) = f.one() {
            result = Err(e);
            break;
        }
        i += 1;
        if f.o.verbose && i % 10_000 == 0 {
            println!(
                "rvs-nlfuzz: {i} messages, {:.1}s",
                start.elapsed().as_secs_f64()
            );
        }
    }
    // Leave nothing behind.
    if result.is_ok() {
        result = f.control(GenlMsg::new(RVS_CMD_FLUSH, vec![])).map(|_| ());
    }
    f.summary(start.elapsed());
    if let Err(e) = result {
        eprintln!(
            "rvs-nlfuzz: FAIL at message {i} (seed {:#x}): {e}",
            f.o.seed
        );
        eprintln!(
            "rvs-nlfuzz: replay with: rvs-nlfuzz --seed {:#x} --count {}",
            f.o.seed,
            i + 1
        );
        exit(1);
    }
    println!("rvs-nlfuzz: OK, every answer well formed");
}
