//! Regression corpus of rvsadm's command line: what `cli::parse` (and
//! `cli::parse_restore_line` for `-R` input) makes of every line of
//! `cli_corpus.txt`, compared with `cli_corpus.snap`.
//!
//! The snapshot records the parser's behaviour (the command or the exact
//! error text); a change to it is a change of behaviour. After an intended
//! one, `RVS_UPDATE_SNAPSHOT=1 cargo test -p rvsadm --test cli_corpus`
//! rewrites the snapshot, and its diff shows what changed.

use std::path::PathBuf;

use rvsadm::cli;

const RESTORE: &str = "restore:";

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// Splits a command line at blanks; '...' or "..." quote a word.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unbalanced quote in corpus line {line:?}");
    out.extend(word);
    out
}

/// What the parser makes of one corpus line, in Debug form.
fn outcome(line: &str) -> String {
    if let Some(rest) = line.strip_prefix(RESTORE) {
        let input = rest.strip_prefix(' ').unwrap_or(rest);
        return format!("{:?}", cli::parse_restore_line(input));
    }
    let args = words(line);
    assert_eq!(
        args.first().map(String::as_str),
        Some("rvsadm"),
        "corpus line neither `rvsadm ...` nor `{RESTORE} ...`: {line:?}"
    );
    format!("{:?}", cli::parse(args))
}

/// The snapshot of the corpus: each line, then its outcome indented.
fn snapshot(corpus: &str) -> String {
    let mut out = String::new();
    for line in corpus.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        out.push_str(line);
        out.push_str("\n    ");
        out.push_str(&outcome(line));
        out.push('\n');
    }
    out
}

#[test]
fn corpus_matches_snapshot() {
    let corpus = std::fs::read_to_string(path("cli_corpus.txt")).expect("cli_corpus.txt");
    let got = snapshot(&corpus);
    let entries = got.lines().count() / 2;
    assert!(entries >= 150, "only {entries} corpus lines");
    let snap = path("cli_corpus.snap");
    if std::env::var_os("RVS_UPDATE_SNAPSHOT").is_some_and(|v| v == "1") {
        std::fs::write(&snap, &got).expect("writing cli_corpus.snap");
        return;
    }
    let want = std::fs::read_to_string(&snap).unwrap_or_default();
    if got == want {
        return;
    }
    // Name the entries that differ, in pairs of (line, outcome).
    let pairs = |s: &str| -> Vec<(String, String)> {
        let lines: Vec<&str> = s.lines().collect();
        lines
            .chunks(2)
            .map(|c| (c[0].to_string(), c.get(1).unwrap_or(&"").trim().to_string()))
            .collect()
    };
    let (got_pairs, want_pairs) = (pairs(&got), pairs(&want));
    let mut report = String::new();
    let mut differ = 0;
    for (i, (line, out)) in got_pairs.iter().enumerate() {
        let before = want_pairs.get(i);
        if before.map(|(l, o)| (l, o)) != Some((line, out)) {
            differ += 1;
            if differ <= 20 {
                let (wl, wo) = before.map_or(("<none>", "<none>"), |(l, o)| (l, o));
                report.push_str(&format!(
                    "\n{line}\n   now: {out}\n  snap: {wo}{}",
                    if wl == line {
                        String::new()
                    } else {
                        format!(" (snapshot line: {wl})")
                    }
                ));
            }
        }
    }
    if want_pairs.len() != got_pairs.len() {
        report.push_str(&format!(
            "\n{} entries now, {} in the snapshot",
            got_pairs.len(),
            want_pairs.len()
        ));
    }
    panic!(
        "{differ} of {} corpus lines parse differently from tests/cli_corpus.snap \
         (RVS_UPDATE_SNAPSHOT=1 rewrites it after an intended change):{report}",
        got_pairs.len()
    );
}

#[test]
fn corpus_words() {
    assert_eq!(words("rvsadm -A"), ["rvsadm", "-A"]);
    assert_eq!(
        words("rvsadm  -s ''\t-b 'a b'"),
        ["rvsadm", "-s", "", "-b", "a b"]
    );
    assert_eq!(
        words(r#"rvsadm -t "[::1]:80""#),
        ["rvsadm", "-t", "[::1]:80"]
    );
}
