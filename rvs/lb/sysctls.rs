// SPDX-License-Identifier: GPL-2.0

//! IPVS's sysctl directory `/proc/sys/net/ipv4/vs` of each namespace, with
//! `ipvs_compat=1`: the knobs rvs implements under IPVS's names, the same
//! values as `rvsadm --set-option` and `-L --options` (one setting, two
//! doors). kube-proxy writes the four it depends on at start.
//!
//! Knobs rvs does not implement, or implements with other units (IPVS's
//! `drop_entry` and `secure_tcp` are modes, rvs's a percentage and
//! seconds), are absent rather than pretending: a write to one fails with
//! ENOENT. Values outside a knob's range are refused with EINVAL (IPVS
//! takes any integer for these, reading non-zero as 1).
//!
//! C counterpart: `vs_vars` in net/netfilter/ipvs/ip_vs_ctl.c.

#![forbid(unsafe_code)]

use crate::lb::state::NetState;
use crate::rvs_core::settings::{self, Setting};
use crate::sys::netns::Net;
use crate::sys::pernet::PernetState;
use crate::sys::sysctl::SysctlKnobs;
use core::ffi::CStr;
use kernel::prelude::*;

/// The knobs, in [`IpVsSysctls::NAMES`] order (their files carry the
/// settings' names; 58-ipvs-compat checks each against `--show-options`).
const KNOBS: [Setting; 4] = [
    Setting::Conntrack,
    Setting::ConnReuseMode,
    Setting::ExpireNodestConn,
    Setting::ExpireQuiescentTemplate,
];

/// `net/ipv4/vs`.
pub(crate) struct IpVsSysctls;

impl SysctlKnobs for IpVsSysctls {
    const DIR: &'static CStr = c"net/ipv4/vs";
    const NAMES: &'static [&'static CStr] = &[
        c"conntrack",
        c"conn_reuse_mode",
        c"expire_nodest_conn",
        c"expire_quiescent_template",
    ];

    fn read(net: &Net, index: usize) -> i32 {
        let Some(s) = KNOBS.get(index) else {
            return 0;
        };
        let v = NetState::of(net).map_or(s.spec().default, |ns| ns.setting(*s));
        i32::try_from(v).unwrap_or(i32::MAX)
    }

    fn write(net: &Net, index: usize, value: i32) -> Result {
        let s = KNOBS.get(index).ok_or(EINVAL)?;
        // The namespace's state is made before these files and goes after.
        let ns = NetState::of(net).ok_or(ENODEV)?;
        let v = u32::try_from(value).map_err(|_| EINVAL)?;
        let v = settings::validate(s.spec(), v).map_err(|_| EINVAL)?;
        let mut values = [None; settings::COUNT];
        if let Some(slot) = values.get_mut(s.index()) {
            *slot = Some(v);
        }
        let mut ctl = ns.lock();
        ns.set_settings(&mut ctl, &values);
        Ok(())
    }
}
