#!/usr/bin/env python3
"""Hostile clients for tests/e2e/faults.sh: COUNT connections to each HOST:PORT, held for SECONDS, in three
kinds: TLS done and then idle; a request header trickled one byte a second (slowloris); a header whose
Content-Length promises a large body that is trickled likewise. Meanwhile, over separate connections, a
body over the 7 MiB limit and a deeply nested JSON are sent every second and their answers recorded.
Prints one summary line: how many connections opened, how many the server closed before the end, and the
answers to the oversized and nested requests (code x count).

Usage: slowclients.py SECONDS COUNT HOST:PORT [HOST:PORT...]"""
import collections
import socket
import ssl
import sys
import threading
import time


def tls(addr):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE   # a hostile client does not care who answers
    host, port = addr.rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=10)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def hold(addr, kind, until, stats):
    try:
        s = tls(addr)
    except OSError:
        stats["refused"] += 1
        return
    stats["opened"] += 1
    head = b"POST /mutate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Type: application/json\r\n"
    if kind == 2:
        head += b"Content-Length: 1000000\r\n\r\n"
    sent = 0
    s.settimeout(1.0)
    try:
        while time.time() < until:
            if kind == 1 and sent < len(head):
                s.send(head[sent:sent + 1])
                sent += 1
            elif kind == 2:
                if sent < len(head):
                    s.send(head[sent:])
                    sent = len(head)
                else:
                    s.send(b"[")
            try:
                if s.recv(4096) == b"":
                    stats["closed by server"] += 1
                    return
            except socket.timeout:
                pass
    except OSError:
        stats["closed by server"] += 1
        return
    finally:
        s.close()
    stats["held to the end"] += 1


def one_request(addr, body):
    try:
        s = tls(addr)
        s.settimeout(15)
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
        s.sendall(body)
        answer = s.recv(64).split(b" ")
        s.close()
        return answer[1].decode() if len(answer) > 1 else "none"
    except OSError as e:
        return type(e).__name__


def main():
    secs, count, addrs = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    until = time.time() + secs
    stats = collections.Counter()
    answers = collections.Counter()
    big = b"[" + b"1," * (4 * 1024 * 1024) + b"1]"
    nested = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":' + b"[" * 100000 + b"]" * 100000 + b"}"

    def requests():
        while time.time() < until:
            for a in addrs:
                answers["oversized=" + one_request(a, big)] += 1
                answers["nested=" + one_request(a, nested)] += 1
            time.sleep(1)

    threads = [threading.Thread(target=requests, daemon=True)]
    threads += [threading.Thread(target=hold, args=(a, i % 3, until, stats), daemon=True)
                for a in addrs for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=15)
    print("%d connections opened (%d refused), %d closed by the server early, %d held to the end; answers: %s" % (
        stats["opened"], stats["refused"], stats["closed by server"], stats["held to the end"],
        ", ".join("%s x%d" % kv for kv in sorted(answers.items()))))


if __name__ == "__main__":
    main()
