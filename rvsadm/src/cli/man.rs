//! The man page's lists of commands and options (Documentation/rvsadm.8,
//! sections COMMANDS and OPTIONS) checked against the table in `opts.rs`:
//! each row of `--help` is a tagged paragraph there, in the same order,
//! with the same names and value. The paragraphs' text is the page's own.

use super::opts::{rows, Opt, Role, Takes};

/// `-` in roff (a minus sign, not a hyphen).
fn roff(text: &str) -> String {
    text.replace('-', "\\-")
}

/// The `.TP` tag of a row: `.BR \-t ", " \-\-tcp\-service " \fIservice\-address\fR"`.
fn tag(row: &[&Opt]) -> String {
    let names: Vec<String> = row
        .iter()
        .flat_map(|o| o.shown_names())
        .map(|n| roff(&n))
        .collect();
    let value = row[0].takes.value().map(|v| roff(v.man));
    let optional = matches!(row[0].takes, Takes::OptionalValue(_));
    match (&names[..], value) {
        ([name], None) => format!(".B {name}"),
        // `.BI \-\-set\-option " name" = value`: the `=` set in bold.
        ([name], Some(v)) if !optional => match v.split_once('=') {
            Some((left, right)) => format!(".BI {name} \" {left}\" = {right}"),
            None => format!(".BI {name} \" {v}\""),
        },
        (names, value) => {
            let mut tag = format!(".BR {}", names.join(" \", \" "));
            match value {
                Some(v) if optional => tag.push_str(&format!(" \" [\\fI{v}\\fR]\"")),
                Some(v) => tag.push_str(&format!(" \" \\fI{v}\\fR\"")),
                None => {}
            }
            tag
        }
    }
}

/// The tags of the top-level tagged paragraphs (`.TP`) of section
/// `section` (those inside `.RS`/`.RE`, such as the list of settings, are
/// not options).
fn tags_in(page: &str, section: &str) -> Vec<String> {
    let mut tags = Vec::new();
    let (mut inside, mut depth, mut tag_next) = (false, 0, false);
    for line in page.lines() {
        if let Some(name) = line.strip_prefix(".SH ") {
            inside = name.trim() == section;
            continue;
        }
        if !inside {
            continue;
        }
        if tag_next {
            tags.push(line.to_string());
            tag_next = false;
        } else if line == ".RS" || line.starts_with(".RS ") {
            depth += 1;
        } else if line == ".RE" {
            depth -= 1;
        } else if line == ".TP" && depth == 0 {
            tag_next = true;
        }
    }
    tags
}

#[test]
fn man_page_lists_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Documentation/rvsadm.8");
    let page = std::fs::read_to_string(path).expect("Documentation/rvsadm.8");
    let (options, commands): (Vec<_>, Vec<_>) = rows()
        .into_iter()
        .partition(|row| matches!(row[0].role, Role::Option(_)));
    for (section, rows) in [("COMMANDS", commands), ("OPTIONS", options)] {
        let want: Vec<String> = rows.iter().map(|r| tag(r)).collect();
        let got = tags_in(&page, section);
        if got != want {
            let show = |v: &[String]| v.iter().map(|t| format!("\n  {t}")).collect::<String>();
            panic!(
                "the {section} of Documentation/rvsadm.8 and the option table in \
                 rvsadm/src/cli/opts.rs disagree.\nThe page's tags:{}\nThe table's:{}",
                show(&got),
                show(&want)
            );
        }
    }
}

#[test]
fn tags() {
    let page = ".SH A\n.TP\n.B x\n.SH OPTIONS\n.TP\n.B \\-\\-a\ntext\n.RS\n.TP\n.B in\n.RE\n\
                .TP\n.BI \\-\\-b \" c\"\n.SH B\n.TP\n.B y\n";
    assert_eq!(
        tags_in(page, "OPTIONS"),
        [".B \\-\\-a", ".BI \\-\\-b \" c\""]
    );
    let by = |id| vec![super::opts::by_id(id)];
    assert_eq!(
        tag(&by("tcp-service")),
        r#".BR \-t ", " \-\-tcp\-service " \fIservice\-address\fR""#
    );
    assert_eq!(
        tag(&by("persistent")),
        r#".BR \-p ", " \-\-persistent " [\fItimeout\fR]""#
    );
    assert_eq!(tag(&by("list")), r#".BR \-L ", " \-l ", " \-\-list"#);
    assert_eq!(tag(&by("timeout")), r#".B \-\-timeout"#);
    assert_eq!(tag(&by("set")), r#".BI \-\-set " tcp tcpfin udp""#);
    assert_eq!(
        tag(&by("set-option")),
        r#".BI \-\-set\-option " name" = value"#
    );
}
