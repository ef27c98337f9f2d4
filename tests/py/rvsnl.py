"""Raw generic netlink client for tests: builds RVS messages byte by byte
(including malformed ones rvsadm would never send) and returns the kernel's
errno and extended-ACK text. Numbers come from rvs/uapi/rvs.h."""

import os
import re
import socket
import struct

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLA_F_NESTED = 0x8000
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 16, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLMSGERR_ATTR_MSG = 1


def uapi():
    """Enum members and #defines of rvs/uapi/rvs.h, as a dict."""
    root = os.environ.get("RVS_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    text = open(os.path.join(root, "rvs", "uapi", "rvs.h")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    vals = {}
    for m in re.finditer(r"#define\s+(RVS_\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", text):
        vals[m.group(1)] = int(m.group(2), 0)
    for body in re.findall(r"enum\s+\w+\s*\{(.*?)\}", text, flags=re.S):
        nxt = 0
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, v = [x.strip() for x in item.split("=")]
                nxt = int(v, 0)
            else:
                name = item
            vals[name] = nxt
            nxt += 1
    return vals


U = uapi()


def attr(kind, payload, nested=False):
    kind |= NLA_F_NESTED if nested else 0
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def u16(v):
    return struct.pack("=H", v)


def u32(v):
    return struct.pack("=I", v)


def be16(v):
    return struct.pack(">H", v)


def addr4(a):
    return socket.inet_aton(a) + b"\0" * 12


def addr_any(a):
    """An IPv4 or IPv6 address in the 16-byte attribute form."""
    return socket.inet_pton(socket.AF_INET6, a) if ":" in a else addr4(a)


class Genl:
    def __init__(self, family=b"RVS"):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.bind((0, 0))
        self.sock.settimeout(5)
        self.seq = 1
        err, msg, replies = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                         attr(CTRL_ATTR_FAMILY_NAME, family + b"\0"), version=1)
        if err:
            raise OSError(-err, "family %s not found" % family)
        self.family = None
        for payload in replies:
            off = 4
            while off + 4 <= len(payload):
                ln, kind = struct.unpack_from("=HH", payload, off)
                if kind == CTRL_ATTR_FAMILY_ID:
                    self.family = struct.unpack_from("=H", payload, off + 4)[0]
                off += (ln + 3) & ~3
        if self.family is None:
            raise OSError("no family id")

    def request(self, ftype, cmd, payload=b"", version=None, flags=NLM_F_REQUEST | NLM_F_ACK):
        """Sends one message; returns (errno or 0, extack text, reply payloads)."""
        ver = U["RVS_GENL_VERSION"] if version is None else version
        body = struct.pack("=BBH", cmd, ver, 0) + payload
        self.seq += 1
        hdr = struct.pack("=IHHII", 16 + len(body), ftype, flags, self.seq, 0)
        self.sock.send(hdr + body)
        replies = []
        while True:
            data = self.sock.recv(65536)
            off = 0
            while off + 16 <= len(data):
                ln, typ, fl, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    raise OSError("bad netlink length")
                if typ == NLMSG_DONE:
                    err = struct.unpack_from("=i", data, off + 16)[0] if ln >= 20 else 0
                    return -err if err else 0, "", replies
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("=i", data, off + 16)[0]
                    text = ""
                    if fl & NLM_F_ACK_TLVS:
                        inner = 20
                        if not fl & NLM_F_CAPPED:
                            inner += struct.unpack_from("=I", data, off + 20)[0] - 16
                        t = off + 20 + 16 + (inner - 20)
                        while t + 4 <= off + ln:
                            aln, akind = struct.unpack_from("=HH", data, t)
                            if aln < 4:
                                break
                            if akind == NLMSGERR_ATTR_MSG:
                                text = data[t + 4:t + aln].rstrip(b"\0").decode()
                            t += (aln + 3) & ~3
                    return -err if err else 0, text, replies
                replies.append(data[off + 16:off + ln])
                off += (ln + 3) & ~3

    def rvs(self, cmd, *attrs, **kw):
        return self.request(self.family, U[cmd] if isinstance(cmd, str) else cmd, b"".join(attrs), **kw)


def svc(af=2, proto=6, addr="10.0.0.1", port=80, sched=b"rr\0", flags=True, extra=b"", raw_addr=None,
        netmask=None):
    a = U
    body = attr(a["RVS_SVC_ATTR_AF"], u16(af)) + attr(a["RVS_SVC_ATTR_PROTOCOL"], u16(proto))
    body += attr(a["RVS_SVC_ATTR_ADDR"], raw_addr if raw_addr is not None else addr_any(addr))
    body += attr(a["RVS_SVC_ATTR_PORT"], be16(port))
    if sched is not None:
        body += attr(a["RVS_SVC_ATTR_SCHED_NAME"], sched)
    if flags:
        body += attr(a["RVS_SVC_ATTR_FLAGS"], u32(0) + u32(0xFFFFFFFF))
        mask = netmask if netmask is not None else (128 if af == 10 else 0xFFFFFFFF)
        body += attr(a["RVS_SVC_ATTR_TIMEOUT"], u32(0)) + attr(a["RVS_SVC_ATTR_NETMASK"], u32(mask))
    return attr(a["RVS_CMD_ATTR_SERVICE"], body + extra, nested=True)


def dest(addr="10.0.1.1", port=80, fwd=0, weight=1, uth=0, lth=0, extra=b""):
    a = U
    body = attr(a["RVS_DEST_ATTR_ADDR"], addr_any(addr)) + attr(a["RVS_DEST_ATTR_PORT"], be16(port))
    body += attr(a["RVS_DEST_ATTR_FWD_METHOD"], u32(fwd)) + attr(a["RVS_DEST_ATTR_WEIGHT"], u32(weight))
    body += attr(a["RVS_DEST_ATTR_U_THRESH"], u32(uth)) + attr(a["RVS_DEST_ATTR_L_THRESH"], u32(lth))
    body += attr(a["RVS_DEST_ATTR_ADDR_FAMILY"], u16(10 if ":" in addr else 2))
    return attr(a["RVS_CMD_ATTR_DEST"], body + extra, nested=True)
