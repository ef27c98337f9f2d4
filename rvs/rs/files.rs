// SPDX-License-Identifier: GPL-2.0

//! The companion's files in each namespace: its sysctls,
//! `/proc/sys/net/rvs_rs/{directors,max_entries}`, and its counters,
//! `/proc/net/rvs_rs` (one "name value" per line).

#![forbid(unsafe_code)]

use crate::rs::state::RsState;
use crate::rvs_core::rs::{self, Directors};
use crate::sys::netns::Net;
use crate::sys::pernet::{Pernet, PernetId, PernetState};
use crate::sys::procfs::{ProcFile, ProcShow, SeqText};
use crate::sys::sysctl::{SysctlDir, SysctlKnobs};
use crate::sys::time::{hz, jiffies};
use core::ffi::CStr;
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;

static FILES_ID: PernetId<RsFiles> = PernetId::new();

/// When a refused `directors` write was last logged (jiffies, 0 = never).
static LAST_REFUSAL_LOG: AtomicU64 = AtomicU64::new(0);

/// A namespace's files, made after its state and removed before it.
pub(crate) struct RsFiles {
    _sysctls: SysctlDir,
    _proc: ProcFile,
}

impl PernetState for RsFiles {
    fn id() -> &'static PernetId<Self> {
        &FILES_ID
    }

    fn new(net: &Net) -> Result<Pin<KBox<Self>>> {
        let files = RsFiles {
            _sysctls: SysctlDir::register::<RsSysctls>(net)?,
            _proc: ProcFile::create::<RsCounts>(net, c"rvs_rs")?,
        };
        Ok(KBox::pin(files, GFP_KERNEL)?)
    }

    fn pre_exit(_this: &Pernet<Self>) {}
    fn exit(_this: &Pernet<Self>) {}
    fn work(_this: &Pernet<Self>) {}
}

/// `net/rvs_rs`: `directors` (text) and `max_entries`.
struct RsSysctls;

const DIRECTORS: usize = 0;
const MAX_ENTRIES: usize = 1;

impl SysctlKnobs for RsSysctls {
    const DIR: &'static CStr = c"net/rvs_rs";
    const COUNT: usize = 2;

    fn name(index: usize) -> &'static CStr {
        match index {
            DIRECTORS => c"directors",
            MAX_ENTRIES => c"max_entries",
            _ => c"",
        }
    }

    fn read(net: &Net, _index: usize) -> i32 {
        RsState::of(net).map_or(0, |st| st.max_entries.load(Relaxed) as i32)
    }

    fn write(net: &Net, _index: usize, value: i32) -> Result {
        let st = RsState::of(net).ok_or(ENODEV)?;
        let n = rs::validate_max_entries(value).map_err(|e| Error::from_errno(-e.errno))?;
        st.max_entries.store(n, Relaxed);
        Ok(())
    }

    fn is_text(index: usize) -> bool {
        index == DIRECTORS
    }

    fn read_text(net: &Net, _index: usize, out: &mut [u8]) -> usize {
        let Some(st) = RsState::of(net) else {
            return 0;
        };
        let g = crate::sys::rcu::ReadGuard::new();
        let mut w = SliceWriter { out, len: 0 };
        // A list of at most 16 addresses fits the buffer.
        let _ = write!(w, "{}", st.directors.get(&g));
        w.len
    }

    fn write_text(net: &Net, _index: usize, text: &[u8]) -> Result {
        let st = RsState::of(net).ok_or(ENODEV)?;
        let d = Directors::parse(text).map_err(|e| {
            // Why, for the writer, whom sysctl(8) only tells EINVAL; at
            // most once a second from all namespaces (the log is shared).
            let now = jiffies();
            let last = LAST_REFUSAL_LOG.load(Relaxed);
            if now.wrapping_sub(last) >= hz() || last == 0 {
                LAST_REFUSAL_LOG.store(now.max(1), Relaxed);
                pr_info!(
                    "net.rvs_rs.{}\n",
                    e.msg.to_str().unwrap_or("directors: refused")
                );
            }
            Error::from_errno(-e.errno)
        })?;
        RsState::set_directors(st, d)
    }
}

/// A `fmt::Write` into a byte slice; stops at its end.
struct SliceWriter<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.out.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `/proc/net/rvs_rs`.
struct RsCounts;

impl ProcShow for RsCounts {
    fn show(net: &Net, out: &mut SeqText<'_>) -> fmt::Result {
        let Some(st) = RsState::of(net) else {
            return Ok(());
        };
        let c = &st.counts;
        writeln!(out, "entries {}", st.flows.count())?;
        writeln!(out, "max_entries {}", st.max_entries.load(Relaxed))?;
        writeln!(out, "fullnat {}", c.fullnat.load(Relaxed))?;
        writeln!(out, "enat {}", c.enat.load(Relaxed))?;
        writeln!(out, "untrusted {}", c.untrusted.load(Relaxed))?;
        writeln!(out, "full {}", c.full.load(Relaxed))
    }
}
