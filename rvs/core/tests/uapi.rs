//! Checks the protocol constants of uapi.rs (rvs-core's mirror, used by
//! the decoders, rvsadm and the fuzzer) against the C header
//! rvs/uapi/rvs.h, the single source of the numbers: every constant of
//! either side must exist on the other with the same value.

// A host test: it may index, unwrap and panic (the crate's no-panic lints
// are for the code the kernel runs).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::BTreeMap;
use std::path::Path;

use rvs_core::uapi;

/// Numeric constants and strings of a C header.
#[derive(Debug, Default)]
struct Header {
    numbers: BTreeMap<String, i64>,
    strings: BTreeMap<String, String>,
    structs: BTreeMap<String, Vec<String>>,
}

fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b + 2..].find("*/").expect("unterminated comment");
                out.push(' ');
                rest = &rest[b + 2 + end + 2..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            (None, None) => {
                out.push_str(rest);
                return out;
            }
            (Some(_), None) => unreachable!(),
        }
    }
}

fn eval(expr: &str, known: &BTreeMap<String, i64>) -> Result<i64, String> {
    let e = expr.trim();
    if let Some(inner) = e.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        return eval(inner, known);
    }
    if let Some(i) = e.rfind('|') {
        return Ok(eval(&e[..i], known)? | eval(&e[i + 1..], known)?);
    }
    if let Some(i) = e.find("<<") {
        return Ok(eval(&e[..i], known)? << eval(&e[i + 2..], known)?);
    }
    for op in ['-', '+'] {
        if let Some(i) = e.rfind(op) {
            if i > 0 {
                let (a, b) = (eval(&e[..i], known)?, eval(&e[i + 1..], known)?);
                return Ok(if op == '-' { a - b } else { a + b });
            }
        }
    }
    if let Some(h) = e.strip_prefix("0x").or_else(|| e.strip_prefix("0X")) {
        return i64::from_str_radix(h.trim_end_matches(['u', 'U', 'l', 'L']), 16)
            .map_err(|x| format!("{e}: {x}"));
    }
    if e.starts_with(|c: char| c.is_ascii_digit()) {
        return e
            .trim_end_matches(['u', 'U', 'l', 'L'])
            .parse()
            .map_err(|x| format!("{e}: {x}"));
    }
    known
        .get(e)
        .copied()
        .ok_or_else(|| format!("unknown name '{e}'"))
}

/// Parses rvs.h, where every line must make sense.
fn parse_header(src: &str) -> Result<Header, String> {
    parse(src, false)
}

/// Parses a header, skipping (if `lenient`) the defines this small
/// evaluator cannot compute: function-like macros, multi-line masks.
fn parse(src: &str, lenient: bool) -> Result<Header, String> {
    let src = strip_comments(src);
    let mut h = Header::default();
    let mut lines = src.lines().peekable();
    let mut body = String::new();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if let Some(def) = t.strip_prefix("#define") {
            let mut parts = def.trim().splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or("").to_string();
            let value = parts.next().unwrap_or("").trim();
            if value.is_empty() {
                continue; // include guard
            }
            if let Some(s) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                h.strings.insert(name, s.to_string());
            } else {
                match eval(value, &h.numbers) {
                    Ok(v) => {
                        h.numbers.insert(name, v);
                    }
                    Err(_) if lenient => {}
                    Err(e) => return Err(e),
                }
            }
        } else if t.starts_with("enum") || t.starts_with("struct") {
            // Gather the whole body up to "};".
            body.clear();
            body.push_str(t);
            while !body.contains("};") {
                match lines.next() {
                    Some(l) => {
                        body.push(' ');
                        body.push_str(l.trim());
                    }
                    None => return Err(format!("unterminated block: {body}")),
                }
            }
            let open = body.find('{').ok_or("block without '{'")?;
            let close = body.rfind('}').ok_or("block without '}'")?;
            let name = body[..open]
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .to_string();
            let members = &body[open + 1..close];
            if t.starts_with("enum") {
                let mut next = 0i64;
                for m in members.split(',').map(str::trim).filter(|m| !m.is_empty()) {
                    let (n, v) = match m.split_once('=') {
                        Some((n, v)) => (n.trim(), eval(v, &h.numbers)?),
                        None => (m, next),
                    };
                    h.numbers.insert(n.to_string(), v);
                    next = v + 1;
                }
            } else {
                let fields = members
                    .split(';')
                    .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|f| !f.is_empty())
                    .collect();
                h.structs.insert(name, fields);
            }
        }
    }
    Ok(h)
}

/// Every disagreement between src/uapi.rs and the header.
fn mismatches(header_src: &str) -> Vec<String> {
    let h = match parse_header(header_src) {
        Ok(h) => h,
        Err(e) => return vec![format!("cannot parse header: {e}")],
    };
    let mut out = Vec::new();
    for (name, value) in uapi::ALL {
        match h.numbers.get(*name) {
            Some(v) if *v as u64 == *value => {}
            Some(v) => out.push(format!(
                "{name}: the mirror has {value:#x}, header has {v:#x}"
            )),
            None => out.push(format!("{name}: in the mirror but not in the header")),
        }
    }
    for (name, value) in &h.numbers {
        if name.starts_with("__") {
            continue; // enum terminators
        }
        if !uapi::ALL.iter().any(|(n, _)| n == name) {
            out.push(format!(
                "{name} = {value:#x}: in the header but not in the mirror"
            ));
        }
    }
    let strings = [
        ("RVS_GENL_NAME", uapi::RVS_GENL_NAME),
        ("RVS_IPVS_GENL_NAME", uapi::RVS_IPVS_GENL_NAME),
        ("RVS_GENL_MCGRP_EVENTS", uapi::RVS_GENL_MCGRP_EVENTS),
    ];
    for (name, ours) in strings {
        match h.strings.get(name) {
            Some(s) if s == ours => {}
            other => out.push(format!("{name}: header has {other:?}, the mirror {ours:?}")),
        }
    }
    for name in h.strings.keys() {
        if !strings.iter().any(|(n, _)| n == name) {
            out.push(format!(
                "string {name}: in the header but not in the mirror"
            ));
        }
    }
    match h.structs.get("rvs_flags") {
        Some(f) if f == &["__u32 flags", "__u32 mask"] => {
            assert_eq!(uapi::RVS_FLAGS_SIZE, 8);
        }
        other => out.push(format!("struct rvs_flags changed: {other:?}")),
    }
    out
}

fn header_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../uapi/rvs.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn constants_match_header() {
    let m = mismatches(&header_text());
    assert!(
        m.is_empty(),
        "src/uapi.rs and rvs/uapi/rvs.h disagree:\n{}",
        m.join("\n")
    );
}

#[test]
fn header_parser_sees_everything() {
    let h = parse_header(&header_text()).unwrap();
    assert_eq!(h.numbers["RVS_CMD_FLUSH"], 17);
    assert_eq!(h.numbers["RVS_CMD_GET_CONN"], 18);
    assert_eq!(h.numbers["RVS_CMD_FLUSH_CONNS"], 19);
    assert_eq!(h.numbers["RVS_CMD_APPLY"], 20);
    assert_eq!(h.numbers["RVS_CMD_MAX"], 20);
    assert_eq!(h.numbers["RVS_CMD_ATTR_OP"], 23);
    assert_eq!(h.numbers["RVS_OP_ATTR_CMD"], 3);
    assert_eq!(h.numbers["RVS_OP_ATTR_MAX"], 3);
    assert_eq!(h.numbers["RVS_CMD_ATTR_CONN"], 7);
    assert_eq!(h.numbers["RVS_CMD_ATTR_EXPIRE_NODEST_CONN"], 8);
    assert_eq!(h.numbers["RVS_CONN_ATTR_FWD_METHOD"], 11);
    assert_eq!(h.numbers["RVS_CONN_ATTR_DEST_AF"], 12);
    assert_eq!(h.numbers["RVS_CONN_ATTR_LPORT"], 14);
    assert_eq!(h.numbers["RVS_CONN_ATTR_MAX"], 14);
    assert_eq!(h.numbers["RVS_SVC_ATTR_LADDRS"], 13);
    assert_eq!(h.numbers["RVS_CONN_F_FULLNAT"], 5);
    assert_eq!(h.numbers["RVS_STATS_ATTR_PAD"], 11);
    assert_eq!(h.numbers["RVS_DEST_ATTR_TUN_FLAGS"], 15);
    assert_eq!(h.numbers["RVS_VERSION_CODE"], 0x010201);
    assert_eq!(h.strings["RVS_GENL_NAME"], "RVS");
    // Every numeric constant of the mirror was found in the header.
    assert!(h.numbers.len() > uapi::ALL.len());
}

#[test]
fn a_change_on_either_side_is_caught() {
    let src = header_text();
    // A command inserted in the middle renumbers the ones after it.
    let renumbered = src.replacen(
        "RVS_CMD_NEW_DEST,",
        "RVS_CMD_SOMETHING_NEW,\n\tRVS_CMD_NEW_DEST,",
        1,
    );
    assert_ne!(renumbered, src);
    let m = mismatches(&renumbered);
    assert!(
        m.iter().any(|l| l.starts_with("RVS_CMD_NEW_DEST:")),
        "{m:?}"
    );
    assert!(
        m.iter().any(|l| l.starts_with("RVS_CMD_SOMETHING_NEW")),
        "{m:?}"
    );
    // A changed define.
    let changed = src.replacen(
        "RVS_SVC_F_ONEPACKET\t0x0004",
        "RVS_SVC_F_ONEPACKET\t0x0008",
        1,
    );
    assert_ne!(changed, src);
    assert!(!mismatches(&changed).is_empty());
    // A constant removed from the header.
    let removed = src.replacen("#define RVS_DEST_WEIGHT_MAX\t65535", "", 1);
    assert_ne!(removed, src);
    assert!(mismatches(&removed)
        .iter()
        .any(|l| l.starts_with("RVS_DEST_WEIGHT_MAX")));
}

/// The kernel's own include/uapi/linux/ip_vs.h: from $RVS_IPVS_H
/// (tests/run-all points it into the test kernel's tree), else straight
/// from the linux-source-6.12 package's tarball.
fn kernel_ip_vs_h() -> String {
    kernel_header("include/uapi/linux/ip_vs.h")
}

/// A header of the kernel tree, `rel` from its top: beside $RVS_IPVS_H
/// (three levels below the top) if set, else from the tarball.
fn kernel_header(rel: &str) -> String {
    if let Ok(path) = std::env::var("RVS_IPVS_H") {
        let top = Path::new(&path)
            .ancestors()
            .nth(4)
            .expect("RVS_IPVS_H in a tree");
        let file = top.join(rel);
        return std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{} (from RVS_IPVS_H={path}): {e}", file.display()));
    }
    let tarball = "/usr/src/linux-source-6.12.tar.xz";
    let out = std::process::Command::new("tar")
        .args(["-xJOf", tarball, &format!("linux-source-6.12/{rel}")])
        .output()
        .unwrap_or_else(|e| panic!("tar: {e}"));
    assert!(
        out.status.success(),
        "cannot read {rel} from {tarball} (install linux-source-6.12: qemu/install-deps, \
         or set RVS_IPVS_H): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the header is text")
}

/// rvs.h's name for one of ip_vs.h's: IPVS_CMD_X and IP_VS_SVC_F_X become
/// RVS_CMD_X and RVS_SVC_F_X.
fn rvs_name(ipvs: &str) -> Option<String> {
    let rest = ipvs
        .strip_prefix("IPVS_")
        .or_else(|| ipvs.strip_prefix("IP_VS_"))?;
    Some(format!("RVS_{rest}"))
}

/// ip_vs.h's names that rvs.h need not have, and why.
const NOT_IN_RVS: &[(&str, &str)] = &[
    (
        "IP_VS_SO_",
        "the old setsockopt interface: rvs speaks generic netlink only",
    ),
    ("IP_VS_BASE_CTL", "setsockopt base"),
    ("IP_VS_STATE_", "sync daemon states (no sync daemon yet)"),
    (
        "IPVS_DAEMON_ATTR_",
        "sync daemon attributes (no sync daemon yet)",
    ),
    (
        "IP_VS_CONN_F_",
        "connection flags other than the forwarding methods are kernel-internal",
    ),
    ("IP_VS_SVC_F_SCHED_", "aliases of SCHED1..3"),
    (
        "IP_VS_TUNNEL_ENCAP_FLAG_",
        "tunnel flags: rvs.h names them RVS_TUN_F_*",
    ),
    ("IP_VS_IFNAME_MAXLEN", "sync daemon interface name"),
    ("IP_VS_PEDATA_MAXLEN", "persistence engine data (no engine)"),
    ("IPVS_DEST_ATTR_TUN_", "checked below"),
];

/// Every number the kernel's ip_vs.h and rvs.h both name must agree, and
/// every generic netlink command and attribute of IPVS must exist in rvs.h
/// (rvs answers IPVS's message layout). `*_MAX` values may differ: rvs
/// numbers its additions after IPVS's last.
fn ipvs_mismatches(ipvs_src: &str, rvs_src: &str) -> Vec<String> {
    let ipvs = match parse(ipvs_src, true) {
        Ok(h) => h,
        Err(e) => return vec![format!("cannot parse ip_vs.h: {e}")],
    };
    let rvs = match parse_header(rvs_src) {
        Ok(h) => h,
        Err(e) => return vec![format!("cannot parse rvs.h: {e}")],
    };
    let mut out = Vec::new();
    for (name, value) in &ipvs.numbers {
        if name.starts_with("__") || name.ends_with("_MAX") || name.starts_with("_IP_VS") {
            continue;
        }
        let Some(ours) = rvs_name(name) else { continue };
        match rvs.numbers.get(&ours) {
            Some(v) if v == value => {}
            Some(v) => out.push(format!("{name} = {value:#x} but {ours} = {v:#x}")),
            None if NOT_IN_RVS.iter().any(|(p, _)| name.starts_with(p)) => {}
            None => out.push(format!("{name} = {value:#x} has no {ours} in rvs.h")),
        }
    }
    // Tunnel types and flags: IPVS's values under rvs.h's names.
    for (theirs, ours) in [
        ("IP_VS_CONN_F_TUNNEL_TYPE_IPIP", "RVS_TUN_TYPE_IPIP"),
        ("IP_VS_CONN_F_TUNNEL_TYPE_GUE", "RVS_TUN_TYPE_GUE"),
        ("IP_VS_CONN_F_TUNNEL_TYPE_GRE", "RVS_TUN_TYPE_GRE"),
        ("IP_VS_TUNNEL_ENCAP_FLAG_CSUM", "RVS_TUN_F_CSUM"),
        ("IP_VS_TUNNEL_ENCAP_FLAG_REMCSUM", "RVS_TUN_F_REMCSUM"),
        ("IPVS_DEST_ATTR_TUN_TYPE", "RVS_DEST_ATTR_TUN_TYPE"),
        ("IPVS_DEST_ATTR_TUN_PORT", "RVS_DEST_ATTR_TUN_PORT"),
        ("IPVS_DEST_ATTR_TUN_FLAGS", "RVS_DEST_ATTR_TUN_FLAGS"),
    ] {
        match (ipvs.numbers.get(theirs), rvs.numbers.get(ours)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => out.push(format!("{theirs} = {a:?} but {ours} = {b:?}")),
        }
    }
    match (
        ipvs.strings.get("IPVS_GENL_NAME"),
        rvs.strings.get("RVS_IPVS_GENL_NAME"),
    ) {
        (Some(a), Some(b)) if a == b => {}
        (a, b) => out.push(format!(
            "IPVS_GENL_NAME = {a:?} but RVS_IPVS_GENL_NAME = {b:?}"
        )),
    }
    out
}

#[test]
fn numbers_match_the_kernels_ip_vs_h() {
    let ipvs = kernel_ip_vs_h();
    let m = ipvs_mismatches(&ipvs, &header_text());
    assert!(
        m.is_empty(),
        "rvs/uapi/rvs.h and the kernel's include/uapi/linux/ip_vs.h disagree:\n{}",
        m.join("\n")
    );
    // The check sees the kernel's numbers at all.
    let h = parse(&ipvs, true).unwrap();
    assert_eq!(h.numbers["IPVS_CMD_ZERO"], 16);
    assert_eq!(h.numbers["IPVS_DEST_ATTR_TUN_FLAGS"], 15);
    assert_eq!(h.numbers["IP_VS_TUNNEL_ENCAP_FLAG_REMCSUM"], 2);
}

#[test]
fn a_number_that_differs_from_ip_vs_h_is_caught() {
    let ipvs = kernel_ip_vs_h();
    let rvs = header_text();
    let swapped = rvs.replacen("RVS_CONN_F_DROUTE\t0x0003", "RVS_CONN_F_DROUTE\t0x0005", 1);
    assert_ne!(swapped, rvs);
    let m = ipvs_mismatches(&ipvs, &swapped);
    assert!(
        m.iter().any(|l| l.starts_with("IP_VS_CONN_F_DROUTE")),
        "{m:?}"
    );
    let dropped = rvs.replacen("RVS_SVC_ATTR_PE_NAME,", "", 1);
    assert_ne!(dropped, rvs);
    let m = ipvs_mismatches(&ipvs, &dropped);
    assert!(
        m.iter().any(|l| l.starts_with("IPVS_SVC_ATTR_STATS64")),
        "{m:?}"
    );
}

/// The sync codec's numbers (rvs-core's sync module) are the kernel's:
/// the connection flags and PE limits of include/uapi/linux/ip_vs.h, and
/// the sync defaults and limits of include/net/ip_vs.h.
#[test]
fn sync_numbers_match_the_kernels_headers() {
    use rvs_core::sync::{self, flags, policy};
    // Multi-line masks (IP_VS_CONN_F_BACKUP_MASK) joined for the parser.
    let uapi = parse(&kernel_ip_vs_h().replace("\\\n", " "), true).unwrap();
    for (name, value) in flags::ALL {
        assert_eq!(uapi.numbers.get(*name), Some(&i64::from(*value)), "{name}");
    }
    assert_eq!(
        uapi.numbers["IP_VS_PENAME_MAXLEN"],
        sync::PENAME_MAXLEN as i64
    );
    assert_eq!(
        uapi.numbers["IP_VS_PEDATA_MAXLEN"],
        sync::PEDATA_MAXLEN as i64
    );

    // include/net/ip_vs.h is more than this parser reads: take the few
    // one-line defines wanted.
    let net = strip_comments(&kernel_header("include/net/ip_vs.h"));
    let define = |name: &str| {
        let line = net
            .lines()
            .find_map(|l| {
                let rest = l.trim().strip_prefix("#define")?.trim_start();
                let value = rest.strip_prefix(name)?;
                value.starts_with(char::is_whitespace).then_some(value)
            })
            .unwrap_or_else(|| panic!("no #define {name} in include/net/ip_vs.h"));
        eval(line, &BTreeMap::new()).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    assert_eq!(
        define("DEFAULT_SYNC_THRESHOLD"),
        i64::from(policy::DEFAULT_THRESHOLD)
    );
    assert_eq!(
        define("DEFAULT_SYNC_PERIOD"),
        i64::from(policy::DEFAULT_PERIOD)
    );
    assert_eq!(
        define("IPVS_SYNC_WAKEUP_RATE"),
        i64::from(policy::WAKEUP_RATE)
    );
    assert_eq!(
        define("IPVS_SYNC_PORTS_MAX"),
        i64::from(sync::SYNC_PORTS_MAX)
    );
    assert_eq!(
        define("IP_VS_CTPL_S_LAST"),
        i64::from(sync::TEMPLATE_STATES)
    );
}
