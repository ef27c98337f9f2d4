//! Mutators: structural (on the attribute tree), byte-level (on the
//! encoded attribute stream) and header-level (on the netlink framing).

use crate::msg::*;
use crate::rng::Rng;

/// Largest attribute stream a mutator produces (so the whole message stays
/// within 64 KiB plus headers).
pub const MAX_ATTRS_LEN: usize = 65536;

/// Paths to every attribute of the tree (indices from the top level).
fn paths(attrs: &[Attr], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, a) in attrs.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        if let Body::Nest(c) = &a.body {
            paths(c, prefix, out);
        }
        prefix.pop();
    }
}

fn list_at<'a>(attrs: &'a mut Vec<Attr>, path: &[usize]) -> &'a mut Vec<Attr> {
    match path.split_first() {
        None => attrs,
        Some((&i, rest)) => match &mut attrs[i].body {
            Body::Nest(c) => list_at(c, rest),
            Body::Raw(_) => unreachable!("paths only descend into nests"),
        },
    }
}

fn tree_size(attrs: &[Attr]) -> usize {
    attrs.iter().map(Attr::size).sum()
}

/// Names of the structural mutators (for the summary and tests).
pub const TREE_OPS: &[&str] = &[
    "duplicate",
    "drop",
    "retype",
    "flip-nested-flag",
    "byteorder-flag",
    "resize",
    "randomize",
    "oversize",
    "wrong-nest",
    "flatten",
    "wrap-in-nest",
    "bad-af",
    "interesting-u32",
];

/// Applies structural mutator `op` (index into TREE_OPS) somewhere in the
/// tree. Returns false if it did not apply (e.g. empty tree).
pub fn mutate_tree(r: &mut Rng, attrs: &mut Vec<Attr>, op: usize) -> bool {
    let mut all = Vec::new();
    paths(attrs, &mut Vec::new(), &mut all);
    if all.is_empty() {
        // Nothing to mutate: add a random attribute instead.
        attrs.extend(random_attrs(r, RVS_CMD_ATTR_MAX));
        return !attrs.is_empty();
    }
    let path = all[r.below(all.len() as u64) as usize].clone();
    let (last, parent) = path.split_last().unwrap();
    let budget = MAX_ATTRS_LEN.saturating_sub(tree_size(attrs));
    let list = list_at(attrs, parent);
    let a = &mut list[*last];
    match op {
        0 => {
            if a.size() > budget {
                return false;
            }
            let copy = a.clone();
            list.insert(*last, copy);
        }
        1 => {
            list.remove(*last);
        }
        2 => a.kind = (a.kind & !NLA_TYPE_MASK) | r.below(u64::from(RVS_SVC_ATTR_MAX) + 4) as u16,
        3 => a.kind ^= NLA_F_NESTED,
        4 => a.kind ^= NLA_F_NET_BYTEORDER,
        5 => {
            // Wrong size for the type: 0..=20 bytes.
            let n = r.range(0, 20);
            a.body = Body::Raw(r.bytes(n));
        }
        6 => {
            if let Body::Raw(b) = &mut a.body {
                let n = b.len();
                *b = r.bytes(n);
            } else {
                return false;
            }
        }
        7 => {
            // Oversized payload, up to what is left of 64 KiB.
            let n = r.range(1, budget.saturating_sub(8).max(1));
            let fill = r.pick(&[0u8, 0xff, b'A']);
            a.body = Body::Raw(vec![fill; n]);
        }
        8 => {
            // Attributes of the other nest (dest fields in a service and
            // vice versa), or a service nested in a service.
            let stray = if r.chance(1, 2) {
                destination(r, true)
            } else {
                service(r, true)
            };
            match (&mut a.body, r.chance(1, 2)) {
                (Body::Nest(c), true) => c.push(stray),
                (Body::Nest(c), false) => {
                    if let Body::Nest(sc) = stray.body {
                        c.extend(sc);
                    }
                }
                (Body::Raw(_), _) => list.push(stray),
            }
        }
        9 => {
            // A nest sent as raw bytes (children encoded, flag kept or not).
            if let Body::Nest(c) = &a.body {
                a.body = Body::Raw(encode_attrs(c));
                if r.chance(1, 2) {
                    a.kind &= !NLA_F_NESTED;
                }
            } else {
                return false;
            }
        }
        10 => {
            let inner = list.remove(*last);
            list.insert(*last, Attr::nest(r.below(8) as u16, vec![inner]));
        }
        11 => {
            // Address family / address length disagreement.
            let af = r.pick(&[0u16, 1, 2, 10, 0xffff]);
            match &mut a.body {
                Body::Nest(c) => c.push(Attr::u16(RVS_SVC_ATTR_AF, af)),
                Body::Raw(b) => {
                    let n = r.pick(&[0usize, 3, 4, 5, 15, 16, 17, 32]);
                    *b = r.bytes(n);
                }
            }
        }
        _ => {
            if let Body::Raw(b) = &mut a.body {
                *b = r.interesting_u32().to_ne_bytes().to_vec();
            } else {
                return false;
            }
        }
    }
    true
}

/// Offsets of every attribute header in an encoded stream (following the
/// lengths as written, descending into attributes flagged NLA_F_NESTED),
/// for length lies.
pub fn attr_offsets(buf: &[u8], base: usize, depth: u32, out: &mut Vec<usize>) {
    let mut off = 0usize;
    while off + NLA_HDRLEN <= buf.len() {
        let len = u16::from_ne_bytes([buf[off], buf[off + 1]]) as usize;
        let kind = u16::from_ne_bytes([buf[off + 2], buf[off + 3]]);
        out.push(base + off);
        if len < NLA_HDRLEN || off + len > buf.len() {
            break;
        }
        if depth < 3 && len > NLA_HDRLEN && kind & NLA_F_NESTED != 0 {
            attr_offsets(&buf[off + 4..off + len], base + off + 4, depth + 1, out);
        }
        off += (len + 3) & !3;
    }
}

pub const BYTE_OPS: &[&str] = &[
    "bitflip",
    "truncate",
    "len-lie",
    "append-garbage",
    "byte-set",
];

/// Applies byte-level mutator `op` to `buf`, a genl payload whose first
/// GENL_HDRLEN bytes are the genl header.
pub fn mutate_bytes(r: &mut Rng, buf: &mut Vec<u8>, op: usize) {
    match op {
        0 => {
            for _ in 0..r.range(1, 8) {
                if buf.is_empty() {
                    break;
                }
                let i = r.below(buf.len() as u64) as usize;
                buf[i] ^= 1 << r.below(8);
            }
        }
        1 => {
            let n = r.below(buf.len() as u64 + 1) as usize;
            buf.truncate(n);
        }
        2 => {
            let mut offs = Vec::new();
            if buf.len() > GENL_HDRLEN {
                attr_offsets(&buf[GENL_HDRLEN..], GENL_HDRLEN, 0, &mut offs);
            }
            if let Some(&o) = offs.get(r.below(offs.len() as u64) as usize) {
                let cur = u16::from_ne_bytes([buf[o], buf[o + 1]]);
                let lie = match r.below(5) {
                    0 => r.below(4) as u16,
                    1 => cur.wrapping_add(r.range(1, 8) as u16),
                    2 => cur.wrapping_sub(r.range(1, 8) as u16),
                    3 => 0xffff,
                    _ => r.next_u64() as u16,
                };
                buf[o..o + 2].copy_from_slice(&lie.to_ne_bytes());
            }
        }
        3 => {
            let n = r.pick(&[1usize, 2, 3, 4, 5, 8, 64, 1000]);
            if buf.len() + n <= MAX_ATTRS_LEN + GENL_HDRLEN {
                let g = r.bytes(n);
                buf.extend_from_slice(&g);
            }
        }
        _ => {
            if !buf.is_empty() {
                let i = r.below(buf.len() as u64) as usize;
                buf[i] = r.pick(&[0u8, 0xff, 0x7f, 0x80, 4, 8]);
            }
        }
    }
}

/// Header-level lies; the kernel may legitimately stay silent for these
/// (e.g. nlmsg_len past the end), so the sender resynchronises with a
/// ping afterwards instead of waiting for an answer.
pub const HDR_OPS: &[&str] = &[
    "len-longer",
    "len-shorter",
    "len-below-header",
    "no-request-flag",
    "random-flags",
    "two-messages",
    "trailing-garbage",
    "ctrl-type",
];

pub fn mutate_header(r: &mut Rng, m: &mut Vec<u8>, op: usize) {
    let set_len = |m: &mut Vec<u8>, l: u32| m[0..4].copy_from_slice(&l.to_ne_bytes());
    let real = m.len() as u32;
    match op {
        0 => set_len(m, real + r.range(1, 5000) as u32),
        1 => {
            let l = r.range(NLMSG_HDRLEN, m.len()) as u32;
            set_len(m, l)
        }
        2 => set_len(m, r.below(NLMSG_HDRLEN as u64) as u32),
        3 => {
            let f = u16::from_ne_bytes([m[6], m[7]]) & !NLM_F_REQUEST;
            m[6..8].copy_from_slice(&f.to_ne_bytes());
        }
        4 => {
            let f = r.next_u64() as u16;
            m[6..8].copy_from_slice(&f.to_ne_bytes());
        }
        5 => {
            let copy = m.clone();
            while m.len() % 4 != 0 {
                m.push(0);
            }
            m.extend_from_slice(&copy);
        }
        6 => {
            let n = r.range(1, 40);
            let g = r.bytes(n);
            m.extend_from_slice(&g);
        }
        _ => {
            // The message sent to the controller or a reserved type.
            let t = r.pick(&[0u16, 1, 2, 3, 15, GENL_ID_CTRL, 0xffff]);
            m[4..6].copy_from_slice(&t.to_ne_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(r: &mut Rng) -> Vec<Attr> {
        vec![service(r, true), destination(r, true)]
    }

    #[test]
    fn tree_mutators_are_deterministic_and_bounded() {
        for (op, _) in TREE_OPS.iter().enumerate() {
            let (mut r1, mut r2) = (Rng::new(op as u64), Rng::new(op as u64));
            let (mut a, mut b) = (sample(&mut r1), sample(&mut r2));
            for _ in 0..20 {
                mutate_tree(&mut r1, &mut a, op);
                mutate_tree(&mut r2, &mut b, op);
            }
            assert_eq!(a, b, "op {}", TREE_OPS[op]);
            assert!(
                encode_attrs(&a).len() <= MAX_ATTRS_LEN + 64 * 20,
                "op {}",
                TREE_OPS[op]
            );
        }
    }

    #[test]
    fn oversize_stays_under_64k() {
        let mut r = Rng::new(9);
        for _ in 0..200 {
            let mut a = sample(&mut r);
            for _ in 0..5 {
                mutate_tree(&mut r, &mut a, 7);
            }
            assert!(tree_size(&a) <= MAX_ATTRS_LEN + 4096);
        }
    }

    #[test]
    fn flip_nested_flag_toggles() {
        let mut r = Rng::new(3);
        let mut a = vec![Attr::u32(RVS_CMD_ATTR_TIMEOUT_TCP, 1)];
        assert!(mutate_tree(&mut r, &mut a, 3));
        assert_eq!(a[0].kind, RVS_CMD_ATTR_TIMEOUT_TCP | NLA_F_NESTED);
    }

    #[test]
    fn offsets_find_nested_headers() {
        let mut r = Rng::new(5);
        let m = GenlMsg::new(
            RVS_CMD_NEW_DEST,
            vec![service(&mut r, false), destination(&mut r, true)],
        );
        let p = m.payload();
        let mut offs = Vec::new();
        attr_offsets(&p[GENL_HDRLEN..], GENL_HDRLEN, 0, &mut offs);
        let n_children: usize = m
            .attrs
            .iter()
            .map(|a| match &a.body {
                Body::Nest(c) => c.len() + 1,
                Body::Raw(_) => 1,
            })
            .sum();
        assert_eq!(offs.len(), n_children);
        assert_eq!(offs[0], GENL_HDRLEN);
    }

    #[test]
    fn byte_mutators_never_panic_and_stay_bounded() {
        let mut r = Rng::new(11);
        for i in 0..5000 {
            let mut p = valid(&mut r, (i % 21) as u8).payload();
            for _ in 0..4 {
                let op = r.below(BYTE_OPS.len() as u64) as usize;
                mutate_bytes(&mut r, &mut p, op);
            }
            assert!(p.len() <= MAX_ATTRS_LEN + GENL_HDRLEN + 1024);
        }
    }

    #[test]
    fn header_lies() {
        let mut r = Rng::new(2);
        let base = nlmsg(0x20, NLM_F_REQUEST | NLM_F_ACK, 1, &[4, 1, 0, 0]);
        let mut m = base.clone();
        mutate_header(&mut r, &mut m, 0);
        assert!(u32::from_ne_bytes(m[0..4].try_into().unwrap()) > m.len() as u32);
        let mut m = base.clone();
        mutate_header(&mut r, &mut m, 2);
        assert!(u32::from_ne_bytes(m[0..4].try_into().unwrap()) < NLMSG_HDRLEN as u32);
        let mut m = base.clone();
        mutate_header(&mut r, &mut m, 5);
        assert_eq!(m.len(), 2 * base.len());
    }
}
