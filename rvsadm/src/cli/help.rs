//! The `--help` text: the usage summary, then a row for each command and
//! each option of the table in `opts.rs`.

use super::opts::{rows, Doc, Opt, Role, Takes};

/// Where the text of a command's row starts.
const COMMANDS_COLUMN: usize = 25;
/// Where the text of an option's row starts.
const OPTIONS_COLUMN: usize = 34;
/// Indent of an option's note.
const NOTE_INDENT: &str = "      ";

const HEAD: &str = "\
rvsadm - control tool for the rvs Layer-4 load balancer (ipvsadm-compatible)

Usage:
  rvsadm -A|-E -t|-u|--sctp-service|-f service-address [-s scheduler]
                [-p [timeout]] [-M netmask] [-b sched-flags] [-o]
                [--laddr address ...|--laddr none]
  rvsadm -D -t|-u|--sctp-service|-f service-address
  rvsadm -C
  rvsadm -R [--atomic]
  rvsadm -S [-n]
  rvsadm -a|-e -t|-u|--sctp-service|-f service-address -r server-address
                [-g|-i|-m|--fullnat|--enat] [-w weight]
                [-x upper-threshold] [-y lower-threshold]
                [--tun-type ipip|gue|gre] [--tun-port port]
                [--tun-nocsum|--tun-csum|--tun-remcsum]
  rvsadm -d -t|-u|--sctp-service|-f service-address -r server-address
                [--drain seconds]
  rvsadm [-L|-l] [-t|-u|--sctp-service|-f service-address [-6]] [-n] [--exact]
                [--sort|--nosort]
                [--stats|--rate|--thresholds|--persistent-conn|--tun-info] [--json]
  rvsadm -L|-l -c|--timeout|--daemon [-n] [--json]
  rvsadm -Z [-t|-u|--sctp-service|-f service-address]
  rvsadm --flush-conns -t|-u|--sctp-service|-f service-address
                [-r server-address] [--json]
  rvsadm --set tcp tcpfin udp
  rvsadm --set-option name=value [--set-option name=value ...]
  rvsadm -L|-l --options [--json]
  rvsadm --start-daemon master|backup [--mcast-interface interface]
                [--syncid syncid] [--sync-maxlen length]
                [--mcast-group address] [--mcast-port port] [--mcast-ttl ttl]
  rvsadm --stop-daemon master|backup
  rvsadm --monitor [--json] [--timestamp]
  rvsadm -h | -V | -v

Commands (exactly one; without any, rvsadm lists the table like -L):
";

const OPTIONS_HEAD: &str = "\nOptions:\n";

const FOOT: &str = "
Exit status: 0 success, 1 the operation failed (module not loaded, kernel
refused it, no permission), 2 invalid command line.
Every command except -h/-V needs CAP_NET_ADMIN and the rvs module loaded.
";

/// The text printed by `-h`.
pub fn text() -> String {
    let mut out = String::from(HEAD);
    let (options, commands): (Vec<_>, Vec<_>) = rows()
        .into_iter()
        .partition(|row| matches!(row[0].role, Role::Option(_)));
    for row in &commands {
        push_row(&mut out, row, COMMANDS_COLUMN);
    }
    out.push_str(OPTIONS_HEAD);
    for row in &options {
        push_row(&mut out, row, OPTIONS_COLUMN);
    }
    out.push_str(FOOT);
    out
}

/// The left column of a row: `  -t, --tcp-service ADDR[:PORT]`, with
/// room for a short name where there is none (`      --set ...`).
fn names(row: &[&Opt]) -> String {
    let first = row[0];
    let mut s = String::from(if first.short.is_some() {
        "  "
    } else {
        "      "
    });
    let names: Vec<String> = row.iter().flat_map(|o| o.shown_names()).collect();
    s.push_str(&names.join(", "));
    match first.takes {
        Takes::Nothing => {}
        Takes::Value(v) | Takes::RepeatedValue(v) => {
            s.push(' ');
            s.push_str(v.help);
        }
        Takes::OptionalValue(v) => {
            s.push_str(" [");
            s.push_str(v.help);
            s.push(']');
        }
    }
    s
}

/// One row: the names, the text from `column` on (on a line of its own
/// where the names leave no room), then the note if any.
fn push_row(out: &mut String, row: &[&Opt], column: usize) {
    let Doc::Row(text) = row[0].doc else {
        unreachable!("rows() starts a row with a Doc::Row")
    };
    let left = names(row);
    out.push_str(&left);
    if left.len() + 2 > column {
        out.push('\n');
        out.push_str(&" ".repeat(column));
    } else {
        out.push_str(&" ".repeat(column - left.len()));
    }
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(column));
        }
        out.push_str(line);
    }
    out.push('\n');
    for line in row[0].note.lines() {
        out.push_str(NOTE_INDENT);
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::opts::OPTS;

    #[test]
    fn every_shown_option_has_a_row() {
        let help = text();
        for o in OPTS {
            let shown = !matches!(o.doc, Doc::Hidden(_));
            assert_eq!(
                help.contains(&format!("--{}", o.long)),
                shown,
                "--{} in --help",
                o.long
            );
        }
        assert!(help.contains("\n  -L, -l, --list         list the virtual server table"));
        assert!(help.contains("\n      --set TCP TCPFIN UDP\n                         set the"));
        assert!(help.contains("\n      --tun-nocsum, --tun-csum    with gue or gre"));
        assert!(help.contains("\n  -p, --persistent [TIMEOUT]      persistent service"));
        // ipvsadm's --sctp-service has no short form: its row is indented
        // past the room of one.
        assert!(help.contains("\n      --sctp-service ADDR[:PORT]  SCTP virtual service\n"));
        assert!(help.contains("\n  rvsadm -D -t|-u|--sctp-service|-f service-address\n"));
        assert!(help
            .contains("\n      --flush-conns      end the connections of a service, or of one\n"));
        // The sync daemons: the commands, -L's option, and the options of
        // --start-daemon with their ranges and ipvsadm's defaults.
        for row in [
            "\n      --start-daemon master|backup\n                         start the connection sync daemon: a master\n",
            "\n      --stop-daemon master|backup\n                         stop the master or the backup sync daemon\n",
            "\n      --daemon                    with -L: list the connection sync daemons\n",
            "\n      --syncid ID                 with --start-daemon: the sync ID 0-255 a\n",
            "                                  backup accepts (default 0: a backup\n",
            "\n      --sync-maxlen LENGTH        with --start-daemon: the most bytes of a sync\n                                  message's UDP payload, 1-65507 (default: the\n",
            "\n      --mcast-interface IF        with --start-daemon: the interface the sync\n                                  messages leave or arrive by (default eth0,\n",
            "\n      --mcast-group ADDR          with --start-daemon: the IPv4 or IPv6 multicast\n                                  group (default 224.0.0.81)\n",
            "\n      --mcast-port PORT           with --start-daemon: the UDP port 1-65535\n                                  (default 8848)\n",
            "\n      --mcast-ttl TTL             with --start-daemon: the multicast TTL 1-255\n                                  (default 1)\n",
            "\n  rvsadm --stop-daemon master|backup\n",
            "\n  rvsadm --monitor [--json] [--timestamp]\n",
            "\n      --monitor          print each configuration change of this network\n                         namespace as it happens, from any client, as the\n",
            "\n      --timestamp                 with --monitor: begin each line with the local\n                                  time, HH:MM:SS.mmm (\"time\" in JSON)\n",
        ] {
            assert!(help.contains(row), "{row:?} not in:\n{help}");
        }
        // The defaults named are the module's (rvs-core's).
        let group = std::net::Ipv4Addr::from(rvs_core::sync::SYNC_GROUP_V4);
        assert!(help.contains(&format!("(default {group})")));
        assert!(help.contains(&format!("(default {})", rvs_core::sync::SYNC_PORT)));
    }
}
