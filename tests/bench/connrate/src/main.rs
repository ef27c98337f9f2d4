//! connrate: the load generator and servers of rvs's benchmarks (std only).
//!
//! ```text
//! connrate tcp-client ADDR:PORT [-c CONC] [-t SECS]   short connections per second
//! connrate tcp-server PORT                            accept and close at once
//! connrate udp-flood  ADDR:PORT [-c FLOWS] [-t SECS] [-l LEN]   send datagrams
//! connrate udp-sink   PORT [-t SECS]                  count datagrams
//! ```
//!
//! Every mode prints one result line `RESULT key=value ...`.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!(
        "usage: connrate tcp-client ADDR:PORT [-c CONC] [-t SECS]\n       \
         connrate tcp-server PORT\n       \
         connrate udp-flood ADDR:PORT [-c FLOWS] [-t SECS] [-l LEN]\n       \
         connrate udp-sink PORT [-t SECS]"
    );
    std::process::exit(2)
}

struct Opts {
    conc: usize,
    secs: f64,
    len: usize,
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        conc: 8,
        secs: 5.0,
        len: 18,
    };
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).unwrap_or_else(|| usage());
        match args[i].as_str() {
            "-c" => o.conc = v.parse().unwrap_or_else(|_| usage()),
            "-t" => o.secs = v.parse().unwrap_or_else(|_| usage()),
            "-l" => o.len = v.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
        i += 2;
    }
    o
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap_or_else(|_| usage())
}

/// CONC threads, each opening a connection, reading until the server
/// closes it, closing it, and starting over, until SECS have passed.
fn tcp_client(target: SocketAddr, o: &Opts) {
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicU64::new(0));
    let err = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..o.conc)
        .map(|_| {
            let (stop, ok, err) = (stop.clone(), ok.clone(), err.clone());
            thread::spawn(move || {
                let mut buf = [0u8; 256];
                while !stop.load(Ordering::Relaxed) {
                    match TcpStream::connect_timeout(&target, Duration::from_secs(3)) {
                        Ok(mut s) => {
                            let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
                            let good = loop {
                                match s.read(&mut buf) {
                                    Ok(0) => break true,
                                    Ok(_) => continue,
                                    Err(_) => break false,
                                }
                            };
                            if good { &ok } else { &err }.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            err.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    thread::sleep(Duration::from_secs_f64(o.secs));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    let el = start.elapsed().as_secs_f64();
    let n = ok.load(Ordering::Relaxed);
    println!(
        "RESULT conns={} errors={} secs={:.3} conn_per_s={:.1}",
        n,
        err.load(Ordering::Relaxed),
        el,
        n as f64 / el
    );
}

/// Accepts connections and closes them at once (the server closes first,
/// so TIME_WAIT stays on the server and the client's ports are reused).
fn tcp_server(port: u16) {
    let l = TcpListener::bind(("0.0.0.0", port)).unwrap_or_else(|e| {
        eprintln!("connrate: bind {port}: {e}");
        std::process::exit(1)
    });
    for c in l.incoming() {
        drop(c);
    }
}

/// FLOWS threads, each a UDP socket with its own source port, sending LEN
/// byte datagrams as fast as it can for SECS.
fn udp_flood(target: SocketAddr, o: &Opts) {
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let len = o.len;
    let workers: Vec<_> = (0..o.conc)
        .map(|_| {
            let (stop, sent) = (stop.clone(), sent.clone());
            thread::spawn(move || {
                let s = UdpSocket::bind("0.0.0.0:0").expect("udp bind");
                s.connect(target).expect("udp connect");
                let buf = vec![0x5au8; len];
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..64 {
                        if s.send(&buf).is_ok() {
                            n += 1;
                        }
                    }
                }
                sent.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    thread::sleep(Duration::from_secs_f64(o.secs));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    let el = start.elapsed().as_secs_f64();
    let n = sent.load(Ordering::Relaxed);
    println!(
        "RESULT sent={} secs={:.3} sent_pps={:.1}",
        n,
        el,
        n as f64 / el
    );
}

/// Counts datagrams; stops SECS after the first one (or after 2 s of
/// silence once traffic started, or 30 s with none) and prints the rate
/// between the first and the last datagram.
fn udp_sink(port: u16, o: &Opts) {
    let s = UdpSocket::bind(("0.0.0.0", port)).unwrap_or_else(|e| {
        eprintln!("connrate: bind {port}: {e}");
        std::process::exit(1)
    });
    let mut buf = [0u8; 2048];
    let mut n = 0u64;
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let begin = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    loop {
        if s.recv(&mut buf).is_ok() {
            last = Instant::now();
            if first.is_none() {
                first = Some(last);
            }
            n += 1;
        }
        let now = Instant::now();
        match first {
            Some(f) if now.duration_since(f).as_secs_f64() >= o.secs => break,
            Some(_) if now.duration_since(last) > Duration::from_secs(2) => break,
            None if now.duration_since(begin) > Duration::from_secs(30) => break,
            _ => {}
        }
    }
    let el = first
        .map(|f| last.duration_since(f).as_secs_f64())
        .unwrap_or(0.0);
    let pps = if el > 0.0 { n as f64 / el } else { 0.0 };
    println!("RESULT received={} secs={:.3} recv_pps={:.1}", n, el, pps);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        usage()
    }
    let o = parse_opts(&args[3..]);
    match args[1].as_str() {
        "tcp-client" => tcp_client(addr(&args[2]), &o),
        "tcp-server" => tcp_server(args[2].parse().unwrap_or_else(|_| usage())),
        "udp-flood" => udp_flood(addr(&args[2]), &o),
        "udp-sink" => udp_sink(args[2].parse().unwrap_or_else(|_| usage()), &o),
        _ => usage(),
    }
}
