//! rvsadm entry point: parse the command line, talk to the module, print.

use std::io::{self, Write};
use std::process::ExitCode;

use rvsadm::cli::{self, Command, Invocation, ListOptions};
use rvsadm::error::{Error, NlError, Op, EXIT_OK};
use rvsadm::msg;
use rvsadm::netlink::{Client, ConnectError, Reply};
use rvsadm::output::{self, Entry};
use rvsadm::uapi;

/// What the command dispatch needs from a connection to the module.
trait Transport {
    fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError>;
    fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError>;
    fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError>;
}

impl Transport for Client {
    fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError> {
        Client::execute(self, cmd, attrs)
    }
    fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError> {
        Client::get(self, cmd, attrs)
    }
    fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError> {
        Client::dump(self, cmd, attrs)
    }
}

/// Carries out a command; returns what to print on stdout.
fn run_command(t: &mut impl Transport, cmd: &Command) -> Result<String, Error> {
    let (op, nl_cmd, attrs) = match cmd {
        Command::AddService(s) => (
            Op::AddService,
            uapi::RVS_CMD_NEW_SERVICE,
            msg::service_attrs(s),
        ),
        Command::EditService(s) => (
            Op::EditService,
            uapi::RVS_CMD_SET_SERVICE,
            msg::service_attrs(s),
        ),
        Command::DeleteService(k) => (
            Op::DeleteService,
            uapi::RVS_CMD_DEL_SERVICE,
            msg::service_key_attrs(k),
        ),
        Command::Clear => (Op::Clear, uapi::RVS_CMD_FLUSH, Vec::new()),
        Command::AddServer(s, d) => (Op::AddServer, uapi::RVS_CMD_NEW_DEST, msg::dest_attrs(s, d)),
        Command::EditServer(s, d) => (
            Op::EditServer,
            uapi::RVS_CMD_SET_DEST,
            msg::dest_attrs(s, d),
        ),
        Command::DeleteServer(s, d) => (
            Op::DeleteServer,
            uapi::RVS_CMD_DEL_DEST,
            msg::del_dest_attrs(s, d),
        ),
        Command::List(opts) => return list(t, opts),
    };
    t.execute(nl_cmd, &attrs).map_err(Error::failed(op))?;
    Ok(String::new())
}

fn list(t: &mut impl Transport, opts: &ListOptions) -> Result<String, Error> {
    let reply = t
        .get(uapi::RVS_CMD_GET_INFO, &[])
        .map_err(Error::failed(Op::GetInfo))?;
    let info =
        msg::parse_info(&reply.attrs).map_err(|e| Error::failed(Op::GetInfo)(NlError::from(e)))?;

    let fail = Error::failed(Op::ListServices);
    let replies = match &opts.service {
        Some(key) => vec![t
            .get(uapi::RVS_CMD_GET_SERVICE, &msg::service_key_attrs(key))
            .map_err(fail)?],
        None => t.dump(uapi::RVS_CMD_GET_SERVICE, &[]).map_err(fail)?,
    };
    let mut entries = Vec::with_capacity(replies.len());
    for r in &replies {
        let service = msg::parse_service_reply(&r.attrs)
            .map_err(|e| Error::failed(Op::ListServices)(e.into()))?;
        let dest_replies = t
            .dump(
                uapi::RVS_CMD_GET_DEST,
                &msg::service_key_attrs(&service.key()),
            )
            .map_err(Error::failed(Op::ListServers))?;
        let dests = dest_replies
            .iter()
            .map(|d| msg::parse_dest_reply(&d.attrs, service.af))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::failed(Op::ListServers)(e.into()))?;
        entries.push(Entry { service, dests });
    }
    output::sort_entries(&mut entries);
    Ok(if opts.json {
        output::format_json(&info, &entries)
    } else {
        output::format_table(&info, &entries, opts.service.is_none())
    })
}

fn run() -> Result<String, Error> {
    let cmd = match cli::parse(std::env::args_os())? {
        Invocation::Help(text) | Invocation::Version(text) => return Ok(text),
        Invocation::Run(cmd) => cmd,
    };
    let mut client = Client::connect().map_err(|e| match e {
        ConnectError::NotLoaded => Error::NotLoaded,
        ConnectError::Nl(cause) => Error::Failed {
            op: Op::Connect,
            cause,
        },
    })?;
    run_command(&mut client, &cmd)
}

fn main() -> ExitCode {
    let code = match run() {
        Ok(text) => {
            let mut out = io::stdout().lock();
            // A closed pipe (rvsadm -L | head) is not an error worth a panic.
            let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
            EXIT_OK
        }
        Err(e) => {
            eprintln!("rvsadm: {e}");
            if let Error::Usage(_) = e {
                eprintln!("Try `rvsadm -h' or `rvsadm --help' for more information.");
            }
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvsadm::msg::AttrWriter;

    /// Records requests and answers from canned replies.
    #[derive(Default)]
    struct Fake {
        sent: Vec<(&'static str, u8, Vec<u8>)>,
        fail_execute: Option<i32>,
        services: Vec<Vec<u8>>,
        dests: Vec<Vec<u8>>,
    }

    impl Transport for Fake {
        fn execute(&mut self, cmd: u8, attrs: &[u8]) -> Result<(), NlError> {
            self.sent.push(("execute", cmd, attrs.to_vec()));
            match self.fail_execute {
                Some(errno) => Err(NlError::Kernel {
                    errno,
                    message: Some("Service not found".into()),
                }),
                None => Ok(()),
            }
        }
        fn get(&mut self, cmd: u8, attrs: &[u8]) -> Result<Reply, NlError> {
            self.sent.push(("get", cmd, attrs.to_vec()));
            if cmd == uapi::RVS_CMD_GET_INFO {
                let mut w = AttrWriter::new();
                w.put_u32(uapi::RVS_INFO_ATTR_VERSION, uapi::RVS_VERSION_CODE)
                    .put_u32(uapi::RVS_INFO_ATTR_CONN_TAB_SIZE, 4096);
                return Ok(Reply {
                    cmd: uapi::RVS_CMD_GET_INFO,
                    attrs: w.finish(),
                });
            }
            Ok(Reply {
                cmd: uapi::RVS_CMD_NEW_SERVICE,
                attrs: self.services[0].clone(),
            })
        }
        fn dump(&mut self, cmd: u8, attrs: &[u8]) -> Result<Vec<Reply>, NlError> {
            self.sent.push(("dump", cmd, attrs.to_vec()));
            let list = if cmd == uapi::RVS_CMD_GET_SERVICE {
                &self.services
            } else {
                &self.dests
            };
            Ok(list
                .iter()
                .map(|a| Reply {
                    cmd: cmd - 3, // NEW_SERVICE / NEW_DEST
                    attrs: a.clone(),
                })
                .collect())
        }
    }

    fn command(args: &[&str]) -> Command {
        let mut v = vec!["rvsadm"];
        v.extend_from_slice(args);
        match cli::parse(v).unwrap() {
            Invocation::Run(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn modifying_commands_send_the_right_request() {
        let cases: &[(&[&str], u8)] = &[
            (
                &["-A", "-t", "10.0.0.1:80", "-s", "rr"],
                uapi::RVS_CMD_NEW_SERVICE,
            ),
            (&["-E", "-t", "10.0.0.1:80"], uapi::RVS_CMD_SET_SERVICE),
            (&["-D", "-t", "10.0.0.1:80"], uapi::RVS_CMD_DEL_SERVICE),
            (&["-C"], uapi::RVS_CMD_FLUSH),
            (
                &["-a", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_NEW_DEST,
            ),
            (
                &["-e", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_SET_DEST,
            ),
            (
                &["-d", "-t", "10.0.0.1:80", "-r", "10.0.1.1"],
                uapi::RVS_CMD_DEL_DEST,
            ),
        ];
        for (args, want) in cases {
            let mut f = Fake::default();
            let out = run_command(&mut f, &command(args)).unwrap();
            assert_eq!(out, "");
            assert_eq!(f.sent.len(), 1, "{args:?}");
            assert_eq!((f.sent[0].0, f.sent[0].1), ("execute", *want), "{args:?}");
        }
        let mut f = Fake::default();
        run_command(&mut f, &Command::Clear).unwrap();
        assert!(f.sent[0].2.is_empty(), "FLUSH carries no attributes");
    }

    #[test]
    fn kernel_error_is_reported_with_context() {
        let mut f = Fake {
            fail_execute: Some(2),
            ..Fake::default()
        };
        let e = run_command(&mut f, &command(&["-E", "-t", "10.0.0.1:80"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "editing service failed: No such file or directory (Service not found)"
        );
        assert_eq!(e.exit_code(), 1);
    }

    fn service_reply(addr: [u8; 4], port: u16) -> Vec<u8> {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&addr);
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_SERVICE, |s| {
            s.put_u16(uapi::RVS_SVC_ATTR_AF, 2)
                .put_u16(uapi::RVS_SVC_ATTR_PROTOCOL, 6)
                .put(uapi::RVS_SVC_ATTR_ADDR, &a)
                .put_be16(uapi::RVS_SVC_ATTR_PORT, port)
                .put_str(uapi::RVS_SVC_ATTR_SCHED_NAME, "rr")
                .put(uapi::RVS_SVC_ATTR_FLAGS, &[0; 8]);
        });
        w.finish()
    }

    fn dest_reply(addr: [u8; 4], port: u16) -> Vec<u8> {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&addr);
        let mut w = AttrWriter::new();
        w.nest(uapi::RVS_CMD_ATTR_DEST, |d| {
            d.put(uapi::RVS_DEST_ATTR_ADDR, &a)
                .put_be16(uapi::RVS_DEST_ATTR_PORT, port)
                .put_u32(uapi::RVS_DEST_ATTR_FWD_METHOD, uapi::RVS_CONN_F_MASQ)
                .put_u32(uapi::RVS_DEST_ATTR_WEIGHT, 1);
        });
        w.finish()
    }

    #[test]
    fn list_queries_info_services_and_dests() {
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            dests: vec![dest_reply([10, 0, 1, 1], 80)],
            ..Fake::default()
        };
        let out = run_command(&mut f, &command(&["-L", "-n"])).unwrap();
        assert_eq!(
            out,
            "IP Virtual Server version 1.2.1 (size=4096)\n\
             Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
             TCP  10.0.0.1:80 rr\n  \
             -> 10.0.1.1:80                  Masq    1      0          0         \n"
        );
        let calls: Vec<(&str, u8)> = f.sent.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(
            calls,
            vec![
                ("get", uapi::RVS_CMD_GET_INFO),
                ("dump", uapi::RVS_CMD_GET_SERVICE),
                ("dump", uapi::RVS_CMD_GET_DEST),
            ]
        );
        assert!(f.sent[0].2.is_empty() && f.sent[1].2.is_empty());
        // GET_DEST names the service by AF, PROTOCOL, ADDR, PORT.
        let key = msg::service_key_attrs(&rvsadm::types::ServiceKey {
            protocol: rvsadm::types::Protocol::Tcp,
            addr: "10.0.0.1".parse().unwrap(),
            port: 80,
        });
        assert_eq!(f.sent[2].2, key);

        // One service: GET_SERVICE as a plain request, then JSON.
        let mut f = Fake {
            services: vec![service_reply([10, 0, 0, 1], 80)],
            ..Fake::default()
        };
        let out = run_command(&mut f, &command(&["-L", "-t", "10.0.0.1:80", "--json"])).unwrap();
        assert!(out.starts_with("{\"version\":\"1.2.1\""), "{out}");
        assert_eq!(
            (f.sent[1].0, f.sent[1].1),
            ("get", uapi::RVS_CMD_GET_SERVICE)
        );
        assert_eq!(f.sent[1].2, key);
    }
}
