// SPDX-License-Identifier: GPL-2.0

//! Connection synchronisation: IPVS's sync daemons, wire-compatible with
//! IPVS (protocol version 1). A master multicasts this director's
//! connections as their packets pass ([`master`]); a backup receives
//! another director's and holds them as its own ([`backup`]), so that it
//! can take over established connections. Master and backup may run at
//! once, one of each per namespace.
//!
//! C counterpart: net/netfilter/ipvs/ip_vs_sync.c. The message format and
//! the decisions (when to send, what a backup does with a record) are
//! `rvs_core::sync`; this is their home in the namespace: the daemons'
//! settings and counters, their sockets (`crate::sys::mcast`) and threads
//! (the namespace node's, `crate::sys::pernet`).
//!
//! A daemon's parts and who holds them:
//! - its shared half ([`Master`] or [`Backup`]) is published in an RCU
//!   slot: the packet path (master) and the listing read it there;
//! - its socket is made by the start command, which reports any error,
//!   and handed to the thread, which owns it from then on and closes it
//!   when it ends (process context: never in an RCU callback);
//! - stop takes the daemon out of its slot, stops the thread, and closes
//!   the socket if the thread never took it.

#![forbid(unsafe_code)]

pub(crate) mod backup;
pub(crate) mod master;

use crate::lb::state::NetState;
use crate::rvs_core::settings::Setting;
use crate::rvs_core::sync::daemon::{DaemonConfig, Role};
use crate::rvs_core::sync::policy;
use crate::sys::kthread;
use crate::sys::mcast::{Device, Group, McastSocket};
use crate::sys::pernet::Pernet;
use crate::sys::rcu::{RcuOpt, ReadGuard, WriterLock};
use crate::sys::time;
use backup::Backup;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;
use kernel::sync::{new_mutex, new_spinlock, Arc, SpinLock};
use master::Master;

/// What a daemon counted (`-L --daemon --json`).
#[derive(Default)]
pub(crate) struct DaemonStats {
    /// Datagrams sent (master) or received (backup).
    pub(crate) msgs: AtomicU64,
    /// Records sent, or applied.
    pub(crate) conns: AtomicU64,
    /// Datagrams or records refused (malformed, another syncid, no such
    /// service or real server here).
    pub(crate) refused: AtomicU64,
    /// Records not sent (no memory, queue full, send error).
    pub(crate) lost: AtomicU64,
    /// Whole tables sent (master) or asked for (backup).
    pub(crate) resyncs: AtomicU64,
}

impl DaemonStats {
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Relaxed);
    }
}

/// A daemon's sockets: the one it sends or receives sync messages on, and
/// the one of full resynchronisation (`rvs_core::sync::resync`), if on:
/// a master's receives requests, a backup's sends them.
pub(crate) struct Sockets {
    pub(crate) main: McastSocket,
    pub(crate) resync: Option<McastSocket>,
}

/// A daemon's sockets until its thread takes them.
#[pin_data]
pub(crate) struct Handoff {
    #[pin]
    socks: SpinLock<Option<Sockets>>,
}

impl Handoff {
    fn new(socks: Sockets) -> impl PinInit<Self> {
        pin_init!(Handoff {
            socks <- new_spinlock!(Some(socks), "rvs_sync_handoff"),
        })
    }

    /// The sockets, once: to the thread, or to stop if the thread never
    /// ran.
    pub(crate) fn take(&self) -> Option<Sockets> {
        self.socks.lock().take()
    }
}

/// The serialized command side: start and stop.
pub(crate) struct Cmd {}

/// A namespace's sync daemons.
#[pin_data]
pub(crate) struct SyncDaemons {
    /// Serializes start and stop; the writer token of the two slots.
    #[pin]
    cmd: WriterLock<Cmd>,
    /// The master, read by the packet path.
    pub(crate) master: RcuOpt<Arc<Master>>,
    /// The backup.
    pub(crate) backup: RcuOpt<Arc<Backup>>,
}

/// One running daemon as GET_DAEMON lists it.
pub(crate) struct DaemonInfo {
    pub(crate) cfg: DaemonConfig,
    pub(crate) msgs: u64,
    pub(crate) conns: u64,
    pub(crate) refused: u64,
    pub(crate) lost: u64,
    pub(crate) resyncs: u64,
}

impl DaemonInfo {
    fn of(cfg: &DaemonConfig, s: &DaemonStats) -> Self {
        Self {
            cfg: *cfg,
            msgs: s.msgs.load(Relaxed),
            conns: s.conns.load(Relaxed),
            refused: s.refused.load(Relaxed),
            lost: s.lost.load(Relaxed),
            resyncs: s.resyncs.load(Relaxed),
        }
    }
}

/// Why a start failed, for the netlink reply.
pub(crate) enum StartError {
    /// One of this role runs already.
    Running,
    /// No interface of that name.
    NoDevice,
    /// The master's interface has no IPv4 address to send from.
    NoAddress,
    /// Anything else (socket, thread, memory).
    Kernel(Error),
}

impl SyncDaemons {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(SyncDaemons {
            cmd <- WriterLock::new(new_mutex!(Cmd {}, "rvs_sync_cmd")),
            master: RcuOpt::empty(),
            backup: RcuOpt::empty(),
        })
    }

    /// Starts a daemon as `cfg` says.
    pub(crate) fn start(this: &Pernet<NetState>, cfg: &DaemonConfig) -> Result<(), StartError> {
        let d = &this.sync;
        let mut w = d.cmd.lock();
        let running = match cfg.role {
            Role::Master => d.master.get_writer(&w).is_some(),
            Role::Backup => d.backup.get_writer(&w).is_some(),
        };
        if running {
            return Err(StartError::Running);
        }
        let net = this.net();
        let dev = Device::by_name(net, cfg.ifname()).map_err(|e| {
            if e == ENODEV {
                StartError::NoDevice
            } else {
                StartError::Kernel(e)
            }
        })?;
        let backup = cfg.role == Role::Backup;
        let mut cfg = *cfg;
        cfg.maxlen = policy::sync_maxlen(cfg.maxlen, dev.mtu, cfg.group_v6, backup);
        let group = Group {
            v6: cfg.group_v6,
            addr: cfg.group,
            port: cfg.port,
        };
        let name = match cfg.role {
            Role::Master => c"rvs-sync-master",
            Role::Backup => c"rvs-sync-backup",
        };
        let resync = this.setting(Setting::SyncResync) != 0;
        match cfg.role {
            Role::Master => {
                if !cfg.group_v6 && dev.addr4.is_none() {
                    return Err(StartError::NoAddress);
                }
                let main =
                    McastSocket::sender(net, &group, &dev, cfg.ttl).map_err(StartError::Kernel)?;
                // Requests come to the group's own port.
                let resync = match resync {
                    true => {
                        Some(McastSocket::receiver(net, &group, &dev).map_err(StartError::Kernel)?)
                    }
                    false => None,
                };
                let m = Master::new(cfg, Sockets { main, resync }).map_err(StartError::Kernel)?;
                d.master
                    .replace(Some(m), &mut w)
                    .map_err(StartError::Kernel)?;
            }
            Role::Backup => {
                let main = McastSocket::receiver(net, &group, &dev).map_err(StartError::Kernel)?;
                // An IPv4 interface without an address cannot send a
                // request: the backup then waits for records as IPVS's.
                let resync = match resync && (cfg.group_v6 || dev.addr4.is_some()) {
                    true => Some(
                        McastSocket::sender(net, &group, &dev, cfg.ttl)
                            .map_err(StartError::Kernel)?,
                    ),
                    false => None,
                };
                let b = Backup::new(cfg, Sockets { main, resync }).map_err(StartError::Kernel)?;
                d.backup
                    .replace(Some(b), &mut w)
                    .map_err(StartError::Kernel)?;
            }
        }
        if let Err(e) = this.start_thread(cfg.role.index(), name) {
            Self::stop_locked(this, &mut w, cfg.role);
            return Err(StartError::Kernel(e));
        }
        pr_info!(
            "sync: {} daemon started on {:?}, syncid {}, maxlen {}\n",
            if backup { "backup" } else { "master" },
            cfg.ifname(),
            cfg.syncid,
            cfg.maxlen
        );
        Ok(())
    }

    /// Stops the daemon of `role`; `false` if none ran.
    pub(crate) fn stop(this: &Pernet<NetState>, role: Role) -> bool {
        let mut w = this.sync.cmd.lock();
        Self::stop_locked(this, &mut w, role)
    }

    fn stop_locked(
        this: &Pernet<NetState>,
        w: &mut crate::sys::rcu::Writer<'_, Cmd>,
        role: Role,
    ) -> bool {
        let d = &this.sync;
        // Out of its slot first: the packet path stops queueing to it.
        let sock = match role {
            Role::Master => {
                let Some(m) = d.master.get_writer(w).cloned() else {
                    return false;
                };
                // Replacing with `None` allocates nothing: cannot fail.
                let _ = d.master.replace(None, w);
                this.stop_thread(role.index());
                m.handoff.take()
            }
            Role::Backup => {
                let Some(b) = d.backup.get_writer(w).cloned() else {
                    return false;
                };
                let _ = d.backup.replace(None, w);
                this.stop_thread(role.index());
                b.handoff.take()
            }
        };
        // Closed here, in process context, if the thread never took them.
        drop(sock);
        pr_info!(
            "sync: {} daemon stopped\n",
            match role {
                Role::Master => "master",
                Role::Backup => "backup",
            }
        );
        true
    }

    /// Stops both (the namespace is going away).
    pub(crate) fn stop_all(this: &Pernet<NetState>) {
        Self::stop(this, Role::Master);
        Self::stop(this, Role::Backup);
    }

    /// The running daemons, master first.
    pub(crate) fn list(&self) -> [Option<DaemonInfo>; 2] {
        let g = ReadGuard::new();
        [
            self.master
                .get(&g)
                .map(|m| DaemonInfo::of(&m.cfg, &m.stats)),
            self.backup
                .get(&g)
                .map(|b| DaemonInfo::of(&b.cfg, &b.stats)),
        ]
    }
}

/// The body of the namespace's thread `id` (`NetState::thread`).
pub(crate) fn run_thread(this: &Pernet<NetState>, id: usize) {
    if id == Role::Master.index() {
        let m = {
            let g = ReadGuard::new();
            this.sync.master.get(&g).cloned()
        };
        if let Some(m) = m {
            m.run(this);
        }
    } else if id == Role::Backup.index() {
        let b = {
            let g = ReadGuard::new();
            this.sync.backup.get(&g).cloned()
        };
        if let Some(b) = b {
            b.run(this);
        }
    }
}

/// How long a thread sleeps between looks: the master's send delay
/// (IPVS's `IPVS_SYNC_SEND_DELAY`, 20 ms), at least a tick.
pub(crate) fn tick() -> u64 {
    (time::hz() / 50).max(1)
}

/// Whether the thread should end.
pub(crate) fn should_stop() -> bool {
    kthread::should_stop()
}
