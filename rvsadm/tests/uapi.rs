//! Checks rvsadm's protocol constants (src/uapi.rs) against the C header
//! rvs/uapi/rvs.h, the single source of the numbers: every constant of
//! either side must exist on the other with the same value.

use std::collections::BTreeMap;
use std::path::Path;

use rvsadm::uapi;

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

fn parse_header(src: &str) -> Result<Header, String> {
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
                let v = eval(value, &h.numbers)?;
                h.numbers.insert(name, v);
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
            Some(v) => out.push(format!("{name}: rvsadm has {value:#x}, header has {v:#x}")),
            None => out.push(format!("{name}: in rvsadm but not in the header")),
        }
    }
    for (name, value) in &h.numbers {
        if name.starts_with("__") {
            continue; // enum terminators
        }
        if !uapi::ALL.iter().any(|(n, _)| n == name) {
            out.push(format!(
                "{name} = {value:#x}: in the header but not in rvsadm"
            ));
        }
    }
    match h.strings.get("RVS_GENL_NAME") {
        Some(s) if s == uapi::RVS_GENL_NAME => {}
        other => out.push(format!("RVS_GENL_NAME: header has {other:?}")),
    }
    for name in h.strings.keys() {
        if name != "RVS_GENL_NAME" {
            out.push(format!("string {name}: in the header but not in rvsadm"));
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rvs/uapi/rvs.h");
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
    assert_eq!(h.numbers["RVS_CMD_MAX"], 18);
    assert_eq!(h.numbers["RVS_CMD_ATTR_CONN"], 7);
    assert_eq!(h.numbers["RVS_CMD_ATTR_EXPIRE_NODEST_CONN"], 8);
    assert_eq!(h.numbers["RVS_CONN_ATTR_FWD_METHOD"], 11);
    assert_eq!(h.numbers["RVS_CONN_ATTR_DEST_AF"], 12);
    assert_eq!(h.numbers["RVS_CONN_ATTR_MAX"], 12);
    assert_eq!(h.numbers["RVS_STATS_ATTR_PAD"], 11);
    assert_eq!(h.numbers["RVS_DEST_ATTR_TUN_FLAGS"], 15);
    assert_eq!(h.numbers["RVS_VERSION_CODE"], 0x010201);
    assert_eq!(h.strings["RVS_GENL_NAME"], "RVS");
    // Every numeric constant of rvsadm was found in the header.
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
