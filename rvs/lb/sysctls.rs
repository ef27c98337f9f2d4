// SPDX-License-Identifier: GPL-2.0

//! IPVS's sysctl directory `/proc/sys/net/ipv4/vs` of each namespace, with
//! `ipvs_compat=1`: IPVS's knobs as `rvs_core::ipvs_sysctl` maps them onto
//! rvs, those that are rvs settings showing and setting the same values as
//! `rvsadm --set-option` and `-L --options` (one setting, two doors).
//! kube-proxy writes four of them at start (conntrack, conn_reuse_mode,
//! expire_nodest_conn, expire_quiescent_template).
//!
//! A value rvs cannot honour is refused (EOPNOTSUPP) with a line in the
//! kernel log saying why; a value outside a setting's range gets EINVAL
//! (IPVS takes any integer for most knobs, reading non-zero as 1).
//!
//! C counterpart: `vs_vars` in net/netfilter/ipvs/ip_vs_ctl.c.

#![forbid(unsafe_code)]

use crate::lb::state::NetState;
use crate::rvs_core::defense;
use crate::rvs_core::ipvs_sysctl::{self, KNOBS};
use crate::rvs_core::settings::{self, Setting};
use crate::sys::netns::Net;
use crate::sys::pernet::PernetState;
use crate::sys::sysctl::SysctlKnobs;
use crate::sys::time::{hz, jiffies};
use core::ffi::CStr;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;

/// `net/ipv4/vs`.
pub(crate) struct IpVsSysctls;

/// When the last refusal was logged (jiffies), for at most ten lines a
/// second from all namespaces: a namespace's owner may write as often as
/// it likes, the log is everyone's.
static LAST_REFUSAL_LOG: AtomicU64 = AtomicU64::new(0);

impl SysctlKnobs for IpVsSysctls {
    const DIR: &'static CStr = c"net/ipv4/vs";
    const COUNT: usize = KNOBS.len();

    fn name(index: usize) -> &'static CStr {
        KNOBS.get(index).map_or(c"", |k| k.name)
    }

    fn read(net: &Net, index: usize) -> i32 {
        let Some(k) = KNOBS.get(index) else {
            return 0;
        };
        let ns = NetState::of(net);
        ipvs_sysctl::read(k.knob, |s| ns.map_or(s.spec().default, |ns| ns.setting(s)))
    }

    fn write(net: &Net, index: usize, value: i32) -> Result {
        let k = KNOBS.get(index).ok_or(EINVAL)?;
        // The namespace's state is made before these files and goes after.
        let ns = NetState::of(net).ok_or(ENODEV)?;
        let store = match ipvs_sysctl::write(k.knob, |s| ns.setting(s), value) {
            Ok(store) => store,
            Err(refusal) => {
                if let Some(why) = refusal.why {
                    log_refusal(k.name, value, why);
                }
                return Err(Error::from_errno(-refusal.errno));
            }
        };
        if let Some((s, v)) = store {
            set(ns, s, v);
        }
        Ok(())
    }
}

/// Stores one setting as `--set-option` does.
fn set(ns: &NetState, s: Setting, v: u32) {
    let mut values = [None; settings::COUNT];
    if let Some(slot) = values.get_mut(s.index()) {
        *slot = Some(v);
    }
    let mut ctl = ns.lock();
    ns.set_settings(&mut ctl, &values);
}

fn log_refusal(name: &CStr, value: i32, why: &CStr) {
    let now = jiffies();
    let last = LAST_REFUSAL_LOG.load(Ordering::Relaxed);
    if defense::may_log(last, now, hz() / 10)
        && LAST_REFUSAL_LOG
            .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        pr_warn!(
            "net.ipv4.vs.{} = {} refused: {}\n",
            name.to_str().unwrap_or("?"),
            value,
            why.to_str().unwrap_or("?")
        );
    }
}
