#!/usr/bin/env python3
"""Groups the samples `perf script` prints (call graphs by frame pointers) by the part of the read
path they were spent in: the innermost frame, from the leaf up, that names a part decides."""
import re
import sys
from collections import Counter

# (part, pattern on a frame's symbol), tried per frame from the leaf up; the first frame that
# matches any pattern decides, trying the patterns in this order.
PARTS = [
    ("contract check (jsonschema)", r"jsonschema::|referencing::"),
    ("audit line", r"lemonfiber_mcp::mcp::audit"),
    ("cleaning, withholding, framing", r"lemonfiber_mcp::answer|lemonfiber_mcp::redact|lemonfiber_mcp::cut"),
    ("TLS", r"rustls::|ring::|ring_core|tokio_rustls|aes_gcm|chacha|gcm_|aesni|sha256_block|x25519"),
    ("upstream request (SDK, reqwest, hyper client)", r"reqwest::|hyper_util::client|hyper::client|progenitor|lemonfiber_mcp::stack"),
    ("MCP library (rmcp: parse, dispatch, serialize)", r"rmcp::"),
    ("the server's own HTTP checks and handler", r"lemonfiber_mcp::serve"),
    ("the server's tool pipeline", r"lemonfiber_mcp::"),
    ("HTTP server (hyper, axum)", r"hyper::|axum::|axum_server|tower::|http::"),
    ("runtime (tokio: scheduling, I/O driver, timers)", r"tokio::|mio::"),
]
COMPILED = [(part, re.compile(pattern)) for part, pattern in PARTS]


def samples(lines):
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if line.startswith((" ", "\t")):
            parts = line.strip().split(None, 1)
            frames.append(parts[1] if len(parts) > 1 else "")
        else:
            frames = []
    if frames:
        yield frames


KERNEL_PARTS = [
    ("kernel: socket reads and writes", re.compile(r"tcp_sendmsg|tcp_recvmsg|sock_write_iter|sock_read_iter|__sys_sendto|__sys_recvfrom|ksys_write|ksys_read|__x64_sys_write|__x64_sys_read|do_writev|__x64_sys_writev")),
    ("kernel: waiting and waking (epoll, futex, scheduler)", re.compile(r"epoll|futex|schedule|try_to_wake_up|__x64_sys_sched_yield")),
]


def part_of(frames):
    if frames and "[kernel" in frames[0]:
        kernel_frames = " ".join(frame for frame in frames if "[kernel" in frame)
        for part, pattern in KERNEL_PARTS:
            if pattern.search(kernel_frames):
                return part
    # The TLS of the connection to the stack is told apart from the client's by what called it.
    for index, frame in enumerate(frames):
        for part, pattern in COMPILED:
            if pattern.search(frame):
                if part == "TLS":
                    above = " ".join(frames[index:])
                    side = "to the stack" if re.search(r"hyper_util::client|hyper::client|reqwest::", above) else "to the client"
                    return f"TLS, {side}"
                return part
    leaf = frames[0] if frames else ""
    if "[kernel" in " ".join(frames):
        return "kernel, outside any part (scheduling, interrupts)"
    if re.search(r"malloc|free|memcpy|memmove|realloc", leaf):
        return "allocator and copies outside any part"
    return "other"


def main():
    counts = Counter()
    kernel = Counter()
    total = 0
    for frames in samples(sys.stdin):
        total += 1
        part = part_of(frames)
        counts[part] += 1
        if "[kernel" in frames[0]:
            kernel[part] += 1
    calls_cpu_us = float(sys.argv[1]) if len(sys.argv) > 1 else None
    print(f"{total} samples")
    print(f"| part | share | of which in the kernel |" + (" µs a call |" if calls_cpu_us else ""))
    print("| --- | ---: | ---: |" + (" ---: |" if calls_cpu_us else ""))
    for part, count in counts.most_common():
        share = count / total
        row = f"| {part} | {share:.1%} | {kernel[part] / total:.1%} |"
        if calls_cpu_us:
            row += f" {share * calls_cpu_us:.0f} |"
        print(row)


if __name__ == "__main__":
    main()
