//! Shell completion scripts (`rvsadm --completions bash|zsh`), generated
//! from the table in `opts.rs` with ipvsadm's rules: before a command,
//! the commands and the options of `-L`; after one, only the options
//! allowed with it; the values of `-s`, `-b`, `--tun-type` and
//! `--set-option` from the tables that define them.

use std::fmt::Write;

use super::opts::{rows, Cmd, Complete, Doc, Opt, Role, Takes, Value, OPTS};
use crate::types::SCHED_FLAG_NAMES;
use rvs_core::sched::SchedKind;
use rvs_core::settings::SETTINGS;

/// The shells `--completions` writes a script for.
pub const SHELLS: &[&str] = &["bash", "zsh"];

/// The completion script for `shell`, or `None` for a shell not in
/// [`SHELLS`].
pub fn script(shell: &str) -> Option<String> {
    match shell {
        "bash" => Some(bash()),
        "zsh" => Some(zsh()),
        _ => None,
    }
}

/// The commands and their entries (the scripts name a command by its long
/// name).
fn commands() -> Vec<(Cmd, &'static Opt)> {
    OPTS.iter()
        .filter_map(|o| match o.role {
            Role::Command(c) => Some((c, o)),
            _ => None,
        })
        .collect()
}

/// What may be offered with command `cmd` (`None`: no command yet, so the
/// commands, the printing options and the options of `-L`).
fn offered(cmd: Option<Cmd>) -> Vec<&'static Opt> {
    OPTS.iter()
        .filter(|o| match (cmd, o.role) {
            (None, Role::Command(_) | Role::Exit(_)) => true,
            (None, Role::Option(_)) => o.allowed_with(Cmd::List),
            (Some(c), Role::Option(_)) => o.allowed_with(c),
            // A command that may be given again (`--set-option`).
            (Some(c), Role::Command(this)) => {
                this == c && matches!(o.takes, Takes::RepeatedValue(_))
            }
            (Some(_), Role::Exit(_)) => false,
        })
        .collect()
}

/// The short names whose value may follow in the same word (`-p60`): in
/// a bundle of short options, the rest of the word after one of them is
/// its value.
fn shorts_with_value() -> String {
    OPTS.iter()
        .filter(|o| !matches!(o.takes, Takes::Nothing))
        .flat_map(|o| o.short.into_iter().chain(o.short_alias))
        .collect()
}

/// The words a value is completed from (`None`: nothing to offer); a
/// list of them where [`is_list`].
fn words(complete: Complete) -> Option<Vec<String>> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    match complete {
        Complete::Nothing => None,
        Complete::Words(w) => Some(owned(w)),
        Complete::Schedulers => Some(SchedKind::ALL.iter().map(|k| k.name().into()).collect()),
        Complete::SchedFlags => Some(SCHED_FLAG_NAMES.iter().map(|f| f.0.into()).collect()),
        Complete::Settings => Some(SETTINGS.iter().map(|s| format!("{}=", s.name)).collect()),
    }
}

/// Whether the value is a comma-separated list of the words.
fn is_list(complete: Complete) -> bool {
    matches!(complete, Complete::SchedFlags)
}

/// Whether the completed word is to be continued (`NAME=`).
fn no_space(complete: Complete) -> bool {
    matches!(complete, Complete::Settings)
}

/// How many words a value takes (`--set TCP TCPFIN UDP`: 3).
fn value_words(v: &Value) -> usize {
    v.name.split_whitespace().count()
}

/// The description of an entry: its row's text on one line.
fn description(o: &Opt) -> String {
    let text = match o.doc {
        Doc::Row(t) | Doc::Hidden(t) => t,
        Doc::WithPrevious => rows()
            .into_iter()
            .find(|r| r.iter().any(|x| x.long == o.long))
            .and_then(|r| match r[0].doc {
                Doc::Row(t) => Some(t),
                _ => None,
            })
            .unwrap_or(""),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The shell's `case` patterns that pick the command: each command's
/// names, as a whole word (`-A|--add-service`) and as a letter of a
/// bundle (`A`).
fn command_patterns() -> Vec<(String, String, &'static str)> {
    commands()
        .into_iter()
        .map(|(_, o)| {
            let letters: String = o.short.iter().chain(&o.short_alias).collect();
            (o.names().join("|"), letters, o.long)
        })
        .collect()
}

fn bash() -> String {
    let mut s = String::from(
        "# bash completion for rvsadm, generated from its option table by\n\
         # `rvsadm --completions bash`. Load it with\n\
         #   source <(rvsadm --completions bash)\n\
         \n\
         # _rvsadm_list WORDS CUR: CUR completed as a comma-separated list of WORDS.\n\
         _rvsadm_list() {\n    \
             local pre=\n    \
             [[ $2 == *,* ]] && pre=${2%,*},\n    \
             COMPREPLY=($(compgen -P \"$pre\" -W \"$1\" -- \"${2##*,}\"))\n\
         }\n\
         \n\
         _rvsadm() {\n    \
             local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n    \
             local word cmd= i\n    \
             COMPREPLY=()\n    \
             # The value of the option before.\n    \
             case $prev in\n",
    );
    let mut nothing: Vec<String> = Vec::new();
    let mut later: Vec<(usize, String)> = Vec::new();
    for o in OPTS {
        let Some(v) = o.takes.value() else { continue };
        let names = o.names().join("|");
        for n in 2..=value_words(v) {
            later.push((n, names.clone()));
        }
        if matches!(o.takes, Takes::OptionalValue(_)) {
            // -p [TIMEOUT]: an option may follow, so offer the options.
            continue;
        }
        match words(v.complete) {
            None => nothing.push(names),
            Some(w) => {
                let w = w.join(" ");
                let _ = write!(s, "        {names})\n            ");
                if is_list(v.complete) {
                    let _ = writeln!(s, "_rvsadm_list '{w}' \"$cur\"; return ;;");
                } else {
                    if no_space(v.complete) {
                        s.push_str("compopt -o nospace 2>/dev/null\n            ");
                    }
                    let _ = writeln!(s, "COMPREPLY=($(compgen -W '{w}' -- \"$cur\")); return ;;");
                }
            }
        }
    }
    let _ = writeln!(
        s,
        "        {})\n            return ;;\n    esac",
        nothing.join("|")
    );
    for (n, names) in later {
        let _ = writeln!(
            s,
            "    # Value {n} of {names}.\n    \
             if [ \"$COMP_CWORD\" -gt {n} ]; then\n        \
                 case ${{COMP_WORDS[COMP_CWORD-{n}]}} in {names}) return ;; esac\n    \
             fi"
        );
    }
    s.push_str(
        "    # The command given so far.\n    \
         for word in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n        \
             case $word in\n",
    );
    let patterns = command_patterns();
    for (names, _, key) in &patterns {
        let _ = writeln!(s, "            {names}) cmd={key} ;;");
    }
    let _ = write!(
        s,
        "            --*) ;;\n            \
         -?*)\n                \
             for ((i = 1; i < ${{#word}}; i++)); do\n                    \
                 case ${{word:i:1}} in\n"
    );
    for (_, letters, key) in &patterns {
        for l in letters.chars() {
            let _ = writeln!(s, "                        {l}) cmd={key} ;;");
        }
    }
    let _ = write!(
        s,
        "                        [{}]) break ;;\n                    \
         esac\n                \
         done ;;\n        \
         esac\n    \
         done\n    \
         local opts\n    \
         case $cmd in\n",
        shorts_with_value()
    );
    let offer = |cmd: Option<Cmd>| -> String {
        offered(cmd)
            .iter()
            .flat_map(|o| o.shown_names())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(s, "        '') opts='{}' ;;", offer(None));
    for (cmd, o) in commands() {
        let _ = writeln!(s, "        {}) opts='{}' ;;", o.long, offer(Some(cmd)));
    }
    s.push_str(
        "    esac\n    \
         COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n\
         }\n\
         complete -F _rvsadm rvsadm\n",
    );
    s
}

/// `text` in single quotes for the shell.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Escapes `chars` (and backslashes) with a backslash, for `_arguments`.
fn escaped(text: &str, chars: &[char]) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '\\' || chars.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// zsh's `_arguments` action completing a value.
fn zsh_action(complete: Complete) -> String {
    match words(complete) {
        None => " ".into(),
        Some(w) if is_list(complete) => format!("_sequence compadd - {}", w.join(" ")),
        Some(w) if no_space(complete) => format!("{{compadd -S \"\" -- {}}}", w.join(" ")),
        Some(w) => format!("({})", w.join(" ")),
    }
}

/// The `_arguments` specs of one entry, one per name.
fn zsh_specs(o: &Opt) -> Vec<String> {
    let mut excluded: Vec<String> = o.shown_names();
    if let Some(group) = o.group {
        for peer in OPTS.iter().filter(|p| p.group == Some(group)) {
            if peer.long != o.long {
                excluded.extend(peer.shown_names());
            }
        }
    }
    let repeated = matches!(o.takes, Takes::RepeatedValue(_));
    let prefix = if repeated {
        "*".to_string()
    } else {
        format!("({})", excluded.join(" "))
    };
    let value = |v: &Value, optional: bool| -> String {
        let mut out = String::new();
        for (i, word) in v.name.split_whitespace().enumerate() {
            out.push_str(if optional { "::" } else { ":" });
            out.push_str(&escaped(word, &[':']));
            out.push(':');
            out.push_str(&if i == 0 {
                zsh_action(v.complete)
            } else {
                " ".into()
            });
        }
        out
    };
    let desc = escaped(&description(o), &['[', ']']);
    o.shown_names()
        .iter()
        .map(|name| {
            let long = name.starts_with("--");
            // A short option's value in the same word (`-p60`) or the
            // next; a long option's in the next (as ipvsadm's are written).
            let suffix = |v: &Value| {
                if value_words(v) == 1 && !long {
                    "+"
                } else {
                    ""
                }
            };
            let (suffix, arg) = match o.takes {
                Takes::Nothing => ("", String::new()),
                Takes::Value(v) | Takes::RepeatedValue(v) => (suffix(&v), value(&v, false)),
                Takes::OptionalValue(v) => (suffix(&v), value(&v, true)),
            };
            single_quoted(&format!("{prefix}{name}{suffix}[{desc}]{arg}"))
        })
        .collect()
}

fn zsh() -> String {
    let mut s = String::from(
        "#compdef rvsadm\n\
         # zsh completion for rvsadm, generated from its option table by\n\
         # `rvsadm --completions zsh`. Install it as _rvsadm in a directory of\n\
         # $fpath, or load it with: source <(rvsadm --completions zsh)\n\
         \n\
         _rvsadm() {\n  \
             local cmd= word i\n  \
             # The command given so far.\n  \
             for word in ${words[2,CURRENT-1]}; do\n    \
                 case $word in\n",
    );
    let patterns = command_patterns();
    for (names, _, key) in &patterns {
        let _ = writeln!(s, "      ({names}) cmd={key} ;;");
    }
    let _ = write!(
        s,
        "      (--*) ;;\n      \
         (-?*)\n        \
             for (( i = 2; i <= $#word; i++ )); do\n          \
                 case $word[i] in\n"
    );
    for (_, letters, key) in &patterns {
        for l in letters.chars() {
            let _ = writeln!(s, "            ({l}) cmd={key} ;;");
        }
    }
    let _ = write!(
        s,
        "            ([{}]) break ;;\n          \
         esac\n        \
         done ;;\n    \
         esac\n  \
         done\n  \
         local -a specs\n  \
         case $cmd in\n",
        shorts_with_value()
    );
    let specs = |cmd: Option<(Cmd, &'static Opt)>| -> String {
        // After a command, its own spec too, for its values (`--set`) and
        // to repeat it (`--set-option`).
        let mut opts = offered(cmd.map(|c| c.0));
        if let Some((_, o)) = cmd {
            if !opts.iter().any(|x| x.long == o.long) {
                opts.insert(0, o);
            }
        }
        opts.iter()
            .flat_map(|o| zsh_specs(o))
            .map(|spec| format!("      {spec}\n"))
            .collect()
    };
    let _ = write!(s, "    ('') specs=(\n{}    ) ;;\n", specs(None));
    for (cmd, o) in commands() {
        let _ = write!(
            s,
            "    ({}) specs=(\n{}    ) ;;\n",
            o.long,
            specs(Some((cmd, o)))
        );
    }
    s.push_str(
        "  esac\n  \
         _arguments -s -S $specs\n\
         }\n\
         \n\
         if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n  \
             _rvsadm \"$@\"\n\
         else\n  \
             compdef _rvsadm rvsadm\n\
         fi\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    /// Whether `text` holds `name` as a whole option name (`--set` not
    /// only as the start of `--set-option`).
    fn has_option(text: &str, name: &str) -> bool {
        text.match_indices(name).any(|(i, _)| {
            let next = text[i + name.len()..].chars().next();
            !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '-')
        })
    }

    #[test]
    fn every_long_option_in_both_scripts() {
        for shell in SHELLS {
            let text = script(shell).unwrap();
            for o in OPTS {
                let name = format!("--{}", o.long);
                assert!(
                    has_option(&text, &name),
                    "{name} missing from the {shell} script"
                );
            }
        }
        assert!(script("fish").is_none());
    }

    /// Runs `program` with `input` on standard input; `None` if it is not
    /// installed.
    fn run(program: &str, args: &[&str], input: &str) -> Option<(bool, String, String)> {
        let mut child = match Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("{program}: {e}"),
        };
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        Some((
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    #[test]
    fn shells_accept_the_scripts() {
        for shell in SHELLS {
            match run(shell, &["-n"], &script(shell).unwrap()) {
                None => eprintln!("{shell} not installed: its script's syntax is not checked"),
                Some((ok, _, err)) => assert!(ok, "{shell} -n refused the script: {err}"),
            }
        }
    }

    #[test]
    fn bash_completes_as_ipvsadm() {
        let cases: &[(&str, &str)] = &[
            // The command line before the cursor, then what is offered.
            ("rvsadm -a -t 10.0.0.1:80 --w", "--weight"),
            ("rvsadm -e -t 10.0.0.1:80 -r 10.0.1.1 --tun-t", "--tun-type"),
            ("rvsadm -A -t 10.0.0.1:80 --tun", ""),
            ("rvsadm --tun", "--tun-info"),
            ("rvsadm -Ln --st", "--stats"),
            ("rvsadm -L --add", ""),
            ("rvsadm --add-se", "--add-server --add-service"),
            ("rvsadm -sdh --add-se", "--add-server --add-service"),
            ("rvsadm -A -t 10.0.0.1:80 -s w", "wlc wrr"),
            ("rvsadm -A -s sh -b sh-fallback,sh-p", "sh-fallback,sh-port"),
            ("rvsadm -a -i --tun-type g", "gre gue"),
            ("rvsadm --set-option conn_", "conn_max= conn_reuse_mode="),
            ("rvsadm --set-option conn_m", "conn_max="),
            ("rvsadm --completions ", "bash zsh"),
            ("rvsadm --set 1 ", ""),
            ("rvsadm --set 1 2 ", ""),
            ("rvsadm -A -t ", ""),
            ("rvsadm -A -p --o", "--ops"),
            ("rvsadm -S -", "--numeric -n"),
            ("rvsadm --set-option conntrack=1 --", "--set-option"),
            ("rvsadm -C --", ""),
        ];
        let mut input = script("bash").unwrap();
        for (line, _) in cases {
            let words: Vec<&str> = line.split(' ').collect();
            let quoted: Vec<String> = words.iter().map(|w| single_quoted(w)).collect();
            let _ = writeln!(
                input,
                "COMP_WORDS=({}); COMP_CWORD={}; _rvsadm; echo \"${{COMPREPLY[*]}}\"",
                quoted.join(" "),
                words.len() - 1
            );
        }
        let Some((ok, out, err)) = run("bash", &[], &input) else {
            eprintln!("bash not installed: completions not tried");
            return;
        };
        assert!(ok, "bash failed: {err}");
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got.len(), cases.len(), "{out}\n{err}");
        for ((line, want), got) in cases.iter().zip(got) {
            let mut got: Vec<&str> = got.split_whitespace().collect();
            got.sort_unstable();
            assert_eq!(got.join(" "), *want, "completing {line:?}");
        }
    }
}
