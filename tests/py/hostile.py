"""Sends crafted IPv4 frames (malformed, fragmented, lying lengths, bad
checksums, ICMP errors about nothing, spoofed SYN floods) over AF_PACKET on
IFACE to the director's MAC, toward a virtual service. python3 only.

    hostile.py IFACE DST_MAC SRC_IP VIP TCP_PORT UDP_PORT FLOOD_N LABEL

Prints one line per case: name, frames, bytes of the first frame (hex).
The caller checks the kernel log and that the service still works."""

import os
import random
import socket
import struct
import sys

from inet import csum

iface, dst_mac, src_ip, vip = sys.argv[1:5]
tport, uport, flood_n = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
label = sys.argv[8]
rnd = random.Random(int(os.environ.get("RVS_HOSTILE_SEED", "1")))

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
src_mac = bytes.fromhex(open("/sys/class/net/%s/address" % iface).read().strip().replace(":", ""))
eth = bytes.fromhex(dst_mac.replace(":", "")) + src_mac + b"\x08\x00"
NO_SERVICE_PORT = 9999


def ip(payload, proto=6, src=None, dst=None, ihl=5, tot=None, frag=0, ttl=64, opts=b"",
       bad_csum=False, ident=None):
    src = socket.inet_aton(src or src_ip)
    dst = socket.inet_aton(dst or vip)
    if tot is None:
        tot = 4 * ihl + len(payload) if ihl >= 5 else 20 + len(opts) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | (ihl & 0xF), 0, tot & 0xFFFF,
                      rnd.randrange(65536) if ident is None else ident, frag, ttl, proto, 0, src, dst) + opts
    c = csum(hdr)
    if bad_csum:
        c ^= 0x5A5A
    hdr = hdr[:10] + struct.pack("!H", c) + hdr[12:]
    return hdr + payload


def l4sum(proto, seg, src=None, dst=None):
    ph = socket.inet_aton(src or src_ip) + socket.inet_aton(dst or vip) + struct.pack("!BBH", 0, proto, len(seg))
    return csum(ph + seg)


def tcp(sport, dport, flags=0x02, doff=5, opts=b"", data=b"", bad_csum=False, src=None, dst=None, seq=None):
    seg = struct.pack("!HHIIBBHHH", sport, dport, rnd.randrange(1 << 32) if seq is None else seq, 0,
                      (doff & 0xF) << 4, flags, 64240, 0, 0) + opts + data
    c = l4sum(6, seg, src, dst) ^ (0x1234 if bad_csum else 0)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def udp(sport, dport, data=b"who\n", ulen=None, src=None, dst=None):
    ulen = 8 + len(data) if ulen is None else ulen
    seg = struct.pack("!HHHH", sport, dport, ulen & 0xFFFF, 0) + data
    c = l4sum(17, seg, src, dst) if ulen == 8 + len(data) else 0
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def icmp(typ, code, quote, rest=b"\0\0\0\0"):
    m = struct.pack("!BBH", typ, code, 0) + rest + quote
    return m[:2] + struct.pack("!H", csum(m)) + m[4:]


sent = 0


def case(name, frames):
    global sent
    frames = list(frames)
    for f in frames:
        s.send(eth + f)
    sent += len(frames)
    print("# [%s] %-46s %5d frame(s)  %s" % (label, name, len(frames), frames[0][:40].hex() if frames else ""))
    sys.stdout.flush()


sp = lambda: rnd.randrange(20000, 60000)
syn = lambda **kw: tcp(sp(), tport, **kw)

case("IP header truncated (10 bytes)", [ip(syn())[:10]])
case("IP header only 19 bytes", [ip(syn())[:19]])
for ihl in (0, 3, 4):
    case("IHL=%d (< 5)" % ihl, [ip(syn(), ihl=ihl)])
case("IHL=15 on a 20-byte header + 20 TCP", [ip(syn(), ihl=15, tot=40)])
case("IHL=15, frame cut at 40 bytes", [ip(syn(), ihl=15)[:40]])
case("total length > frame (+1000)", [ip(syn(), tot=1040)])
case("total length 65535 on a SYN", [ip(syn(), tot=65535)])
case("total length < IP header (10)", [ip(syn(), tot=10)])
case("total length = 20 (no L4 room)", [ip(syn(), tot=20)])
case("total length = 30 (half a TCP header)", [ip(syn(), tot=30)])
case("total length < frame (trailing junk)", [ip(syn(), tot=40) + os.urandom(100)])
case("IP options NOP/EOL, valid SYN", [ip(syn(), ihl=6, opts=b"\x01\x01\x01\x00")])
case("IP option record-route (IHL=15)", [ip(syn(), ihl=15, opts=b"\x07\x27\x04" + b"\0" * 37)])
case("IP option with length 0 / 255", [ip(syn(), ihl=6, opts=b"\x44\x00\x00\x00"), ip(syn(), ihl=6, opts=b"\x44\xff\x00\x00")])
seg = syn(data=b"A" * 64)
case("first fragment (MF, off 0) of a SYN", [ip(seg[:24], frag=0x2000, ident=4242, tot=44)])
case("non-first fragment (off 24) alone", [ip(seg[24:], frag=3, ident=4242)])
case("complete fragment pair", [ip(seg[:24], frag=0x2000, ident=4343), ip(seg[24:], frag=3, ident=4343)])
case("tiny first fragment (8 bytes of TCP)", [ip(seg[:8], frag=0x2000, ident=4444)])
case("overlapping fragments", [ip(seg[:32], frag=0x2000, ident=4545), ip(seg[8:], frag=1, ident=4545)])
case("non-first fragment at max offset", [ip(os.urandom(64), frag=0x1FFF, ident=4646)])
case("DF + MF + offset", [ip(syn(), frag=0x6000 | 10)])
case("UDP first fragment", [ip(udp(sp(), uport, data=b"x" * 64)[:16], proto=17, frag=0x2000, ident=4747)])
case("bad IP checksum (SYN)", [ip(syn(), bad_csum=True)])
case("bad TCP checksum (SYN)", [ip(syn(bad_csum=True))])
case("bad TCP checksum (ACK, no conn)", [ip(tcp(sp(), tport, flags=0x10, bad_csum=True))])
for d in (0, 1, 4):
    case("TCP data offset %d (< 5)" % d, [ip(syn(doff=d))])
case("TCP data offset 15 on a 20-byte segment", [ip(syn(doff=15))])
case("TCP data offset 15, options cut", [ip(syn(doff=15, opts=b"\x02\x04\x05\xb4"))])
case("TCP options: MSS 0, WS 255, bad lengths", [ip(syn(doff=8, opts=b"\x02\x04\x00\x00\x03\x03\xff\x00\x08\x00\x00\x00"))])
case("TCP SYN+FIN+RST+URG (xmas)", [ip(tcp(sp(), tport, flags=0x3F))])
case("TCP no flags (null scan)", [ip(tcp(sp(), tport, flags=0))])
case("TCP SYN with payload", [ip(syn(data=os.urandom(200)))])
case("TCP header cut at 12 bytes", [ip(syn()[:12])])
case("UDP length > datagram (500)", [ip(udp(sp(), uport, ulen=500), proto=17)])
case("UDP length < 8 (4)", [ip(udp(sp(), uport, ulen=4), proto=17)])
case("UDP length 0", [ip(udp(sp(), uport, ulen=0), proto=17)])
case("UDP header cut at 4 bytes", [ip(udp(sp(), uport)[:4], proto=17)])
case("UDP length < datagram (10 of 12)", [ip(udp(sp(), uport, ulen=10), proto=17)])
case("TTL 1 SYN", [ip(syn(), ttl=1)])
case("TTL 0 SYN", [ip(syn(), ttl=0)])
case("TTL 1 UDP", [ip(udp(sp(), uport), proto=17, ttl=1)])
# ICMP errors about connections that do not exist.
inner_tcp = ip(tcp(tport, 33333, flags=0x12, src=vip, dst="10.9.9.9"), src=vip, dst="10.9.9.9")
inner_udp = ip(udp(uport, 33334, src=vip, dst="10.9.9.9"), proto=17, src=vip, dst="10.9.9.9")
case("ICMP port unreachable quoting unknown TCP", [ip(icmp(3, 3, inner_tcp), proto=1)])
case("ICMP frag needed (mtu 68) quoting unknown UDP", [ip(icmp(3, 4, inner_udp, b"\0\0\0\x44"), proto=1)])
case("ICMP time exceeded quoting unknown TCP", [ip(icmp(11, 0, inner_tcp), proto=1)])
case("ICMP error quoting only an IP header", [ip(icmp(3, 1, inner_tcp[:20]), proto=1)])
case("ICMP error quoting IP + 4 bytes", [ip(icmp(3, 1, inner_tcp[:24]), proto=1)])
case("ICMP error quoting 10 bytes of IP", [ip(icmp(3, 1, inner_tcp[:10]), proto=1)])
case("ICMP error with empty quote", [ip(icmp(3, 1, b""), proto=1)])
case("ICMP error quoting IHL=15 header", [ip(icmp(3, 1, bytes([0x4F]) + inner_tcp[1:28]), proto=1)])
case("ICMP error quoting an ICMP error", [ip(icmp(3, 1, ip(icmp(3, 1, inner_tcp), proto=1, src=vip)), proto=1)])
case("ICMP error quoting a non-first fragment", [ip(icmp(3, 3, ip(b"\0" * 8, frag=5, src=vip, dst=src_ip)), proto=1)])
case("ICMP error quoting the client's own request", [ip(icmp(3, 3, ip(syn(), src=src_ip, dst=vip)[:28]), proto=1)])
case("ICMP echo to VIP with junk", [ip(icmp(8, 0, os.urandom(56)), proto=1)])
case("ICMP header cut at 3 bytes", [ip(icmp(3, 3, inner_tcp)[:3], proto=1)])
case("SYN to VIP port without a service", [ip(tcp(sp(), NO_SERVICE_PORT))])
case("UDP to VIP port without a service", [ip(udp(sp(), NO_SERVICE_PORT), proto=17)])
case("unknown IP protocol 253 to VIP", [ip(os.urandom(40), proto=253)])
case("IPv4 version 6 in the header", [b"\x65" + ip(syn())[1:]])
case("IPIP to VIP carrying a SYN", [ip(ip(syn()), proto=4)])
case("zero-length frame payload (Ethernet only)", [b""])
case("64 random junk frames", [os.urandom(rnd.randrange(1, 200)) for _ in range(64)])
case("ACK/FIN/RST without a connection", [ip(tcp(sp(), tport, flags=f)) for f in (0x10, 0x11, 0x04, 0x14)])
flood = []
for i in range(flood_n):
    a = "10.0.0.%d" % rnd.randrange(10, 250)
    flood.append(ip(tcp(rnd.randrange(1024, 65535), tport, src=a), src=a))
case("SYN flood, %d spoofed sources" % flood_n, flood)
uflood = []
for i in range(flood_n // 4):
    a = "10.0.0.%d" % rnd.randrange(10, 250)
    uflood.append(ip(udp(rnd.randrange(1024, 65535), uport, src=a), proto=17, src=a))
case("UDP flood, %d spoofed sources" % len(uflood), uflood)
print("# [%s] %d frames sent" % (label, sent))
