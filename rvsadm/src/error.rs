//! rvsadm's errors: what failed, why, and which exit code that means.

use std::fmt;
use std::io;

use crate::cli::UsageError;
use crate::msg::ParseError;
use crate::types::{DaemonState, IfName, DEFAULT_MCAST_IFN};

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code when an operation failed (kernel, permission, module missing).
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for an invalid command line.
pub const EXIT_USAGE: i32 = 2;

/// The operation rvsadm was carrying out, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Connect,
    AddService,
    EditService,
    DeleteService,
    Clear,
    AddServer,
    EditServer,
    DeleteServer,
    DrainServer,
    GetInfo,
    ListServices,
    ListServers,
    Zero,
    FlushConns,
    SetTimeouts,
    GetTimeouts,
    SetOptions,
    GetOptions,
    ListConnections,
    /// `--start-daemon`, on this interface.
    StartDaemon(DaemonState, IfName),
    StopDaemon(DaemonState),
    ListDaemons,
    /// `--monitor`: joining the events group, then receiving.
    Monitor,
    /// `-R --atomic`: the whole request.
    Restore,
}

impl Op {
    pub fn describe(self) -> String {
        let what = match self {
            Op::Connect => "talking to the rvs module",
            Op::AddService => "adding service",
            Op::EditService => "editing service",
            Op::DeleteService => "deleting service",
            Op::Clear => "clearing the table",
            Op::AddServer => "adding real server",
            Op::EditServer => "editing real server",
            Op::DeleteServer => "deleting real server",
            Op::DrainServer => "draining real server",
            Op::GetInfo => "getting module info",
            Op::ListServices => "listing services",
            Op::ListServers => "listing real servers",
            Op::Zero => "zeroing counters",
            Op::FlushConns => "flushing connections",
            Op::SetTimeouts => "setting timeouts",
            Op::GetTimeouts => "getting timeouts",
            Op::SetOptions => "setting options",
            Op::GetOptions => "getting options",
            Op::ListConnections => "listing connections",
            // Named with its interface, which the module's messages do
            // not name.
            Op::StartDaemon(state, ifn) => {
                return format!("starting {} sync daemon on {ifn}", state.name())
            }
            Op::StopDaemon(DaemonState::Master) => "stopping master sync daemon",
            Op::StopDaemon(DaemonState::Backup) => "stopping backup sync daemon",
            Op::ListDaemons => "listing sync daemons",
            Op::Monitor => "monitoring configuration changes",
            Op::Restore => "applying the rules atomically",
        };
        what.to_string()
    }
}

/// A failure of the netlink exchange itself.
#[derive(Debug)]
pub enum NlError {
    /// The kernel answered with an error: a positive errno and the
    /// extended-ack message, if it sent one.
    Kernel { errno: i32, message: Option<String> },
    /// The socket failed.
    Io(io::Error),
    /// No answer in time.
    Timeout,
    /// The answer could not be understood.
    Protocol(String),
}

impl From<io::Error> for NlError {
    fn from(e: io::Error) -> NlError {
        NlError::Io(e)
    }
}

impl From<ParseError> for NlError {
    fn from(e: ParseError) -> NlError {
        NlError::Protocol(e.0)
    }
}

/// Everything that makes rvsadm exit non-zero.
#[derive(Debug)]
pub enum Error {
    Usage(UsageError),
    /// Generic netlink has no family "RVS".
    NotLoaded,
    Failed {
        op: Op,
        cause: NlError,
    },
    /// Writing the listing to standard output failed.
    Output(io::Error),
    /// `-R`: a line of the input failed (1-based line number, its text,
    /// and why); the lines before it were applied, the rest were not.
    Restore {
        line: usize,
        text: String,
        cause: Box<Error>,
    },
    /// `-R --atomic`: a line was refused (1-based line number, its text,
    /// and why); nothing was applied.
    AtomicRestore {
        line: usize,
        text: String,
        cause: Box<Error>,
    },
    /// `-R`: reading standard input failed.
    Input(io::Error),
    /// `--monitor`: the module has no "events" group.
    NoEvents,
    /// `--monitor`: the module was unloaded while monitoring.
    ModuleGone,
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Restore { cause, .. } | Error::AtomicRestore { cause, .. } => cause.exit_code(),
            _ => EXIT_FAILURE,
        }
    }

    pub fn failed(op: Op) -> impl FnOnce(NlError) -> Error {
        move |cause| Error::Failed { op, cause }
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Error {
        Error::Usage(e)
    }
}

/// strerror(3)-like text for an errno, without Rust's "(os error N)".
pub fn errno_text(errno: i32) -> String {
    let s = io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

const EPERM: i32 = 1;
const ENOENT: i32 = 2;
const ESRCH: i32 = 3;
const EEXIST: i32 = 17;
const ENODEV: i32 = 19;
const EINVAL: i32 = 22;
const EOPNOTSUPP: i32 = 95;
const EADDRNOTAVAIL: i32 = 99;

/// The explanation of an errno for an operation, used when the module
/// gave no extended-ack message: rvsadm's for the sync daemons, else
/// ipvsadm's.
fn hint(op: Op, errno: i32) -> Option<String> {
    if errno == EPERM {
        return None; // explained for every operation
    }
    daemon_hint(op, errno).or_else(|| ipvsadm_hint(op, errno).map(str::to_string))
}

/// What a refused `--start-daemon`, `--stop-daemon` or `-L --daemon`
/// means, naming the daemon and its interface (ipvsadm's "Daemon has
/// already run" and "No daemon is running" name neither).
fn daemon_hint(op: Op, errno: i32) -> Option<String> {
    Some(match (op, errno) {
        (Op::StartDaemon(state, _), EEXIST) => {
            format!("a {} sync daemon is already running", state.name())
        }
        (Op::StartDaemon(_, ifn), ENODEV) if ifn.as_str() == DEFAULT_MCAST_IFN => format!(
            "no interface {ifn} in this network namespace: without --mcast-interface, \
             {ifn} is used, as by ipvsadm"
        ),
        (Op::StartDaemon(_, ifn), ENODEV) => {
            format!("no interface {ifn} in this network namespace")
        }
        (Op::StartDaemon(_, ifn), EADDRNOTAVAIL) => {
            format!("interface {ifn} has no address to send from")
        }
        (Op::StopDaemon(state), ESRCH) => format!("no {} sync daemon is running", state.name()),
        (Op::StartDaemon(..) | Op::StopDaemon(_) | Op::ListDaemons, EOPNOTSUPP) => {
            "this rvs module has no connection sync daemons".to_string()
        }
        _ => return None,
    })
}

/// ipvsadm's explanation of an errno for an operation (libipvs's
/// `ipvs_strerror`).
fn ipvsadm_hint(op: Op, errno: i32) -> Option<&'static str> {
    Some(match (op, errno) {
        (Op::AddService, EEXIST) => "Service already exists",
        (Op::AddService | Op::EditService, ENOENT) => "Scheduler not found",
        (Op::AddServer, EEXIST) => "Destination already exists",
        (Op::EditServer | Op::DeleteServer | Op::DrainServer | Op::FlushConns, ENOENT) => {
            "No such destination"
        }
        (
            Op::AddServer
            | Op::EditServer
            | Op::DeleteServer
            | Op::DrainServer
            | Op::ListServers
            | Op::FlushConns,
            ESRCH,
        ) => "Service not defined",
        (_, ESRCH) => "No such service",
        (_, EINVAL) => "Invalid operation: possibly a module/rvsadm version mismatch",
        _ => return None,
    })
}

impl fmt::Display for NlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NlError::Kernel { errno, message } => {
                write!(f, "{}", errno_text(*errno))?;
                if let Some(m) = message {
                    write!(f, " ({m})")?;
                }
                if *errno == 1 {
                    write!(f, "; needs CAP_NET_ADMIN (run as root)")?;
                }
                Ok(())
            }
            NlError::Io(e) => write!(f, "netlink socket: {e}"),
            NlError::Timeout => write!(f, "no answer from the rvs module"),
            NlError::Protocol(m) => write!(f, "malformed reply from the module: {m}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            Error::NotLoaded => write!(
                f,
                "rvs module not loaded (family RVS not found): insmod rvs.ko"
            ),
            Error::Failed { op, cause } => {
                write!(f, "{} failed: {cause}", op.describe())?;
                if let NlError::Kernel {
                    errno,
                    message: None,
                } = cause
                {
                    if let Some(h) = hint(*op, *errno) {
                        write!(f, " ({h})")?;
                    }
                }
                Ok(())
            }
            Error::Output(e) => write!(f, "writing output: {e}"),
            Error::Restore { line, text, cause } => write!(
                f,
                "restore stopped at line {line} `{text}': {cause} (lines before it were applied)"
            ),
            Error::AtomicRestore { line, text, cause } => write!(
                f,
                "atomic restore refused line {line} `{text}': {cause} (nothing was applied)"
            ),
            Error::Input(e) => write!(f, "reading standard input: {e}"),
            Error::NoEvents => write!(
                f,
                "this rvs module announces no configuration changes (its family has no \
                 \"events\" group): it is older than rvsadm"
            ),
            Error::ModuleGone => write!(
                f,
                "the rvs module was unloaded: no more changes will be seen (start \
                 rvsadm --monitor again once it is loaded)"
            ),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(op: Op, errno: i32, message: Option<&str>) -> String {
        Error::Failed {
            op,
            cause: NlError::Kernel {
                errno,
                message: message.map(str::to_string),
            },
        }
        .to_string()
    }

    #[test]
    fn messages() {
        assert_eq!(
            kernel(Op::AddService, 2, Some("Service not found")),
            "adding service failed: No such file or directory (Service not found)"
        );
        assert_eq!(
            kernel(Op::AddService, 17, None),
            "adding service failed: File exists (Service already exists)"
        );
        assert_eq!(
            kernel(Op::DeleteServer, 2, None),
            "deleting real server failed: No such file or directory (No such destination)"
        );
        assert_eq!(
            kernel(Op::FlushConns, 3, None),
            "flushing connections failed: No such process (Service not defined)"
        );
        assert_eq!(
            kernel(Op::FlushConns, 2, None),
            "flushing connections failed: No such file or directory (No such destination)"
        );
        assert_eq!(
            kernel(Op::FlushConns, 2, Some("real server not found")),
            "flushing connections failed: No such file or directory (real server not found)"
        );
        assert_eq!(
            kernel(Op::DrainServer, 2, None),
            "draining real server failed: No such file or directory (No such destination)"
        );
        assert_eq!(
            kernel(Op::Clear, 1, None),
            "clearing the table failed: Operation not permitted; needs CAP_NET_ADMIN (run as root)"
        );
        assert_eq!(
            kernel(Op::ListServices, 95, None),
            "listing services failed: Operation not supported"
        );
        assert_eq!(
            Error::NotLoaded.to_string(),
            "rvs module not loaded (family RVS not found): insmod rvs.ko"
        );
        assert_eq!(Error::NotLoaded.exit_code(), EXIT_FAILURE);
        assert_eq!(
            kernel(Op::Monitor, 1, None),
            "monitoring configuration changes failed: Operation not permitted; needs \
             CAP_NET_ADMIN (run as root)"
        );
        assert_eq!(
            Error::NoEvents.to_string(),
            "this rvs module announces no configuration changes (its family has no \
             \"events\" group): it is older than rvsadm"
        );
        assert_eq!(
            Error::ModuleGone.to_string(),
            "the rvs module was unloaded: no more changes will be seen (start rvsadm \
             --monitor again once it is loaded)"
        );
        assert_eq!(Error::ModuleGone.exit_code(), EXIT_FAILURE);
        assert_eq!(Error::Usage(UsageError("x".into())).exit_code(), EXIT_USAGE);
    }

    #[test]
    fn sync_daemon_messages() {
        let eth0 = IfName::new("eth0").unwrap();
        let bond = IfName::new("bond0").unwrap();
        let master = Op::StartDaemon(DaemonState::Master, bond);
        let backup = Op::StartDaemon(DaemonState::Backup, eth0);
        for (op, errno, want) in [
            (
                master,
                17,
                "starting master sync daemon on bond0 failed: File exists (a master sync daemon is already running)",
            ),
            (
                backup,
                17,
                "starting backup sync daemon on eth0 failed: File exists (a backup sync daemon is already running)",
            ),
            (
                master,
                19,
                "starting master sync daemon on bond0 failed: No such device (no interface bond0 in this network namespace)",
            ),
            (
                backup,
                19,
                "starting backup sync daemon on eth0 failed: No such device (no interface eth0 in this network namespace: without --mcast-interface, eth0 is used, as by ipvsadm)",
            ),
            (
                master,
                99,
                "starting master sync daemon on bond0 failed: Cannot assign requested address (interface bond0 has no address to send from)",
            ),
            (
                master,
                22,
                "starting master sync daemon on bond0 failed: Invalid argument (Invalid operation: possibly a module/rvsadm version mismatch)",
            ),
            (
                master,
                95,
                "starting master sync daemon on bond0 failed: Operation not supported (this rvs module has no connection sync daemons)",
            ),
            (
                master,
                1,
                "starting master sync daemon on bond0 failed: Operation not permitted; needs CAP_NET_ADMIN (run as root)",
            ),
            (
                Op::StopDaemon(DaemonState::Master),
                3,
                "stopping master sync daemon failed: No such process (no master sync daemon is running)",
            ),
            (
                Op::StopDaemon(DaemonState::Backup),
                3,
                "stopping backup sync daemon failed: No such process (no backup sync daemon is running)",
            ),
            (
                Op::StopDaemon(DaemonState::Backup),
                95,
                "stopping backup sync daemon failed: Operation not supported (this rvs module has no connection sync daemons)",
            ),
            (
                Op::ListDaemons,
                95,
                "listing sync daemons failed: Operation not supported (this rvs module has no connection sync daemons)",
            ),
            (Op::ListDaemons, 12, "listing sync daemons failed: Cannot allocate memory"),
        ] {
            assert_eq!(kernel(op, errno, None), want);
        }
        // The module's own words win over rvsadm's.
        assert_eq!(
            kernel(master, 19, Some("no such sync interface in this namespace")),
            "starting master sync daemon on bond0 failed: No such device (no such sync interface in this namespace)"
        );
        assert_eq!(
            kernel(
                Op::StopDaemon(DaemonState::Master),
                3,
                Some("no connection sync daemon is running")
            ),
            "stopping master sync daemon failed: No such process (no connection sync daemon is running)"
        );
        // Other operations keep ipvsadm's explanations.
        assert_eq!(
            kernel(Op::DeleteService, 3, None),
            "deleting service failed: No such process (No such service)"
        );
        assert_eq!(
            kernel(Op::AddServer, 17, None),
            "adding real server failed: File exists (Destination already exists)"
        );
    }
}
