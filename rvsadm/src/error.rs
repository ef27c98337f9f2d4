//! rvsadm's errors: what failed, why, and which exit code that means.

use std::fmt;
use std::io;

use crate::cli::UsageError;
use crate::msg::ParseError;

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
}

impl Op {
    pub fn describe(self) -> &'static str {
        match self {
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
        }
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
    /// `-R`: reading standard input failed.
    Input(io::Error),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Restore { cause, .. } => cause.exit_code(),
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

/// ipvsadm's explanation of an errno for an operation, used when the
/// module gave no extended-ack message.
fn hint(op: Op, errno: i32) -> Option<&'static str> {
    const EPERM: i32 = 1;
    const ENOENT: i32 = 2;
    const ESRCH: i32 = 3;
    const EEXIST: i32 = 17;
    const EINVAL: i32 = 22;
    Some(match (op, errno) {
        (_, EPERM) => return None, // explained for every operation below
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
            Error::Input(e) => write!(f, "reading standard input: {e}"),
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
        assert_eq!(Error::Usage(UsageError("x".into())).exit_code(), EXIT_USAGE);
    }
}
