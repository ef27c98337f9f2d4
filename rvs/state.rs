// SPDX-License-Identifier: GPL-2.0

//! rvs's state of one network namespace: its services and connections.

use crate::netns::{Net, PernetState};
use core::sync::atomic::AtomicU32;
use kernel::prelude::*;

/// Everything rvs keeps for one network namespace.
pub(crate) struct NetState {
    _private: (),
}

static NET_ID: AtomicU32 = AtomicU32::new(0);

impl PernetState for NetState {
    fn id_slot() -> &'static AtomicU32 {
        &NET_ID
    }

    fn new(_net: &Net) -> Result<KBox<Self>> {
        Ok(KBox::new(NetState { _private: () }, GFP_KERNEL)?)
    }

    fn exit(&self, _net: &Net) {}
}
