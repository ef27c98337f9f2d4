# SPDX-License-Identifier: GPL-2.0
"""Crafted IPVS connection-sync datagrams (version 1 and version 0), sent
to 224.0.0.81:8848 with TTL 1 out of IFACE from a plain UDP socket, for
the hostile-sync test (tests/vm/83-sync-hostile.sh). Each datagram's
effect on a backup is predicted by a model of rvs's decoder
(rvs/core/sync/decode.rs, which follows ip_vs_sync.c) and of the
backup's binding (rvs/lb/sync/backup.rs: a record is applied iff it is
well formed and names the backup's service VIP:80/tcp and real server
RIP:80; there is no fwmark service).

  syncsend.py IFACE VIP RIP SYNCID KEYFILE   reads commands on stdin:
      case NAME     sends the crafted group NAME (see CASES)
      random N      the next N of a seeded stream of random datagrams,
                    0..1500 bytes (RVS_SYNC_SEED, default 83)
      mutate N      the next N mutations of the valid message (1 to 4
                    of its bytes XORed with random values)
      bytes NAME    prints the hex of group NAME's datagrams, sends none
    and answers each with one line:
      sent N conns C refused R whole W records K
    the model's prediction for the backup's counters (conns applied,
    refused), W of the N refused whole (header), K records read.
    Connections the model predicts applied are appended to KEYFILE as
    "CADDR:CPORT" (the -L -n -c source column).

  syncsend.py IFACE VIP RIP SYNCID flood SECONDS
      sends as fast as it can for SECONDS (or until SIGTERM): valid
      records for VIP:80 -> RIP:80 from ever new client ports, random
      datagrams, mutations and forged full-resync requests; prints
      "flood N datagrams in S s".
"""
import os
import random
import signal
import socket
import struct
import sys
import time

GROUP, PORT = "224.0.0.81", 8848
MAXLEN = 1472  # the backup's buffer on a 1500-byte MTU: longer datagrams arrive cut
TCP, UDP, SCTP = 6, 17, 132
NUM_STATES = {TCP: 11, UDP: 1, SCTP: 14}
F_DROUTE, F_NO_CPORT, F_TEMPLATE, F_ONE_PACKET = 0x3, 0x800, 0x1000, 0x2000
FATAL = True

iface, VIP, RIP, SYNCID = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
aton = socket.inet_aton
VIP6 = socket.inet_pton(socket.AF_INET6, "2001:db8::1")


def rec4(cport=40000, caddr="10.9.0.1", vaddr=None, daddr=None, vport=80, dport=80, proto=TCP,
         flags=F_DROUTE, state=1, fwmark=0, timeout=300, opts=b"", typ=0, ver_size=None):
    """An IPv4 record (struct ip_vs_sync_v4) and its options."""
    body = struct.pack("!BBHIHHHHII4s4s4s", typ, proto, 0, flags, state, cport, vport, dport,
                       fwmark, timeout, aton(caddr), aton(vaddr or VIP), aton(daddr or RIP)) + opts
    vs = len(body) if ver_size is None else ver_size
    return body[:2] + struct.pack("!H", vs) + body[4:]


def rec6(cport=40000, typ=1, ver_size=None, proto=TCP, opts=b""):
    """An IPv6 record (struct ip_vs_sync_v6) to 2001:db8::1:80."""
    c = socket.inet_pton(socket.AF_INET6, "2001:db8:9::1")
    d = socket.inet_pton(socket.AF_INET6, "2001:db8:1::3")
    body = struct.pack("!BBHIHHHHII16s16s16s", typ, proto, 0, F_DROUTE, 1, cport, 80, 80, 0, 300,
                       c, VIP6, d) + opts
    vs = len(body) if ver_size is None else ver_size
    return body[:2] + struct.pack("!H", vs) + body[4:]


def msg(recs, syncid=None, nr=None, size=None, version=1, reserved=0, spare=0):
    """A version 1 message: header, records each padded to 4 bytes but the last."""
    body = b""
    for i, r in enumerate(recs):
        body += r
        if i < len(recs) - 1:
            body += b"\0" * (-len(r) % 4)
    n = len(recs) if nr is None else nr
    sz = 8 + len(body) if size is None else size
    return struct.pack("!BBHBBH", reserved, SYNCID if syncid is None else syncid, sz & 0xFFFF,
                       n, version, spare) + body


def rec0(cport=40000, caddr="10.9.0.1", proto=TCP, flags=F_DROUTE, state=1):
    """A version 0 record (struct ip_vs_sync_conn_v0)."""
    return struct.pack("!BBHHH4s4s4sHH", 0, proto, cport, 80, 80, aton(caddr), aton(VIP),
                       aton(RIP), flags, state)


def msg0(recs, nr=None):
    """A version 0 message (struct ip_vs_sync_mesg_v0)."""
    body = b"".join(recs)
    return struct.pack("!BBH", len(recs) if nr is None else nr, SYNCID, 4 + len(body)) + body


def opt(t, data):
    return bytes([t, len(data)]) + data


def resync_request(syncid):
    return struct.pack("!BBHBBH", 0, syncid, 24, 0, 1, 0) + b"rvs-resync-req/1"


VALID = msg([rec4()])

# The crafted groups, in the test's order; what the backup should do with
# each is written in the test (and checked against the model here).
CASES = {
    "valid": [VALID],
    "nosvc": [msg([rec4(cport=41000, vaddr="10.0.100.99")]),  # another VIP
              msg([rec4(cport=41001, vport=81)]),  # another port
              msg([rec4(cport=41002, daddr="10.0.0.99")])],  # another real server
    "syncid6": [msg([rec4(cport=41003)], syncid=6)],
    "short": [b"", b"\x00", b"\x00\x05\x00", struct.pack("!BBHBBB", 0, SYNCID, 7, 1, 1, 0),
              struct.pack("!BBHBBB", 1, SYNCID, 7, 1, 1, 0)],
    "size": [VALID[:2] + struct.pack("!H", len(VALID) + 1) + VALID[4:],
             VALID[:2] + struct.pack("!H", len(VALID) - 1) + VALID[4:],
             VALID[:2] + b"\xff\xff" + VALID[4:]],
    "nr5": [msg([rec4(cport=40001)], nr=5)],
    "rec_overrun": [msg([rec4(cport=41010, ver_size=100)]),
                    msg([rec4(cport=41011, ver_size=0xFFF)])],
    "rec_short": [msg([rec4(cport=41012, ver_size=20), rec4(cport=41013)]),
                  msg([rec4(cport=41014, ver_size=0), rec4(cport=41015)], nr=255)],
    "opt_framing": [msg([rec4(cport=41020, opts=b"\x49\x0a\x00\x00"), rec4(cport=41021)]),
                    msg([rec4(cport=41022, opts=b"\x49"), rec4(cport=41023)]),
                    msg([rec4(cport=41024, opts=b"\x49\x00"), rec4(cport=41025)])],
    "opt_unknown": [msg([rec4(cport=40003, opts=opt(9, b"\0\0")), rec4(cport=40002)])],
    "opt_skip": [msg([rec4(cport=40004, opts=opt(0x49, b"\0\0"))])],
    "flags": [msg([rec4(cport=41030, flags=F_ONE_PACKET | F_DROUTE)]),
              msg([rec4(cport=41031, flags=F_TEMPLATE | F_NO_CPORT | F_DROUTE, state=0)])],
    "state": [msg([rec4(cport=41040, state=200)]), msg([rec4(cport=41041, state=11)])],
    "proto99": [msg([rec4(cport=41050, proto=99)])],
    "ipv6": [msg([rec6(ver_size=36)]),  # shorter than an IPv6 record
             msg([rec6()[:36]]),  # says 72, 36 bytes left
             msg([rec6(typ=3, ver_size=0xFFF)]),
             msg([rec6()[:20]]),  # less than 36 bytes left at all
             msg([rec6()])],  # well formed: no such IPv6 service here
    "misc": [msg([rec4(cport=41060, typ=2)]),  # neither IPv4 (0) nor IPv6 (bit 0)
             msg([rec4(cport=41061, ver_size=0x1024)]),  # record version 1
             msg([rec4(cport=41062)], version=2),  # unknown message version
             msg([rec4(cport=41063, opts=opt(1, bytes(23)))]),  # sequence data not 24 bytes
             msg([rec4(cport=41064, opts=opt(1, bytes(24)) + opt(0x41, bytes(24)))]),  # twice
             msg([rec4(cport=41065, opts=opt(2, b"abcd"))]),  # PE data without a PE name
             msg([rec4(cport=41066, opts=opt(2, b"abcd") + opt(3, b"x" * 17))])],  # name > 16
    "pe_unknown": [msg([rec4(cport=41070, opts=opt(2, b"abcd") + opt(3, b"sip"))])],
    "empty": [msg([])],
    "v0_valid": [msg0([rec0(cport=40005)])],
    "v0_bad": [msg0([rec0(cport=40006)], nr=2),  # one record of two: the first applied
               msg0([rec0(cport=41080, flags=0x400 | F_DROUTE)]),  # IN_SEQ, no options
               msg0([rec0(cport=41081, proto=99)])],
    "timeouts": [msg([rec4(cport=40007, timeout=0xFFFFFFFF)]),
                 msg([rec4(cport=40008, timeout=0)])],
    # Longer than the backup's buffer (1472 bytes): read cut to 1472, so
    # only a size field of 1472 passes (IPVS reads into a buffer of
    # sync_maxlen bytes just the same).
    "cut": [msg([rec4(cport=40010)], size=MAXLEN) + bytes(1500 - 44),
            msg([rec4(cport=41090)], size=1500) + bytes(1500 - 44)],
    "final": [msg([rec4(cport=40009)])],
}


# --- the model of the backup -------------------------------------------

def parse_v1(typ, rec):
    """decode.rs parse_v1: a record dict, or (error, fatal)."""
    if typ & 1:
        af, fixed = 6, 72
    elif typ == 0:
        af, fixed = 4, 36
    else:
        return ("bad_type", FATAL)
    if len(rec) < fixed:
        return ("record_too_short", FATAL)
    _, proto, _, flags, state, cport, vport, dport, fwmark, timeout = struct.unpack("!BBHIHHHHII", rec[:24])
    al = 4 if af == 4 else 16
    caddr, vaddr, daddr = rec[24:24 + al], rec[24 + al:24 + 2 * al], rec[24 + 2 * al:24 + 3 * al]
    opts = rec[fixed:]
    seq = pe_data = pe_name = None
    while opts:
        if len(opts) < 2:
            return ("option_truncated", FATAL)
        ptype, plen = opts[0], opts[1]
        if plen == 0:
            return ("option_empty", FATAL)
        if len(opts) - 2 < plen:
            return ("option_overrun", FATAL)
        data, opts = opts[2:2 + plen], opts[2 + plen:]
        t = ptype & ~0x40
        if t == 1:
            if len(data) != 24:
                return ("seq_length", FATAL)
            if seq is not None:
                return ("seq_twice", FATAL)
            seq = data
        elif t == 2:
            if pe_data is not None:
                return ("pe_data_twice", FATAL)
            pe_data = data
        elif t == 3:
            if len(data) > 16:
                return ("pe_name_too_long", FATAL)
            if pe_name is not None:
                return ("pe_name_twice", FATAL)
            pe_name = data
        elif not ptype & 0x40:
            return ("unknown_option", not FATAL)
    r = dict(af=af, proto=proto, flags=flags, state=state, cport=cport, vport=vport, dport=dport,
             caddr=caddr, vaddr=vaddr, daddr=daddr)
    e = check(r)
    if e:
        return e
    if pe_data is not None and pe_name is None:
        return ("pe_params", not FATAL)
    if pe_data is not None:
        # decode.rs check_pe: rvs has no persistence engine, so a record
        # naming one is refused, as IPVS refuses it without the engine.
        return ("no_pe_engine", not FATAL)
    return r


def check(r):
    """decode.rs check: flags, then protocol and state."""
    f = r["flags"]
    if f & (F_NO_CPORT | F_TEMPLATE) == F_NO_CPORT | F_TEMPLATE or f & F_ONE_PACKET:
        return ("bad_flags", not FATAL)
    if f & F_TEMPLATE:
        states = 2
    elif r["proto"] in NUM_STATES:
        states = NUM_STATES[r["proto"]]
    else:
        return ("protocol", not FATAL)
    if r["state"] >= states:
        return ("state", not FATAL)
    return None


def predict(d, own=SYNCID):
    """(whole-datagram error or None, [record dict or (error, fatal)])."""
    d = d[:MAXLEN]
    n = len(d)
    if n < 4:
        return "too_short", []
    if struct.unpack("!H", d[2:4])[0] != n:
        return "size_mismatch", []
    if own != 0 and d[1] != own:
        return "other_syncid", []
    if d[0] == 0:
        if n >= 8 and d[5] == 1 and d[6] == 0 and d[7] == 0:
            v1, nr, at = True, d[4], 8
        elif n < 8:
            return "too_short", []
        else:
            return "unknown_version", []
    else:
        v1, nr, at = False, d[0], 4
    items = []
    for _ in range(nr):
        rest = d[at:]
        if not rest:
            item = ("missing_records", FATAL)
        elif v1:
            if len(rest) < 36:
                item = ("record_truncated", FATAL)
            else:
                vs = struct.unpack("!H", rest[2:4])[0]
                size = vs & 0xFFF
                if size > len(rest):
                    item = ("record_overrun", FATAL)
                elif vs >> 12:
                    item = ("record_version", FATAL)
                else:
                    at += (size + 3) & ~3
                    item = parse_v1(rest[0], rest[:size])
        else:
            if len(rest) < 24:
                item = ("v0_truncated", FATAL)
            else:
                _, proto, cport, vport, dport, c, v, a, flags, state = struct.unpack("!BBHHH4s4s4sHH", rest[:24])
                if flags & 0x600 and len(rest) < 48:
                    item = ("v0_seq_truncated", FATAL)
                else:
                    at += 48 if flags & 0x600 else 24
                    r = dict(af=4, proto=proto, flags=flags, state=state, cport=cport, vport=vport,
                             dport=dport, caddr=c, vaddr=v, daddr=a)
                    item = check(r) or r
        items.append(item)
        if isinstance(item, tuple) and item[1]:
            break
    return None, items


def binds(r):
    """backup.rs apply: the record names this backup's service and real server."""
    return (r["af"] == 4 and r["proto"] == TCP and r["vaddr"] == aton(VIP) and r["vport"] == 80
            and r["daddr"] == aton(RIP) and r["dport"] == 80)


def outcome(dgrams):
    """Predicted (conns, refused, whole, records, keys) for the datagrams."""
    conns = refused = whole = records = 0
    keys = []
    for d in dgrams:
        err, items = predict(d)
        if err:
            whole += 1
            refused += 1
            continue
        for it in items:
            records += 1
            if isinstance(it, dict) and binds(it):
                conns += 1
                keys.append("%s:%d" % (socket.inet_ntoa(it["caddr"]), it["cport"]))
            else:
                refused += 1
    return conns, refused, whole, records, keys


# --- sending ------------------------------------------------------------

def sender():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ifindex = socket.if_nametoindex(iface)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, struct.pack("4s4si", bytes(4), bytes(4), ifindex))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    return s


def random_dgram(rnd):
    return rnd.randbytes(rnd.randrange(1501))


def mutation(rnd):
    m = bytearray(VALID)
    for _ in range(rnd.randrange(1, 5)):
        m[rnd.randrange(len(m))] ^= rnd.randrange(1, 256)
    return bytes(m)


def flood(secs):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s = sender()
    rnd = random.Random(int(os.environ.get("RVS_SYNC_SEED", "83")) + 1)
    n, t0 = 0, time.time()
    req = resync_request(SYNCID)
    while not stop and time.time() - t0 < secs:
        batch = [msg([rec4(cport=1024 + (n + k) % 60000, caddr="10.9.%d.%d" % (n // 60000 % 250, 1 + k))
                      for k in range(20)])]
        batch += [random_dgram(rnd), mutation(rnd)]
        if n % 64 == 0:
            batch.append(req)
        for d in batch:
            try:
                s.sendto(d, (GROUP, PORT))
            except OSError:
                pass
            n += 1
    print("flood %d datagrams in %.1f s" % (n, time.time() - t0), flush=True)


def serve(keyfile):
    s = sender()
    seed = int(os.environ.get("RVS_SYNC_SEED", "83"))
    rnd_random, rnd_mutate = random.Random(seed), random.Random(seed ^ 0x5A5A)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "case":
            dgrams = CASES[cmd[1]]
        elif cmd[0] == "random":
            dgrams = [random_dgram(rnd_random) for _ in range(int(cmd[1]))]
        elif cmd[0] == "mutate":
            dgrams = [mutation(rnd_mutate) for _ in range(int(cmd[1]))]
        elif cmd[0] == "bytes":
            print(" ".join(d.hex() or "-" for d in CASES[cmd[1]]), flush=True)
            continue
        else:
            print("error unknown command %r" % line.strip(), flush=True)
            continue
        conns, refused, whole, records, keys = outcome(dgrams)
        with open(keyfile, "a") as f:
            f.writelines(k + "\n" for k in keys)
        for d in dgrams:
            s.sendto(d, (GROUP, PORT))
        print("sent %d conns %d refused %d whole %d records %d" % (len(dgrams), conns, refused, whole, records),
              flush=True)


if __name__ == "__main__":
    if sys.argv[5] == "flood":
        flood(float(sys.argv[6]))
    else:
        serve(sys.argv[5])
